"""Decision G of issue #28 (research/ablation_plan.md): the floor's kind by the product of its forecast and its
free-run fold errors (G) against the forecast fold error alone (V0, the package's rule), decided on held-out
training data only.

Each training half is cut at 70 %. On the first 70 % (standardised as the GP fit does) both kinds are fitted with
their own order selection (``models.floor.fit_kind``); V0 takes the lower forecast fold score, G the lower product
of the forecast and the free-run fold scores. A free run starts at each fold's origin from the 5 outputs there and
runs to the end of the training part, by the kind's model fitted before the origin. Then ``ARX()`` and
``LGSSM(dim_x="auto")`` at their defaults, fitted to the first 70 %, are scored on the last 30 % by ``gp.evaluate``
(causal and simulate). One JSON line per set; ``--decide`` applies the pre-registered rule.

Run: python research/decision_g.py OUT.jsonl [--data name ...] | --decide OUT.jsonl
This script is the research record's; nothing in the package imports it.
"""
import json
import os
import sys

import numpy as np

import gpssm_np as gp
from gpssm_np.baselines.lgssm_order import kalman_forecast_mean
from gpssm_np.datasets.folds import Fold, Window, fold_errors, mean_error, rolling_origin
from gpssm_np.models.floor import FLOOR_KINDS, fit_kind, floor_of
from gpssm_np.units import Scaling

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defaults_check import decision_cli, held_out_cuts  # noqa: E402
from floor_kind_ablation import arx_forecast_mean  # noqa: E402

N_INIT = 5


def free_run_folds(ys, us, folds, n_init=N_INIT):
    """The folds with one free-run window per sequence instead of their forecast windows: from the fold's origin in
    that sequence, the first ``n_init`` outputs read, the rest of the sequence simulated."""
    out = []
    for fold in folds:
        origins = {}
        for w in fold.windows:  # a sequence's first window starts at its origin
            origins[w.sequence] = min(origins.get(w.sequence, w.start), w.start)
        windows = [Window(ys[i][o:o + n_init], us[i][o:o + n_init], us[i][o + n_init:], ys[i][o + n_init:], i, o)
                   for i, o in sorted(origins.items()) if len(ys[i]) - o > n_init]
        if windows:
            out.append(Fold(fold.ys, fold.us, windows, fold.origins))
    return out


def kinds_chosen(ys, us):
    """(V0's kind, G's kind, {kind: forecast score}, {kind: free-run score}) on the sequences ``ys``, ``us``."""
    folds = free_run_folds(ys, us, rolling_origin(ys, us))
    forecast, free = {}, {}
    for kind in FLOOR_KINDS:
        model = fit_kind(kind, ys, us)
        floor = floor_of(kind, model, {}, None)
        forecast[kind] = mean_error(model.fold_errors_ or [])
        run = arx_forecast_mean if kind == "arx" else kalman_forecast_mean
        free[kind] = mean_error(fold_errors(folds, floor.refit, run))
    order = {k: FLOOR_KINDS.index(k) for k in FLOOR_KINDS}
    v0 = min(FLOOR_KINDS, key=lambda k: (forecast[k], order[k]))
    g = min(FLOOR_KINDS, key=lambda k: (forecast[k] * free[k], order[k]))
    return v0, g, forecast, free


def run(out, names):
    for name, ds in held_out_cuts(out, names):
        scaling = Scaling.of([ds.y_train], [ds.u_train])
        v0, g, forecast, free = kinds_chosen([scaling.y_to_model(ds.y_train)], [scaling.u_to_model(ds.u_train)])
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        held = {}
        for kind, model in (("arx", gp.ARX(dim_y=dy, dim_u=du)), ("lgssm", gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du))):
            model.fit(ds.y_train, ds.u_train)
            held[kind] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in ("causal", "simulate")}
        row = {"data": name, "v0": v0, "g": g, "forecast_scores": forecast, "free_run_scores": free, "held_out": held}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def decide(out):
    rows = [json.loads(line) for line in open(out)]
    gmean = {}
    for rule in ("v0", "g"):
        for p in ("causal", "simulate"):
            ratios = [r["held_out"][r[rule]][p] / min(h[p] for h in r["held_out"].values()) for r in rows]
            gmean[rule, p] = float(np.exp(np.mean(np.log(ratios))))
    for r in rows:
        if r["v0"] != r["g"]:
            print(f"{r['data']:14s} V0 {r['v0']:5s} -> G {r['g']:5s}  held-out causal "
                  f"{r['held_out'][r['g']]['causal'] / r['held_out'][r['v0']]['causal']:.3f}, simulate "
                  f"{r['held_out'][r['g']]['simulate'] / r['held_out'][r['v0']]['simulate']:.3f} (G over V0)")
    sim, causal = gmean["g", "simulate"] / gmean["v0", "simulate"], gmean["g", "causal"] / gmean["v0", "causal"]
    print(f"{len(rows)} sets; geometric mean of the chosen kind's held-out RMSE over the better kind's: "
          f"V0 causal {gmean['v0', 'causal']:.4f} simulate {gmean['v0', 'simulate']:.4f}; "
          f"G causal {gmean['g', 'causal']:.4f} simulate {gmean['g', 'simulate']:.4f}")
    adopted = sim <= 0.98 and causal <= 1.01
    print(f"G over V0: simulate {sim:.4f} (rule: <= 0.98), causal {causal:.4f} (rule: <= 1.01): "
          f"{'adopted' if adopted else 'not adopted'}")


if __name__ == "__main__":
    decision_cli(run, decide)
