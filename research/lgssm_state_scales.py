"""The scale of an LGSSM floor's states in the emission basis (decision AZ of research/ablation_plan.md, its "Why"):
for each of the 25 held-out cuts (the first 70 % of each training half, z-scored), ``LGSSM(dim_x="auto")`` as the
floor fits it (``floor.fit_kind``), written in the GP model's basis (``warm_start.floor_warm_start``); printed: d_x,
the lower states' standard deviations under the stationary prior E P0 E^T (the output states' are 1 by the
z-scoring), and the condition number of the lower block. Training data only.

Run: python research/lgssm_state_scales.py
This script is the research record's; nothing in the package imports it.
"""
import numpy as np

from decision_m import NAMES, held_out_cut

from gpssm_np.models.floor import fit_kind
from gpssm_np.models.warm_start import floor_warm_start


def zscored(a):
    return (a - a.mean(axis=0)) / a.std(axis=0)


def main():
    for name in NAMES:
        ds = held_out_cut(name)
        ys, us = [zscored(ds.y_train)], [zscored(ds.u_train)]
        model, _ = fit_kind("lgssm", ys, us)
        P, d_y = floor_warm_start(model, ys, us).x0_cov, ds.y_train.shape[1]
        lower = P[d_y:, d_y:]
        if not len(lower):
            print(f"{name:18s} d_x {len(P):2d}  no lower states")
            continue
        sd = np.sqrt(np.diag(lower))
        print(f"{name:18s} d_x {len(P):2d}  lower sd {sd.min():.3g}-{sd.max():.3g}  cond {np.linalg.cond(lower):.3g}")


if __name__ == "__main__":
    main()
