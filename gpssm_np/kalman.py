r"""Exact Gaussian conditioning: the Joseph-form Kalman update, the Kalman filter and the Rauch-Tung-Striebel smoother.

One conditioning routine, the Numba kernel ``ops.gaussian_condition.condition_kernel``, serves the Kalman filter
below (``ops.kalman``, one Gaussian per step) and, through :func:`condition`, the particle filter's unfused fully
adapted proposal (``filtering.py``, one Gaussian per particle). For N Gaussians N(m_n, S_n) and an observation
y = C x + e, e ~ N(0, R)::

    S_y = C S_n C^T + R                          predictive covariance of y
    K   = S_n C^T S_y^{-1}                       gain
    m'  = m_n + K (y - C m_n)
    S'  = (I - K C) S_n (I - K C)^T + K R K^T    Joseph form: symmetric positive definite for any K
    log N(y; C m_n, S_y)                         the marginal likelihood of y under the n-th Gaussian

Linear Gaussian state-space model (the package's time convention; x_0 emits nothing; t = 1..T)::

    x_0 ~ N(m_0, P_0),   x_t = F x_{t-1} + G u_t + w_t,  w_t ~ N(0, Q),   y_t = H x_t + v_t,  v_t ~ N(0, R)

:func:`kalman_filter` alternates the prediction m = F m + G u_t, P = F P F^T + Q with the update of :func:`condition`;
:func:`predicted_moments` runs the prediction alone (a forecast: no output is observed), and
:func:`forecast_trajectories` draws joint trajectories whose mean is that exact prediction (with the exact covariances,
whose outputs' variances :func:`output_variances` gives);
:func:`rts_smoother` runs backwards with J_{t-1} = P_{t-1|t-1} F^T P_{t|t-1}^{-1} and returns the lag-one
covariances Cov(x_t, x_{t-1} | y_{1:T}) = P^s_t J_{t-1}^T that EM needs (Shumway & Stoffer 1982). Both are one Numba
loop over the T steps each (``ops.kalman``, whose docstring has the details and whose tests hold them to
plain NumPy per-step loops); :func:`kalman_step` is the filter's kernel over one step.
:func:`step_log_likelihoods` splits the filter's log-likelihood into its steps, :func:`gaussian_draws` draws from a
possibly singular Gaussian, and :func:`sample_smoothed` draws joint trajectories from p(x_{1:T} | y_{1:T}) by
forward filtering, backward sampling.
"""
from dataclasses import dataclass

import numpy as np

from .ops.gaussian_condition import condition_gaussians
from .ops.kalman import kalman_forward, rts_backward
from .ops.linalg import symmetrise

LOG_2PI = float(np.log(2.0 * np.pi))


def not_positive_definite(name):
    """The ValueError for covariance matrices ``name`` that are not positive definite."""
    return ValueError(f"{name}: expected symmetric positive-definite covariance matrices")


def as_covariance(mean, spread):
    """(mean, covariance) of a Gaussian given by its variances (d,) or its covariance (d, d) (``spread``), the two
    forms ``x0`` and q(x0) take."""
    return mean, (np.diag(spread) if np.ndim(spread) == 1 else spread)


def cholesky(cov, name):
    """Lower Cholesky factors of the symmetric positive-definite matrices ``cov`` (..., d, d), symmetrised first;
    a ValueError naming ``name`` when one is not positive definite."""
    try:
        return np.linalg.cholesky(symmetrise(cov))
    except np.linalg.LinAlgError:
        raise not_positive_definite(name) from None


def gaussian_logpdf_chol(resid, chol):
    """log N(resid; 0, L L^T) for resid (..., d) and a lower Cholesky factor L (d, d) or (..., d, d)."""
    d = resid.shape[-1]
    z = (np.linalg.inv(chol) @ resid[..., None])[..., 0]  # L^{-1} resid; inverse of each distinct factor once
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (d * LOG_2PI + logdet + np.sum(z * z, axis=-1))


def condition(mean, cov, C, R, y):
    """Condition N(mean[n], cov[n]) on y = C x + e, e ~ N(0, R), for every n (module docstring).

    ``mean`` (N, d), ``cov`` (N, d, d), ``C`` (k, d), ``R`` (k, k), ``y`` (k,). Returns (post_mean (N, d), post_cov
    (N, d, d), log N(y; C mean[n], C cov[n] C^T + R) (N,)); the posterior covariances are in Joseph form and
    exactly symmetric. A ValueError names "transition" when a predictive covariance is not positive definite.
    Computed by the Numba kernel ``ops.gaussian_condition`` (one small loop per Gaussian).
    """
    post_mean, post_cov, log_lik, failed = condition_gaussians(mean, cov, C, R, y)
    if failed >= 0:
        raise not_positive_definite("transition")
    return post_mean, post_cov, log_lik


@dataclass
class KalmanResult:
    """Output of :func:`kalman_filter` over T steps: filtered and one-step predicted moments, log-likelihood.

    means, covs : (T, d_x), (T, d_x, d_x)   p(x_t | y_{1:t})
    pred_means, pred_covs : (T, d_x), (T, d_x, d_x)   p(x_t | y_{1:t-1})
    log_likelihood : float   log p(y_{1:T})
    """

    means: np.ndarray
    covs: np.ndarray
    pred_means: np.ndarray
    pred_covs: np.ndarray
    log_likelihood: float


def kalman_filter(params, y, u, m0, P0):
    """Exact Kalman filter of the linear Gaussian model (module docstring) with parameters ``params`` (dict F, G, H,
    Q, R, and an optional intercept b added to every G u_t) over y (T, d_y) (NaN entries missing: only the observed
    rows of H and R enter; none observed, no update) with inputs u (T, d_u), from x_0 ~ N(m0, P0). Returns a
    :class:`KalmanResult`. Computed by the Numba kernel ``ops.kalman`` (one loop over the T steps; its update is
    :func:`condition`'s); a ValueError names "transition" when a predictive covariance of y is not positive
    definite."""
    drive = u @ params["G"].T  # G u_t of every step
    return _filter(params, drive + params["b"] if "b" in params else drive, y, m0, P0)


def _filter(params, drive, y, m0, P0):
    """:func:`kalman_filter` given the input terms ``drive`` (T, d_x) = G u_t."""
    means, covs, pred_means, pred_covs, log_lik, failed = kalman_forward(
        params["F"], params["H"], params["Q"], params["R"], drive, y, m0, P0)
    if failed >= 0:
        raise not_positive_definite("transition")
    return KalmanResult(means, covs, pred_means, pred_covs, log_lik)


def kalman_step(params, m, P, drive, y_t):
    """One step of :func:`kalman_filter` from the filtered moments m (d_x,), P (d_x, d_x) of x_{t-1}, with the input
    term ``drive`` = G u_t (d_x,) and the observation y_t (d_y,) (NaN entries missing: only the observed rows of H
    and R enter; none observed, no update). Returns the predicted moments of x_t, its filtered moments and the
    log-likelihood increment log p(y_t | y_{1:t-1}) (0 when nothing is observed). The same kernel as
    :func:`kalman_filter` over one step, hence the same numbers as its step t."""
    result = _filter(params, np.reshape(drive, (1, -1)), np.reshape(y_t, (1, -1)), m, P)
    return result.pred_means[0], result.pred_covs[0], result.means[0], result.covs[0], result.log_likelihood


def observed_part(y_t, C, R):
    """(C, R, y) restricted to the observed (non-NaN) components of y_t, or None when all are missing."""
    obs = ~np.isnan(y_t)
    if obs.all():
        return C, R, y_t
    if not obs.any():
        return None
    return C[obs], R[np.ix_(obs, obs)], y_t[obs]


def rts_smoother(params, result, m0, P0):
    """Rauch-Tung-Striebel smoother from a :class:`KalmanResult`: smoothed means (T + 1, d_x) and covariances
    (T + 1, d_x, d_x) of x_0..x_T, and the lag-one covariances Cov(x_t, x_{t-1} | y_{1:T}) (T, d_x, d_x), t = 1..T.
    Computed by the Numba kernel ``ops.kalman`` (one loop over the T steps); a numpy.linalg.LinAlgError when a
    predicted covariance is singular."""
    means, covs, cross, failed = rts_backward(params["F"], np.concatenate([np.reshape(m0, (1, -1)), result.means]),
                                              np.concatenate([np.reshape(P0, (1,) + np.shape(P0)), result.covs]),
                                              result.pred_means, result.pred_covs)
    if failed >= 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return means, covs, cross


def step_log_likelihoods(params, result, y):
    """The increments log p(y_t | y_{1:t-1}) (T,) of the filter's ``result`` (a :class:`KalmanResult` over y (T,
    d_y), NaN entries missing): log N(y_o; H_o m_{t|t-1}, H_o P_{t|t-1} H_o^T + R_oo) over the observed entries o,
    0 where none is. Their sum is ``result.log_likelihood`` to rounding (the kernel sums the same terms)."""
    H, R = params["H"], params["R"]
    steps = np.zeros(len(y))
    for k, y_t in enumerate(y):
        observed = observed_part(y_t, H, R)
        if observed is not None:
            Ho, Ro, yo = observed
            S = Ho @ result.pred_covs[k] @ Ho.T + Ro
            steps[k] = gaussian_logpdf_chol(yo - Ho @ result.pred_means[k], cholesky(S, "transition"))
    return steps


def gaussian_draws(mean, cov, num_samples, rng):
    """``num_samples`` draws (S, d) from N(mean (d,), cov (d, d)) for a positive semi-definite ``cov`` (through its
    eigen-decomposition, negative eigenvalues of rounding clipped to 0): a state that only later outputs inform may
    have a (near-)singular filtered covariance."""
    lam, vec = np.linalg.eigh(symmetrise(cov))
    return mean + rng.standard_normal((num_samples, len(mean))) @ (vec * np.sqrt(np.maximum(lam, 0.0))).T


def sample_smoothed(params, result, num_samples, rng):
    """``num_samples`` joint trajectories (S, T, d_x) of x_1..x_T drawn from p(x_{1:T} | y_{1:T}) given the filter's
    ``result`` (a :class:`KalmanResult`), by forward filtering, backward sampling (Carter & Kohn 1994;
    Fruehwirth-Schnatter 1994): x_T ~ N(m_{T|T}, P_{T|T}), then for t = T-1, ..., 1::

        x_t | x_{t+1} ~ N(m_{t|t} + J_t (x_{t+1} - m_{t+1|t}), P_{t|t} - J_t F P_{t|t})
        J_t = P_{t|t} F^T P_{t+1|t}^{-1}

    ``rng`` draws x_T first, then each earlier step."""
    means, covs, pred_means, pred_covs = result.means, result.covs, result.pred_means, result.pred_covs
    F = params["F"]
    T, d = means.shape
    states = np.empty((num_samples, T, d))
    x = states[:, -1] = gaussian_draws(means[-1], covs[-1], num_samples, rng)
    for k in range(T - 2, -1, -1):
        FP = F @ covs[k]
        J = np.linalg.solve(pred_covs[k + 1], FP).T  # P F^T P_pred^{-1} (both covariances symmetric)
        x = states[:, k] = (gaussian_draws(np.zeros(d), covs[k] - J @ FP, num_samples, rng)
                            + means[k] + (x - pred_means[k + 1]) @ J.T)
    return states


def predicted_moments(params, u, m, P):
    """Exact moments of the states x_1..x_T with inputs u (T, d_u) from x_0 ~ N(m, P), no output observed: means
    (T, d_x) and covariances (T, d_x, d_x) of m_t = F m_{t-1} + G u_t (+ b when ``params`` has an intercept b),
    P_t = F P_{t-1} F^T + Q."""
    F, G, Q, b = params["F"], params["G"], params["Q"], params.get("b")
    means, covs = [], []
    for u_t in u:
        m = F @ m + G @ u_t if b is None else F @ m + G @ u_t + b
        P = symmetrise(F @ P @ F.T + Q)
        means.append(m)
        covs.append(P)
    return np.array(means), np.array(covs)


def forecast_trajectories(params, u, m, P, num_samples, rng):
    """``num_samples`` joint state trajectories (S, T, d_x) of the model over the inputs u (T, d_u) from x_0 ~ N(m,
    P) (``rng`` draws x_0, then the noise w_t of every step), re-centred so that their mean over the samples is the
    exact predictive mean of :func:`predicted_moments`: the point forecast carries no Monte-Carlo error, the
    spread of the trajectories is the model's. Returns them and the exact covariances P_t (T, d_x, d_x)."""
    means, covs = predicted_moments(params, u, m, P)
    F, G, b = params["F"], params["G"], params.get("b")
    x = rng.multivariate_normal(m, P, size=num_samples, method="eigh")
    noise = rng.multivariate_normal(np.zeros(len(m)), params["Q"], size=(len(u), num_samples), method="eigh")
    states = np.empty((num_samples, len(u), len(m)))
    for t, u_t in enumerate(u):
        drive = G @ u_t if b is None else G @ u_t + b
        x = states[:, t] = x @ F.T + drive + noise[t]
    states += means - states.mean(axis=0)
    return states, covs


def output_variances(H, covs):
    """The variances (T, d_y) of the noise-free outputs H x_t of states with covariances ``covs`` (T, d_x, d_x)."""
    return np.einsum("ij,tjk,ik->ti", H, covs, H)
