r"""Conditioning of N small Gaussians on one linear-Gaussian observation, Joseph form: the Kalman update of every
particle of the fully adapted particle filter, and of the Kalman filter's one Gaussian (``kalman.condition`` is
this op with its error message).

Maths. For n = 1..N, a Gaussian N(m_n, S_n) on R^d, and y = C x + e, e ~ N(0, R), C (k, d), R (k, k)::

    S_y = sym(C S_n C^T + R) = L L^T          predictive covariance of y and its lower Cholesky factor
    r   = y - C m_n,   z = L^{-1} r
    log N(y; C m_n, S_y) = -(k log 2 pi + 2 sum_a log L_aa + z^T z) / 2
    G   = S_y^{-1} C S_n = L^{-T} (L^{-1} C S_n)      the transposed gain K^T (k, d), two triangular solves
    m'  = m_n + K r
    S'  = (I - K C) S_n (I - K C)^T + K R K^T       Joseph form: symmetric positive (semi-)definite for any K

with sym(A) = (A + A^T) / 2, so that S_y's Cholesky factor is that of an exactly symmetric matrix
(``linalg.symmetrise``). T1 = (I - K C) S_n is computed as S_n - K (C S_n) (C S_n is at hand) and S' as
T1 - (T1 C^T) K^T + K R K^T, so no d x d x d product is formed (as in ``ops.adapted_step``); of S' only the lower
triangle, copied to the upper one: S' is exactly symmetric. Each Gaussian is one pass of small loops, O(k d^2 + k^3)
operations; at the sizes of a particle filter step (N = 500, d = 4, k = 1) the batched NumPy version (einsum,
solve, cholesky over (N, d, d) stacks) spent its time in call overhead and in LAPACK calls on 1 x 1 and 4 x 4
matrices.

No gradient (filters only). :func:`condition_gaussians` returns the index of the first Gaussian whose S_y is not
positive definite (-1 when none), its outputs then unfinished; the caller raises the error.
"""
import math

import numpy as np

from .._config import FASTMATH
from ._compile import jit
from ._primitive import to_c_f64
from .linalg import cholesky_into

_LOG_2PI = math.log(2.0 * math.pi)


@jit(fastmath=FASTMATH)
def condition_kernel(mean, cov, C, R, y, post_mean, post_cov, log_lik):
    N, d = mean.shape
    k = C.shape[0]
    CS, G, RG, Sy, L = np.empty((k, d)), np.empty((k, d)), np.empty((k, d)), np.empty((k, k)), np.empty((k, k))
    resid, z, inv_diag = np.empty(k), np.empty(k), np.empty(k)
    T1, W = np.empty((d, d)), np.empty((d, k))
    for n in range(N):
        S = cov[n]
        for a in range(k):
            for e in range(d):
                s = 0.0
                for j in range(d):
                    s += C[a, j] * S[j, e]
                CS[a, e] = s
        for a in range(k):
            for b in range(k):
                s = 0.0
                for e in range(d):
                    s += CS[a, e] * C[b, e]
                Sy[a, b] = s + R[a, b]
        if not cholesky_into(Sy, L):
            return n
        # log-likelihood: z = L^{-1} r by forward substitution
        quad, logdet = 0.0, 0.0
        for a in range(k):
            inv_diag[a] = 1.0 / L[a, a]  # divisions are slow: one per pivot, then products
            s = y[a]
            for j in range(d):
                s -= C[a, j] * mean[n, j]
            resid[a] = s
            for b in range(a):
                s -= L[a, b] * z[b]
            z[a] = s * inv_diag[a]
            quad += z[a] * z[a]
            logdet += math.log(L[a, a])
        log_lik[n] = -0.5 * (k * _LOG_2PI + 2.0 * logdet + quad)
        # G = L^{-T} L^{-1} C S, one column at a time
        for e in range(d):
            for a in range(k):
                s = CS[a, e]
                for b in range(a):
                    s -= L[a, b] * G[b, e]
                G[a, e] = s * inv_diag[a]
            for a in range(k - 1, -1, -1):
                s = G[a, e]
                for b in range(a + 1, k):
                    s -= L[b, a] * G[b, e]
                G[a, e] = s * inv_diag[a]
        for i in range(d):
            s = 0.0
            for a in range(k):
                s += G[a, i] * resid[a]
            post_mean[n, i] = mean[n, i] + s
        for i in range(d):  # T1 = (I - K C) S = S - K (C S), RG = R G
            for j in range(d):
                s = S[i, j]
                for a in range(k):
                    s -= G[a, i] * CS[a, j]
                T1[i, j] = s
            for a in range(k):
                s = 0.0
                for b in range(k):
                    s += R[a, b] * G[b, i]
                RG[a, i] = s
        for i in range(d):  # W = T1 C^T
            for a in range(k):
                s = 0.0
                for e in range(d):
                    s += T1[i, e] * C[a, e]
                W[i, a] = s
        for i in range(d):  # S' = T1 (I - K C)^T + G^T R G = T1 - W G + G^T R G: the lower triangle, mirrored
            for j in range(i + 1):
                s = T1[i, j]
                for a in range(k):
                    s += G[a, i] * RG[a, j] - W[i, a] * G[a, j]
                post_cov[n, i, j] = s
                post_cov[n, j, i] = s
    return -1


def condition_gaussians(mean, cov, C, R, y):
    """Condition N(mean[n], cov[n]) on y = C x + e, e ~ N(0, R), for every n (module docstring).

    ``mean`` (N, d), ``cov`` (N, d, d), ``C`` (k, d), ``R`` (k, k), ``y`` (k,). Returns (post_mean (N, d), post_cov
    (N, d, d) exactly symmetric, log N(y; C mean[n], C cov[n] C^T + R) (N,), failed): ``failed`` the index of the
    first n whose predictive covariance is not positive definite (the outputs then unfinished), or -1."""
    mean, cov, C, R, y = (to_c_f64(a) for a in (mean, cov, C, R, y))
    N, d = mean.shape
    post_mean, post_cov, log_lik = np.empty((N, d)), np.empty((N, d, d)), np.empty(N)
    failed = condition_kernel(mean, cov, C, R, y, post_mean, post_cov, log_lik)
    return post_mean, post_cov, log_lik, failed


def condition_gaussians_example(rng, N=5, d=3, k=2):
    """Small valid arguments (mean, cov, C, R, y): N = 5 Gaussians on R^3 observed through k = 2 outputs."""
    W = rng.normal(size=(N, d, d))
    V = rng.normal(size=(k, k))
    return (rng.normal(size=(N, d)), W @ np.swapaxes(W, 1, 2) + 0.1 * np.eye(d), rng.normal(size=(k, d)),
            V @ V.T + 0.2 * np.eye(k), rng.normal(size=k))
