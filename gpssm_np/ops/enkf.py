r"""Ensemble Kalman filter through the sparse-GP transition: the data term of the EnVI objective as one primitive.

EnVI (Lin, Sun, Yin, Thiery, IEEE TSP 2024, arXiv 2312.05910) replaces the ODGPSSM's prior-transition particles by
an ensemble Kalman filter and keeps the log-likelihood of each output under the ensemble's one-step predictive
(EnVI Eq. (23), with the term of Eq. (27)). For B windows of T steps, each with its own ensemble of S members
(particle n = b S + j is member j of window b, N = B S), at t = 1..T::

    xbar_t^j = transition(x_{t-1}^j)                     one step of ops/rollout.py: sampled through the latent
                                                         GPs, with process noise (EnVI Eqs. (10), (24))
    mbar_t = (1/S) sum_j xbar_t^j,   a_j = xbar_t^j - mbar_t
    Pxy_t = (1/(S-1)) sum_j a_j (C a_j)^T                 (d_x, d_y) = Pbar_t C^T, C = [I, 0]
    S_t = C Pxy_t + diag(r)                               (d_y, d_y) innovation covariance
    l_t = log N(y_t | C mbar_t, S_t)                     EnVI Eq. (27)
    K_t = Pxy_t S_t^{-1}                                   gain
    x_t^j = xbar_t^j + K_t (y_t + sqrt(r) * eps_y[t, j] - C xbar_t^j)     perturbed observation

(the EnKF step of EnVI Sec. IV-A, Eqs. (10)-(15); the bodies of its Eqs. (14) and (27) are reconstructed from its
prose and code, ../shared/research/envi_reference.md s2-3), and the op returns L_b = sum_t l_t for each window
(B,). The full covariance Pbar_t (d_x, d_x) is never formed: only its first d_y columns enter, so a step costs
O(S d_x d_y + d_y^3) per window on top of the transition.

The update is the stochastic (perturbed-observation) EnKF of Burgers et al. (1998), as in the EnVI paper: each
member gets its own perturbation, so the analysed ensemble's covariance is (I - K C) Pbar in expectation and every
member remains a sample of the filtering distribution; its reverse pass is a few small matrix products. (EnVI's
code shares one perturbation between all members and propagates the GP mean only; a square-root filter would need
the derivative of a matrix square root.) With a linear transition and S -> infinity, sum_t l_t converges to the
Kalman filter's log marginal likelihood of the linear-Gaussian model (tests/ops/test_enkf.py).

Reverse (first order). With g_j = dL/dx_t^j flowing back from step t+1 and g_l = dL/dL_b, D_j = y_t + sqrt(r) eps_j
- C xbar_j and delta = y_t - C mbar::

    gK = sum_j g_j D_j^T ;  gD_j = K^T g_j ;  dr += gD_j * eps_j / (2 sqrt(r)) ;  gxbar_j = g_j - C^T gD_j
    gPxy = gK S^{-1} ;  gS = -K^T gK S^{-1} - (g_l / 2) (S^{-1} - S^{-1} delta delta^T S^{-1})
    dr += diag(gS) ;  gPxy[:d_y] += gS ;  gmbar = g_l C^T S^{-1} delta
    ga_j = (gPxy C a_j + C^T gPxy^T a_j) / (S - 1) ;  gxbar_j += ga_j + gmbar / S

(through a_j = xbar_j - mbar, ga_j would lose its mean over j, which is 0: ga_j is linear in a_j and sum_j a_j = 0)

and gxbar_j continues through the transition's reverse pass (ops/rollout.py).

Backends: :func:`enkf_loglik` (fused: one Numba primitive over the whole window, forward and reverse, blocks of
whole windows in parallel as in ops/rollout.py), :func:`enkf_loglik_ops` (a Python loop over time of the Numba
primitives of the transition, the update in autograd.numpy) and :func:`enkf_loglik_reference` (plain
autograd.numpy). Shapes: x0 (N, d_x); U (B, T, d_u); Y (B, T, d_y), fully observed; transition arguments as
``ops.rollout.rollout``; obs_var (d_y,) = r; eps_y (T, N, d_y). Differentiable: x0, the transition's parameters and
obs_var.
"""
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive
from autograd.tracer import isbox

from .._config import FASTMATH, FASTMATH_SUMS
from ._compile import jit
from ._primitive import to_c_f64, vjp_all_argnums
from ._tape import TapeStore
from .kernels import kernel_code
from .rollout import (PARTICLE_BLOCK, fwd_step, linear_mean, ops_step, prepare_arrays, reference_step, rollout_example,
                      tape_shapes, vjp_step, zero_block_grads)
from .threads import run_blocks, sum_blocks

_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------------------------------------------
# Reference and ops backends (autograd.numpy update)
# ---------------------------------------------------------------------------------------------------------------
def enkf_update_reference(Xbar, y, obs_var, eps_y):
    """One perturbed-observation update of B ensembles (module docstring) in autograd.numpy.

    Xbar (B, S, d_x) predicted members, y (B, d_y), obs_var (d_y,), eps_y (B, S, d_y); returns the analysed members
    (B, S, d_x) and the predictive log-likelihoods l_t (B,)."""
    nseq, S, _ = Xbar.shape
    dy = y.shape[1]
    mbar = anp.mean(Xbar, axis=1)  # (B, d_x)
    dev = Xbar - mbar[:, None, :]
    Pxy = anp.einsum("bsi,bsk->bik", dev, dev[:, :, :dy]) / (S - 1)  # (B, d_x, d_y)
    Sm = Pxy[:, :dy, :] + anp.diag(obs_var)[None]
    Sinv = anp.linalg.inv(Sm)
    delta = y - mbar[:, :dy]
    quad = anp.einsum("bk,bkl,bl->b", delta, Sinv, delta)
    loglik = -0.5 * (dy * _LOG_2PI + anp.linalg.slogdet(Sm)[1] + quad)
    gain = anp.einsum("bik,bkl->bil", Pxy, Sinv)
    D = y[:, None, :] + anp.sqrt(obs_var) * eps_y - Xbar[:, :, :dy]  # (B, S, d_y)
    return Xbar + anp.einsum("bik,bsk->bsi", gain, D), loglik


def _filter_over_time(x0, U, Y, obs_var, eps_y, step):
    """sum_t l_t (B,) with the transition ``step`` (``ops.rollout.reference_step`` or ``ops_step``)."""
    nseq, T, _ = Y.shape
    N, dx = x0.shape
    S = N // nseq
    x, total = x0, 0.0
    for t in range(T):
        xbar = step(x, np.repeat(U[:, t, :], S, axis=0), t)
        x, loglik = enkf_update_reference(anp.reshape(xbar, (nseq, S, dx)), Y[:, t, :], obs_var,
                                          np.reshape(eps_y[t], (nseq, S, -1)))
        x = anp.reshape(x, (N, dx))
        total = total + loglik
    return total


def enkf_loglik_reference(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var,
                          eps_y, kind="matern52"):
    """:func:`enkf_loglik` in plain autograd.numpy; same arguments and result."""
    step = reference_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind)
    return _filter_over_time(x0, U, Y, obs_var, eps_y, step)


def enkf_loglik_ops(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var, eps_y,
                    kind="matern52"):
    """:func:`enkf_loglik` with the transition from the Numba primitives (``ops.rollout.ops_step``) and the update
    in autograd.numpy; same arguments and result."""
    step = ops_step(Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, kind)
    return _filter_over_time(x0, U, Y, obs_var, eps_y, step)


# ---------------------------------------------------------------------------------------------------------------
# Jitted update of one window and its reverse
# ---------------------------------------------------------------------------------------------------------------
# EnKF tape, besides the transition's (ops/rollout.py): XB (T, N, d_x) the predicted members xbar, KG (T, B, d_x, d_y)
# the gains, SINV (T, B, d_y, d_y) the inverse innovation covariances. X (T, N, d_x) holds the analysed members.
@jit(from_python=False)
def _times_sinv(P, Sinv, out):
    # out = P S^{-1}: (d_x, d_y) times (d_y, d_y)
    for d in range(P.shape[0]):
        for m in range(Sinv.shape[1]):
            v = 0.0
            for k in range(Sinv.shape[0]):
                v += P[d, k] * Sinv[k, m]
            out[d, m] = v


@jit(fastmath=FASTMATH, inline=True)  # compiled inside its one caller, _fwd_blocks, which has the same flags
def _update(t, b, first, S, X, Y, obs_var, sqrt_r, eps_y, XB, KG, SINV, LL, mbar, Pxy, Lc):
    # Window b, members first..first+S-1 of X[t] (predicted on entry, analysed on exit); mbar (d_x,), Pxy (d_x, d_y)
    # and Lc (d_y, d_y) are scratch. LL[t, b] = l_t.
    dx, dy = X.shape[2], Y.shape[2]
    for d in range(dx):
        mbar[d] = 0.0
    for j in range(first, first + S):
        for d in range(dx):
            v = X[t, j, d]
            XB[t, j, d] = v
            mbar[d] += v
    for d in range(dx):
        mbar[d] /= S
    for d in range(dx):
        for k in range(dy):
            Pxy[d, k] = 0.0
    for j in range(first, first + S):
        for d in range(dx):
            a = XB[t, j, d] - mbar[d]
            for k in range(dy):
                Pxy[d, k] += a * (XB[t, j, k] - mbar[k])
    for d in range(dx):
        for k in range(dy):
            Pxy[d, k] /= S - 1
    # Cholesky of S_t = C Pxy + diag(r), then S_t^{-1} column by column and log det S_t
    for k in range(dy):
        for m in range(k + 1):
            v = Pxy[k, m] + (obs_var[k] if k == m else 0.0)
            for c in range(m):
                v -= Lc[k, c] * Lc[m, c]
            Lc[k, m] = math.sqrt(v) if k == m else v / Lc[m, m]
    Sinv = SINV[t, b]
    logdet = 0.0
    for k in range(dy):
        logdet += 2.0 * math.log(Lc[k, k])
        for m in range(dy):  # forward substitution of L z = e_k into column k
            v = 1.0 if m == k else 0.0
            for c in range(m):
                v -= Lc[m, c] * Sinv[c, k]
            Sinv[m, k] = v / Lc[m, m]
        for m in range(dy - 1, -1, -1):  # back substitution of L^T x = z
            v = Sinv[m, k]
            for c in range(m + 1, dy):
                v -= Lc[c, m] * Sinv[c, k]
            Sinv[m, k] = v / Lc[m, m]
    quad = 0.0
    for k in range(dy):
        for m in range(dy):
            quad += (Y[b, t, k] - mbar[k]) * Sinv[k, m] * (Y[b, t, m] - mbar[m])
    LL[t, b] = -0.5 * (dy * _LOG_2PI + logdet + quad)
    gain = KG[t, b]
    _times_sinv(Pxy, Sinv, gain)
    for j in range(first, first + S):
        for k in range(dy):  # the innovation of member j, kept in Lc's first row (no longer needed)
            Lc[0, k] = Y[b, t, k] + sqrt_r[k] * eps_y[t, j, k] - XB[t, j, k]
        for d in range(dx):
            v = XB[t, j, d]
            for k in range(dy):
                v += gain[d, k] * Lc[0, k]
            X[t, j, d] = v


@jit(fastmath=FASTMATH_SUMS, inline=True)  # inside _vjp_blocks, which has the same flags
def _update_vjp(t, b, first, col, S, g, gl, Y, sqrt_r, eps_y, XB, KG, SINV, gr, mbar, gK, gP, gS, vec, GA):
    # Reverse of _update for window b (members first.., columns col.. of the block's g (d_x, L)): g = dL/dx_t on
    # entry, dL/dxbar_t on exit; gl = dL/dL_b; gr (d_y,) += dL/dr. mbar (d_x,), gK, gP (d_x, d_y), gS (d_y, d_y),
    # vec (2, d_y) and GA (d_x, L) are scratch.
    dx, dy = XB.shape[2], Y.shape[2]
    gain, Sinv = KG[t, b], SINV[t, b]
    for d in range(dx):
        mbar[d] = 0.0
    for j in range(first, first + S):
        for d in range(dx):
            mbar[d] += XB[t, j, d]
    for d in range(dx):
        mbar[d] /= S
        for k in range(dy):
            gK[d, k] = 0.0
    for j in range(S):
        n, c = first + j, col + j
        for k in range(dy):
            vec[0, k] = Y[b, t, k] + sqrt_r[k] * eps_y[t, n, k] - XB[t, n, k]  # D_j
        for d in range(dx):
            for k in range(dy):
                gK[d, k] += g[d, c] * vec[0, k]
        for k in range(dy):
            v = 0.0
            for d in range(dx):
                v += gain[d, k] * g[d, c]
            gr[k] += v * eps_y[t, n, k] * 0.5 / sqrt_r[k]
            vec[1, k] = v
        for k in range(dy):
            g[k, c] -= vec[1, k]
    # gPxy = gK S^-1; gS = -K^T gK S^-1 - (gl / 2)(S^-1 - S^-1 delta delta^T S^-1)
    _times_sinv(gK, Sinv, gP)
    for k in range(dy):  # S^-1 delta
        v = 0.0
        for m in range(dy):
            v += Sinv[k, m] * (Y[b, t, m] - mbar[m])
        vec[0, k] = v
    for k in range(dy):
        for m in range(dy):
            v = 0.0
            for d in range(dx):
                v += gain[d, k] * gP[d, m]  # (K^T gK S^-1)[k, m]
            gS[k, m] = -v - 0.5 * gl * (Sinv[k, m] - vec[0, k] * vec[0, m])
    for k in range(dy):
        gr[k] += gS[k, k]
        for m in range(dy):
            gP[k, m] += gS[k, m]
    # through Pxy = sum_j a_j (C a_j)^T / (S - 1) and mbar
    inv = 1.0 / (S - 1)
    for d in range(dx):
        mbar[d] = -mbar[d]  # now -mbar: a_j = xbar_j + mbar
    for j in range(S):
        n, c = first + j, col + j
        for d in range(dx):
            v = 0.0
            for k in range(dy):
                v += gP[d, k] * (XB[t, n, k] + mbar[k])
            if d < dy:
                for e in range(dx):
                    v += gP[e, d] * (XB[t, n, e] + mbar[e])
            GA[d, c] = v * inv
    for d in range(dx):  # sum_k ga_k = 0 (linear in the a_k, which sum to 0): no mean to subtract
        shift = gl * vec[0, d] / S if d < dy else 0.0  # gmbar / S
        for j in range(S):
            g[d, col + j] += GA[d, col + j] + shift


# Drivers: blocks first..last-1 (whole windows) one after the other (``threads.run_blocks`` hands them to the kernel
# threads); the scratch arrays of the steps and updates are allocated once per call.
@jit(fastmath=FASTMATH)
def _fwd_blocks(first, last, L, S, x0, U, Y, Z, inv_l, variance, alpha, B, A, sqrt_q, eps_h, eps_x, FG, b, linear,
                code, obs_var, sqrt_r, eps_y, X, XT, K, BK, P, H, SD, XB, KG, SINV, LL):
    T, N = eps_h.shape[0], eps_h.shape[1]
    dx, dy, width = x0.shape[1], Y.shape[2], XT.shape[3]
    r2, xs, mean, kbk, mu = np.empty(width), np.empty((Z.shape[2], width)), np.empty(width), np.empty(width), \
        np.empty(width)
    mbar, Pxy, Lc = np.empty(dx), np.empty((dx, dy)), np.empty((dy, dy))
    for blk in range(first, last):
        n0 = blk * L
        nl = min(L, N - n0)
        for t in range(T):
            fwd_step(blk, t, n0, nl, x0, U, Z, inv_l, variance, alpha, B, A, sqrt_q, eps_h, eps_x, FG, b, linear,
                     code, X, XT, K, BK, P, H, SD, r2, xs, mean, kbk, mu)
            for j0 in range(n0, n0 + nl, S):
                _update(t, j0 // S, j0, S, X, Y, obs_var, sqrt_r, eps_y, XB, KG, SINV, LL, mbar, Pxy, Lc)


@jit(fastmath=FASTMATH_SUMS)
def _vjp_blocks(first, last, L, S, GL, Y, sqrt_r, eps_y, XT, K, BK, P, H, SD, XB, KG, SINV, Z, inv_l, variance, alpha,
                B, A, eps_h, eps_x, FG, linear, code, gx0, gZ, gl, gs2, galpha, gB, gA, gsq, gFG, gb, gr):
    # GL (B,) = dL/dL_b; gradients of each block as in ops/rollout.py's _vjp_blocks, and gr (d_y,) of obs_var.
    T, N = eps_h.shape[0], eps_h.shape[1]
    dx, D, M, dy, width = A.shape[0], Z.shape[2], Z.shape[1], Y.shape[2], XT.shape[3]
    g, gxt = np.empty((dx, width)), np.empty((D, width))
    hbar, varbar, r2 = np.empty(width), np.empty(width), np.empty(width)
    C, W = np.empty((M, width)), np.empty((M, width))
    mbar, gK, gS, gP, vec, GA = np.empty(dx), np.empty((dx, dy)), np.empty((dy, dy)), np.empty((dx, dy)), \
        np.empty((2, dy)), np.empty((dx, width))
    for blk in range(first, last):
        n0 = blk * L
        nl = min(L, N - n0)
        for d in range(dx):
            for i in range(nl):
                g[d, i] = 0.0  # the analysed states of the last step feed nothing
        for t in range(T - 1, -1, -1):
            for j0 in range(n0, n0 + nl, S):
                w = j0 // S
                _update_vjp(t, w, j0, j0 - n0, S, g, GL[w], Y, sqrt_r, eps_y, XB, KG, SINV, gr[blk], mbar, gK, gP,
                            gS, vec, GA)
            vjp_step(blk, t, n0, nl, g, XT, K, BK, P, H, SD, Z, inv_l, variance, alpha, B, A, eps_h, eps_x, FG,
                     linear, code, gZ[blk], gl[blk], gs2[blk], galpha[blk], gB[blk], gA[blk], gsq[blk], gFG[blk],
                     gb[blk], gxt, hbar, varbar, r2, C, W)
            for d in range(dx):
                for i in range(nl):
                    g[d, i] = gxt[d, i]
        for d in range(dx):
            for i in range(nl):
                gx0[n0 + i, d] = g[d, i]


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
_TAPES = TapeStore()


def window_blocks(num_windows, S):
    """(number of blocks, particles per block L) for ``num_windows`` ensembles of S members: blocks of whole
    windows, at most ``PARTICLE_BLOCK`` particles each when S allows (the members of a window interact)."""
    per_block = max(1, PARTICLE_BLOCK // S)
    return -(-num_windows // per_block), per_block * S


def _check(x0, Y, obs_var, eps_y):
    nseq, T, dy = Y.shape
    N = x0.shape[0]
    if N % nseq or N // nseq < 2:
        raise ValueError(f"enkf: x0 must hold at least 2 members per window, N = S B; got N = {N} for B = {nseq}")
    if eps_y.shape != (T, N, dy) or obs_var.shape != (dy,):
        raise ValueError(f"enkf: eps_y and obs_var must have shapes {(T, N, dy)}, {(dy,)}; got {eps_y.shape}, "
                         f"{obs_var.shape}")
    if dy > x0.shape[1]:
        raise ValueError(f"enkf: d_y = {dy} outputs need d_x >= d_y states (C = [I, 0]); got d_x = {x0.shape[1]}")
    if not np.all(np.isfinite(Y)):
        raise ValueError("enkf: Y must be finite (the ensemble objective needs every output observed)")


def _forward(arrays, kind):
    """(LL (T, B), tape): the forward pass, which always keeps its tape (the reverse pass needs the predicted
    members and gains, and the transition's tape)."""
    x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var, eps_y = arrays
    _check(x0, Y, obs_var, eps_y)
    T, N, Q = eps_h.shape
    nseq, dy = Y.shape[0], Y.shape[2]
    M, D = Z.shape[1], Z.shape[2]
    dx, S = x0.shape[1], N // nseq
    code = kernel_code(kind)
    nb, L = window_blocks(nseq, S)
    tape = _TAPES.acquire(tape_shapes(nb, T, Q, M, L, D, code)
                         + ((T, N, dx), (T, N, dx), (T, nseq, dx, dy), (T, nseq, dy, dy)))
    LL = np.empty((T, nseq))
    run_blocks(_fwd_blocks, nb, L, S, x0, U, Y, Z, 1.0 / lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x,
               *linear_mean(x0, U, F, G, b), code, obs_var, np.sqrt(obs_var), eps_y, tape[6], *tape[:6], *tape[7:],
               LL)
    return LL, tape


@primitive
def _enkf_traced(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var, eps_y,
                 kind="matern52"):
    LL, tape = _forward(prepare_arrays(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b,
                                       obs_var, eps_y), kind)
    total = LL.sum(axis=0)
    _TAPES.attach(total, tape)
    return total


def enkf_loglik(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var, eps_y,
                kind="matern52"):
    """sum_t log N(y_t | C mbar_t, S_t) of each of the B windows (B,), for ensembles of S = N / B members filtered
    through the sparse-GP transition (module docstring). Differentiable by autograd."""
    args = (x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var, eps_y)
    if any(isbox(a) for a in args):
        return _enkf_traced(*args, kind=kind)
    LL, tape = _forward(prepare_arrays(*args), kind)
    _TAPES.release(tape)
    return LL.sum(axis=0)


def _enkf_make_vjp(ans, x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var,
                   eps_y, kind="matern52"):
    def vjp(GL):
        arrays = prepare_arrays(x0, U, Y, Z, lengthscale, variance, alpha, B, A, sqrt_q, eps_h, eps_x, F, G, b, obs_var,
                                eps_y)
        x0_, U_, Y_, Z_, l_, s2_, alpha_, B_, A_, _, eps_h_, eps_x_, F_, G_, b_, r_, eps_y_ = arrays
        T, N, Q = eps_h_.shape
        nseq, dy = Y_.shape[0], Y_.shape[2]
        M, D = Z_.shape[1], Z_.shape[2]
        dx, S = A_.shape[0], N // nseq
        nb, L = window_blocks(nseq, S)
        FG, _, linear = linear_mean(x0_, U_, F_, G_, b_)
        gx0 = np.empty((N, dx))
        block_grads = zero_block_grads(nb, Q, M, D, dx) + (np.zeros((nb, dy)),)
        with _TAPES.reverse_tape(ans, lambda: _forward(arrays, kind)[1]) as tape:
            run_blocks(_vjp_blocks, nb, L, S, to_c_f64(GL), Y_, np.sqrt(r_), eps_y_, *tape[:6], *tape[7:], Z_,
                       1.0 / l_, s2_, alpha_, B_, A_, eps_h_, eps_x_, FG, linear, kernel_code(kind), gx0,
                       *block_grads)
        gZ, gl, gs2, galpha, gB, gA, gsq, gFG, gb, gr = (sum_blocks(g) for g in block_grads)
        return (gx0, None, None, gZ, gl / l_, gs2, galpha, gB, gA, gsq, None, None, gFG[:, :dx], gFG[:, dx:], gb, gr,
                None)

    return vjp


defvjp_argnums(_enkf_traced, vjp_all_argnums(_enkf_make_vjp))


def enkf_example(rng, nseq=2, S=4, T=4, dx=3, dy=2, du=1, Q=2, M=5):
    """Small valid arguments of :func:`enkf_loglik`: B=2 windows x S=4 members, T=4, d_x=3, d_y=2, d_u=1, Q=2, M=5
    by default (the transition's from ``ops.rollout.rollout_example``, a linear mean near 0.9 I)."""
    x0, U, *transition = rollout_example(rng, nseq, S, T, dx, du, Q, M)
    return (x0, U, rng.normal(size=(nseq, T, dy)), *transition, rng.uniform(0.2, 0.6, size=dy),
            rng.normal(size=(T, nseq * S, dy)))
