r"""One draw from each of N small Gaussians picked by index, from given standard normals: the sampling of the particle
filters (x_t^n from the transition or from its update at the ancestor a_n).

Maths. For n = 1..N, the index i = index[n] of one of the Gaussians N(mean_i, cov_i) on R^d and eps_n ~ N(0, I_d)::

    sym(cov_i) = L_i L_i^T              lower Cholesky factor, sym(A) = (A + A^T) / 2
    x_n = mean_i + L_i eps_n            ~ N(mean_i, sym(cov_i))

The standard normals are drawn by the caller (so the random stream is the caller's), the factor is computed per
draw (an index may repeat after resampling; at d = 4 a factorisation costs less than storing it). O(N d^3).

No gradient (filters only). :func:`sample_gaussians` returns the first n whose covariance is not positive definite
(-1 when none), the draws then unfinished; the caller raises the error.
"""
import numpy as np

from ._compile import jit
from ._primitive import to_c_f64
from .linalg import cholesky_into


@jit
def _sample(mean, cov, index, eps, x):
    d = mean.shape[1]
    L = np.empty((d, d))
    for n in range(index.shape[0]):
        i = index[n]
        if not cholesky_into(cov[i], L):
            return n
        for a in range(d):
            s = 0.0
            for b in range(a + 1):
                s += L[a, b] * eps[n, b]
            x[n, a] = mean[i, a] + s
    return -1


def sample_gaussians(mean, cov, index, eps):
    """x[n] = mean[index[n]] + L eps[n], L L^T = sym(cov[index[n]]) (module docstring). ``mean`` (K, d), ``cov`` (K,
    d, d), ``index`` (N,) of integers in 0..K-1, ``eps`` (N, d) standard normals. Returns (x (N, d), failed): the
    first n whose covariance is not positive definite (x then unfinished), or -1."""
    mean, cov, eps = (to_c_f64(a) for a in (mean, cov, eps))
    index = np.ascontiguousarray(index, dtype=np.intp)
    if index.shape != eps.shape[:1] or (index.size and not 0 <= index.min() <= index.max() < mean.shape[0]):
        raise ValueError(f"index: expected {eps.shape[0]} indices in 0..{mean.shape[0] - 1}, got shape "
                         f"{index.shape}")
    x = np.empty(eps.shape)
    return x, _sample(mean, cov, index, eps, x)


def sample_gaussians_example(rng, K=4, N=6, d=3):
    """Small valid arguments (mean, cov, index, eps): K = 4 Gaussians on R^3, N = 6 draws with repeated indices."""
    W = rng.normal(size=(K, d, d))
    return (rng.normal(size=(K, d)), W @ np.swapaxes(W, 1, 2) + 0.1 * np.eye(d), rng.integers(0, K, size=N),
            rng.standard_normal((N, d)))
