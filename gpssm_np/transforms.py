"""Maps between unconstrained parameters (what the optimiser moves) and their constrained values.

positive(raw) = softplus(raw) + POSITIVE_FLOOR, softplus(x) = log(1 + exp(x)), evaluated stably as
logaddexp(0, x); its inverse is raw = log(expm1(value - POSITIVE_FLOOR)).
"""
import autograd.numpy as anp
import numpy as np

from ._config import POSITIVE_FLOOR


def positive(raw):
    """softplus(raw) + POSITIVE_FLOOR (autograd-differentiable)."""
    return anp.logaddexp(0.0, raw) + POSITIVE_FLOOR


def positive_inverse(value):
    """The raw parameter whose :func:`positive` is ``value`` (value > POSITIVE_FLOOR)."""
    value = np.asarray(value, dtype=np.float64)
    if np.any(value <= POSITIVE_FLOOR):
        raise ValueError(f"positive parameter: expected values > {POSITIVE_FLOOR}, got min {value.min()}")
    excess = value - POSITIVE_FLOOR
    # log(expm1(v)) = v + log(1 - exp(-v)), stable for large v
    return excess + np.log(-np.expm1(-excess))


def lower_triangle(square):
    """The lower triangle (with diagonal) of a stack of square matrices (..., M, M)."""
    M = square.shape[-1]
    return square * np.tril(np.ones((M, M)))
