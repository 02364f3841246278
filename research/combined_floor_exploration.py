"""Would a floor that holds both linear kinds escape the kind reversal? An exploration on training data only,
deciding nothing (research/ablation_plan.md, "the two kinds' forecasts averaged").

On the 36 cuts of the real sets' training halves of research/kind_evidence.py (50, 60, 70 and 80 %), ``ARX()`` and
``LGSSM(dim_x="auto")`` at their defaults are fitted to the first part, and the held-out rest is forecast under
causal and simulate by each and by their equal mixture (the two forecasts' samples pooled, so its point forecast is
the average of the two; ``gp.evaluate``'s scores, seed 0). Each row keeps the floor's choice too (the kind of the
lower mean fold error, ``fold_errors_``). ``--summary``: per protocol, the geometric mean over the cuts of each
forecast's held-out error over the better kind's, and on how many cuts each is within 2 % of it.

The mixture is not a state-space model the GP model can hold as it stands (each kind filters the outputs with its
own gain); it bounds what a floor holding both could gain.

Run: python research/combined_floor_exploration.py OUT [--data name ...]; then OUT [OUT ...] --summary.
This script is the research record's; nothing in the package imports it.
"""
import json
import math

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import mean_error
from gpssm_np.forecast import Forecast

from cut_targets import linear_model
from kind_evidence import KINDS, PROTOCOLS, cuts, main


class Mixture:
    """The equal mixture of two fitted models' forecasts, with the surface ``gp.evaluate`` reads."""

    def __init__(self, first, second):
        self.first, self.second, self.spec = first, second, first.spec
        self.scaling_ = getattr(first, "scaling_", None)

    def forecast(self, u_future, **options):
        a, b = self.first.forecast(u_future, **options), self.second.forecast(u_future, **options)
        samples = np.concatenate([a.samples, b.samples])
        return Forecast(samples=samples, states=samples, obs_var=(a.obs_var + b.obs_var) / 2, y_mean=a.y_mean,
                        y_std=a.y_std, origin=a.origin)


def run(out, names):
    for name, fraction, ds in cuts(out, names):
        d_y, d_u = ds.y_train.shape[1], ds.u_train.shape[1]
        models = {kind: linear_model(kind, d_y, d_u).fit(ds.y_train, ds.u_train) for kind in KINDS}
        models["mix"] = Mixture(models["arx"], models["lgssm"])
        row = {"data": name, "fraction": fraction,
               "folds_pick": min(KINDS, key=lambda k: (mean_error(models[k].fold_errors_ or []), KINDS.index(k)))}
        for who, model in models.items():
            row[who] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")


def summary(paths):
    rows = [json.loads(line) for path in paths for line in open(path)]
    for p in PROTOCOLS:
        ratios = {"folds' kind": [], "ARX always": [], "mixture": []}
        for r in rows:
            best = min(r["arx"][p], r["lgssm"][p])
            ratios["folds' kind"].append(r[r["folds_pick"]][p] / best)
            ratios["ARX always"].append(r["arx"][p] / best)
            ratios["mixture"].append(r["mix"][p] / best)
        for who, values in ratios.items():
            gm = math.exp(sum(math.log(v) for v in values) / len(values))
            print(f"{p}: {who}: geometric mean {gm:.3f} of the better kind's error; within 2 % of it on "
                  f"{sum(v <= 1.02 for v in values)} of {len(values)} cuts; below it on {sum(v < 1 for v in values)}; "
                  f"worst {max(values):.3f}")


if __name__ == "__main__":
    main(run, summary)
