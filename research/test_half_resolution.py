"""How finely the test halves can tell two models apart under causal: the two linear models (ARX() and
LGSSM(dim_x="auto") at their defaults; no seed, nothing chosen) on each set's test half, their per-window RMSEs, the
ratio of the means and the paired t of the per-window differences (``training.paired_t``, the acceptance's
statistic). One JSON line per set. It reads the test halves and scores only the linear baselines already in every
table; it chooses nothing.

Run: python research/test_half_resolution.py OUT.jsonl
This script is the research record's; nothing in the package imports it.
"""
import json
import sys

import numpy as np

import gpssm_np as gp
from gpssm_np.models.training import paired_t

from defaults_check import DATA, SIMULATORS, dataset

if __name__ == "__main__":
    out = sys.argv[1]
    for name in DATA + SIMULATORS:
        ds = dataset(name)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        arx = gp.ARX(dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
        lgssm = gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
        a, b = (gp.evaluate(m, ds, "causal", seed=0) for m in (arx, lgssm))
        wa, wl = np.array(a["per_window"]), np.array(b["per_window"])
        row = {"data": name, "windows": len(wa), "arx": a["rmse"], "lgssm": b["rmse"],
               "lgssm_over_arx": b["rmse"] / a["rmse"], "t_lgssm_over_arx": paired_t(wl, wa),
               "window_ratios": (wl / wa).tolist()}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
