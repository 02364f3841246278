"""Amendment A of issue #28 (research/ablation_plan.md): the floor's kind by nested folds (V1) against the current
rule (V0), decided on held-out training data only.

Each training half is cut at 70 %; each variant chooses its floor on the first 70 %; the chosen floor (fitted to
the first 70 %) forecasts causally the 100-step windows (stride 50) of the last 30 %, each from the 100 steps
before it. One JSON line per set: the held-out RMSE of ARX(), of LGSSM(dim_x="auto"), and the kind each variant
chose. Run: python research/floor_kind_ablation.py OUT.jsonl
"""
import json
import os
import sys

import numpy as np

import gpssm_np as gp
from gpssm_np.baselines.arx import arx_forecast_mean
from gpssm_np.baselines.lgssm_order import kalman_forecast_mean
from gpssm_np.datasets.folds import Window
from gpssm_np.models.floor import choose_floor, choose_floor_nested, fit_kind

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defaults_check import DATA, SIMULATORS, dataset  # noqa: E402


def held_out_windows(y, u, cut, horizon=100, stride=50, burn_in=100):
    H = min(horizon, len(y) - cut)
    return [Window(y[max(0, g - burn_in):g], u[max(0, g - burn_in):g], u[g:g + H], y[g:g + H], 0, g)
            for g in range(cut, len(y) - H + 1, stride)]


def score(model, kind, windows):
    forecast = arx_forecast_mean if kind == "arx" else kalman_forecast_mean
    return float(np.mean([np.sqrt(np.mean((forecast(model, w) - w.y) ** 2)) for w in windows]))


def main(out):
    done = set()
    if os.path.exists(out):
        done = {json.loads(line)["data"] for line in open(out)}
    for name in DATA + SIMULATORS:
        if name in done:
            continue
        ds = dataset(name)
        y, u = ds.y_train, ds.u_train
        cut = int(round(0.7 * len(y)))
        ys, us = [y[:cut]], [u[:cut]]
        windows = held_out_windows(y, u, cut)
        held = {kind: score(fit_kind(kind, ys, us), kind, windows) for kind in ("arx", "lgssm")}
        v0, v1 = choose_floor(ys, us), choose_floor_nested(ys, us)
        row = {"data": name, "held_out": held, "v0": v0.kind, "v1": v1.kind, "v0_orders": list(v0.orders),
               "v1_orders": list(v1.orders), "v1_late_scores": v1.scores, "windows": len(windows)}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
