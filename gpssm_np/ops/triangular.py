r"""Triangular solve as an autograd primitive over SciPy's LAPACK call (no Numba: a single O(M^2 K) LAPACK call).

Maths. For lower-triangular L (M, M) and right-hand side b (M,) or (M, K)::

    trans = "N":  x = L^{-1} b          trans = "T":  x = L^{-T} b

VJP (g = dL/dx; only the lower triangle of L is read, so its gradient is lower triangular)::

    trans = "N":  v = L^{-T} g,  db = v,  dL = -tril(v x^T)
    trans = "T":  v = L^{-1} g,  db = v,  dL = -tril(x v^T)

(From L x = b: dL x + L dx = 0, so <g, dx> = -<L^{-T} g, dL x>; likewise for L^T x = b.)

Written here instead of importing ``autograd.scipy.linalg``, whose package import also loads ``scipy.stats``,
``scipy.integrate`` and ``scipy.signal``: ~40 MB of memory and ~0.4 s of import time the package does not need.
Used by the references (``conditional.py``) and the unwhitened KL (``gp.py``). Lower-triangular L only.
"""
import autograd.numpy as anp
import numpy as np
import scipy.linalg
from autograd.extend import defvjp, primitive


def _check(L, b, trans):
    if trans not in ("N", "T"):
        raise ValueError(f"trans: expected 'N' or 'T', got {trans!r}")
    if np.ndim(L) != 2 or np.shape(L)[0] != np.shape(L)[1]:
        raise ValueError(f"L: expected a square matrix (M, M), got shape {np.shape(L)}")
    if np.ndim(b) not in (1, 2) or np.shape(b)[0] != np.shape(L)[0]:
        raise ValueError(f"b: expected shape ({np.shape(L)[0]},) or ({np.shape(L)[0]}, K), got {np.shape(b)}")


@primitive
def solve_lower(L, b, trans="N"):
    """x = L^{-1} b (trans="N") or x = L^{-T} b (trans="T") for lower-triangular L (M, M); b (M,) or (M, K)."""
    _check(L, b, trans)
    return scipy.linalg.solve_triangular(L, b, trans=trans, lower=True, check_finite=False)


def _as_matrix(x):
    return x if np.ndim(x) == 2 else x[:, None]


def _vjp_L(ans, L, b, trans="N"):
    def vjp(g):
        v = _as_matrix(solve_lower(L, g, "T" if trans == "N" else "N"))
        x = _as_matrix(ans)
        return -anp.tril(anp.dot(v, x.T) if trans == "N" else anp.dot(x, v.T))

    return vjp


def _vjp_b(ans, L, b, trans="N"):
    return lambda g: solve_lower(L, g, "T" if trans == "N" else "N")


defvjp(solve_lower, _vjp_L, _vjp_b)


def solve_lower_example(rng, M=4, K=3):
    """A well-conditioned lower-triangular L (M, M) and a right-hand side b (M, K)."""
    L = np.tril(rng.normal(size=(M, M)), -1) + np.diag(rng.uniform(1.0, 2.0, size=M))
    return L, rng.normal(size=(M, K))
