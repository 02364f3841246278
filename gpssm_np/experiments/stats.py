r"""Paired statistics over seeds for comparing two models on the same data set.

Two models run with the same seeds 0..n-1 (same data, same evaluation noise per seed) give paired scores a_i, b_i.
:func:`paired_bootstrap` reports the mean of the per-seed differences d_i = a_i - b_i with a percentile bootstrap
interval: the seeds are resampled with replacement ``num_resamples`` times and the interval is the central
``level`` range of the resampled means. With few seeds the interval is coarse (5 seeds have only 126 distinct
resamples) and tends to be too narrow; it describes these seeds' spread, it is not a test.
"""
import numpy as np

from .. import _validation as check


def paired_bootstrap(a, b, num_resamples=10_000, level=0.95, seed=0):
    """Mean per-seed difference mean(a - b) and its percentile bootstrap interval.

    Parameters
    ----------
    a, b : array_like (n,)
        Paired scores (same seed at the same index), n >= 1, finite.
    num_resamples : int
        Bootstrap resamples of the n seeds.
    level : float in (0, 1)
        Coverage of the interval.
    seed : int
        Seed of the resampling (the result is a deterministic function of the inputs and the seed).

    Returns
    -------
    dict with "mean" (mean difference), "low" and "high" (interval bounds), "n" (number of pairs).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise ValueError(f"a, b: expected two non-empty 1-D arrays of equal length, got shapes {a.shape} and "
                         f"{b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a, b: expected finite scores")
    if isinstance(num_resamples, bool) or not isinstance(num_resamples, (int, np.integer)) or num_resamples < 1:
        raise ValueError(f"num_resamples: expected a positive integer, got {num_resamples!r}")
    level = check.fraction(level, "level")
    diff = a - b
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(num_resamples, diff.size))].mean(axis=1)
    low, high = np.quantile(means, [(1.0 - level) / 2.0, 1.0 - (1.0 - level) / 2.0])
    return {"mean": float(diff.mean()), "low": float(low), "high": float(high), "n": int(diff.size)}


def paired_scores(rows, model_a, model_b, dataset, protocol, key="rmse"):
    """(seeds, scores of model_a, scores of model_b) over the seeds both have with finite scores, from sweep rows (a
    diverged run's NaN or inf stays in its table row but has no difference to pair)."""
    by_model = {model_a: {}, model_b: {}}
    for row in rows:
        if row["dataset"] == dataset and row["protocol"] == protocol and row["model"] in by_model:
            by_model[row["model"]][row["seed"]] = row[key]
    a, b = by_model[model_a], by_model[model_b]
    seeds = sorted(s for s in set(a) & set(b) if _finite(a[s]) and _finite(b[s]))
    return seeds, [a[s] for s in seeds], [b[s] for s in seeds]


def _finite(value):
    return value is not None and bool(np.isfinite(value))
