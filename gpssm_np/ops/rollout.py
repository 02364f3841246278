r"""Fused particle rollout of a sparse-GP state-space model: one autograd primitive for all B x S x T steps.

Forward (paper Eq. (12), sampled through the latent GPs so the d_x x d_x covariance is never formed).
Particle n in 0..N-1 (N = B S) belongs to sequence b = n // S. For t = 1..T::

    xt = [x_{t-1}, u_t]                                   GP input, (D,) with D = d_x + d_u
    k_q = k_q(Z_q, xt)                                    (M,)   kernel row, ops/kernels.py
    mean_q = k_q . alpha_q                                paper m_{h_t,q} (whitened or not, via alpha and B)
    var_q = max(s2_q - k_q^T B_q k_q, VAR_FLOOR)          paper S_{h_t,q}
    h_q = mean_q + sqrt(var_q) eps_h[t, n, q]
    m = F x_{t-1} + G u_t + b = [F G] xt + b              linear mean function, (d_x,)
    x_t = (sqrt_q * eps_x[t, n] + m) + A h                summed in this order, A h term by term

so x_t ~ N(m + A m_h, A S_h A^T + diag(q)) exactly. Zero mean (the authors' code): F, G, b = 0; identity mean
(residual dynamics, PR-SSM): F = I, G = 0, b = 0. With the identity m is x_{t-1} exactly (every other term is
0 * x = +-0), and when F, G and b are all zero (decided in Python) the mean term is skipped: these two give exactly
the rounding of x_{t-1} + sqrt_q eps_x + A h and of sqrt_q eps_x + A h. Time convention: x_0 emits nothing; y_t is
emitted by x_t. Output X[t-1] = x_t, shape (T, N, d_x).

Reverse (first order, back-propagation through time). With g = dL/dx_t (from X's cotangent plus what flows back
from step t+1)::

    dA += g h^T ;  dsqrt_q += g * eps_x ;  hbar = A^T g
    dF += g x_{t-1}^T ;  dG += g u_t^T ;  db += g ;  dx_{t-1} += F^T g   (the last skipped for the zero mean)
    meanbar_q = hbar_q ;  varbar_q = hbar_q eps_h / (2 sqrt(var_q))   (0 where the floor is active)
    dalpha_q += meanbar_q k_q ;  dB_q -= varbar_q k_q k_q^T ;  ds2_q += varbar_q
    kbar_q = meanbar_q alpha_q - 2 varbar_q B_q k_q
    kernel VJP of kbar_q -> dZ_q, dl_q, ds2_q and d xt, whose first d_x entries flow into dx_{t-1}

Cost O(B S T (Q M^2 + Q M D + d_x Q + d_x D)) per evaluation, no Python loop over time.

How it is computed (the numbers behind these choices are in bench/README.md):

* Particles are split into blocks of at most ``PARTICLE_BLOCK`` (equal sizes, fixed by N alone). Every particle's
  trajectory is independent of the others, so each block runs the whole time loop on its own, forward and reverse;
  with ``GPSSM_NP_THREADS`` > 1 blocks run in parallel (``threads.run_blocks``). Parameter gradients are summed per
  block and the block sums added in block order afterwards, so the result is bit-identical for any thread count.
* Inside a block every per-step array is particle-minor ((..., L) contiguous), so the inner loops run over the
  block's particles and vectorise: the kernel rows (one sqrt and one :func:`~gpssm_np.ops._fastmath.exp_fast` per
  entry, 3.2 million per rollout at the paper's setting) and the kernel VJP.
* The O(M^2) work per step and latent GP, B_q k for all particles of the block and dB_q -= sum varbar k k^T, is one
  BLAS product each (``_blas.gemm``, BLAS held at one thread).
* The forward pass keeps, per block and step, the GP inputs, k, B k, dk/dr2 (Matern only; for the squared exponential
  it is -k/2), h and sqrt(var) for the reverse pass, which then needs no transcendental function at all. The tape is
  O(T N Q M) memory (80 MB at the paper's setting), reused from call to call (``_tape.TapeStore``). Past
  ``_config.TAPE_BYTES`` (GPSSM_NP_TAPE_MB, 512 MiB) the reverse pass recomputes dk/dr2 (one sqrt per entry) and
  then B k (one more BLAS product) instead. A call with no autograd tracing (a forecast) keeps no tape at all.

Shapes: x0 (N, d_x); U (B, T, d_u) (d_u may be 0); Z (Q, M, D); lengthscale (Q, D); variance (Q,); alpha (Q, M);
B (Q, M, M) symmetric; A (d_x, Q); sqrt_q (d_x,); eps_h (T, N, Q); eps_x (T, N, d_x); F (d_x, d_x); G (d_x, d_u);
b (d_x,). Differentiable: x0, Z, lengthscale, variance, alpha, B, A, sqrt_q, F, G, b.
"""
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive
from autograd.tracer import isbox

from .._config import FASTMATH, FASTMATH_SUMS, TAPE_BYTES, VAR_FLOOR
from ._blas import gemm
from ._compile import jit
from ._fastmath import exp_fast
from ._primitive import to_c_f64, vjp_all_argnums
from ._tape import TapeStore
from .threads import run_blocks, sum_blocks
from .conditional import conditional_moments
from .kernels import kernel_code, kernel_matrix, kernel_matrix_reference
from .lmc import lmc_mean

#: Most particles per block (the unit of work of one thread; see the module docstring). Measured at the paper's
#: setting on one thread: 400 (two blocks of N = 800) 6 % faster than 256 (four), 800 no faster; at M = 128 equal.
PARTICLE_BLOCK = 400

_THIRD = 1.0 / 3.0  # multiplied, not divided by 3: a vector division costs several multiplications


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy, loop over time)
# ---------------------------------------------------------------------------------------------------------------
def _over_time(x0, U, T, step):
    """x_t = step(x_{t-1}, u_t, t) for t = 1..T from x0 (N, d_x), with u_t (N, d_u) the input of each particle's
    sequence (particle n reads sequence n // S, S = N / B); returns (T, N, d_x)."""
    S = x0.shape[0] // U.shape[0]
    x, states = x0, []
    for t in range(T):
        x = step(x, np.repeat(U[:, t, :], S, axis=0), t)
        states.append(x)
    return anp.stack(states)


def reference_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    """One step of the rollout in plain autograd.numpy, ``step(x (N, d_x), u_t (N, d_u), t) -> x_t (N, d_x)``
    (arguments as :func:`rollout`); shared with the ensemble Kalman objective (``ops.enkf``)."""

    def step(x, u_t, t):
        xt = anp.concatenate([x, u_t], axis=1)  # (N, D)
        K = kernel_matrix_reference(xt, Z, lengthscale, variance, kind)  # (Q, N, M)
        mean = anp.einsum("qnm,qm->nq", K, alpha)
        var = variance - anp.einsum("qnm,qmk,qnk->nq", K, B, K)
        h = mean + anp.sqrt(anp.maximum(var, VAR_FLOOR)) * eps_h[t]  # (N, Q)
        return anp.dot(h, A.T) + sqrt_q * eps_x[t] + anp.dot(x, F.T) + anp.dot(u_t, G.T) + b

    return step


def ops_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    """One step of the rollout from the Numba primitives kernel_matrix, conditional_moments and lmc_mean, with the
    signature of :func:`reference_step`."""

    def step(x, u_t, t):
        xt = anp.concatenate([x, u_t], axis=1)  # (N, D)
        Kxz = kernel_matrix(xt, Z, lengthscale, variance, kind)  # (Q, N, M)
        kxx = anp.outer(variance, np.ones(x.shape[0]))  # k_q(x, x) = s2_q: stationary kernels
        mean, var = conditional_moments(Kxz, kxx, alpha, B)  # (Q, N) each
        h = anp.transpose(mean + anp.sqrt(var) * eps_h[t].T)  # (N, Q)
        return lmc_mean(h, A) + sqrt_q * eps_x[t] + (anp.dot(x, F.T) + anp.dot(u_t, G.T) + b)

    return step


def rollout_reference(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    """The rollout in plain autograd.numpy; same arguments and result as :func:`rollout`."""
    step = reference_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind)
    return _over_time(x0, U, eps_h.shape[0], step)


def rollout_ops(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    """The rollout as a Python loop over time of the Numba primitives kernel_matrix, conditional_moments and
    lmc_mean (the ``"ops"`` backend, which checks each primitive's VJP in context); arguments and result as
    :func:`rollout`."""
    step = ops_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind)
    return _over_time(x0, U, eps_h.shape[0], step)


# ---------------------------------------------------------------------------------------------------------------
# Jitted forward and reverse of one block of particles
# ---------------------------------------------------------------------------------------------------------------
# Tape of a block blk (leading index of every array), indexed by step t; an array with one step only (no tape
# kept, or past the memory budget: see tape_shapes) is a one-step buffer, overwritten at every step:
#   XT (nb, T, D, L)       GP inputs [x_{t-1}, u_t]
#   K, BK (nb, T, Q, M, L) k_q(Z_q, xt) and B_q k_q
#   P (nb, T, Q, M, L)     dk_q/dr2 (Matern; last axis empty for the squared exponential, where it is -k/2)
#   H, SD (nb, T, Q, L)    latent samples h and sqrt(var), or -1 where the variance floor is active
# Particle n0 + i of the block sits in column i < nl; columns nl..L-1 (last block only) are not used.
@jit(fastmath=FASTMATH, from_python=False)
def fwd_step(blk, t, n0, nl, x0, U, Z, inv_l, variance, alpha, B, A, sqrt_q, eps_h, eps_x, FG, b, linear, code,
             X, XT, K, BK, P, H, SD, r2, xs, mean, kbk, mu):
    # Step t of the block's particles: X[t] from X[t - 1] (x0 at t = 0); r2, mean, kbk, mu (L,) and xs (D, L) are
    # scratch.
    T, N, Q = eps_h.shape
    M, D = Z.shape[1], Z.shape[2]
    dx = x0.shape[1]
    du = U.shape[2]
    S = N // U.shape[0]
    L = XT.shape[3]
    floor_sd = math.sqrt(VAR_FLOOR)
    s = t if XT.shape[1] == T else 0  # tape slots (see above)
    sb = t if BK.shape[1] == T else 0
    sp = t if P.shape[1] == T else 0
    xt = XT[blk, s]
    for d in range(dx):
        row = xt[d]
        if t == 0:
            for i in range(nl):
                row[i] = x0[n0 + i, d]
        else:
            for i in range(nl):
                row[i] = X[t - 1, n0 + i, d]
    for d in range(du):
        row = xt[dx + d]
        seq, pos = n0 // S, n0 % S  # particle n0 + i reads sequence (n0 + i) // S
        for i in range(nl):
            row[i] = U[seq, t, d]
            pos += 1
            if pos == S:
                seq += 1
                pos = 0
    for q in range(Q):
        Kq = K[blk, s, q]
        BKq = BK[blk, sb, q]
        s2 = variance[q]
        for d in range(D):  # inputs scaled by 1 / l_q
            il = inv_l[q, d]
            for i in range(nl):
                xs[d, i] = xt[d, i] * il
        for j in range(M):
            for i in range(nl):
                r2[i] = 0.0
            for d in range(D):
                z = Z[q, j, d] * inv_l[q, d]
                row = xs[d]
                for i in range(nl):
                    v = row[i] - z
                    r2[i] += v * v
            krow = Kq[j]
            if code == 0:  # squared exponential: k = s2 exp(-r2 / 2)
                for i in range(nl):
                    krow[i] = s2 * exp_fast(-0.5 * r2[i])
            else:  # Matern-5/2: k = s2 (1 + a + a^2/3) e^-a, dk/dr2 = -(5/6) s2 (1 + a) e^-a, a = sqrt(5 r2)
                prow = P[blk, sp, q, j]
                for i in range(nl):
                    a = math.sqrt(5.0 * r2[i])
                    e = s2 * exp_fast(-a)
                    krow[i] = (1.0 + a + a * a * _THIRD) * e
                    prow[i] = -(5.0 / 6.0) * (1.0 + a) * e
        gemm(False, False, M, nl, M, 1.0, B, q * M * M, M, Kq, 0, L, 0.0, BKq, 0, L)  # B_q k
        for i in range(nl):
            mean[i] = 0.0
            kbk[i] = 0.0
        for j in range(M):
            a = alpha[q, j]
            krow = Kq[j]
            bkrow = BKq[j]
            for i in range(nl):
                mean[i] += krow[i] * a
                kbk[i] += krow[i] * bkrow[i]
        hrow = H[blk, s, q]
        sdrow = SD[blk, s, q]
        for i in range(nl):
            var = s2 - kbk[i]
            if var > VAR_FLOOR:
                sd = math.sqrt(var)
                sdrow[i] = sd
            else:
                sd = floor_sd
                sdrow[i] = -1.0
            hrow[i] = mean[i] + sd * eps_h[t, n0 + i, q]
    for d in range(dx):
        if linear:  # m_d = [F G]_d . xt + b_d, complete before it joins the sum
            for i in range(nl):
                mu[i] = 0.0
            for c in range(D):
                f = FG[d, c]
                row = xt[c]
                for i in range(nl):
                    mu[i] += f * row[i]
            for i in range(nl):
                mu[i] += b[d]
        for i in range(nl):
            acc = sqrt_q[d] * eps_x[t, n0 + i, d]
            if linear:
                acc += mu[i]
            for q in range(Q):
                acc += A[d, q] * H[blk, s, q, i]
            X[t, n0 + i, d] = acc


@jit(fastmath=FASTMATH_SUMS, from_python=False)
def vjp_step(blk, t, n0, nl, g, XT, K, BK, P, H, SD, Z, inv_l, variance, alpha, B, A, eps_h, eps_x, FG, linear,
             code, gZ, gl, gs2, galpha, gB, gA, gsq, gFG, gb, gxt, hbar, varbar, r2, C, W):
    # Reverse of step t of the block's particles: g (d_x, L) = dL/dx_t in, gxt (D, L) = dL/d[x_{t-1}, u_t] out;
    # parameter gradients added to this block's sums (see _vjp_blocks). hbar, varbar, r2 (L,), C = dL/dr2 and
    # W = varbar k (M, L) are scratch.
    T, N, Q = eps_h.shape
    M, D = Z.shape[1], Z.shape[2]
    dx = A.shape[0]
    L = XT.shape[3]
    xt = XT[blk, t]
    for d in range(dx):
        acc = 0.0
        for i in range(nl):
            acc += g[d, i] * eps_x[t, n0 + i, d]
        gsq[d] += acc
    # m = [F G] xt + b: d[F G] += g xt^T, db += g, and dxt = [F G]^T g, of which only dx_{t-1} = F^T g is
    # needed; F = 0 for the zero mean. Own loops, so that the sums above vectorise as they would without them.
    for d in range(dx):
        grow = g[d]
        acc = 0.0
        for i in range(nl):
            acc += grow[i]
        gb[d] += acc
        for c in range(D):
            row = xt[c]
            acc = 0.0
            for i in range(nl):
                acc += grow[i] * row[i]
            gFG[d, c] += acc
    for c in range(D):
        grow = gxt[c]
        for i in range(nl):
            grow[i] = 0.0
    if linear:
        for c in range(dx):
            grow = gxt[c]
            for d in range(dx):
                f = FG[d, c]
                for i in range(nl):
                    grow[i] += f * g[d, i]
    for q in range(Q):
        Kq = K[blk, t, q]
        if BK.shape[1] == T:
            BKq = BK[blk, t, q]
        else:  # not kept: recompute B_q k
            BKq = BK[blk, 0, q]
            gemm(False, False, M, nl, M, 1.0, B, q * M * M, M, Kq, 0, L, 0.0, BKq, 0, L)
        hrow = H[blk, t, q]
        sdrow = SD[blk, t, q]
        # x_t = mu + A h + sqrt_q eps_x
        for i in range(nl):
            hbar[i] = 0.0
        for d in range(dx):
            a = A[d, q]
            acc = 0.0
            for i in range(nl):
                hbar[i] += a * g[d, i]
                acc += g[d, i] * hrow[i]
            gA[d, q] += acc
        # h = mean + sqrt(var) eps_h, var = s2 - k^T B k
        acc = 0.0
        for i in range(nl):
            sd = sdrow[i]
            v = 0.0 if sd < 0.0 else hbar[i] * eps_h[t, n0 + i, q] / (2.0 * sd)
            varbar[i] = v
            acc += v
        gs2[q] += acc
        inv_s2 = 1.0 / variance[q]
        for j in range(M):
            a = alpha[q, j]
            krow = Kq[j]
            bkrow = BKq[j]
            wrow = W[j]
            c = C[j]
            acc_alpha = 0.0
            acc_s2 = 0.0
            if code == 0:
                for i in range(nl):
                    k = krow[i]
                    kbar = hbar[i] * a - 2.0 * varbar[i] * bkrow[i]
                    acc_alpha += hbar[i] * k
                    acc_s2 += kbar * k  # k = s2 profile(r2): dk/ds2 = k / s2
                    wrow[i] = varbar[i] * k
                    c[i] = -0.5 * kbar * k  # dL/dr2 = kbar dk/dr2
            else:
                if P.shape[1] == T:
                    prow = P[blk, t, q, j]
                else:  # not kept: dk/dr2 = -(5/6) (1 + a) k / (1 + a + a^2/3), a = sqrt(5 r2)
                    prow = P[blk, 0, q, j]
                    for i in range(nl):
                        r2[i] = 0.0
                    for d in range(D):
                        z = Z[q, j, d]
                        il = inv_l[q, d]
                        for i in range(nl):
                            v = (xt[d, i] - z) * il
                            r2[i] += v * v
                    for i in range(nl):
                        sa = math.sqrt(5.0 * r2[i])
                        prow[i] = -(5.0 / 6.0) * (1.0 + sa) * krow[i] / (1.0 + sa + sa * sa * _THIRD)
                for i in range(nl):
                    k = krow[i]
                    kbar = hbar[i] * a - 2.0 * varbar[i] * bkrow[i]
                    acc_alpha += hbar[i] * k
                    acc_s2 += kbar * k
                    wrow[i] = varbar[i] * k
                    c[i] = kbar * prow[i]
            galpha[q, j] += acc_alpha
            gs2[q] += acc_s2 * inv_s2
        # through r2 = sum_d ((xt_d - z_jd) / l_d)^2 to xt, Z and l; two inducing points at a time, so that xt
        # and its gradient are loaded once for both
        for d in range(D):
            w2 = 2.0 * inv_l[q, d] * inv_l[q, d]
            row = xt[d]
            grow = gxt[d]
            for j in range(0, M - 1, 2):
                z0 = Z[q, j, d]
                z1 = Z[q, j + 1, d]
                c0 = C[j]
                c1 = C[j + 1]
                acc_z0 = 0.0
                acc_z1 = 0.0
                acc_l = 0.0
                for i in range(nl):
                    diff0 = row[i] - z0
                    diff1 = row[i] - z1
                    w0 = w2 * c0[i] * diff0  # dL/dr2 * dr2/dxt[d]
                    w1 = w2 * c1[i] * diff1
                    grow[i] += w0 + w1
                    acc_z0 += w0
                    acc_z1 += w1
                    acc_l += w0 * diff0 + w1 * diff1
                gZ[q, j, d] -= acc_z0
                gZ[q, j + 1, d] -= acc_z1
                gl[q, d] -= acc_l
            if M % 2 == 1:
                z0 = Z[q, M - 1, d]
                c0 = C[M - 1]
                acc_z0 = 0.0
                acc_l = 0.0
                for i in range(nl):
                    diff0 = row[i] - z0
                    w0 = w2 * c0[i] * diff0
                    grow[i] += w0
                    acc_z0 += w0
                    acc_l += w0 * diff0
                gZ[q, M - 1, d] -= acc_z0
                gl[q, d] -= acc_l
        # dB_q -= sum_i varbar_i k_i k_i^T
        gemm(False, True, M, M, nl, -1.0, W, 0, L, Kq, 0, L, 1.0, gB, q * M * M, M)


# Drivers: blocks first..last-1 one after the other (``threads.run_blocks`` hands them to the kernel threads), each
# running its whole time loop; the steps' scratch arrays (see fwd_step and vjp_step) are allocated once per call.
@jit(fastmath=FASTMATH)
def _fwd_blocks(first, last, L, x0, U, Z, inv_l, variance, alpha, B, A, sqrt_q, eps_h, eps_x, FG, b, linear, code,
                X, XT, K, BK, P, H, SD):
    T, N = eps_h.shape[0], eps_h.shape[1]
    width = XT.shape[3]
    r2, xs, mean, kbk, mu = np.empty(width), np.empty((Z.shape[2], width)), np.empty(width), np.empty(width), \
        np.empty(width)
    for blk in range(first, last):
        n0 = blk * L
        nl = min(L, N - n0)
        for t in range(T):
            fwd_step(blk, t, n0, nl, x0, U, Z, inv_l, variance, alpha, B, A, sqrt_q, eps_h, eps_x, FG, b, linear,
                     code, X, XT, K, BK, P, H, SD, r2, xs, mean, kbk, mu)


@jit(fastmath=FASTMATH_SUMS)
def _vjp_blocks(first, last, L, GX, XT, K, BK, P, H, SD, Z, inv_l, variance, alpha, B, A, eps_h, eps_x, FG, linear,
                code, gx0, gZ_all, gl_all, gs2_all, galpha_all, gB_all, gA_all, gsq_all, gFG_all, gb_all):
    # GX = dL/dX. Gradients of each block's particles: gx0 rows n0..n0+nl-1, and block sums (row blk of the *_all
    # arrays, zero on entry) gZ (Q, M, D), gl (Q, D) (still to be divided by l), gs2 (Q,), galpha (Q, M),
    # gB (Q, M, M), gA (d_x, Q), gsq (d_x,), gFG (d_x, D) = [dF dG], gb (d_x,).
    T, N = eps_h.shape[0], eps_h.shape[1]
    dx, D, M, width = A.shape[0], Z.shape[2], Z.shape[1], XT.shape[3]
    g, gxt = np.empty((dx, width)), np.empty((D, width))
    hbar, varbar, r2 = np.empty(width), np.empty(width), np.empty(width)
    C, W = np.empty((M, width)), np.empty((M, width))
    for blk in range(first, last):
        n0 = blk * L
        nl = min(L, N - n0)
        carry = np.zeros((dx, width))  # dL/dx_t flowing back from step t+1
        for t in range(T - 1, -1, -1):
            for d in range(dx):
                for i in range(nl):
                    g[d, i] = GX[t, n0 + i, d] + carry[d, i]
            vjp_step(blk, t, n0, nl, g, XT, K, BK, P, H, SD, Z, inv_l, variance, alpha, B, A, eps_h, eps_x, FG,
                     linear, code, gZ_all[blk], gl_all[blk], gs2_all[blk], galpha_all[blk], gB_all[blk], gA_all[blk],
                     gsq_all[blk], gFG_all[blk], gb_all[blk], gxt, hbar, varbar, r2, C, W)
            for d in range(dx):
                for i in range(nl):
                    carry[d, i] = gxt[d, i]
        for d in range(dx):
            for i in range(nl):
                gx0[n0 + i, d] = carry[d, i]


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
_TAPES = TapeStore()


def particle_blocks(N):
    """(number of blocks, particles per block L) for N particles: equal blocks of at most PARTICLE_BLOCK."""
    nb = max(1, -(-N // PARTICLE_BLOCK))
    return nb, max(1, -(-N // nb))


def prepare_arrays(*arrays):
    return [to_c_f64(a) for a in arrays]


def zero_block_grads(nb, Q, M, D, dx):
    """Zeroed per-block sums of the transition's parameter gradients: gZ, gl, gs2, galpha, gB, gA, gsq, g[F G], gb
    (leading axis: the block), as ``vjp_step`` adds into them."""
    return (np.zeros((nb, Q, M, D)), np.zeros((nb, Q, D)), np.zeros((nb, Q)), np.zeros((nb, Q, M)),
            np.zeros((nb, Q, M, M)), np.zeros((nb, dx, Q)), np.zeros((nb, dx)), np.zeros((nb, dx, D)),
            np.zeros((nb, dx)))


def linear_mean(x0, U, F, G, b):
    """([F G] (d_x, D), b, linear) for the kernels; linear is False when F, G and b are all zero, and the kernels
    then skip the mean term (adding it would change nothing: 0 * x + 0 = +-0)."""
    dx, du = x0.shape[1], U.shape[2]
    if F.shape != (dx, dx) or G.shape != (dx, du) or b.shape != (dx,):
        raise ValueError(f"rollout: F, G, b must have shapes {(dx, dx)}, {(dx, du)}, {(dx,)}; "
                         f"got {F.shape}, {G.shape}, {b.shape}")
    return np.concatenate([F, G], axis=1), b, bool(F.any() or G.any() or b.any())


def tape_shapes(nb, steps, Q, M, L, D, code):
    """Shapes of the tape arrays (XT, K, BK, P, H, SD) for ``steps`` time steps (T, or 1 when nothing is kept).

    Within the ``_config.TAPE_BYTES`` budget all of them keep every step. Past it, dk/dr2 (cheap to recompute in
    the reverse pass: one sqrt per entry) and then B k (one more BLAS product per step) keep one step only."""
    size = 8 * nb * steps * Q * M * L
    keep_bk = steps == 1 or 2 * size <= TAPE_BYTES
    keep_p = steps == 1 or (2 + keep_bk) * size <= TAPE_BYTES
    return ((nb, steps, D, L), (nb, steps, Q, M, L), (nb, steps if keep_bk else 1, Q, M, L),
            (nb, steps if keep_p else 1, Q, M, L if code != 0 else 0), (nb, steps, Q, L), (nb, steps, Q, L))


def _forward(arrays, kind, keep):
    """X and the tape (None unless ``keep``)."""
    x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b = arrays
    T, N, Q = eps_h.shape
    M, D = Z.shape[1], Z.shape[2]
    code = kernel_code(kind)
    nb, L = particle_blocks(N)
    tape = _TAPES.acquire(tape_shapes(nb, T if keep else 1, Q, M, L, D, code))
    X = np.empty((T, N, x0.shape[1]))
    run_blocks(_fwd_blocks, nb, L, x0, U, Z, 1.0 / lengthscale, variance, alpha, B, A, sqrt_q, eps_h,
               eps_x, *linear_mean(x0, U, F, G, b), code, X, *tape)
    if keep:
        return X, tape
    _TAPES.release(tape)
    return X, None


@primitive
def _rollout_traced(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    X, tape = _forward(prepare_arrays(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b),
                       kind, keep=True)
    _TAPES.attach(X, tape)
    return X


def rollout(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind="matern52"):
    """Sample T steps of all N particles; returns X (T, N, d_x) with X[t-1] = x_t. See the module docstring.

    Differentiable by autograd; when no argument is being traced (no gradient can be asked for) no tape is kept."""
    args = (x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b)
    if any(isbox(a) for a in args):
        return _rollout_traced(*args, kind=kind)
    return _forward(prepare_arrays(*args), kind, keep=False)[0]


def transition_moments(x, u_t, Z, lengthscale, variance, alpha, B, A, F, G, b, kind="matern52"):
    """One step of the rollout's forward kernel without noise, for filters (no autograd): the latent GPs' moments
    m_h, s_h (N, Q) at [x_n, u_t] and the transition mean mu(x_n, u_t) + A m_h (N, d_x), for particles x (N, d_x)
    and one input u_t (d_u,). s_h is floored at VAR_FLOOR as in the rollout. Arguments as :func:`rollout`."""
    x = to_c_f64(x)
    N, Q, dx = x.shape[0], variance.shape[0], x.shape[1]
    arrays = prepare_arrays(x, np.reshape(u_t, (1, 1, -1)), Z, lengthscale, variance, alpha, B, A, np.zeros(dx),
                            np.zeros((1, N, Q)), np.zeros((1, N, dx)), F, G, b)
    X, tape = _forward(arrays, kind, keep=True)
    try:
        H, SD = (a[:, 0].transpose(0, 2, 1).reshape(-1, Q)[:N] for a in tape[4:6])  # (blocks, L, Q) -> (N, Q)
        s_h = np.where(SD < 0.0, VAR_FLOOR, SD * SD)
        return H.copy(), s_h, X[0]
    finally:
        _TAPES.release(tape)


def _rollout_make_vjp(ans, x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b,
                      kind="matern52"):
    def vjp(GX):
        arrays = prepare_arrays(x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b)
        x0_, U_, Z_, l_, s2_, alpha_, B_, A_, _, eps_h_, eps_x_, F_, G_, b_ = arrays
        T, N, Q = eps_h_.shape
        M, D = Z_.shape[1], Z_.shape[2]
        dx = A_.shape[0]
        nb, L = particle_blocks(N)
        FG, _, linear = linear_mean(x0_, U_, F_, G_, b_)
        gx0 = np.empty((N, dx))
        block_grads = zero_block_grads(nb, Q, M, D, dx)
        with _TAPES.reverse_tape(ans, lambda: _forward(arrays, kind, keep=True)[1]) as tape:
            run_blocks(_vjp_blocks, nb, L, to_c_f64(GX), *tape, Z_, 1.0 / l_, s2_, alpha_, B_, A_, eps_h_,
                       eps_x_, FG, linear, kernel_code(kind), gx0, *block_grads)
        gZ, gl, gs2, galpha, gB, gA, gsq, gFG, gb = (sum_blocks(g) for g in block_grads)
        return gx0, None, gZ, gl / l_, gs2, galpha, gB, gA, gsq, None, None, gFG[:, :dx], gFG[:, dx:], gb

    return vjp


defvjp_argnums(_rollout_traced, vjp_all_argnums(_rollout_make_vjp))


def rollout_example(rng, nseq=2, S=3, T=4, dx=3, du=1, Q=2, M=5):
    """Small valid arguments (x0, U, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b):
    B=2 sequences x S=3 particles, T=4, d_x=3, d_u=1, Q=2, M=5 by default, and a linear mean near 0.9 I."""
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
        0.9 * np.eye(dx) + 0.1 * rng.normal(size=(dx, dx)),
        0.3 * rng.normal(size=(dx, du)),
        0.2 * rng.normal(size=dx),
    )
