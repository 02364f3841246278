"""Decision AG of research/ablation_plan.md (the LGSSM's order selection scores the model it returns), decided on
records 15-18 of the 16 simulated plants, which no choice and no run has seen.

On each record, under V0 (the package: the LGSSM's fold models fitted with ``lgssm_order.SELECTION_ITERS`` = 20 EM
iterations) and AG (the fold models with the model's own ``num_iters``, 50): ``LGSSM(dim_x="auto")`` fitted to the
training half, and the floor the default fit would choose there (``models.floor.choose_floor`` in model units; the
chosen kind's ``ARX()`` or ``LGSSM(dim_x="auto")`` at its defaults fitted to the training half), each scored on the
second half under causal and simulate. ``--cuts`` runs the same on the 36 cuts of the real sets of
research/kind_evidence.py (reported beside, deciding nothing). One JSON line per (record, variant), appended
(resumable).

Run: python research/decision_ag.py research/results/decision_ag.jsonl [--cuts] [--data name ...]; add --decide to
apply the rule. This script is the research record's; nothing in the package imports it.
"""
import argparse
import contextlib
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.baselines import lgssm as lgssm_module
from gpssm_np.models.floor import choose_floor

from cut_targets import linear_model
from decision_l import model_units
from defaults_check import DATA, held_out_cut as cut
from fresh_records import NAMES, record as fresh_record
from kind_evidence import FRACTIONS
from rows import done_keys, head_commit

REPLICATES = (15, 16, 17, 18)
VARIANTS = ("V0", "AG")
PROTOCOLS = ("causal", "simulate")


@contextlib.contextmanager
def variant(name):
    """The LGSSM's order selection under ``name``: V0 as the package has it, AG with the fold models' EM budget at
    the model's own ``num_iters`` (the selection takes min(num_iters, SELECTION_ITERS))."""
    saved = lgssm_module.SELECTION_ITERS
    lgssm_module.SELECTION_ITERS = saved if name == "V0" else 10 ** 9
    try:
        yield
    finally:
        lgssm_module.SELECTION_ITERS = saved


def records(cuts, names):
    if cuts:
        for name in names:
            for fraction in FRACTIONS:
                yield name, fraction, cut(name, fraction)
        return
    for name in names:
        for r in REPLICATES:
            yield name, r, fresh_record(name, r)


def linear(kind, ds):
    model = linear_model(kind, ds.y_train.shape[1], ds.u_train.shape[1])
    start = time.perf_counter()
    model.fit(ds.y_train, ds.u_train)
    scores = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}
    return model, scores, time.perf_counter() - start


def run(out, cuts, names):
    done = done_keys(out, "data", "record", "variant")
    for name, r, ds in records(cuts, names):
        for name_v in VARIANTS:
            if (name, r, name_v) in done:
                continue
            with variant(name_v):
                model, lgssm, seconds = linear("lgssm", ds)
                floor = choose_floor(*model_units(ds))
                floor_scores = lgssm if floor.kind == "lgssm" else linear("arx", ds)[1]
            row = {"data": name, "record": r, "cut": cuts, "variant": name_v, "code": head_commit(),
                   "lgssm": dict(lgssm, dim_x=model.spec.dim_x, seconds=seconds),
                   "floor": dict(floor_scores, **floor.summary())}
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


def geo(values):
    return float(np.exp(np.mean(np.log(values))))


def decide(out, cuts=False):
    rows = [json.loads(line) for line in open(out)]
    rows = [r for r in rows if r["cut"] == cuts]
    by = {(r["data"], r["record"], r["variant"]): r for r in rows}
    keys = sorted({(d, rec) for d, rec, _ in by if all((d, rec, v) in by for v in VARIANTS)})
    plants = sorted({d for d, _ in keys})
    result = {}
    for what in ("lgssm", "floor"):
        for protocol in PROTOCOLS:
            per_plant = {}
            for plant in plants:
                ratios = [by[plant, rec, "AG"][what][protocol] / by[plant, rec, "V0"][what][protocol]
                          for d, rec in keys if d == plant]
                per_plant[plant] = geo(ratios)
            result[what, protocol] = geo(list(per_plant.values()))
            worst = max(per_plant, key=per_plant.get)
            print(f"{what:>6} {protocol:>8}: AG over V0 {result[what, protocol]:.4f} over {len(plants)} "
                  f"{'sets' if cuts else 'plants'} ({len(keys)} records); worst {worst} {per_plant[worst]:.3f}; " +
                  ", ".join(f"{p} {v:.3f}" for p, v in per_plant.items() if abs(v - 1) > 0.005))
            if (what, protocol) == ("floor", "causal"):
                result["worst"] = per_plant[worst]
    changed = [(d, rec, by[d, rec, "V0"]["floor"]["kind"], by[d, rec, "AG"]["floor"]["kind"]) for d, rec in keys
               if by[d, rec, "V0"]["floor"]["kind"] != by[d, rec, "AG"]["floor"]["kind"]]
    dims = sum(by[d, rec, "V0"]["lgssm"]["dim_x"] != by[d, rec, "AG"]["lgssm"]["dim_x"] for d, rec in keys)
    seconds = {v: sum(by[d, rec, v]["lgssm"]["seconds"] for d, rec in keys) for v in VARIANTS}
    print(f"the LGSSM's d_x changed on {dims} of {len(keys)}; the floor's kind on {len(changed)}: {changed}; "
          f"LGSSM fit seconds V0 {seconds['V0']:.0f}, AG {seconds['AG']:.0f}")
    if cuts:
        return
    adopted = (all(result[w, p] <= 1.0 for w in ("lgssm", "floor") for p in PROTOCOLS) and result["worst"] <= 1.05)
    print("AG adopted" if adopted else "AG not adopted")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cuts", action="store_true")
    parser.add_argument("--data", nargs="+", default=None)
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        print("Records 15-18 (decide):")
        decide(args.out)
        print("\nThe 36 cuts of the real sets (seen; decide nothing):")
        decide(args.out, cuts=True)
    else:
        run(args.out, args.cuts, args.data or (DATA if args.cuts else NAMES))


if __name__ == "__main__":
    main()
