"""Gradient checks shared by the op tests: a hand-derived VJP against autograd on the reference, and against
central finite differences, through a random linear functional of the output."""
import numpy as np
from autograd import grad
from autograd.builtins import SequenceBox


def _project(out, weights):
    """sum of weights * out, for an array output or a tuple of array outputs (also a traced tuple, which autograd
    wraps in a SequenceBox)."""
    if isinstance(out, (tuple, list, SequenceBox)):
        return sum(_project(o, w) for o, w in zip(out, weights))
    import autograd.numpy as anp

    return anp.sum(out * weights)


def random_weights(out, rng):
    if isinstance(out, (tuple, list)):
        return [random_weights(o, rng) for o in out]
    return rng.normal(size=np.shape(out))


def rel_err(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


def check_vjp_against_reference(fn, reference, args, argnums, rng, rtol=1e-6, **kwargs):
    """grad of <w, fn(args)> equals grad of <w, reference(args)> for each argnum."""
    weights = random_weights(reference(*args, **kwargs), rng)
    for i in argnums:
        g_fn = grad(lambda *a: _project(fn(*a, **kwargs), weights), i)(*args)
        g_ref = grad(lambda *a: _project(reference(*a, **kwargs), weights), i)(*args)
        assert np.shape(g_fn) == np.shape(args[i])
        assert rel_err(g_fn, g_ref) <= rtol, f"argument {i}: relative error {rel_err(g_fn, g_ref):.2e}"


def symmetric_part(direction):
    """Projection of a stack of square matrices (last two axes) onto symmetric matrices."""
    return 0.5 * (direction + np.swapaxes(direction, -1, -2))


def lower_part(direction):
    """Projection of a stack of square matrices (last two axes) onto lower-triangular matrices."""
    return np.tril(direction)


def check_vjp_finite_differences(fn, args, argnums, rng, rtol=1e-6, step=1e-6, directions=None, **kwargs):
    """grad of <w, fn(args)> against central differences along a random direction, for each argnum.

    ``directions`` optionally maps an argnum to a projection applied to its random direction (e.g.
    :func:`symmetric_part` for a symmetric-matrix argument whose gradient follows the symmetric convention)."""
    directions = directions or {}
    weights = random_weights(fn(*args, **kwargs), rng)

    def scalar(*a):
        return _project(fn(*a, **kwargs), weights)

    for i in argnums:
        g = np.asarray(grad(scalar, i)(*args))
        direction = directions.get(i, lambda d: d)(rng.normal(size=np.shape(args[i])))
        plus = list(args)
        minus = list(args)
        plus[i] = args[i] + step * direction
        minus[i] = args[i] - step * direction
        fd = (scalar(*plus) - scalar(*minus)) / (2 * step)
        analytic = np.sum(g * direction)
        assert abs(fd - analytic) <= rtol * max(abs(analytic), 1.0), (
            f"argument {i}: finite difference {fd:.10e} vs VJP {analytic:.10e}"
        )
