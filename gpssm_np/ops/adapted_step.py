r"""One step of the fully adapted particle filter through a sparse-GP transition, as two kernels: :func:`propagate`
(the transition moments, the predicted output and the Kalman update of every particle) and, with the random numbers
the caller draws in between, :func:`draw` (resampling, one draw per particle, the weighted moments of the draws). The
fused step of ``filtering`` (whose module docstring has the filter) for the sparse-GP models
(``transition.FilterTransition``).

Maths. Particles x_n (N, d_x) with normalised log-weights lw_n, the input u_t (d_u,), x~_n = [x_n, u_t] (D,). The
transition (paper Eq. (12); ``ops.kernels``, ``ops.conditional``, ``ops.lmc``) with Q latent GPs::

    k_q = k_q(Z_q, x~_n)                                   (M,), squared exponential or Matern-5/2
    m_h[q] = k_q . alpha_q,   s_h[q] = max(s2_q - k_q^T B_q k_q, VAR_FLOOR)
    m_n = F x_n + G u_t + b + A m_h,   S_n = A diag(s_h) A^T + diag(q)

The one-step prediction of the output y_t = C x_t + e, e ~ N(0, diag(r)), with w_n = exp(lw_n)::

    E[y_t] = sum_n w_n C m_n,   Var[y_t]_o = sum_n w_n ((C S_n C^T)_oo + ((C m_n)_o - E[y_t]_o)^2) + r_o

The observed outputs (y_a not NaN; row c_a of C) update every particle one at a time, which for a diagonal R is the
joint update (in Joseph form, as ``ops.gaussian_condition``)::

    s = S c_a,   v = c_a . s + r_a,   e = y_a - c_a . m,   K = s / v,   g_n += log N(y_a; c_a . m, v)
    m <- m + K e,   S <- (I - K c_a^T) S (I - K c_a^T)^T + r_a K K^T = T - (T c_a) K^T + r_a K K^T,  T = S - K s^T

then L_n, the lower Cholesky factor of the updated S_n (``linalg.cholesky_into``'s loop), and the weights
lw'_n = lw_n + g_n - inc, inc = log sum_j exp(lw_j + g_j), ESS = 1 / sum_n exp(2 lw'_n) (nothing observed: lw' = lw,
inc = 0). :func:`draw`, given the caller's decision to resample, its uniform number v and normals eps (N, d_x)::

    a_n = the first j with c_j > (n + v) / N,  c_j = sum_{i <= j} exp(lw'_i)  (c_{N-1} = 1)    systematic
    a_n = n                                                                                   without resampling
    x'_n = m_{a_n} + L_{a_n} eps_n
    mean = sum_n w'_n x'_n,   cov = sum_n w'_n (x'_n - mean)(x'_n - mean)^T,   C mean,   diag(C cov C^T)

with w'_n = 1 / N after resampling (log-weights -log N), else exp(lw'_n).

How it is computed. :func:`propagate` passes over the particles in chunks of :data:`CHUNK`, particle-minor like the
rollout (``ops.rollout``), so that the loops over a chunk's particles vectorise and its arrays stay in the first
cache level: the kernel rows four inducing points at a time (four independent ``_fastmath.exp_fast`` per iteration;
the input's share of the squared distance, the same for every particle, once per inducing point), k^T B k over one
triangle of the symmetric B (half the products of B k), the LMC, the Kalman update and the Cholesky factors. The
filter's NumPy step (the transition function, ``kalman.condition``, ``ops.gaussian_sample`` and the weights and
moments in ``filtering``) does the same arithmetic but for the order of sums and the joint update; the two agree to
rounding (``tests/ops/test_adapted_step.py``, ``tests/test_filtering.py``).

No gradient (filters only). :func:`propagate` returns the index of the first particle whose predictive variance of
an observed output is not positive or whose updated covariance is not positive definite (-1 when none), and whether
every transition moment is finite; its outputs are then unfinished and the caller raises the error.
"""
import math

import numpy as np

from .._config import FASTMATH, VAR_FLOOR
from ._compile import jit
from ._fastmath import exp_fast
from ._primitive import to_c_f64
from .kernels import kernel_code, kernel_matrix_reference

#: Particles per pass of :func:`propagate`: the chunk's arrays (kernel rows (M, CHUNK), ...) stay in L1.
CHUNK = 64

_THIRD = 1.0 / 3.0
_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------------------------------------------
# Reference (plain NumPy): the executable specification
# ---------------------------------------------------------------------------------------------------------------
def adapted_step_reference(x, log_w, u_t, Z, lengthscale, variance, alpha, B, A, F, G, b, q_diag, C, r, y, resample,
                           uniform, eps, kind="matern52"):
    """The step of the module docstring in plain NumPy, the observed outputs conditioned on jointly: (x' (N, d_x),
    ancestors (N,), carried log-weights (N,), inc, ESS, mean (d_x,), cov (d_x, d_x), C mean, diag(C cov C^T), the
    predicted output mean (d_y,) and variances (d_y,)). The transition's arrays as :func:`gp_arrays` takes them,
    the rest as :func:`propagate` and :func:`draw`; ``resample`` stands for the caller's decision."""
    N, dx = x.shape
    xt = np.concatenate([x, np.broadcast_to(u_t, (N, len(u_t)))], axis=1)
    K = kernel_matrix_reference(xt, Z, lengthscale, variance, kind)  # (Q, N, M)
    m_h = np.einsum("qnm,qm->nq", K, alpha)
    s_h = np.maximum(variance - np.einsum("qnm,qmk,qnk->nq", K, B, K), VAR_FLOOR)
    mean = x @ F.T + u_t @ G.T + b + m_h @ A.T
    cov = np.einsum("iq,nq,jq->nij", A, s_h, A) + np.diag(q_diag)
    w = np.exp(log_w)
    Cm = mean @ C.T
    y_mean = w @ Cm
    y_var = w @ (np.einsum("oi,nij,oj->no", C, cov, C) + (Cm - y_mean) ** 2) + r
    inc = 0.0
    obs = ~np.isnan(y)
    C_obs, r_obs, y_obs = C[obs], r[obs], y[obs]
    if obs.any():
        Sy = np.einsum("oi,nij,pj->nop", C_obs, cov, C_obs) + np.diag(r_obs)
        gain = np.swapaxes(np.linalg.solve(Sy, C_obs @ cov), 1, 2)  # S C^T Sy^{-1}, (N, d_x, k)
        resid = y_obs - mean @ C_obs.T
        log_g = -0.5 * (len(y_obs) * _LOG_2PI + np.linalg.slogdet(Sy)[1]
                        + np.einsum("no,no->n", resid, np.linalg.solve(Sy, resid[..., None])[..., 0]))
        I_KC = np.eye(dx) - gain @ C_obs
        mean = mean + np.einsum("nik,nk->ni", gain, resid)
        cov = I_KC @ cov @ np.swapaxes(I_KC, 1, 2) + gain @ np.diag(r_obs) @ np.swapaxes(gain, 1, 2)
        a = log_w + log_g
        inc = a.max() + np.log(np.sum(np.exp(a - a.max())))
        log_w = a - inc
    ess = 1.0 / np.sum(np.exp(2.0 * log_w))
    anc = np.arange(N)
    if resample:
        cdf = np.cumsum(np.exp(log_w))
        cdf[-1] = 1.0
        anc = np.minimum(np.searchsorted(cdf, (np.arange(N) + uniform) / N, side="right"), N - 1)
        log_w = np.full(N, -np.log(N))
    x_new = mean[anc] + np.einsum("nij,nj->ni", np.linalg.cholesky(cov[anc]), eps)
    w = np.exp(log_w)
    m = w @ x_new
    P = (x_new - m).T @ ((x_new - m) * w[:, None])
    return x_new, anc, log_w, inc, ess, m, P, C @ m, np.diag(C @ P @ C.T), y_mean, y_var


# ---------------------------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------------------------
@jit(fastmath=FASTMATH)
def _logsumexp(a):
    # log sum_i exp(a_i) of finite a: the maximum, and the sum of the others shifted by it (filtering.logsumexp);
    # the maximum by a loop, which for finite a is a.max() (whose compiled form also checks for NaN and for no entries)
    a_max = a[0]
    for v in a:
        if v > a_max:
            a_max = v
    m, s = 0.0, 0.0
    for v in a:
        m += 1.0 if v == a_max else 0.0
        s += 0.0 if v == a_max else exp_fast(v - a_max)
    if s != 0:
        s = s / m
    return math.log1p(s) + math.log(m) + a_max


@jit(fastmath=FASTMATH, inline=True)
def _se(r2, s2):
    # squared exponential: k = s2 exp(-r2 / 2)
    return s2 * exp_fast(-0.5 * r2)


@jit(fastmath=FASTMATH, inline=True)
def _matern52(r2, s2):
    # Matern-5/2: k = s2 (1 + a + a^2 / 3) e^-a, a = sqrt(5 r2)
    a = math.sqrt(5.0 * r2)
    return (1.0 + a + a * a * _THIRD) * (s2 * exp_fast(-a))


@jit(fastmath=FASTMATH)
def _propagate_kernel(x, u_t, Z, inv_l, variance, alpha, B, A, FG, b, linear, code, q_diag, C, r, y, log_w,
                      post_mean, post_chol, log_w_out, predicted):
    N, dx = x.shape
    Q, M, D = Z.shape
    dy = C.shape[0]
    observed = False
    L = min(CHUNK, N)
    xt, xs, Kq, zu = np.empty((D, L)), np.empty((dx, L)), np.empty((M, L)), np.empty(M)
    r2, acc, kbk, tri = np.empty((4, L)), np.empty(L), np.empty(L), np.empty(L)
    m_h, s_h, mean, cov = np.empty((Q, L)), np.empty((Q, L)), np.empty((dx, L)), np.empty((dx, dx, L))
    cs, gain, T1 = np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, dx, L))
    Cm, CSC, log_g, w = np.empty((dy, N)), np.empty((dy, N)), np.zeros(N), np.empty(N)
    nonfinite = np.zeros(L)  # per lane: stays 0 unless a moment is NaN or inf (0 * inf = NaN)
    for n0 in range(0, N, L):
        nl = min(L, N - n0)
        for d in range(dx):
            row = xt[d]
            for i in range(nl):
                row[i] = x[n0 + i, d]
        for d in range(dx, D):
            xt[d, :nl] = u_t[d - dx]
        for q in range(Q):
            s2 = variance[q]
            for d in range(dx):  # inputs scaled by 1 / l_q
                il, row, xrow = inv_l[q, d], xs[d], xt[d]
                for i in range(nl):
                    row[i] = xrow[i] * il
            for j in range(M):  # the input's share of the squared distance: the same for every particle
                c = 0.0
                for d in range(dx, D):
                    v = u_t[d - dx] * inv_l[q, d] - Z[q, j, d] * inv_l[q, d]
                    c += v * v
                zu[j] = c
            # kernel rows four at a time (independent exp_fast chains in each iteration); the last group ends at
            # row M - 1 and may overlap the one before it, rows repeat when M < 4
            for g in range(0, M, 4):
                j0 = min(g, max(M - 4, 0))
                ja, jb, jc, jd = j0, min(j0 + 1, M - 1), min(j0 + 2, M - 1), min(j0 + 3, M - 1)
                ra, rb, rc, rd = r2[0], r2[1], r2[2], r2[3]
                ca, cb, cc, cd = zu[ja], zu[jb], zu[jc], zu[jd]
                for i in range(nl):
                    ra[i], rb[i], rc[i], rd[i] = ca, cb, cc, cd
                for d in range(dx):
                    il, row = inv_l[q, d], xs[d]
                    za, zb, zc, zd = Z[q, ja, d] * il, Z[q, jb, d] * il, Z[q, jc, d] * il, Z[q, jd, d] * il
                    for i in range(nl):
                        va, vb, vc, vd = row[i] - za, row[i] - zb, row[i] - zc, row[i] - zd
                        ra[i] += va * va
                        rb[i] += vb * vb
                        rc[i] += vc * vc
                        rd[i] += vd * vd
                ka, kb, kc, kd = Kq[ja], Kq[jb], Kq[jc], Kq[jd]
                if code == 0:
                    for i in range(nl):
                        ka[i], kb[i] = _se(ra[i], s2), _se(rb[i], s2)
                        kc[i], kd[i] = _se(rc[i], s2), _se(rd[i], s2)
                else:
                    for i in range(nl):
                        ka[i], kb[i] = _matern52(ra[i], s2), _matern52(rb[i], s2)
                        kc[i], kd[i] = _matern52(rc[i], s2), _matern52(rd[i], s2)
            # k . alpha, and k^T B k = sum_j k_j (B_jj k_j + 2 sum_{l < j} B_jl k_l) with four l at a time
            for i in range(nl):
                acc[i] = 0.0
                kbk[i] = 0.0
            for j in range(M):
                Bj = B[q, j]
                for i in range(nl):
                    tri[i] = 0.0
                for l0 in range(0, j - 3, 4):
                    c0, c1, c2, c3 = 2.0 * Bj[l0], 2.0 * Bj[l0 + 1], 2.0 * Bj[l0 + 2], 2.0 * Bj[l0 + 3]
                    k0, k1, k2, k3 = Kq[l0], Kq[l0 + 1], Kq[l0 + 2], Kq[l0 + 3]
                    for i in range(nl):
                        tri[i] = (((tri[i] + c0 * k0[i]) + c1 * k1[i]) + c2 * k2[i]) + c3 * k3[i]
                for l0 in range(j - j % 4, j):
                    c0, k0 = 2.0 * Bj[l0], Kq[l0]
                    for i in range(nl):
                        tri[i] += c0 * k0[i]
                a, c, krow = alpha[q, j], B[q, j, j], Kq[j]
                for i in range(nl):
                    acc[i] += krow[i] * a
                    kbk[i] += krow[i] * (c * krow[i] + tri[i])
            mrow, srow = m_h[q], s_h[q]
            for i in range(nl):
                mrow[i] = acc[i]
                var = s2 - kbk[i]
                srow[i] = var if var > VAR_FLOOR else VAR_FLOOR
        for d in range(dx):  # m = [F G] x~ + b + A m_h
            for i in range(nl):
                acc[i] = b[d] if linear else 0.0
            if linear:
                for c2 in range(D):
                    f, row = FG[d, c2], xt[c2]
                    for i in range(nl):
                        acc[i] += f * row[i]
            for q in range(Q):
                a, row = A[d, q], m_h[q]
                for i in range(nl):
                    acc[i] += a * row[i]
            row = mean[d]
            for i in range(nl):
                row[i] = acc[i]
                nonfinite[i] += 0.0 * acc[i]
        for d in range(dx):  # S = A diag(s_h) A^T + diag(q)
            for e in range(d + 1):
                for i in range(nl):
                    acc[i] = q_diag[d] if d == e else 0.0
                for q in range(Q):
                    a, row = A[d, q] * A[e, q], s_h[q]
                    for i in range(nl):
                        acc[i] += a * row[i]
                row, row2 = cov[d, e], cov[e, d]
                for i in range(nl):
                    row[i] = acc[i]
                    row2[i] = acc[i]
                    nonfinite[i] += 0.0 * acc[i]
        if not nonfinite.sum() == 0.0:
            return -1, 0.0, 0.0, False
        for o in range(dy):  # C m and diag(C S C^T), for the predicted output
            for i in range(nl):
                acc[i] = 0.0
                kbk[i] = 0.0
            for d in range(dx):
                c, row = C[o, d], mean[d]
                for i in range(nl):
                    acc[i] += c * row[i]
                for e in range(dx):
                    c2, row = c * C[o, e], cov[d, e]
                    for i in range(nl):
                        kbk[i] += c2 * row[i]
            for i in range(nl):  # element by element: a slice copy compiles Numba's shape-error message
                Cm[o, n0 + i] = acc[i]
                CSC[o, n0 + i] = kbk[i]
        for a in range(dy):  # the observed outputs one at a time
            c, ra, ya = C[a], r[a], y[a]
            if ya != ya:  # missing
                continue
            observed = True
            for e in range(dx):  # s = S c
                row = cs[e]
                for i in range(nl):
                    row[i] = 0.0
                for j in range(dx):
                    cj, row2 = c[j], cov[j, e]
                    for i in range(nl):
                        row[i] += cj * row2[i]
            for i in range(nl):  # v = c . s + r, e = y - c . m
                acc[i] = ra
                kbk[i] = ya
            for e in range(dx):
                ce, row, row2 = c[e], cs[e], mean[e]
                for i in range(nl):
                    acc[i] += row[i] * ce
                    kbk[i] -= ce * row2[i]
            for i in range(nl):
                if not acc[i] > 0.0:
                    return n0 + i, 0.0, 0.0, True
                log_g[n0 + i] -= 0.5 * (_LOG_2PI + math.log(acc[i]) + kbk[i] * kbk[i] / acc[i])
                acc[i] = 1.0 / acc[i]
            for e in range(dx):  # K = s / v, m += K e
                row, row2, row3 = gain[e], cs[e], mean[e]
                for i in range(nl):
                    row[i] = row2[i] * acc[i]
                    row3[i] += row[i] * kbk[i]
            for d in range(dx):  # T1 = (I - K c^T) S = S - K s^T
                for e in range(dx):
                    row, row2, g, s = T1[d, e], cov[d, e], gain[d], cs[e]
                    for i in range(nl):
                        row[i] = row2[i] - g[i] * s[i]
            for d in range(dx):  # S' = T1 (I - K c^T)^T + r K K^T = T1 - (T1 c) K^T + r K K^T
                for i in range(nl):
                    acc[i] = 0.0
                for f in range(dx):
                    cf, row = c[f], T1[d, f]
                    for i in range(nl):
                        acc[i] += row[i] * cf
                for e in range(d + 1):
                    row, row2, row3, gd, ge = T1[d, e], cov[d, e], cov[e, d], gain[d], gain[e]
                    for i in range(nl):
                        s = row[i] - acc[i] * ge[i] + ra * gd[i] * ge[i]
                        row2[i] = s
                        row3[i] = s
        for j in range(dx):  # the Cholesky factor of S (linalg.cholesky_into's loop), into T1
            for i in range(nl):
                acc[i] = cov[j, j, i]
            for m2 in range(j):
                row = T1[j, m2]
                for i in range(nl):
                    acc[i] -= row[i] * row[i]
            row = T1[j, j]
            for i in range(nl):
                if not acc[i] > 0.0:
                    return n0 + i, 0.0, 0.0, True
                row[i] = math.sqrt(acc[i])
            for r3 in range(j + 1, dx):
                for i in range(nl):
                    acc[i] = cov[r3, j, i]
                for m2 in range(j):
                    row, row2 = T1[r3, m2], T1[j, m2]
                    for i in range(nl):
                        acc[i] -= row[i] * row2[i]
                row, row2 = T1[r3, j], T1[j, j]
                for i in range(nl):
                    row[i] = acc[i] / row2[i]
        for i in range(nl):
            for d in range(dx):
                post_mean[n0 + i, d] = mean[d, i]
                for e in range(dx):
                    post_chol[n0 + i, d, e] = T1[d, e, i] if e <= d else 0.0
    for n in range(N):
        w[n] = exp_fast(log_w[n])
    for o in range(dy):
        y_mean = 0.0
        for n in range(N):
            y_mean += w[n] * Cm[o, n]
        y_var = 0.0
        for n in range(N):
            v = Cm[o, n] - y_mean
            y_var += w[n] * (CSC[o, n] + v * v)
        predicted[0, o] = y_mean
        predicted[1, o] = y_var + r[o]
    inc = 0.0
    if not observed:
        for n in range(N):
            log_w_out[n] = log_w[n]
    else:
        for n in range(N):
            log_w_out[n] = log_w[n] + log_g[n]
        inc = _logsumexp(log_w_out)
        for n in range(N):
            log_w_out[n] -= inc
    s = 0.0
    for n in range(N):
        s += exp_fast(2.0 * log_w_out[n])
    return -1, inc, 1.0 / s, True


@jit(fastmath=FASTMATH)
def _draw_kernel(post_mean, post_chol, log_w, resample, uniform, eps, C, x, anc, log_w_out, mean, cov, outputs):
    N, d = post_mean.shape
    w = np.empty(N)
    if resample:
        total = _logsumexp(log_w)
        for n in range(N):
            w[n] = exp_fast(log_w[n] - total)
        j, c = 0, w[0]
        for n in range(N):  # the positions (n + v) / N increase with n: one pass over the cdf
            position = (n + uniform) / N
            while j < N - 1 and c <= position:
                j += 1
                c += w[j]
            anc[n] = j
        w[:] = 1.0 / N
        log_w_out[:] = -math.log(N)
    else:
        for n in range(N):
            anc[n] = n
            w[n] = exp_fast(log_w[n])
            log_w_out[n] = log_w[n]
    for n in range(N):
        i = anc[n]
        for a in range(d):
            s = post_mean[i, a]
            for b in range(a + 1):
                s += post_chol[i, a, b] * eps[n, b]
            x[n, a] = s
    mean[:] = 0.0
    for n in range(N):
        for a in range(d):
            mean[a] += w[n] * x[n, a]
    cov[:] = 0.0
    for n in range(N):
        for a in range(d):
            v = w[n] * (x[n, a] - mean[a])
            for b in range(a + 1):
                cov[a, b] += v * (x[n, b] - mean[b])
    for a in range(d):
        for b in range(a):
            cov[b, a] = cov[a, b]
    for o in range(C.shape[0]):  # C mean and diag(C cov C^T)
        s, v = 0.0, 0.0
        for a in range(d):
            s += C[o, a] * mean[a]
            for b in range(d):
                v += C[o, a] * cov[a, b] * C[o, b]
        outputs[0, o] = s
        outputs[1, o] = v


# ---------------------------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------------------------
_F64 = np.dtype(np.float64)


def _writable(*arrays):
    """C-contiguous float64 arrays that are writable, copied only when needed: Numba types a read-only array apart,
    and each type compiles its own kernel. Arrays already so pass through on three attribute tests (called at every
    step of a filter, where NumPy's conversion calls cost more)."""
    out = []
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype is not _F64 or not (a.flags.c_contiguous and a.flags.writeable):
            a = to_c_f64(a)
            a = a if a.flags.writeable else a.copy()
        out.append(a)
    return out


def gp_arrays(Z, lengthscale, variance, alpha, B, A, F, G, b, q_diag, kind="matern52"):
    """The transition's arrays as :func:`propagate` takes them, prepared once per parameter set: Z (Q, M, D),
    1 / lengthscale (Q, D), variance (Q,), alpha (Q, M), B (Q, M, M) symmetric, A (d_x, Q), [F G] (d_x, D), b (d_x,),
    whether the mean is linear (False when F, G and b are all zero: the mean term is then skipped), the kernel's
    code (``kernels.kernel_code``) and q (d_x,)."""
    Z, lengthscale, variance, alpha, B, A, F, G, b, q_diag = _writable(Z, lengthscale, variance, alpha, B, A, F, G, b,
                                                                       q_diag)
    return (Z, 1.0 / lengthscale, variance, alpha, B, A, np.concatenate([F, G], axis=1), b,
            bool(F.any() or G.any() or b.any()), kernel_code(kind), q_diag)


def propagate(x, log_w, u_t, gp, C, r, y):
    """The transition moments, the predicted output and the Kalman update of the particles x (N, d_x) with normalised
    log-weights ``log_w`` (N,) under the input u_t (d_u,) (module docstring). ``gp`` from :func:`gp_arrays`; the
    emission C (d_y, d_x) with noise variances r (d_y,) and the output y (d_y,), NaN where missing.

    Returns (mean (N, d_x) and lower Cholesky factor of the covariance (N, d_x, d_x) of the updated particles,
    log-weights (N,), inc, ESS, predicted output mean (d_y,) and variances (d_y,), failed, finite): ``failed`` the
    first particle whose predictive variance of an observed output is not positive, or whose updated covariance is
    not positive definite, or -1; ``finite`` False when a transition moment is NaN or inf."""
    x, u_t, C, r, y, log_w = _writable(x, u_t, C, r, y, log_w)
    N, dx = x.shape
    dy = len(r)
    if (C.shape, y.shape, log_w.shape, u_t.shape) != ((dy, dx), (dy,), (N,), (gp[0].shape[2] - dx,)):
        raise ValueError(f"propagate: expected C ({dy}, {dx}), y ({dy},), log_w ({N},) and u_t "
                         f"({gp[0].shape[2] - dx},) for x {x.shape} and r ({dy},), got {C.shape}, {y.shape}, "
                         f"{log_w.shape} and {u_t.shape}")
    post_mean, post_chol, log_w_out, predicted = (np.empty((N, dx)), np.empty((N, dx, dx)), np.empty(N),
                                                  np.empty((2, dy)))
    failed, inc, ess, finite = _propagate_kernel(x, u_t, *gp, C, r, y, log_w, post_mean, post_chol, log_w_out,
                                                 predicted)
    return post_mean, post_chol, log_w_out, inc, ess, predicted[0], predicted[1], failed, finite


def draw(mean, chol, log_w, resample, uniform, eps, C):
    """Ancestors a_n (systematic resampling with the uniform number ``uniform`` when ``resample``, else each particle
    its own) and one draw x'_n = mean[a_n] + chol[a_n] eps_n from the standard normals ``eps`` (N, d_x) (module
    docstring); ``mean``, ``chol`` and ``log_w`` as :func:`propagate` returns them. Returns (x' (N, d_x), ancestors
    (N,), the log-weights they carry (N,) (-log N after resampling, else ``log_w``), their weighted mean m (d_x,) and
    covariance P (d_x, d_x), C m (d_y,) and diag(C P C^T) (d_y,))."""
    N, d = mean.shape
    x, anc, log_w_out, m, P, outputs = (np.empty((N, d)), np.empty(N, dtype=np.intp), np.empty(N), np.empty(d),
                                        np.empty((d, d)), np.empty((2, C.shape[0])))
    _draw_kernel(*_writable(mean, chol, log_w), bool(resample), float(uniform), *_writable(eps, C), x, anc, log_w_out,
                 m, P, outputs)
    return x, anc, log_w_out, m, P, outputs[0], outputs[1]


def adapted_step_example(rng, N=70, dx=3, du=2, dy=2, Q=2, M=5):
    """Small valid arguments of :func:`adapted_step_reference` (without ``kind``): N = 70 particles (two chunks), a
    linear mean near 0.9 I, the first of two outputs observed, resampling on, its uniform number and normals."""
    D = dx + du
    W = rng.normal(size=(Q, M, M)) / M
    C = rng.normal(size=(dy, dx))
    r = rng.uniform(0.2, 0.5, size=dy)
    return (rng.normal(size=(N, dx)), np.log(rng.dirichlet(np.ones(N))), rng.normal(size=du),
            rng.uniform(-2, 2, size=(Q, M, D)), rng.uniform(0.7, 2.0, size=(Q, D)), rng.uniform(0.5, 1.5, size=Q),
            rng.normal(size=(Q, M)), 0.1 * (W + np.swapaxes(W, 1, 2)), rng.normal(size=(dx, Q)),
            0.9 * np.eye(dx) + 0.1 * rng.normal(size=(dx, dx)), 0.3 * rng.normal(size=(dx, du)),
            0.2 * rng.normal(size=dx), rng.uniform(0.1, 0.5, size=dx), C, r, np.array([rng.normal(), np.nan]), True,
            rng.uniform(), rng.standard_normal((N, dx)))
