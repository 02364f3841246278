"""How far the GP model's form of each linear floor (the zero-residual model a default fit returns without a GP part)
forecasts from the linear model itself, on the selection's fold windows of the training halves: a reading, deciding
nothing (research/ablation_plan.md, "the floor's form against the floor").

For each set and kind (ARX() and LGSSM(dim_x="auto") at the orders stage 1 chose for that kind): on each of the two GP
folds the linear model refitted to the fold's past (``Floor.refit``, as the selection starts from it) and its GP form
(``start_from_floor(..., gp_share=0)``), each forecasting every window after the fold's origin from the 100 outputs
before it (``ValidationScore``, seed 0); the mean RMSE of each and their ratio. Also the motivating two-output plant
of decision BK (``collinear``, eps 1e-3 and 1e-2), and with ``--data`` the training parts of the held-out cuts
(``CUTS``). Training data only.

Run: python research/explore_floor_form.py OUT.jsonl [--data ...]; --summary prints the table. Resumable.
This script is the research record's; nothing in the package imports it.
"""
import copy
import json

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.models.training import ValidationScore
from gpssm_np.units import Scaling
from decision_bb import LEFT_OUT
from decision_bk import collinear_data
from decision_m import NAMES, held_out_cut
from defaults_check import DATA, SIMULATORS, dataset
from rows import head_commit, readings_main

COLLINEAR = ["collinear_1e-3", "collinear_1e-2"]
#: The 24 held-out cuts other than the steam generator's (their training parts, "cut:<name>").
CUTS = [f"cut:{name}" for name in NAMES if name != LEFT_OUT]


def training_half(name):
    if name.startswith("cut:"):
        ds = held_out_cut(name[4:])
        return ds.y_train, ds.u_train
    if name in COLLINEAR:
        y, u = collinear_data(eps=float(name.split("_")[1]))
        return y[:300], u[:300]
    ds = dataset(name)
    return ds.y_train, ds.u_train


def reading(name):
    y, u = training_half(name)
    model = gp.ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=0)
    (ys, us), = Scaling.of([y], [u]).to_model([(y, u)])
    plan = Plan()
    row = {"data": name, "dim_y": int(y.shape[1]), "commit": head_commit()}
    for kind in ("arx", "lgssm"):
        fit = DefaultFit(copy.deepcopy(model), plan, seed=0, kinds=(kind,))
        floor = fit.floor([ys], [us])
        folds = rolling_origin([ys], [us], plan.origins)[-plan.gp_folds:]
        linear, form = [], []
        for k, fold in enumerate(folds):
            start = floor.refit(fold.ys, fold.us)
            later = [w for f in folds[k:] for w in f.windows]
            score = ValidationScore.of_windows(later, num_particles=plan.num_particles, num_samples=plan.num_samples,
                                               seed=0)
            exact = copy.deepcopy(fit.model)
            exact.start_from_floor(start, fold.ys, fold.us, k, gp_share=0.0)
            form += score.window_scores(exact)
            linear += score.window_scores(start)
        row[kind] = {"orders": floor.summary()["orders"], "linear": float(np.mean(linear)),
                     "form": float(np.mean(form)), "ratio": float(np.mean(form) / np.mean(linear)),
                     "windows": len(form)}
    return row


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    print("| data | d_y | ARX: linear | its form | ratio | LGSSM: linear | its form | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, b = r["arx"], r["lgssm"]
        print(f"| {r['data']} | {r['dim_y']} | {a['linear']:.4f} | {a['form']:.4f} | {a['ratio']:.3f} | "
              f"{b['linear']:.4f} | {b['form']:.4f} | {b['ratio']:.3f} |")


def main(argv=None):
    readings_main(__doc__.splitlines()[0], DATA + SIMULATORS + COLLINEAR + CUTS, reading, summary,
                  lambda row: f"{row['arx']['ratio']:.3f} {row['lgssm']['ratio']:.3f}", argv)


if __name__ == "__main__":
    main()
