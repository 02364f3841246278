"""Point and probabilistic forecast scores (pure NumPy). y, mean, std: arrays of the same shape (T, d_y); a shape
that differs from y's is refused (NumPy would broadcast a (T, 1) target against a (T,) mean into (T, T))."""

import numpy as np
from scipy.special import ndtri

from . import _validation as check
from ._warn import warn

#: The largest factor :func:`widening_factors` puts on a predictive standard deviation.
MAX_WIDENING = 100.0


def _like_y(y, **arrays):
    """y and ``arrays`` as float arrays, each of y's shape (a ValueError naming the first that is not)."""
    y = np.asarray(y, dtype=np.float64)
    out = [y]
    for name, a in arrays.items():
        a = np.asarray(a, dtype=np.float64)
        if a.shape != y.shape:
            raise ValueError(f"{name}: expected shape {y.shape} like y, got {a.shape}")
        out.append(a)
    return out


def rmse(y, mean):
    """Root mean squared error over all entries."""
    y, mean = _like_y(y, mean=mean)
    return float(np.sqrt(np.mean((y - mean) ** 2)))


def nlpd(y, mean, std):
    """Mean negative log predictive density of y under independent Gaussians N(mean, std^2) (per entry)."""
    y, mean, std = _like_y(y, mean=mean, std=std)
    return float(np.mean(0.5 * np.log(2 * np.pi * std**2) + 0.5 * ((y - mean) / std) ** 2))


def coverage(y, lower, upper):
    """Fraction of entries of y inside [lower, upper]."""
    y, lower, upper = _like_y(y, lower=lower, upper=upper)
    return float(np.mean((y >= lower) & (y <= upper)))


def gaussian_interval(mean, std, level=0.95):
    """Central interval of N(mean, std^2) with probability ``level``: mean -+ z std, z = Phi^{-1}((1 + level) / 2)."""
    z = ndtri(0.5 + 0.5 * check.fraction(level, "level"))  # the standard normal quantile
    return mean - z * std, mean + z * std


def standardised_errors(y, mean, std):
    """|y - mean| / std per entry: the errors in units of the predictive standard deviation (what
    :func:`widening_factors` reads)."""
    return np.abs(np.asarray(y) - np.asarray(mean)) / np.asarray(std)


def widening_factors(z):
    """Per output, the factor on a forecast's predictive std that makes its 95 % intervals cover 95 % of held-out
    errors: the 95 % quantile of the standardised errors ``z`` = |y - mean| / std (n, d_y) over the Gaussian's
    1.959964, clipped to [1, :data:`MAX_WIDENING`], so that intervals are only widened (a split-conformal
    recalibration of the predictive scale; research/ablation_plan.md, amendments 7 and 8). The GP models' default fit
    computes it on its selection's windows, the linear models on their rolling-origin folds. A factor the clip holds
    at the cap is said in a UserWarning: the intervals then cover less than 95 % of such errors."""
    factors = np.quantile(z, 0.95, axis=0) / ndtri(0.975)
    if np.any(factors > MAX_WIDENING):
        warn(f"interval calibration: the held-out forecasts' errors were up to {np.max(factors):.3g} times "
             f"their predictive standard deviations (95 % quantile over 1.96); the widening is capped at "
             f"{MAX_WIDENING:g}, so the 95 % intervals cover less than 95 % of such errors (forecasts this "
             "far off usually mean too little training data for the model's orders)", UserWarning)
    return np.clip(factors, 1.0, MAX_WIDENING)
