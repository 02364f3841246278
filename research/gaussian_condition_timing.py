"""Time ``ops.gaussian_condition.condition_gaussians`` (N Gaussians on R^d conditioned on k outputs) at the sizes of
the particle filters (N = 200-800 particles, d = 4-40 states) and of the LGSSM's Kalman filter (N = 1), best of five
repeats, and save the posterior covariances so that two checkouts can be compared::

    python research/gaussian_condition_timing.py OTHER_CHECKOUT other   # e.g. a git worktree of an older commit
    python research/gaussian_condition_timing.py . this
    python research/gaussian_condition_timing.py --compare other this

This script is the research record's; nothing in the package imports it.
"""
import glob
import os
import sys
import tempfile
import time

import numpy as np

SIZES = [(200, 40, 4), (200, 30, 1), (800, 7, 1), (500, 4, 1), (1, 40, 4)]
OUT = os.path.join(tempfile.gettempdir(), "gaussian_condition_timing")


def time_checkout(path, label):
    sys.path.insert(0, os.path.abspath(path))
    from gpssm_np.ops.gaussian_condition import condition_gaussians
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(0)
    for N, d, k in SIZES:
        W, V = rng.normal(size=(N, d, d)), rng.normal(size=(k, k))
        args = (rng.normal(size=(N, d)), W @ np.swapaxes(W, 1, 2) + 0.1 * np.eye(d), rng.normal(size=(k, d)),
                V @ V.T + 0.2 * np.eye(k), rng.normal(size=k))
        post_cov = condition_gaussians(*args)[1]
        reps, best = max(3, int(2e7 / (N * d * d * (d + k)))), np.inf
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(reps):
                condition_gaussians(*args)
            best = min(best, (time.perf_counter() - start) / reps)
        np.save(os.path.join(OUT, f"{label}_{N}_{d}_{k}.npy"), post_cov)
        print(f"N={N} d={d} k={k}: {best * 1e6:.1f} us")


def compare(a, b):
    for path in sorted(glob.glob(os.path.join(OUT, f"{a}_*.npy"))):
        x, y = np.load(path), np.load(path.replace(f"{a}_", f"{b}_"))
        print(os.path.basename(path)[len(a) + 1:-4], "largest relative difference",
              np.abs(x - y).max() / np.abs(x).max())


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        time_checkout(sys.argv[1], sys.argv[2])
