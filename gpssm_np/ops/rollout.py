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

Cost O(B S T (Q M^2 + Q M D + d_x Q)) per evaluation, no Python loop over time. The forward pass keeps k and B k for
the reverse pass (O(T N Q M) memory, in buffers reused from call to call so they are not page-faulted in anew);
the reverse pass recomputes r2 and dk/dr2 from them, which needs no exp.

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
from .kernels import kernel_code, kernel_matrix_reference, kernel_profile, kernel_profile_slope


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
def _rollout_fwd(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, code, residual,
                 XT, Kt, BKt, H, SD):
    # Layout: every per-step array is particle-minor ((..., N) contiguous), so the inner loops run over the N = B S
    # particles without reductions and vectorise; loops over M and D stay outside them.
    T, N, Q = eps_h.shape
    M = Z.shape[1]
    D = Z.shape[2]
    dx = x0.shape[1]
    du = U.shape[2]
    S = N // U.shape[0]
    # Tape, filled here for the reverse pass: XT (T, D, N) GP inputs [x_{t-1}, u_t]; Kt (T, Q, M, N) k_q(Z_q, xt);
    # BKt (T, Q, M, N) B_q k_q; H (T, Q, N) latent samples; SD (T, Q, N) sqrt(var), or -1 where the floor is active.
    X = np.empty((T, N, dx))
    r2 = np.empty(N)
    mean = np.empty(N)
    kbk = np.empty(N)
    inv_l = 1.0 / lengthscale
    floor_sd = math.sqrt(VAR_FLOOR)
    for t in range(T):
        xt = XT[t]
        for n in range(N):
            for d in range(dx):
                xt[d, n] = x0[n, d] if t == 0 else X[t - 1, n, d]
            for d in range(du):
                xt[dx + d, n] = U[n // S, t, d]
        for q in range(Q):
            K = Kt[t, q]
            BK = BKt[t, q]
            s2 = variance[q]
            for j in range(M):
                r2[:] = 0.0
                for d in range(D):
                    z = Z[q, j, d]
                    il = inv_l[q, d]
                    for n in range(N):
                        s = (xt[d, n] - z) * il
                        r2[n] += s * s
                for n in range(N):
                    K[j, n] = s2 * kernel_profile(r2[n], code)[0]
            mean[:] = 0.0
            kbk[:] = 0.0
            for i in range(M):
                a = alpha[q, i]
                row = BK[i]
                row[:] = 0.0
                for j in range(M):
                    b = B[q, i, j]
                    for n in range(N):
                        row[n] += b * K[j, n]
                for n in range(N):
                    mean[n] += K[i, n] * a
                    kbk[n] += K[i, n] * row[n]
            for n in range(N):
                var = s2 - kbk[n]
                if var > VAR_FLOOR:
                    sd = math.sqrt(var)
                    SD[t, q, n] = sd
                else:
                    sd = floor_sd
                    SD[t, q, n] = -1.0
                H[t, q, n] = mean[n] + sd * eps_h[t, n, q]
        for n in range(N):
            for d in range(dx):
                acc = sqrt_q[d] * eps_x[t, n, d]
                if residual:
                    acc += xt[d, n]
                for q in range(Q):
                    acc += A[d, q] * H[t, q, n]
                X[t, n, d] = acc
    return X


@jit
def _rollout_vjp(G, XT, Kt, BKt, H, SD, Z, lengthscale, variance, alpha, A, eps_h, eps_x, code, residual):
    # Per-particle contributions to parameter gradients are accumulated in particle-minor buffers (acc_*) and summed
    # once at the end, so the hot loops carry no reductions.
    T, Q, M, N = Kt.shape
    D = Z.shape[2]
    dx = A.shape[0]
    acc_Z = np.zeros((Q, M, D, N))
    acc_l = np.zeros((Q, D, N))
    acc_s2 = np.zeros((Q, N))
    acc_alpha = np.zeros((Q, M, N))
    acc_A = np.zeros((dx, Q, N))
    acc_sq = np.zeros((dx, N))
    gB = np.zeros((Q, M, M))
    carry = np.zeros((dx, N))  # dL/dx_t flowing back from step t+1
    g = np.empty((dx, N))
    gxt = np.empty((D, N))
    hbar = np.empty(N)
    varbar = np.empty(N)
    c = np.empty(N)
    r2 = np.empty(N)
    KN = np.empty((N, M))
    inv_l = 1.0 / lengthscale
    inv_l2 = inv_l * inv_l
    for t in range(T - 1, -1, -1):
        xt = XT[t]
        for d in range(dx):
            for n in range(N):
                g[d, n] = G[t, n, d] + carry[d, n]
        gxt[:, :] = 0.0
        # x_t = mu(x_{t-1}) + A h + sqrt_q eps_x
        for d in range(dx):
            for n in range(N):
                acc_sq[d, n] += g[d, n] * eps_x[t, n, d]
                if residual:
                    gxt[d, n] += g[d, n]
        for q in range(Q):
            K = Kt[t, q]
            BK = BKt[t, q]
            inv_s2 = 1.0 / variance[q]
            hbar[:] = 0.0
            for d in range(dx):
                a = A[d, q]
                for n in range(N):
                    hbar[n] += a * g[d, n]
                    acc_A[d, q, n] += g[d, n] * H[t, q, n]
            # h_q = mean_q + sqrt(var_q) eps_h, var_q = s2_q - k^T B k
            for n in range(N):
                sd = SD[t, q, n]
                varbar[n] = 0.0 if sd < 0.0 else hbar[n] * eps_h[t, n, q] / (2.0 * sd)
                acc_s2[q, n] += varbar[n]
            for j in range(M):
                a = alpha[q, j]
                r2[:] = 0.0
                for d in range(D):
                    z = Z[q, j, d]
                    il = inv_l[q, d]
                    for n in range(N):
                        s = (xt[d, n] - z) * il
                        r2[n] += s * s
                for n in range(N):
                    acc_alpha[q, j, n] += hbar[n] * K[j, n]
                    kbar = hbar[n] * a - 2.0 * varbar[n] * BK[j, n]
                    acc_s2[q, n] += kbar * K[j, n] * inv_s2  # k = s2 * profile(r2)
                    c[n] = kbar * kernel_profile_slope(r2[n], K[j, n], code)  # dL/dr2 (the s2 is inside K)
                for d in range(D):
                    z = Z[q, j, d]
                    w2 = 2.0 * inv_l2[q, d]
                    for n in range(N):
                        diff = xt[d, n] - z
                        w = w2 * c[n] * diff
                        gxt[d, n] += w
                        acc_Z[q, j, d, n] += w
                        acc_l[q, d, n] += w * diff
            # dB_q -= sum_n varbar_n k_n k_n^T
            for n in range(N):
                for j in range(M):
                    KN[n, j] = K[j, n]
            for n in range(N):
                v = varbar[n]
                if v != 0.0:
                    for i in range(M):
                        ci = v * KN[n, i]
                        for j in range(M):
                            gB[q, i, j] -= ci * KN[n, j]
        for d in range(dx):
            for n in range(N):
                carry[d, n] = gxt[d, n]
    gZ = np.empty(Z.shape)
    gl = np.empty(lengthscale.shape)
    for q in range(Q):
        for d in range(D):
            gl[q, d] = -acc_l[q, d].sum() / lengthscale[q, d]
            for j in range(M):
                gZ[q, j, d] = -acc_Z[q, j, d].sum()
    return (carry.T.copy(), gZ, gl, acc_s2.sum(axis=1), acc_alpha.sum(axis=2), gB, acc_A.sum(axis=2),
            acc_sq.sum(axis=1))


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
# The reverse pass reuses what the forward pass stored. autograd hands the VJP only the primitive's output, so the
# tape is kept here keyed by the identity of that output. When the output is freed its tape goes back to a small pool,
# so a training loop reuses the same (already mapped) memory at every step.
_TAPES = {}
_POOL = {}
_POOL_SIZE = 2  # free tapes kept per shape


def _prepare(*arrays):
    return [to_c_f64(a) for a in arrays]


def _acquire_tape(T, Q, M, N, D):
    key = (T, Q, M, N, D)
    free = _POOL.get(key)
    if free:
        return free.pop()
    return (np.empty((T, D, N)), np.empty((T, Q, M, N)), np.empty((T, Q, M, N)), np.empty((T, Q, N)),
            np.empty((T, Q, N)))


def _release_tape(key, tape_key):
    stored = _TAPES.pop(key, None)
    if stored is not None:
        free = _POOL.setdefault(tape_key, [])
        if len(free) < _POOL_SIZE:
            free.append(stored[1])


def _forward(arrays, kind, residual):
    x0, _, Z, *_, eps_h, _ = arrays
    T, N, Q = eps_h.shape
    M, D = Z.shape[1], Z.shape[2]
    tape = _acquire_tape(T, Q, M, N, D)
    X = _rollout_fwd(*arrays, kernel_code(kind), bool(residual), *tape)
    return X, tape, (T, Q, M, N, D)


@primitive
def rollout(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, kind="matern52", residual=False):
    """Sample T steps of all N particles; returns X (T, N, d_x) with X[t-1] = x_t. See the module docstring."""
    X, tape, tape_key = _forward(_prepare(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x),
                                 kind, residual)
    key = id(X)
    _TAPES[key] = (X, tape)
    weakref.finalize(X, _release_tape, key, tape_key)
    return X


def _rollout_make_vjp(ans, x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, kind="matern52",
                      residual=False):
    def vjp(G):
        arrays = _prepare(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x)
        stored = _TAPES.get(id(ans))
        if stored is not None and stored[0] is ans:
            tape = stored[1]
        else:  # output not produced by this module's forward (e.g. a copy): recompute the tape
            tape = _forward(arrays, kind, residual)[1]
        _, _, Z_, l_, s2_, alpha_, _, A_, _, eps_h_, eps_x_ = arrays
        gx0, gZ, gl, gs2, galpha, gB, gA, gsq = _rollout_vjp(
            to_c_f64(G), *tape, Z_, l_, s2_, alpha_, A_, eps_h_, eps_x_, kernel_code(kind), bool(residual)
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
