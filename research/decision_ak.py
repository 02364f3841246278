"""Decision AK of research/ablation_plan.md (the linear models' orders by the one-standard-error rule), decided on
records 19-22 of the 16 simulated plants, which no run has seen, and on the 25 held-out cuts (training data).

On each record or cut, under V0 (the order of the lowest mean fold error) and AK (``datasets.folds.one_standard_error``,
the package code this runs against), ``ARX()``, ``LGSSM(dim_x="auto")`` and the floor the default fit would choose
(``models.floor.choose_floor`` in model units; the chosen kind's model of the two) are fitted to the training part
and scored on the rest under causal and simulate (``gp.evaluate``, seed 0). ``--real`` runs the same on the 36 cuts
of the real sets of research/kind_evidence.py (seen before; reported, deciding nothing). One JSON line per (data,
record, variant), appended (resumable; two workers can share the file with disjoint sets).

Run: python research/decision_ak.py research/results/decision_ak.jsonl --set records|cuts|real [--data name ...];
then python research/decision_ak.py research/results/decision_ak.jsonl --decide. V0 is the same code with the
choice replaced by the lowest mean (ties to the earlier candidate), as the package chose before AK. This script is
the research record's; nothing in the package imports it. AK's package code was not adopted: it is
research/decision_ak.patch (``git apply research/decision_ak.patch`` on a checkout of 34e2f11 gives the code these
rows ran against, with this script importing its ``one_standard_error``).
"""
import argparse
import contextlib
import json

import numpy as np

from gpssm_np.baselines import arx as arx_module, lgssm_order
from gpssm_np.datasets.folds import mean_error
from gpssm_np.models.floor import choose_floor

from decision_ag import PROTOCOLS, geo, linear
from decision_l import model_units
from decision_m import NAMES as CUT_NAMES, held_out_cut
from defaults_check import DATA, held_out_cut as real_cut
from fresh_records import NAMES as PLANTS, record as fresh_record
from kind_evidence import FRACTIONS
from rows import done_keys, head_commit

RECORDS = (19, 20, 21, 22)
VARIANTS = ("V0", "AK")
PACKAGE_RULE = arx_module.one_standard_error


def lowest(errors, size):
    """V0's choice: the candidate of the lowest mean fold error, ties to the earlier one (None: nothing finite)."""
    scores = {c: mean_error(e) for c, e in errors.items()}
    finite = [c for c in errors if np.isfinite(scores[c])]
    return min(finite, key=lambda c: scores[c]) if finite else None


@contextlib.contextmanager
def variant(name):
    rule = PACKAGE_RULE if name == "AK" else lowest
    arx_module.one_standard_error = lgssm_order.one_standard_error = rule
    try:
        yield
    finally:
        arx_module.one_standard_error = lgssm_order.one_standard_error = PACKAGE_RULE


def cases(which, names):
    if which == "records":
        for name in names or PLANTS:
            for r in RECORDS:
                yield name, r, fresh_record(name, r)
    elif which == "cuts":
        for name in names or CUT_NAMES:
            yield name, 0.7, held_out_cut(name)
    else:
        for name in names or DATA:
            for fraction in FRACTIONS:
                yield name, fraction, real_cut(name, fraction)


def scored(kind, ds):
    """``decision_ag.linear``'s scores of the kind's model fitted to ``ds``, with its orders and seconds."""
    model, scores, seconds = linear(kind, ds)
    orders = [model.na_, model.nb_] if kind == "arx" else [model.spec.dim_x]
    return dict(scores, orders=orders, seconds=seconds)


def run(out, which, names):
    done = done_keys(out, "set", "data", "record", "variant")
    for name, r, ds in cases(which, names):
        for v in VARIANTS:
            if (which, name, r, v) in done:
                continue
            with variant(v):
                rows = {kind: scored(kind, ds) for kind in ("arx", "lgssm")}
                floor = choose_floor(*model_units(ds))
            row = {"set": which, "data": name, "record": r, "variant": v, "code": head_commit(), **rows,
                   "floor": dict({p: rows[floor.kind][p] for p in PROTOCOLS}, kind=floor.kind,
                                 orders=list(floor.orders))}
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


def summary(rows, which):
    """{(model, protocol): geometric mean of AK over V0} on ``which`` (records: per plant first), printed with the
    changes of orders and kinds; None while a case lacks a variant."""
    by = {(r["data"], r["record"], r["variant"]): r for r in rows if r["set"] == which}
    keys = sorted({(d, rec) for d, rec, _ in by if all((d, rec, v) in by for v in VARIANTS)})
    if not keys:
        return None
    result = {}
    for model in ("arx", "lgssm", "floor"):
        for protocol in PROTOCOLS:
            per = {}
            for d, rec in keys:
                per.setdefault(d, []).append(by[d, rec, "AK"][model][protocol] / by[d, rec, "V0"][model][protocol])
            per = {d: geo(v) for d, v in per.items()}
            result[model, protocol] = geo(list(per.values()))
            worst, best = max(per, key=per.get), min(per, key=per.get)
            print(f"{which:8s} {model:6s} {protocol:8s} AK over V0 {result[model, protocol]:.4f} over {len(per)} "
                  f"(worst {worst} {per[worst]:.3f}, best {best} {per[best]:.3f})")
    for model in ("arx", "lgssm", "floor"):
        changed = sum(by[k + ("V0",)][model]["orders"] != by[k + ("AK",)][model]["orders"] for k in keys)
        print(f"{which:8s} {model}: orders changed on {changed} of {len(keys)}")
    kinds = [(d, rec, by[d, rec, "V0"]["floor"]["kind"], by[d, rec, "AK"]["floor"]["kind"]) for d, rec in keys
             if by[d, rec, "V0"]["floor"]["kind"] != by[d, rec, "AK"]["floor"]["kind"]]
    print(f"{which:8s} the floor's kind changed on {len(kinds)}: {kinds}")
    return result


def decide(out):
    rows = [json.loads(line) for line in open(out)]
    results = {which: summary(rows, which) for which in ("records", "cuts", "real")}
    complete = {"records": len(PLANTS) * len(RECORDS), "cuts": len(CUT_NAMES)}
    counts = {w: len({(r["data"], r["record"]) for r in rows if r["set"] == w and r["variant"] == "AK"})
              for w in complete}
    if any(counts[w] < complete[w] for w in complete):
        print(f"incomplete: {counts} of {complete}")
        return
    adopted = all(results[w]["floor", "causal"] <= 0.99 and results[w]["floor", "simulate"] <= 1.0
                  and all(results[w][m, p] <= 1.0 for m in ("arx", "lgssm") for p in PROTOCOLS) for w in complete)
    print("AK adopted" if adopted else "AK not adopted")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--set", choices=("records", "cuts", "real"), default="records")
    parser.add_argument("--data", nargs="+", default=None)
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        decide(args.out)
    else:
        run(args.out, args.set, args.data)
