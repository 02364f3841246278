"""Decision AI of research/ablation_plan.md (the linear models' intervals calibrated on their own folds), on training
data only: `ARX()` and `LGSSM(dim_x="auto")` at their defaults, with ``calibrate=False`` (V0) and ``calibrate=True``
(AI), fitted to the first 70 % of each of the 25 training halves (decision M's cuts) and scored on the last 30 %
under causal and simulate (``gp.evaluate``, seed 0): RMSE, coverage of the 95 % intervals and NLPD. One JSON line
per (cut, model, variant), appended (resumable). ``--decide`` applies the rule written in the plan before any run.

Run: python research/decision_ai.py research/results/decision_ai.jsonl [--data name ...] [--decide].
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import numpy as np

import gpssm_np as gp

from decision_m import NAMES, held_out_cut
from rows import done_keys, head_commit

MODELS = ("arx", "lgssm")
VARIANTS = {"V0": False, "AI": True}
PROTOCOLS = ("causal", "simulate")


def linear_model(who, dim_y, dim_u, calibrate):
    if who == "arx":
        return gp.ARX(dim_y=dim_y, dim_u=dim_u, calibrate=calibrate)
    return gp.LGSSM(dim_x="auto", dim_y=dim_y, dim_u=dim_u, calibrate=calibrate)


def run(out, names):
    done = done_keys(out, "data", "model", "variant")
    commit = head_commit()
    for name in names:
        ds = None
        for who in MODELS:
            for variant, calibrate in VARIANTS.items():
                if (name, who, variant) in done:
                    continue
                ds = held_out_cut(name) if ds is None else ds
                start = time.perf_counter()
                model = linear_model(who, ds.y_train.shape[1], ds.u_train.shape[1], calibrate)
                model.fit(ds.y_train, ds.u_train)
                row = {"data": name, "model": who, "variant": variant, "commit": commit,
                       "fit_seconds": time.perf_counter() - start,
                       "interval_scale": None if model.interval_scale_ is None else model.interval_scale_.tolist()}
                for protocol in PROTOCOLS:
                    result = gp.evaluate(model, ds, protocol, seed=0)
                    row[protocol] = {k: result[k] for k in ("rmse", "coverage95", "nlpd")}
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)


def decide(out):
    with open(out) as f:
        rows = {(r["data"], r["model"], r["variant"]): r for r in map(json.loads, f)}
    adopted = True
    for who in MODELS:
        cuts = [n for n in NAMES if all((n, who, v) in rows for v in VARIANTS)]
        print(f"{who}: {len(cuts)} of {len(NAMES)} cuts")
        if len(cuts) < len(NAMES):
            adopted = False
        for protocol in PROTOCOLS:
            cov = {v: np.array([rows[(n, who, v)][protocol]["coverage95"] for n in cuts]) for v in VARIANTS}
            nl = {v: np.array([rows[(n, who, v)][protocol]["nlpd"] for n in cuts]) for v in VARIANTS}
            err = {v: np.mean(np.abs(cov[v] - 0.95)) for v in VARIANTS}
            print(f"  {protocol}: mean |coverage - 0.95| V0 {err['V0']:.4f} AI {err['AI']:.4f}; mean coverage "
                  f"V0 {cov['V0'].mean():.3f} AI {cov['AI'].mean():.3f}; mean NLPD V0 {nl['V0'].mean():.4f} AI "
                  f"{nl['AI'].mean():.4f} (AI lower on {int(np.sum(nl['AI'] < nl['V0']))}, higher on "
                  f"{int(np.sum(nl['AI'] > nl['V0']))})")
            if protocol == "causal":
                passed = err["AI"] < err["V0"] and nl["AI"].mean() <= nl["V0"].mean()
                print(f"  rule (causal): {'met' if passed else 'not met'}")
                adopted = adopted and passed
            moved = [(n, round(float(cov["V0"][k]), 3), round(float(cov["AI"][k]), 3)) for k, n in enumerate(cuts)
                     if abs(cov["AI"][k] - cov["V0"][k]) > 0.05]
            print(f"  {protocol}: coverage moved by more than 5 points on {len(moved)}: {moved}")
        scales = [rows[(n, who, "AI")]["interval_scale"] for n in cuts]
        flat = [s for scale in scales if scale for s in scale]
        print(f"  factors: median {np.median(flat):.3f}, range {min(flat):.3f}-{max(flat):.3f}, "
              f"none (no folds) on {sum(s is None for s in scales)}")
    print("AI", "adopted" if adopted else "not adopted")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=NAMES)
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out, args.data)
