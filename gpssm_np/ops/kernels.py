r"""Stationary ARD kernel matrices K(X, Z) for Q latent GPs, with a hand-derived VJP.

Maths (Rasmussen & Williams 2006, Eqs. 4.9 and 4.17; one kernel k_q per latent GP h_q of the paper's
Eq. (6); the authors' code uses Matern-5/2, see docs/design.md, authors' code s3)::

    r2[q, n, j] = sum_d (X[q, n, d] - Z[q, j, d])^2 / l[q, d]^2
    squared exponential ("se"):  k = s2[q] * exp(-r2 / 2)
    Matern-5/2 ("matern52"):    k = s2[q] * (1 + a + a^2 / 3) * exp(-a),   a = sqrt(5 r2)

First-order derivatives used by the VJP (finite at r = 0, so K(Z, Z) differentiates cleanly)::

    dk/dr2 = -k / 2                              (se)
    dk/dr2 = -(5/6) s2 (1 + a) exp(-a)           (matern52)
    dk/ds2 = k / s2
    dr2/dX[d] = 2 (X[d] - Z[d]) / l[d]^2 = -dr2/dZ[d]
    dr2/dl[d] = -2 (X[d] - Z[d])^2 / l[d]^3

Shapes: X (N, D) shared by all latent GPs, or (Q, N, D); Z (Q, M, D); lengthscale (Q, D); variance (Q,);
result K (Q, N, M). D = d_x + d_u is the GP input dimension.

The fused rollout (``ops/rollout.py``) evaluates the same two profiles inline in its particle-vectorised loops
(with ``_fastmath.exp_fast``); ``tests/test_backends.py`` holds the two to the reference.
"""
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from ._compile import jit
from ._primitive import to_c_f64, vjp_all_argnums

#: Kernel names and the integer codes the jitted code branches on.
KERNELS = {"se": 0, "matern52": 1}

# Below this r2 the reference takes sqrt(r2) at the floor: sqrt has an infinite derivative at 0, while the kernel
# itself is flat there (dk/dr2 is finite), so the clamped value changes k by O(1e-36) and its gradient by nothing.
_R2_TINY = 1e-36


def kernel_code(kind):
    """Integer code of the kernel name ``kind`` ("se" or "matern52"), or a ValueError."""
    try:
        return KERNELS[kind]
    except (KeyError, TypeError):
        raise ValueError(f"kernel: expected one of {sorted(KERNELS)}, got {kind!r}") from None


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy): the executable specification
# ---------------------------------------------------------------------------------------------------------------
def kernel_matrix_reference(X, Z, lengthscale, variance, kind="matern52"):
    """K(X, Z) in plain autograd.numpy. Same arguments and result as :func:`kernel_matrix`."""
    kernel_code(kind)
    X3 = X if anp.ndim(X) == 3 else X[None]
    scaled = (X3[:, :, None, :] - Z[:, None, :, :]) / lengthscale[:, None, None, :]  # (Q, N, M, D)
    r2 = anp.sum(scaled**2, axis=-1)  # (Q, N, M)
    if kind == "se":
        profile = anp.exp(-0.5 * r2)
    else:
        a = anp.sqrt(5.0 * anp.maximum(r2, _R2_TINY))
        profile = (1.0 + a + a * a / 3.0) * anp.exp(-a)
    return variance[:, None, None] * profile


# ---------------------------------------------------------------------------------------------------------------
# Jitted building block, forward and VJP
# ---------------------------------------------------------------------------------------------------------------
@jit(inline=True)  # a scalar helper of both kernels below
def kernel_profile(r2, code):
    """(k / s2, (dk/dr2) / s2) at squared scaled distance r2 for kernel ``code``."""
    if code == 0:
        e = math.exp(-0.5 * r2)
        return e, -0.5 * e
    a = math.sqrt(5.0 * r2)
    e = math.exp(-a)
    return (1.0 + a + a * a / 3.0) * e, -(5.0 / 6.0) * (1.0 + a) * e


@jit
def _kernel_matrix_fwd(X3, Z, lengthscale, variance, code):
    # X3 is (1, N, D) when the inputs are shared by all latent GPs, else (Q, N, D).
    Q, M, D = Z.shape
    N = X3.shape[1]
    shared = X3.shape[0] == 1
    K = np.empty((Q, N, M))
    for q in range(Q):
        x = X3[0] if shared else X3[q]
        for n in range(N):
            for j in range(M):
                r2 = 0.0
                for d in range(D):
                    s = (x[n, d] - Z[q, j, d]) / lengthscale[q, d]
                    r2 += s * s
                K[q, n, j] = variance[q] * kernel_profile(r2, code)[0]
    return K


@jit
def _kernel_matrix_vjp(G, X3, Z, lengthscale, variance, code):
    # G = dL/dK (Q, N, M). Returns dL/dX3, dL/dZ, dL/dlengthscale, dL/dvariance (formulas in the module docstring).
    Q, M, D = Z.shape
    N = X3.shape[1]
    shared = X3.shape[0] == 1
    gX = np.zeros(X3.shape)
    gZ = np.zeros(Z.shape)
    gl = np.zeros(lengthscale.shape)
    gs2 = np.zeros(Q)
    for q in range(Q):
        qx = 0 if shared else q
        for n in range(N):
            for j in range(M):
                r2 = 0.0
                for d in range(D):
                    s = (X3[qx, n, d] - Z[q, j, d]) / lengthscale[q, d]
                    r2 += s * s
                p, dp = kernel_profile(r2, code)
                gs2[q] += G[q, n, j] * p
                c = G[q, n, j] * variance[q] * dp  # dL/dr2
                for d in range(D):
                    diff = X3[qx, n, d] - Z[q, j, d]
                    inv_l2 = 1.0 / (lengthscale[q, d] * lengthscale[q, d])
                    t = 2.0 * c * diff * inv_l2
                    gX[qx, n, d] += t
                    gZ[q, j, d] -= t
                    gl[q, d] -= t * diff / lengthscale[q, d]
    return gX, gZ, gl, gs2


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
def _as_3d(X):
    X = to_c_f64(X)
    return X[None] if X.ndim == 2 else X


@primitive
def kernel_matrix(X, Z, lengthscale, variance, kind="matern52"):
    """K[q] = k_q(X[q], Z[q]) for every latent GP q.

    Parameters
    ----------
    X : array (N, D) or (Q, N, D)
        Inputs; a 2-D X is shared by all Q latent GPs.
    Z : array (Q, M, D)
        Inducing inputs of each latent GP.
    lengthscale : array (Q, D)
        ARD lengthscales l_q (positive).
    variance : array (Q,)
        Kernel variances s2_q (positive).
    kind : {"matern52", "se"}
        Kernel family.

    Returns
    -------
    K : array (Q, N, M)
    """
    return _kernel_matrix_fwd(_as_3d(X), to_c_f64(Z), to_c_f64(lengthscale), to_c_f64(variance), kernel_code(kind))


def _kernel_matrix_make_vjp(ans, X, Z, lengthscale, variance, kind="matern52"):
    def vjp(G):
        gX, gZ, gl, gs2 = _kernel_matrix_vjp(
            to_c_f64(G), _as_3d(X), to_c_f64(Z), to_c_f64(lengthscale), to_c_f64(variance), kernel_code(kind)
        )
        return gX.reshape(np.shape(X)), gZ, gl, gs2

    return vjp


defvjp_argnums(kernel_matrix, vjp_all_argnums(_kernel_matrix_make_vjp))


def kernel_matrix_example(rng):
    """Small valid arguments for tests and warm-up: (X, Z, lengthscale, variance) with Q=2, N=5, M=4, D=3."""
    Q, N, M, D = 2, 5, 4, 3
    return (
        rng.normal(size=(N, D)),
        rng.normal(size=(Q, M, D)),
        rng.uniform(0.5, 2.0, size=(Q, D)),
        rng.uniform(0.5, 2.0, size=Q),
    )
