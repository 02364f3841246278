"""How far the selection's step 0 (the warm start, forecast by the particle filter) scores the floor that a default fit
without a GP part returns (the zero-residual floor, exact): a reading on training data only, deciding nothing
(research/ablation_plan.md, "how far the selection's step 0 scores the floor a fit without a GP part returns").

Run: python research/explore_step0_floor.py OUT.jsonl [--data name ...]; then --summary to print the table.
One JSON line per set, appended as it finishes (resumable). This script is the research record's; nothing in the
package imports it.
"""
import copy
import json

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.models.training import ValidationScore, paired_t
from gpssm_np.units import Scaling
from defaults_check import DATA, SIMULATORS, dataset
from rows import head_commit, readings_main


def reading(name, seed=0):
    ds = dataset(name)  # the training half only is read below
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed)
    scaling = Scaling.of([ds.y_train], [ds.u_train])  # model units, as fit standardises
    (y, u), = scaling.to_model([(ds.y_train, ds.u_train)])
    ys, us = [y], [u]
    plan = Plan()
    fit = DefaultFit(model, plan, seed=seed)
    floor = fit.floor(ys, us)
    folds = rolling_origin(ys, us, plan.origins)[-plan.gp_folds:]
    warm_errors, exact_errors = [], []
    for k, fold in enumerate(folds):
        start = floor.refit(fold.ys, fold.us)
        later = [w for f in folds[k:] for w in f.windows]
        score = ValidationScore.of_windows(later, num_particles=plan.num_particles, num_samples=plan.num_samples,
                                           seed=seed)
        warm, exact = copy.deepcopy(model), copy.deepcopy(model)  # as the selection copies it after stage 1
        warm.start_from_floor(start, fold.ys, fold.us, seed + k)
        exact.start_from_floor(start, fold.ys, fold.us, seed + k, gp_share=0.0)
        assert exact.linear_gaussian() is not None and warm.linear_gaussian() is None
        warm_errors += score.window_scores(warm)
        exact_errors += score.window_scores(exact)
    warm_errors, exact_errors = np.array(warm_errors), np.array(exact_errors)
    return {"data": name, "seed": seed, "floor": floor.summary(), "windows": len(warm_errors),
            "warm_rmse": float(warm_errors.mean()), "exact_rmse": float(exact_errors.mean()),
            "ratio": float(warm_errors.mean() / exact_errors.mean()),
            "share_worse": float(np.mean(warm_errors > exact_errors)),
            "t_exact_over_warm": paired_t(exact_errors, warm_errors),
            "warm_windows": warm_errors.tolist(), "exact_windows": exact_errors.tolist(), "commit": head_commit()}


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    print("| data | floor | windows | step 0 (particles) / exact floor | windows worse | t (exact over step 0) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        t = r["t_exact_over_warm"]
        print(f"| {r['data']} | {r['floor']['kind']} {tuple(r['floor']['orders'])} | {r['windows']} | "
              f"{r['ratio']:.3f} | {r['share_worse']:.2f} | {'-' if t is None else f'{t:.2f}'} |")
    ratios = np.array([r["ratio"] for r in rows])
    print(f"\ngeometric mean ratio {np.exp(np.mean(np.log(ratios))):.3f} over {len(rows)} sets; above 1.02 on "
          f"{int(np.sum(ratios > 1.02))}, below 0.98 on {int(np.sum(ratios < 0.98))}")


def main(argv=None):
    readings_main(__doc__.splitlines()[0], DATA + SIMULATORS, reading, summary, lambda row: f"{row['ratio']:.3f}", argv)


if __name__ == "__main__":
    main()
