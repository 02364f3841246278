"""The LGSSM's EM budget chosen on its folds (a check, deciding nothing; research/ablation_plan.md, "the LGSSM's EM
budget chosen on its folds"): the variants C20 and CV beside V0 (decision AG's V0 rows) on records 15-18 of the 16
simulated plants and the 36 cuts of the real sets, each scored on the held-out part under causal and simulate.

Run: python research/lgssm_em_budget.py research/results/lgssm_em_budget.jsonl [--cuts] [--data name ...];
``--summary`` prints the comparison. This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.baselines.lgssm_order import cross_validation_errors, dim_x_candidates
from gpssm_np.datasets.folds import mean_error

from decision_ag import geo, records
from decision_l import model_units
from defaults_check import DATA
from fresh_records import NAMES
from rows import done_keys, head_commit

ITERS = (10, 20, 50)
PROTOCOLS = ("causal", "simulate")
AG_ROWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "decision_ag.jsonl")


def scores(model, ds):
    return {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}


def cv_choice(ds):
    """(d_x, iterations, their mean fold error): the pair with the lowest mean fold error over d_x candidates and
    EM budgets (ties: smaller d_x, then fewer iterations)."""
    ys, us = model_units(ds)
    d_y, d_u = ds.y_train.shape[1], ds.u_train.shape[1]
    data = list(zip(ys, us))
    best = None
    for k in ITERS:
        def fit(d, ys_, us_, k=k):
            return gp.LGSSM(dim_x=d, dim_y=d_y, dim_u=d_u, num_iters=k, standardize=False,
                            calibrate=False).fit(ys_, us_)
        for d, errors in cross_validation_errors(data, fit, dim_x_candidates(d_y)).items():
            key = (mean_error(errors), d, k)
            best = key if best is None or key < best else best
    return best[1], best[2], best[0]


def run(out, cuts, names):
    done = done_keys(out, "data", "record", "variant")
    for name, r, ds in records(cuts, names):
        d_y, d_u = ds.y_train.shape[1], ds.u_train.shape[1]
        for variant in ("C20", "CV"):
            if (name, r, variant) in done:
                continue
            start = time.perf_counter()
            if variant == "C20":
                model = gp.LGSSM(dim_x="auto", dim_y=d_y, dim_u=d_u, num_iters=20, calibrate=False)
                extra = {}
            else:
                d, k, score = cv_choice(ds)
                model = gp.LGSSM(dim_x=d, dim_y=d_y, dim_u=d_u, num_iters=k, calibrate=False)
                extra = {"iters": k, "fold_score": score}
            model.fit(ds.y_train, ds.u_train)
            row = {"data": name, "record": r, "cut": cuts, "variant": variant, "code": head_commit(),
                   "lgssm": dict(scores(model, ds), dim_x=model.spec.dim_x, seconds=time.perf_counter() - start,
                                 **extra)}
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


def summary(outs):
    rows = {}
    for path in [AG_ROWS] + outs:
        with open(path) as f:
            for row in map(json.loads, f):
                if row["variant"] in ("V0", "C20", "CV"):
                    rows[(row["data"], row["record"], row["variant"])] = row
    for cuts in (False, True):
        keys = sorted({(d, r) for d, r, v in rows if rows[(d, r, v)]["cut"] == cuts and v == "V0"})
        keys = [k for k in keys if all(k + (v,) in rows for v in ("C20", "CV"))]
        print(f"{'cuts of the real sets' if cuts else 'records 15-18'}: {len(keys)} complete")
        for variant in ("C20", "CV"):
            for p in PROTOCOLS:
                ratio = {k: rows[k + (variant,)]["lgssm"][p] / rows[k + ("V0",)]["lgssm"][p] for k in keys}
                groups = {}
                for (d, r), v in ratio.items():
                    groups.setdefault(d, []).append(v)
                overall = geo([geo(v) for v in groups.values()]) if not cuts else geo(list(ratio.values()))
                better = sum(v < 0.98 for v in ratio.values())
                worse = sum(v > 1.02 for v in ratio.values())
                print(f"  {variant} {p}: geometric mean {overall:.4f}; better by > 2 % on {better}, worse on {worse}")
            if variant == "CV":
                iters = [rows[k + ("CV",)]["lgssm"]["iters"] for k in keys]
                chosen = {int(k): int(n) for k, n in zip(*np.unique(iters, return_counts=True))}
                print(f"  CV chose iterations {chosen}")
        if cuts:
            for k in keys:
                if k[0] == "ballbeam":
                    print("  ballbeam", k[1], {v: round(rows[k + (v,)]["lgssm"]["causal"], 3)
                                                for v in ("V0", "C20", "CV")})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="+")
    parser.add_argument("--cuts", action="store_true")
    parser.add_argument("--data", nargs="+")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
    else:
        run(args.out[0], args.cuts, args.data or (DATA if args.cuts else NAMES))
