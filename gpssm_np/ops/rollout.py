r"""Fused particle rollout of a sparse-GP state-space model: one autograd primitive for all B x S x T steps.

Forward (paper Eq. state_conditional, sampled through the latent GPs so the d_x x d_x covariance is never formed).
Particle n in 0..N-1 (N = B S) belongs to sequence b = n // S. For t = 1..T::

    xt = [x_{t-1}, u_t]                                   GP input, (D,) with D = d_x + d_u
    k_q = k_q(Z_q, xt)                                    (M,)   kernel row, ops/kernels.py
    mean_q = k_q . alpha_q                                paper m_{h_t,q} (whitened or not, via alpha and B)
    var_q = max(s2_q - k_q^T B_q k_q, VAR_FLOOR)          paper S_{h_t,q}
    h_q = mean_q + sqrt(var_q) eps_h[t, n, q]
    x_t = mu(x_{t-1}) + A h + sqrt_q * eps_x[t, n]        mu = 0, or identity when residual=True

so x_t ~ N(mu + A m_h, A S_h A^T + diag(q)) exactly. Time convention: x_0 emits nothing; y_t is emitted by x_t.
Output X[t-1] = x_t, shape (T, N, d_x).

Reverse (first order, back-propagation through time). With g = dL/dx_t (from X's cotangent plus what flows back
from step t+1)::

    dA += g h^T ;  dsqrt_q += g * eps_x ;  hbar = A^T g ;  (residual) dx_{t-1} += g
    meanbar_q = hbar_q ;  varbar_q = hbar_q eps_h / (2 sqrt(var_q))   (0 where the floor is active)
    dalpha_q += meanbar_q k_q ;  dB_q -= varbar_q k_q k_q^T ;  ds2_q += varbar_q
    kbar_q = meanbar_q alpha_q - 2 varbar_q B_q k_q
    kernel VJP of kbar_q -> dZ_q, dl_q, ds2_q and d xt, whose first d_x entries flow into dx_{t-1}

Cost O(B S T (Q M^2 + Q M D + d_x Q)) per evaluation, no Python loop over time. The forward pass keeps k, dk/dr2
and B k for the reverse pass (O(T N Q M) memory) instead of recomputing them.

Shapes: x0 (N, d_x); U (B, T, d_u) (d_u may be 0); Z (Q, M, D); lengthscale (Q, D); variance (Q,); alpha (Q, M);
B (Q, M, M) symmetric; A (d_x, Q); sqrt_q (d_x,); eps_h (T, N, Q); eps_x (T, N, d_x). Differentiable: x0, Z,
lengthscale, variance, alpha, B, A, sqrt_q.
"""
import math
import weakref

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from .._config import VAR_FLOOR
from ._jit import jit, to_c_f64, vjp_all_argnums
from .kernels import kernel_code, kernel_matrix_reference, kernel_profile


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy, loop over time)
# ---------------------------------------------------------------------------------------------------------------
def rollout_reference(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, kind="matern52",
                      residual=False):
    """The rollout in plain autograd.numpy; same arguments and result as :func:`rollout`."""
    T, N = eps_h.shape[:2]
    S = N // U.shape[0]
    x = x0
    states = []
    for t in range(T):
        u_t = np.repeat(U[:, t, :], S, axis=0)  # (N, d_u), particle n reads sequence n // S
        xt = anp.concatenate([x, u_t], axis=1)  # (N, D)
        K = kernel_matrix_reference(xt, Z, lengthscale, variance, kind)  # (Q, N, M)
        mean = anp.einsum("qnm,qm->nq", K, alpha)
        var = variance - anp.einsum("qnm,qmk,qnk->nq", K, B, K)
        h = mean + anp.sqrt(anp.maximum(var, VAR_FLOOR)) * eps_h[t]  # (N, Q)
        x = anp.dot(h, A.T) + sqrt_q * eps_x[t] + (x if residual else 0.0)
        states.append(x)
    return anp.stack(states)


# ---------------------------------------------------------------------------------------------------------------
# Jitted forward and reverse
# ---------------------------------------------------------------------------------------------------------------
@jit
def _rollout_fwd(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, code, residual):
    T, N, Q = eps_h.shape
    M = Z.shape[1]
    D = Z.shape[2]
    dx = x0.shape[1]
    du = U.shape[2]
    S = N // U.shape[0]
    X = np.empty((T, N, dx))
    Kt = np.empty((T, N, Q, M))  # k_q(Z_q, xt)
    dKt = np.empty((T, N, Q, M))  # dk/dr2
    BKt = np.empty((T, N, Q, M))  # B_q k_q
    H = np.empty((T, N, Q))
    SD = np.empty((T, N, Q))  # sqrt(var), or -1 where the floor is active
    xt = np.empty(D)
    inv_l = 1.0 / lengthscale
    for t in range(T):
        for n in range(N):
            for d in range(dx):
                xt[d] = x0[n, d] if t == 0 else X[t - 1, n, d]
            for d in range(du):
                xt[dx + d] = U[n // S, t, d]
            for q in range(Q):
                k = Kt[t, n, q]
                for j in range(M):
                    r2 = 0.0
                    for d in range(D):
                        s = (xt[d] - Z[q, j, d]) * inv_l[q, d]
                        r2 += s * s
                    p, dp = kernel_profile(r2, code)
                    k[j] = variance[q] * p
                    dKt[t, n, q, j] = variance[q] * dp
                mean = 0.0
                kbk = 0.0
                for i in range(M):
                    mean += k[i] * alpha[q, i]
                    bk = 0.0
                    for j in range(M):
                        bk += B[q, i, j] * k[j]
                    BKt[t, n, q, i] = bk
                    kbk += k[i] * bk
                var = variance[q] - kbk
                if var > VAR_FLOOR:
                    sd = math.sqrt(var)
                    SD[t, n, q] = sd
                else:
                    sd = math.sqrt(VAR_FLOOR)
                    SD[t, n, q] = -1.0
                H[t, n, q] = mean + sd * eps_h[t, n, q]
            for d in range(dx):
                acc = sqrt_q[d] * eps_x[t, n, d]
                if residual:
                    acc += xt[d]
                for q in range(Q):
                    acc += A[d, q] * H[t, n, q]
                X[t, n, d] = acc
    return X, Kt, dKt, BKt, H, SD


@jit
def _rollout_vjp(G, X, Kt, dKt, BKt, H, SD, x0, U, Z, lengthscale, variance, alpha, A, eps_h, eps_x, residual):
    T, N, Q = eps_h.shape
    M = Z.shape[1]
    D = Z.shape[2]
    dx = x0.shape[1]
    du = U.shape[2]
    S = N // U.shape[0]
    gZ = np.zeros(Z.shape)
    gl = np.zeros(lengthscale.shape)
    gs2 = np.zeros(Q)
    galpha = np.zeros(alpha.shape)
    gB = np.zeros((Q, M, M))
    gA = np.zeros(A.shape)
    gsq = np.zeros(dx)
    carry = np.zeros((N, dx))  # dL/dx_t flowing back from step t+1
    gxt = np.empty(D)
    xt = np.empty(D)
    hbar = np.empty(Q)
    g = np.empty(dx)
    for t in range(T - 1, -1, -1):
        for n in range(N):
            for d in range(dx):
                g[d] = G[t, n, d] + carry[n, d]
                xt[d] = x0[n, d] if t == 0 else X[t - 1, n, d]
            for d in range(du):
                xt[dx + d] = U[n // S, t, d]
            for d in range(D):
                gxt[d] = 0.0
            # x_t = mu(x_{t-1}) + A h + sqrt_q eps_x
            for d in range(dx):
                gsq[d] += g[d] * eps_x[t, n, d]
                if residual:
                    gxt[d] += g[d]
            for q in range(Q):
                acc = 0.0
                for d in range(dx):
                    gA[d, q] += g[d] * H[t, n, q]
                    acc += A[d, q] * g[d]
                hbar[q] = acc
            for q in range(Q):
                # h_q = mean_q + sqrt(var_q) eps_h
                meanbar = hbar[q]
                sd = SD[t, n, q]
                varbar = 0.0 if sd < 0.0 else hbar[q] * eps_h[t, n, q] / (2.0 * sd)
                gs2[q] += varbar  # var_q = s2_q - k^T B k
                k = Kt[t, n, q]
                bk = BKt[t, n, q]
                for i in range(M):
                    galpha[q, i] += meanbar * k[i]
                    ci = varbar * k[i]
                    for j in range(M):
                        gB[q, i, j] -= ci * k[j]
                for j in range(M):
                    kbar = meanbar * alpha[q, j] - 2.0 * varbar * bk[j]
                    # kernel VJP: k = s2 * profile(r2)
                    gs2[q] += kbar * k[j] / variance[q]
                    c = kbar * dKt[t, n, q, j]  # dL/dr2
                    for d in range(D):
                        diff = xt[d] - Z[q, j, d]
                        inv_l2 = 1.0 / (lengthscale[q, d] * lengthscale[q, d])
                        w = 2.0 * c * diff * inv_l2
                        gxt[d] += w
                        gZ[q, j, d] -= w
                        gl[q, d] -= w * diff / lengthscale[q, d]
            for d in range(dx):
                carry[n, d] = gxt[d]
    return carry, gZ, gl, gs2, galpha, gB, gA, gsq


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
# The reverse pass reuses what the forward pass stored. autograd hands the VJP only the primitive's output, so the
# stored arrays are kept here keyed by the identity of that output and released when the output is freed.
_TAPES = {}


def _prepare(*arrays):
    return [to_c_f64(a) for a in arrays]


@primitive
def rollout(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, kind="matern52", residual=False):
    """Sample T steps of all N particles; returns X (T, N, d_x) with X[t-1] = x_t. See the module docstring."""
    arrays = _prepare(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x)
    X, *tape = _rollout_fwd(*arrays, kernel_code(kind), bool(residual))
    key = id(X)
    _TAPES[key] = (X, tape)
    weakref.finalize(X, _TAPES.pop, key, None)
    return X


def _rollout_make_vjp(ans, x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, kind="matern52",
                      residual=False):
    def vjp(G):
        arrays = _prepare(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x)
        stored = _TAPES.get(id(ans))
        if stored is not None and stored[0] is ans:
            X, tape = stored
        else:  # output not produced by this module's forward (e.g. a copy): recompute the tape
            X, *tape = _rollout_fwd(*arrays, kernel_code(kind), bool(residual))
        x0_, U_, Z_, l_, s2_, alpha_, _, A_, _, eps_h_, eps_x_ = arrays
        gx0, gZ, gl, gs2, galpha, gB, gA, gsq = _rollout_vjp(
            to_c_f64(G), X, *tape, x0_, U_, Z_, l_, s2_, alpha_, A_, eps_h_, eps_x_, bool(residual)
        )
        return gx0, None, gZ, gl, gs2, galpha, gB, gA, gsq, None, None

    return vjp


defvjp_argnums(rollout, vjp_all_argnums(_rollout_make_vjp))


def rollout_example(rng):
    """Small valid arguments (x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x):
    B=2 sequences x S=3 particles, T=4, d_x=3, d_u=1, Q=2, M=5."""
    nseq, S, T, dx, du, Q, M = 2, 3, 4, 3, 1, 2, 5
    N, D = nseq * S, dx + du
    W = rng.normal(size=(Q, M, M)) / M
    return (
        rng.normal(size=(N, dx)),
        rng.normal(size=(nseq, T, du)),
        rng.uniform(-2, 2, size=(Q, M, D)),
        rng.uniform(0.7, 2.0, size=(Q, D)),
        rng.uniform(0.5, 1.5, size=Q),
        rng.normal(size=(Q, M)),
        0.1 * (W + np.swapaxes(W, 1, 2)),
        rng.normal(size=(dx, Q)),
        rng.uniform(0.1, 0.5, size=dx),
        rng.normal(size=(T, N, Q)),
        rng.normal(size=(T, N, dx)),
    )
