"""Decision L of research/ablation_plan.md (the floor's kind by the one-standard-error rule), decided on fresh records
of the simulated plants, which no choice has seen.

Records: the 9 simulators of research/defaults_check.py with generator seeds s + 1000 r and the 7 plants of
research/unseen_plants.py with generator seeds 2026 + r, r = 1-4; the first half trains. On each record V0 (the
package's rule: the lower mean fold error) and L (the LGSSM unless the ARX's window errors beat it by more than one
standard error: ``training.paired_t`` above ``Plan.switch_t``, as the acceptance stage) choose a kind on the
training half, standardised as the GP fit does; ``ARX()`` and ``LGSSM(dim_x="auto")`` at their defaults, fitted to
the training half, are scored on the second half under causal and simulate. ``--cuts`` runs the same on the 70 %
cuts of the nine real data sets (reported, deciding nothing). One JSON line per record, appended (resumable).

Run: python research/decision_l.py research/results/decision_l.jsonl [--cuts]; add --decide to apply the rule.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import mean_error
from gpssm_np.models.floor import fit_kind
from gpssm_np.models.default_fit import Plan
from gpssm_np.models.training import paired_t
from gpssm_np.units import Scaling

from defaults_check import DATA, SIMULATORS, held_out_cut
from fresh_records import record as fresh_record
from rows import done_keys
from unseen_plants import SYSTEMS

REPLICATES = (1, 2, 3, 4)


def records(cuts, replicates=REPLICATES):
    """(plant, r, Dataset) of every record (module docstring; records ``replicates``)."""
    if cuts:
        for name in DATA:
            yield name, 0, held_out_cut(name)
        return
    for name in SIMULATORS + list(SYSTEMS):
        for r in replicates:
            yield name, r, fresh_record(name, r)


def model_units(ds):
    """The training half of ``ds`` as one-sequence lists in model units (standardised as the GP fit does)."""
    scaling = Scaling.of([ds.y_train], [ds.u_train])
    return [scaling.y_to_model(ds.y_train)], [scaling.u_to_model(ds.u_train)]


def held_out(ds):
    """{kind: {protocol: RMSE}}: ``ARX()`` and ``LGSSM(dim_x="auto")`` at their defaults, fitted to the training
    half of ``ds`` and scored on its second half under causal and simulate."""
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    held = {}
    for kind, model in (("arx", gp.ARX(dim_y=dy, dim_u=du)), ("lgssm", gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du))):
        model.fit(ds.y_train, ds.u_train)
        held[kind] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in ("causal", "simulate")}
    return held


def kinds(ds):
    """(V0's kind, L's kind, {kind: mean fold error}, the paired t of the LGSSM's errors over the ARX's)."""
    ys, us = model_units(ds)
    errors = {kind: fit_kind(kind, ys, us).fold_errors_ for kind in ("arx", "lgssm")}
    scores = {kind: mean_error(e or []) for kind, e in errors.items()}
    v0 = "arx" if scores["arx"] <= scores["lgssm"] and np.isfinite(scores["arx"]) else "lgssm"
    finite, t = {k for k, s in scores.items() if np.isfinite(s)}, None
    if finite == {"arx", "lgssm"}:
        t = paired_t(errors["lgssm"], errors["arx"])
        l_kind = "arx" if t is not None and t > Plan().switch_t else "lgssm"
    else:
        l_kind = "arx" if finite == {"arx"} else "lgssm"
    return v0, l_kind, scores, t


def run(out, cuts, replicates=REPLICATES):
    done = done_keys(out, "data", "record")
    for name, r, ds in records(cuts, replicates):
        if (name, r) in done:
            continue
        v0, l_kind, scores, t = kinds(ds)
        row = {"data": name, "record": r, "cut": cuts, "v0": v0, "l": l_kind, "scores": scores, "t": t,
               "held_out": held_out(ds)}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def decide(out, rule="l", label="L"):
    """L's rule (research/ablation_plan.md) for the kind ``rule`` (a key of the rows) named ``label``, against V0."""
    rows = [json.loads(line) for line in open(out)]
    for cuts in (False, True):
        part = [r for r in rows if r["cut"] == cuts]
        if not part:
            continue
        gmean = {}
        for kind in ("v0", rule):
            for p in ("causal", "simulate"):
                per_plant = {}
                for r in part:
                    ratio = r["held_out"][r[kind]][p] / min(h[p] for h in r["held_out"].values())
                    per_plant.setdefault(r["data"], []).append(np.log(ratio))
                gmean[kind, p] = float(np.exp(np.mean([np.mean(v) for v in per_plant.values()])))
        changed = [r for r in part if r["v0"] != r[rule]]
        for r in changed:
            t = "" if "t" not in r else f"  t {r['t'] if r['t'] is None else round(r['t'], 2)}"
            print(f"{r['data']:18s} {r['record']}  V0 {r['v0']:5s} -> {label} {r[rule]:5s}{t}  held-out "
                  f"causal {r['held_out'][r[rule]]['causal'] / r['held_out'][r['v0']]['causal']:.3f}, simulate "
                  f"{r['held_out'][r[rule]]['simulate'] / r['held_out'][r['v0']]['simulate']:.3f} ({label} over V0)")
        causal = gmean[rule, "causal"] / gmean["v0", "causal"]
        sim = gmean[rule, "simulate"] / gmean["v0", "simulate"]
        what = "70 % cuts of the real data sets (decide nothing)" if cuts else "fresh records of the 16 plants"
        print(f"{what}: {len(part)} records, {len(changed)} with another kind; chosen over better, geometric mean: "
              f"V0 causal {gmean['v0', 'causal']:.4f} simulate {gmean['v0', 'simulate']:.4f}; "
              f"{label} causal {gmean[rule, 'causal']:.4f} simulate {gmean[rule, 'simulate']:.4f}")
        if not cuts:
            adopted = causal <= 0.99 and sim <= 1.01
            print(f"{label} over V0: causal {causal:.4f} (rule: <= 0.99), simulate {sim:.4f} (rule: <= 1.01): "
                  f"{'adopted' if adopted else 'not adopted'}")


def cli(run, decide):
    """The command line of a decision on the records of the kinds: ``OUT [--cuts]`` runs ``run(out, cuts)``,
    ``--decide OUT`` applies its rule (``decide(out)``)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cuts", action="store_true")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out, args.cuts)


if __name__ == "__main__":
    cli(run, decide)
