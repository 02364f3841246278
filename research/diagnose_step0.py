"""How the selection's step 0 compares with the floor it stands for (decision T's diagnostic): on each training half
(seed 0; the selection cut to one step; stage 3b off; no test half is read), the first step-size candidate's
step-0 window errors (the warm start, GP share 0.5, forecast by the particle filter) beside the exact floor form
(``GPSSM.start_from_floor`` with ``gp_share`` 0: A = 0, the Kalman forecast) of each fold run on the same windows
and with the same seeds. One JSON line per set: the floor, the number of windows, both means, their ratio and the
paired t of the particle errors over the exact ones (``training.paired_t``).

Run: python research/diagnose_step0.py OUT.jsonl name [name ...]
This script is the research record's; nothing in the package imports it.
"""
import copy
import json
import sys

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

from defaults_check import dataset

CAUGHT = []
SELECTION = default_fit.DefaultFit.selection


def selection(self, floor, folds, saved=None):
    """The package's selection, its floor, folds and runs kept for the comparison."""
    runs, record = SELECTION(self, floor, folds, saved)
    CAUGHT.append((self, floor, folds, runs, record))
    return runs, record


def compare(name):
    CAUGHT.clear()
    ds = dataset(name)
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
    model.fit(ds.y_train, ds.u_train, plan=default_fit.Plan(max_steps=1, eval_every=1), progress=False)
    fit, floor, folds, runs, record = CAUGHT[0]
    exact = []
    for k, fold in enumerate(folds):  # the first candidate's runs come first, one per fold
        run_model, _, score = runs[k]
        as_floor = copy.deepcopy(run_model)
        as_floor.start_from_floor(floor.refit(fold.ys, fold.us), fold.ys, fold.us, fit.seed + k, gp_share=0.0)
        exact += score.window_scores(as_floor)
    particle = record[0]["windows"][0]
    return {"data": name, "floor": floor.kind, "orders": floor.summary()["orders"], "windows": len(exact),
            "particle_step0": float(np.mean(particle)), "exact_floor": float(np.mean(exact)),
            "ratio": float(np.mean(particle) / np.mean(exact)), "t_particle_over_exact": paired_t(particle, exact)}


if __name__ == "__main__":
    default_fit.DefaultFit.selection = selection
    default_fit.DefaultFit.other_kind = lambda self: None  # stage 3b off: only the first selection is compared
    out = sys.argv[1]
    for name in sys.argv[2:]:
        row = compare(name)
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
