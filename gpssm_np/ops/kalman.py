r"""The exact Kalman filter and Rauch-Tung-Striebel smoother of a linear Gaussian state-space model, each one Numba
loop over the T steps: the forward and backward passes behind ``kalman.kalman_filter``, ``kalman.kalman_step`` and
``kalman.rts_smoother`` (the LGSSM baseline's EM, its order selection, filtering and smoothing).

Maths. x_0 ~ N(m_0, P_0), x_t = F x_{t-1} + b_t + w_t, w_t ~ N(0, Q), y_t = H x_t + v_t, v_t ~ N(0, R), t = 1..T,
with the input term b_t = G u_t given (``drive``, computed by the caller as u @ G^T). Forward, for t = 1..T::

    m^-_t = F m_{t-1} + b_t,   P^-_t = sym(F P_{t-1} F^T + Q)           prediction, sym(A) = (A + A^T) / 2
    o_t   = the observed (non-NaN) components of y_t;  C = H[o_t], R_o = R[o_t, o_t]
    m_t, P_t, l_t = the Joseph-form update of N(m^-_t, P^-_t) on y_t[o_t] = C x + e, e ~ N(0, R_o)
                    (``ops.gaussian_condition``: P_t exactly symmetric, l_t = log N(y_t[o_t]; C m^-_t, sym(C P^-_t C^T
                    + R_o)))
    m_t, P_t, l_t = m^-_t, P^-_t, 0 when nothing of y_t is observed
    log p(y_{1:T}) = sum_t l_t (summed in the order t = 1..T)

Backward, from m^s_T, P^s_T = m_T, P_T, for t = T..1 (Rauch, Tung & Striebel 1965; Shumway & Stoffer 1982)::

    J_{t-1}   = P_{t-1} F^T (P^-_t)^{-1}                     (P^-_t)^{-1} (F P_{t-1}) by LU with partial pivoting
    m^s_{t-1} = m_{t-1} + J_{t-1} (m^s_t - m^-_t)
    P^s_{t-1} = sym(P_{t-1} + J_{t-1} (P^s_t - P^-_t) J_{t-1}^T)
    Cov(x_t, x_{t-1} | y_{1:T}) = P^s_t J_{t-1}^T              the lag-one covariances EM needs

(the filtered moments at t = 0 are the prior's m_0, P_0). Each step is O(d_x^3 + d_y d_x^2 + d_y^3) operations on
matrices of a few rows, where a NumPy loop would spend its time in the overhead of a dozen small NumPy and LAPACK
calls per step. The smoother solves with P^-_t by LU with partial pivoting (as np.linalg.solve, not a Cholesky
factor), so a predicted covariance that rounding made slightly indefinite still solves; an exactly singular one is
reported.

No fastmath in these loops (the update keeps the flags of ``ops.gaussian_condition``). No gradient. The kernels
return the first step whose predictive covariance of y is not positive definite (forward) or whose P^-_t is
singular (backward), -1 when none, their outputs then unfinished; the caller raises the error. The plain NumPy
references :func:`kalman_forward_reference` and :func:`rts_backward_reference` are the same loops, which the tests
hold the kernels to.
"""
import math

import numpy as np

from ._compile import jit
from ._primitive import to_c_f64
from .gaussian_condition import condition_kernel


@jit
def _product(A, B, out):
    """out = A B, each entry summed over e = 0, 1, ... in turn from 0.0 (a dot product's order, so the same bits as
    the plain loop), the loop over the entries of a row innermost so that it vectorises: at d_x = 40 the filter and
    the smoother 2-3 times faster than with the dot-product loop, at d_x <= 10 within the noise of the timing."""
    n, p = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            out[i, j] = 0.0
        for e in range(p):
            a = A[i, e]
            for j in range(m):
                out[i, j] += a * B[e, j]


@jit
def _forward(F, H, Q, R, drive, y, m0, P0, means, covs, pred_means, pred_covs):
    T, d = drive.shape
    dy = y.shape[1]
    FP, A, Ft = np.empty((d, d)), np.empty((d, d)), np.empty((d, d))
    for i in range(d):
        for j in range(d):
            Ft[i, j] = F[j, i]
    observed = np.empty(dy, np.int64)
    step_lik = np.empty(1)
    m, P = m0, P0
    log_lik = 0.0
    for t in range(T):
        mp, Pp = pred_means[t], pred_covs[t]
        for i in range(d):  # m^- = F m + b, A = F P F^T + Q, P^- = sym(A)
            s = 0.0
            for j in range(d):
                s += F[i, j] * m[j]
            mp[i] = s + drive[t, i]
        _product(F, P, FP)
        _product(FP, Ft, A)
        for i in range(d):
            for j in range(d):
                A[i, j] += Q[i, j]
        for i in range(d):
            for j in range(d):
                Pp[i, j] = 0.5 * (A[i, j] + A[j, i])
        k = 0
        for a in range(dy):
            if not math.isnan(y[t, a]):
                observed[k] = a
                k += 1
        m, P = means[t], covs[t]
        if k == 0:  # nothing observed: no update
            for i in range(d):  # element loops: slice assignment compiles to seconds of broadcasting code
                m[i] = mp[i]
                for j in range(d):
                    P[i, j] = Pp[i, j]
            continue
        if k == dy:  # all observed: no copies (an allocation a step is most of the time at small d_x)
            C, R_o, y_o = H, R, y[t]
        else:
            C, R_o, y_o = np.empty((k, d)), np.empty((k, k)), np.empty(k)
            for a in range(k):
                y_o[a] = y[t, observed[a]]
                for j in range(d):
                    C[a, j] = H[observed[a], j]
                for b in range(k):
                    R_o[a, b] = R[observed[a], observed[b]]
        if condition_kernel(mp.reshape(1, d), Pp.reshape(1, d, d), C, R_o, y_o, m.reshape(1, d), P.reshape(1, d, d),
                            step_lik) >= 0:
            return log_lik, t
        log_lik += step_lik[0]
    return log_lik, -1


@jit
def _backward(F, filt_means, filt_covs, pred_means, pred_covs, means, covs, cross):
    T = pred_means.shape[0]
    d = F.shape[0]
    LU, X, J, JD = np.empty((d, d)), np.empty((d, d)), np.empty((d, d)), np.empty((d, d))
    D, A, dm = np.empty((d, d)), np.empty((d, d)), np.empty(d)
    for i in range(d):
        means[T, i] = filt_means[T, i]
        for j in range(d):
            covs[T, i, j] = filt_covs[T, i, j]
    for t in range(T, 0, -1):  # x_{t-1} given the smoothed x_t
        Pf, Pp = filt_covs[t - 1], pred_covs[t - 1]
        _product(F, Pf, X)  # X = F P_{t-1}, LU = P^-_t
        for i in range(d):
            for j in range(d):
                LU[i, j] = Pp[i, j]
        for c in range(d):  # X = (P^-_t)^{-1} X: LU factorisation with partial pivoting, row swaps applied to X
            p = c
            big = abs(LU[c, c])
            for i in range(c + 1, d):
                if abs(LU[i, c]) > big:
                    p, big = i, abs(LU[i, c])
            if LU[p, c] == 0.0:
                return t - 1
            if p != c:
                for j in range(d):
                    LU[c, j], LU[p, j] = LU[p, j], LU[c, j]
                    X[c, j], X[p, j] = X[p, j], X[c, j]
            for i in range(c + 1, d):
                f = LU[i, c] / LU[c, c]
                LU[i, c] = f
                for j in range(c + 1, d):
                    LU[i, j] -= f * LU[c, j]
                for j in range(d):
                    X[i, j] -= f * X[c, j]
        for c in range(d - 1, -1, -1):  # back substitution, the row of X at once
            for e in range(c + 1, d):
                f = LU[c, e]
                for j in range(d):
                    X[c, j] -= f * X[e, j]
            for j in range(d):
                X[c, j] /= LU[c, c]
        for i in range(d):
            dm[i] = means[t, i] - pred_means[t - 1, i]
            for j in range(d):
                J[i, j] = X[j, i]
        for i in range(d):
            s = 0.0
            for j in range(d):
                s += J[i, j] * dm[j]
            means[t - 1, i] = filt_means[t - 1, i] + s
            for j in range(d):
                D[i, j] = covs[t, i, j] - Pp[i, j]
        _product(J, D, JD)  # JD = J (P^s_t - P^-_t)
        _product(JD, X, A)  # A = P_{t-1} + JD J^T (J^T = X), then P^s_{t-1} = sym(A)
        for i in range(d):
            for j in range(d):
                A[i, j] = Pf[i, j] + A[i, j]
        for i in range(d):
            for j in range(d):
                covs[t - 1, i, j] = 0.5 * (A[i, j] + A[j, i])
        _product(covs[t], X, cross[t - 1])  # P^s_t J^T
    return -1


def kalman_forward(F, H, Q, R, drive, y, m0, P0):
    """The Kalman filter (module docstring) over y (T, d_y) (NaN entries missing) with the input terms ``drive`` =
    b_t (T, d_x), from x_0 ~ N(m0, P0), for F (d_x, d_x), H (d_y, d_x), Q, R.

    Returns (means, covs, pred_means, pred_covs, log_lik, failed): filtered and predicted means (T, d_x) and
    covariances (T, d_x, d_x), log p(y_{1:T}) and ``failed``, the first step t (0-based) whose predictive covariance
    of y is not positive definite (the outputs from t on then unfinished), or -1."""
    F, H, Q, R, drive, y, m0, P0 = (to_c_f64(a) for a in (F, H, Q, R, drive, y, m0, P0))
    T, d = drive.shape
    means, covs, pred_means, pred_covs = np.empty((T, d)), np.empty((T, d, d)), np.empty((T, d)), np.empty((T, d, d))
    log_lik, failed = _forward(F, H, Q, R, drive, y, m0, P0, means, covs, pred_means, pred_covs)
    return means, covs, pred_means, pred_covs, float(log_lik), failed


def rts_backward(F, filt_means, filt_covs, pred_means, pred_covs):
    """The RTS smoother (module docstring) from the filtered moments of x_0..x_T, ``filt_means`` (T + 1, d_x) and
    ``filt_covs`` (T + 1, d_x, d_x) (the prior's first), and the predicted ones of x_1..x_T, ``pred_means`` (T, d_x),
    ``pred_covs`` (T, d_x, d_x).

    Returns (means (T + 1, d_x), covs (T + 1, d_x, d_x), cross (T, d_x, d_x), failed): the smoothed moments of
    x_0..x_T, the lag-one covariances Cov(x_t, x_{t-1} | y_{1:T}), t = 1..T, and ``failed``, the first step t - 1
    met (going backwards) whose P^-_t is singular (outputs unfinished), or -1."""
    F, filt_means, filt_covs, pred_means, pred_covs = (to_c_f64(a) for a in (F, filt_means, filt_covs, pred_means,
                                                                               pred_covs))
    T, d = pred_means.shape
    means, covs, cross = np.empty((T + 1, d)), np.empty((T + 1, d, d)), np.empty((T, d, d))
    failed = _backward(F, filt_means, filt_covs, pred_means, pred_covs, means, covs, cross)
    return means, covs, cross, failed


def kalman_forward_reference(F, H, Q, R, drive, y, m0, P0):
    """:func:`kalman_forward` in plain NumPy (the Joseph-form update by np.linalg.solve): (means, covs, pred_means,
    pred_covs, log_lik)."""
    T, d = len(drive), len(m0)
    means, covs, pred_means, pred_covs = np.empty((T, d)), np.empty((T, d, d)), np.empty((T, d)), np.empty((T, d, d))
    m, P, log_lik = m0, P0, 0.0
    for t in range(T):
        m = F @ m + drive[t]
        P = F @ P @ F.T + Q
        P = 0.5 * (P + P.T)
        pred_means[t], pred_covs[t] = m, P
        obs = ~np.isnan(y[t])
        if obs.any():
            C, R_o, r = H[obs], R[np.ix_(obs, obs)], y[t, obs] - H[obs] @ m
            S_y = C @ P @ C.T + R_o
            S_y = 0.5 * (S_y + S_y.T)
            K = np.linalg.solve(S_y, C @ P).T
            m = m + K @ r
            I_KC = np.eye(d) - K @ C
            P = I_KC @ P @ I_KC.T + K @ R_o @ K.T
            P = 0.5 * (P + P.T)
            log_lik += -0.5 * (len(r) * np.log(2.0 * np.pi) + np.linalg.slogdet(S_y)[1] + r @ np.linalg.solve(S_y, r))
        means[t], covs[t] = m, P
    return means, covs, pred_means, pred_covs, float(log_lik)


def rts_backward_reference(F, filt_means, filt_covs, pred_means, pred_covs):
    """:func:`rts_backward` in plain NumPy: (means, covs, cross)."""
    T, d = pred_means.shape
    means, covs, cross = filt_means.copy(), filt_covs.copy(), np.empty((T, d, d))
    for t in range(T, 0, -1):
        J = np.linalg.solve(pred_covs[t - 1], F @ filt_covs[t - 1]).T
        means[t - 1] = filt_means[t - 1] + J @ (means[t] - pred_means[t - 1])
        A = filt_covs[t - 1] + J @ (covs[t] - pred_covs[t - 1]) @ J.T
        covs[t - 1] = 0.5 * (A + A.T)
        cross[t - 1] = covs[t] @ J.T
    return means, covs, cross


def kalman_example(rng, T=6, dx=3, dy=2, du=1, missing=0.0):
    """Arguments (F, H, Q, R, drive, y, m0, P0) of :func:`kalman_forward` for a random stable system (spectral radius
    0.9) with d_u inputs (drive = u G^T; d_u = 0 gives zeros) and outputs y simulated from it, each entry NaN with
    probability ``missing``."""
    F = rng.normal(size=(dx, dx))
    F *= 0.9 / np.max(np.abs(np.linalg.eigvals(F)))
    W, V, Z = rng.normal(size=(dx, dx)), rng.normal(size=(dy, dy)), rng.normal(size=(dx, dx))
    Q, R, P0 = 0.1 * W @ W.T + 0.05 * np.eye(dx), 0.2 * V @ V.T + 0.1 * np.eye(dy), Z @ Z.T + 0.1 * np.eye(dx)
    H, G, m0 = rng.normal(size=(dy, dx)), rng.normal(size=(dx, du)), rng.normal(size=dx)
    drive = rng.normal(size=(T, du)) @ G.T
    x, y = rng.multivariate_normal(m0, P0), np.empty((T, dy))
    for t in range(T):
        x = F @ x + drive[t] + rng.multivariate_normal(np.zeros(dx), Q)
        y[t] = H @ x + rng.multivariate_normal(np.zeros(dy), R)
    y[rng.random(size=y.shape) < missing] = np.nan
    return F, H, Q, R, drive, y, m0, P0
