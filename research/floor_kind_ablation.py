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

from gpssm_np.baselines.arx import arx_simulate
from gpssm_np.baselines.lgssm_order import kalman_forecast_mean
from gpssm_np.datasets.folds import Window, fold_errors, mean_error, rolling_origin
from gpssm_np.models.floor import FLOOR_KINDS, choose_floor, fit_kind, floor_of
from gpssm_np.models.warm_start import check_outputs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defaults_check import DATA, SIMULATORS, dataset  # noqa: E402
from rows import done_keys


def past(values, name, width, count, fill):
    """The last ``count`` rows of ``values``, left-padded with ``fill`` (as the ARX's forecast does)."""
    values = values[len(values) - min(count, len(values)):]
    return np.concatenate([np.tile(fill, (count - len(values), 1)), values])


def arx_forecast_mean(model, window):
    """The noise-free free run (H, d_y) of a fitted ARX (``standardize=False``: model units) over a fold's
    ``window`` (``datasets.folds.Window``) from the outputs and inputs of its past: the ARX's forecast mean."""
    na, nb = model.na_, model.nb_
    y_hist = past(window.y_past, "y_past", model.spec.dim_y, na, model.y_mean_)
    u_hist = past(window.u_past, "u_past", model.spec.dim_u, max(nb - 1, 0), model.u_mean_)
    means, _ = arx_simulate(model.theta_, na, nb, y_hist[::-1][None], np.concatenate([u_hist, window.u])[None])
    return means[0]



def choose_floor_nested(ys, us, kinds=FLOOR_KINDS, late=2):
    """The floor with its kind chosen by nested folds (research/ablation_plan.md, issue #28, amendment A): each kind
    chooses its orders on the data before the ``late``-th latest rolling origin only (its own selection, on folds
    inside that part), and the kinds are compared by those orders' errors on the windows after the ``late``
    latest origins (each refitted to the data before its origin), which did not choose them; the chosen kind is
    then fitted to all the data with its own order selection. Falls back to :func:`choose_floor` when there are
    fewer than ``late`` + 1 origins."""
    check_outputs(ys)
    folds = rolling_origin(ys, us)
    if len(folds) <= late or len(kinds) < 2:
        return choose_floor(ys, us, kinds)
    head = folds[-late]  # the data before the late folds' first origin
    scores, errors = {}, {}
    for kind in kinds:
        early = floor_of(kind, fit_kind(kind, head.ys, head.us), {}, None)
        forecast = arx_forecast_mean if kind == "arx" else kalman_forecast_mean
        errors[kind] = fold_errors(folds[-late:], early.refit, forecast)
        scores[kind] = mean_error(errors[kind])
    kind = min(kinds, key=lambda k: (scores[k], FLOOR_KINDS.index(k)))
    return floor_of(kind, fit_kind(kind, ys, us), scores, errors[kind])




def held_out_windows(y, u, cut, horizon=100, stride=50, burn_in=100):
    H = min(horizon, len(y) - cut)
    return [Window(y[max(0, g - burn_in):g], u[max(0, g - burn_in):g], u[g:g + H], y[g:g + H], 0, g)
            for g in range(cut, len(y) - H + 1, stride)]


def score(model, kind, windows):
    forecast = arx_forecast_mean if kind == "arx" else kalman_forecast_mean
    return float(np.mean([np.sqrt(np.mean((forecast(model, w) - w.y) ** 2)) for w in windows]))


def main(out):
    done = done_keys(out, "data")
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
