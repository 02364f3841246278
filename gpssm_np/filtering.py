r"""Particle filtering and backward-simulation smoothing for Gaussian-transition, linear-Gaussian-emission models.

Model (the package's time convention, ``estimator.py``): x_0 ~ p(x_0) emits nothing; for t = 1..T::

    x_t | x_{t-1} ~ N(m(x_{t-1}, u_t, t), S(x_{t-1}, u_t, t))       the "transition moments" function
    y_t | x_t     ~ N(C x_t, R)

The transition is any function ``transition(x_prev (N, d_x), u_t (d_u,) or None, k) -> (mean (N, d_x), cov (N, d_x,
d_x))``. Arrays are 0-based: ``y[k]`` is y_{k+1}, ``u[k]`` is u_{k+1}, and ``transition(x_prev, u[k], k)`` gives
the moments of x_{k+1} given x_k = x_prev. Every per-step result (``means[k]``, ``ess[k]``, ...) therefore covers
t = k + 1 = 1..T; the x_0 samples are kept separately in ``FilterResult.initial_particles``.

Proposals (N particles x^i with normalised weights W^i, g^i the weight increment at step t):

* ``"adapted"`` (fully adapted auxiliary particle filter, Pitt & Shephard 1999): closed form because both the
  transition and the emission are Gaussian-linear given x_{t-1}. With m_i, S_i the transition moments at
  x_{t-1}^i::

      g^i   = p(y_t | x_{t-1}^i) = N(y_t; C m_i, C S_i C^T + R)
      W_t^i ~ W_{t-1}^i g^i                                         (then systematic resampling if ESS < thr N)
      x_t^i ~ p(x_t | x_{t-1}^{a_i}, y_t) = N(m + K (y_t - C m), (I - K C) S (I - K C)^T + K R K^T),
              K = S C^T (C S C^T + R)^{-1}, evaluated at the ancestor a_i          (Kalman update, Joseph form)

  The new particles carry the weights W_t exactly (uniform after resampling): no second weighting is needed. The
  update is the Joseph-form conditioning of ``ops.gaussian_condition`` (:func:`gpssm_np.kalman.condition`), the one
  the linear-Gaussian baseline's Kalman filter uses; the fused step (``ops.adapted_step``) does the same update.
* ``"bootstrap"`` (Gordon, Salmond & Smith 1993): x_t^i ~ N(m_i, S_i), g^i = N(y_t; C x_t^i, R),
  W_t^i ~ W_{t-1}^i g^i, then systematic resampling if ESS < thr N.
* ``"enkf"`` (stochastic ensemble Kalman filter, Evensen 1994 / Burgers et al. 1998; the filter of EnVI's objective,
  ``ops.enkf``): x_t^i ~ N(m_i, S_i), then with the ensemble's mean mbar and covariance Pbar every member is moved
  by the Kalman gain K = Pbar C^T (C Pbar C^T + R)^{-1} towards a perturbed observation,
  x_t^i <- x_t^i + K (y_t + e^i - C x_t^i), e^i ~ N(0, R). The weights stay uniform (no resampling, ESS = N) and
  the log-likelihood increment is log N(y_t; C mbar, C Pbar C^T + R). Exact for a linear-Gaussian model as
  N -> infinity, an approximation otherwise, but it does not degenerate in high dimension or with precise outputs.

Output moments, per step: the one-step prediction of the output p(y_t | y_{1:t-1}), summarised by the moments of
the mixture sum_i W_{t-1}^i N(C m_i, C S_i C^T + R) (exact given the particles, before y_t is read), with mean
E[y_t | y_{1:t-1}] = sum_i W_{t-1}^i C m_i and variances diag(sum_i W_{t-1}^i (C S_i C^T + (C m_i - mean)(C m_i -
mean)^T) + R); the innovation y_t - E[y_t | y_{1:t-1}] (NaN where y_t is missing); and the filtered noise-free output
C x_t given y_{1:t}, with mean C E[x_t | y_{1:t}] and variances diag(C Cov[x_t | y_{1:t}] C^T).

In the particle filters, ``ess[k]`` is 1 / sum_i (W_t^i)^2 for the weights computed from y_t (before any resampling) and
``resampled[k]`` is exactly ``ess[k] < ess_threshold * N``. The filtered moments are the weighted moments of the
particles x_t^i that represent p(x_t | y_{1:t}) (for the bootstrap filter: before resampling). The estimate::

    log p(y_{1:T}) ~ sum_t log sum_i W_{t-1}^i g^i      (log-sum-exp; normalised W_{t-1})

is the logarithm of an unbiased estimate of the marginal likelihood (Del Moral 2004); it is biased low in the
log domain (Jensen), by about half its variance.

Missing data: NaN entries of y_t are unobserved. Only the observed components (rows of C, rows and columns of
R) enter the step; a step where every component is NaN is pure propagation: no weighting, log-likelihood
increment 0, weights carried over (so the ESS is unchanged).

Backward simulation (FFBSi; Godsill, Doucet & West 2004): draw x_T from the final filter weights, then for
t = T-1, ..., 0 draw x_t^j with probability proportional to W_t^j N(x_{t+1}; m(x_t^j), S(x_t^j)). The transition
is evaluated once per step at the N stored particles; the Gaussian densities of the M trajectories under the N
components cost O(N M d_x^2) per step. The x_0 particles (uniform weights) serve as the candidates for t = 0.

Step by step: :class:`OnlineParticleFilter` runs the same steps (:func:`filter_step`) one observation at a time, and
reproduces :func:`particle_filter` bit for bit from the same initial particles and generator.

A fused step (:func:`step_function` picks it): a transition with a method ``propagate(x, log_w, u_t, C, r, y_t)``
(``transition.FilterTransition``, a diagonal R = diag(r)) gives every particle's moments, predicted output and Kalman
update in one call (``ops.adapted_step``); the fully adapted proposal then draws with ``ops.adapted_step.draw``: the
random numbers of the step above in the same order, its numbers up to rounding. The models' ``filter``, ``smooth``,
``online_filter`` and the filter of a forecast's past data (``estimator.py``, ``filter_transition``) run it.
"""
import logging
from collections import namedtuple
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
from scipy.special import logsumexp as _scipy_logsumexp

from . import _validation as check
from .kalman import (LOG_2PI, cholesky, condition, gaussian_draws, gaussian_logpdf_chol, kalman_filter,
                     not_positive_definite, observed_part, step_log_likelihoods)
from .ops.adapted_step import draw
from .ops.gaussian_sample import sample_gaussians
from .ops.linalg import symmetrise

logger = logging.getLogger(__name__)

PROPOSALS = ("adapted", "bootstrap", "enkf")

# Upper bound on the number of (particle, trajectory, d_x) entries held at once by backward simulation.
_BACKWARD_BLOCK_ENTRIES = 4_000_000


def output_moments_in_original_units(scaling, means, variances, predicted_means, predicted_variances, innovations):
    """A filter's output moments (each (..., d_y), in the model units of ``scaling``, a ``units.Scaling``): the
    filtered and predicted means and variances and the innovations, in original units."""
    return (scaling.y_to_original(means), scaling.y_spread_to_original(variances, 2),
            scaling.y_to_original(predicted_means), scaling.y_spread_to_original(predicted_variances, 2),
            scaling.y_spread_to_original(innovations))


@dataclass
class FilterResult:
    """Output of :func:`particle_filter`. T steps (t = 1..T), N particles, state dimension d_x.

    Attributes
    ----------
    means : ndarray (T, d_x)
        Filtered means E[x_t | y_{1:t}] (weighted particle means).
    covs : ndarray (T, d_x, d_x)
        Filtered covariances (weighted particle covariances).
    log_likelihood : float
        Estimate of log p(y_{1:T}) (the log of an unbiased estimate of p(y_{1:T})).
    log_likelihood_steps : ndarray (T,)
        Its per-step increments log p^(y_t | y_{1:t-1}); 0 at fully missing steps.
    ess : ndarray (T,)
        Effective sample size of the weights computed from y_t, before resampling.
    resampled : ndarray (T,) of bool
        Whether step t resampled (exactly where ess < ess_threshold * N).
    particles : ndarray (N, d_x)
        Final particles, a weighted sample of p(x_T | y_{1:T}); start forecasts from them.
    log_weights : ndarray (N,)
        Their normalised log-weights (log-sum-exp 0).
    initial_particles : ndarray (N, d_x)
        The x_0 samples the filter started from (uniform weights).
    proposal : str
        The proposal, or "kalman" for :func:`kalman_filter_result` (the exact filter of a linear Gaussian model:
        no weights, no resampling; its particles are draws from the exact filtered distributions).
    ess_threshold : float
    particles_history : ndarray (T, N, d_x) or None
        With ``store_particles=True``: the particles representing p(x_t | y_{1:t}) at every step ...
    log_weights_history : ndarray (T, N) or None
        ... their normalised log-weights ...
    ancestors : ndarray (T, N) of int or None
        ... and ancestors[k, i], the index of the parent of particles_history[k, i] in particles_history[k - 1]
        (in initial_particles for k = 0).
    output_means, output_vars : ndarray (T, d_y)
        Filtered noise-free output C x_t given y_{1:t}: mean and variances (module docstring).
    predicted_output_means, predicted_output_vars : ndarray (T, d_y)
        One-step predicted output y_t given y_{1:t-1}: mean and variances (R included).
    innovations : ndarray (T, d_y)
        y_t - predicted_output_means (NaN where y_t is missing).
    """

    means: np.ndarray
    covs: np.ndarray
    log_likelihood: float
    log_likelihood_steps: np.ndarray
    ess: np.ndarray
    resampled: np.ndarray
    particles: np.ndarray
    log_weights: np.ndarray
    initial_particles: np.ndarray
    proposal: str
    ess_threshold: float
    particles_history: Optional[np.ndarray] = None
    log_weights_history: Optional[np.ndarray] = None
    ancestors: Optional[np.ndarray] = None
    output_means: Optional[np.ndarray] = None
    output_vars: Optional[np.ndarray] = None
    predicted_output_means: Optional[np.ndarray] = None
    predicted_output_vars: Optional[np.ndarray] = None
    innovations: Optional[np.ndarray] = None

    def in_original_units(self, scaling):
        """The result for the outputs in the original units of ``scaling`` (a ``units.Scaling``, the filtered data
        in its model units): output moments and innovations mapped (:func:`output_moments_in_original_units`), the
        log-likelihood that of the mapped outputs (``Scaling.log_jacobian``); states unchanged."""
        log_lik_steps = self.log_likelihood_steps + scaling.log_jacobian(self.innovations)  # NaN where y is missing
        means, variances, predicted_means, predicted_variances, innovations = output_moments_in_original_units(
            scaling, self.output_means, self.output_vars, self.predicted_output_means, self.predicted_output_vars,
            self.innovations)
        return replace(self, output_means=means, output_vars=variances, predicted_output_means=predicted_means,
                       predicted_output_vars=predicted_variances, innovations=innovations,
                       log_likelihood_steps=log_lik_steps, log_likelihood=float(log_lik_steps.sum()))

    @property
    def num_particles(self):
        return self.particles.shape[0]

    @property
    def num_steps(self):
        return self.means.shape[0]


# ---------------------------------------------------------------------------------------------------------------
# Small numerical helpers
# ---------------------------------------------------------------------------------------------------------------
def logsumexp(a):
    """log sum_i exp(a_i) of a 1-D array: the arithmetic of ``scipy.special.logsumexp`` (1.17) for finite real
    input, operation for operation (same result bit for bit), without its array-API dispatch, which costs more than
    the sum at the sizes of a filter step. With m the number of entries equal to the maximum a_max and s the sum of
    exp(a_i - a_max) over the others: log1p(s / m) + log(m) + a_max. Non-finite input goes to scipy."""
    a_max = np.max(a)
    if not np.isfinite(a_max) or not np.all(np.isfinite(a)):
        return _scipy_logsumexp(a)
    at_max = a == a_max
    m = np.sum(at_max, dtype=np.float64)
    s = np.sum(np.exp(np.where(at_max, -np.inf, a) - a_max))
    if s != 0:
        s = s / m
    return np.log1p(s) + np.log(m) + a_max


def _normalise(log_w):
    """(normalised log-weights, log of the sum of the weights)."""
    total = logsumexp(log_w)
    return log_w - total, float(total)


def _ess(log_w_normalised):
    return float(1.0 / np.sum(np.exp(2.0 * log_w_normalised)))


def systematic_resample(log_weights, rng):
    """Ancestor indices (N,) by systematic resampling (one uniform; Kitagawa 1996) from normalised log-weights."""
    N = log_weights.shape[0]
    cdf = np.cumsum(np.exp(log_weights - logsumexp(log_weights)))
    cdf[-1] = 1.0
    positions = (np.arange(N) + rng.uniform()) / N
    return np.minimum(np.searchsorted(cdf, positions, side="right"), N - 1)


def _weighted_moments(x, log_w):
    """Mean (d,) and covariance (d, d) of particles x (N, d) with normalised log-weights."""
    w = np.exp(log_w)
    mean = w @ x
    centred = x - mean
    return mean, symmetrise((centred.T * w) @ centred)


def _sample_gaussians(mean, cov, rng, index=None):
    """One draw from each N(mean[i], cov[i]) for i in ``index`` (N,) (default: every one of the N), standard normals
    (N, d) drawn from ``rng`` (``ops.gaussian_sample``); mean (K, d), cov (K, d, d), symmetrised."""
    if index is None:
        index = np.arange(mean.shape[0])
    x, failed = sample_gaussians(mean, cov, index, rng.standard_normal((len(index), mean.shape[1])))
    if failed >= 0:
        raise not_positive_definite("transition")
    return x


# ---------------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------------
def _rng(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(check.seed(rng, "rng"))


def _check_emission(C, R):
    """C (d_y, d_x) and R as a (d_y, d_y) symmetric positive-definite matrix."""
    C = check.finite_array(C, "C", (2,))
    d_y = C.shape[0]
    R = check.finite_array(R, "R", (1, 2))
    if R.ndim == 1:
        if R.shape != (d_y,) or np.any(R <= 0):
            raise ValueError(f"R: expected {d_y} positive variances (diagonal of R) to match C {C.shape}, "
                             f"got shape {R.shape} with min {R.min():.3g}")
        R = np.diag(R)
    elif R.shape != (d_y, d_y):
        raise ValueError(f"R: expected shape ({d_y},) or ({d_y}, {d_y}) to match C {C.shape}, got {R.shape}")
    elif not np.allclose(R, R.T) or np.any(np.linalg.eigvalsh(R) <= 0):
        raise ValueError("R: expected a symmetric positive-definite matrix")
    return C, R


def _check_inputs(u, T, matched):
    """u (T, d_u) finite, or None; u of shape (T, 0) (no inputs, as ``_validation.sequences`` returns them) is None,
    which the transition functions take for no inputs."""
    if u is None or np.shape(u)[1:] == (0,) and np.shape(u)[0] == T:
        return None
    u = check.finite_array(u, "u", (2,))
    if u.shape[0] != T:
        raise ValueError(f"u: expected {T} rows to match {matched}, got shape {u.shape}")
    return u


def _check_observations(y, u, d_y):
    """y (T, d_y) with NaN allowed (missing) but no inf; u as :func:`_check_inputs` takes it."""
    y = check.finite_array(y, "y", (2,), allow_nan=True)
    if y.shape[1] != d_y:
        raise ValueError(f"y: expected shape (T, {d_y}), got {y.shape}")
    return y, _check_inputs(u, y.shape[0], f"y {y.shape}")


def _check_ensemble(proposal, N):
    """The ensemble Kalman filter estimates its gain from the ensemble's sample covariance (N - 1 in the
    denominator): ValueError naming ``num_particles`` for fewer than 2 members."""
    if proposal == "enkf" and N < 2:
        raise ValueError(f"num_particles: the ensemble Kalman filter needs at least 2 members, got {N}")


def _initial_particles(x0_mean, x0_cov, x0_particles, num_particles, d_x, rng):
    if x0_particles is not None:
        if x0_mean is not None or x0_cov is not None:
            raise ValueError("x0_particles: expected either x0_particles or (x0_mean, x0_cov), got both")
        x0 = check.finite_array(x0_particles, "x0_particles", (2,))
        if x0.shape[1] != d_x:
            raise ValueError(f"x0_particles: expected shape (N, {d_x}) to match C, got {x0.shape}")
        if num_particles is not None and check.positive_int(num_particles, "num_particles") != x0.shape[0]:
            raise ValueError(f"num_particles: expected {x0.shape[0]} to match x0_particles, got {num_particles}")
        return x0.copy()
    if x0_mean is None or x0_cov is None:
        raise ValueError("x0_mean: expected x0_mean and x0_cov (or x0_particles), got None")
    N = 1000 if num_particles is None else check.positive_int(num_particles, "num_particles")
    mean = check.finite_array(x0_mean, "x0_mean", (1,))
    if mean.shape != (d_x,):
        raise ValueError(f"x0_mean: expected shape ({d_x},) to match C, got {mean.shape}")
    cov = check.finite_array(x0_cov, "x0_cov", (1, 2))
    if cov.ndim == 1:
        if cov.shape != (d_x,) or np.any(cov < 0):
            raise ValueError(f"x0_cov: expected {d_x} non-negative variances or a ({d_x}, {d_x}) matrix, "
                             f"got shape {cov.shape}")
        return mean + np.sqrt(cov) * rng.standard_normal((N, d_x))
    if cov.shape != (d_x, d_x) or not np.allclose(cov, cov.T):
        raise ValueError(f"x0_cov: expected a symmetric ({d_x}, {d_x}) matrix, got shape {cov.shape}")
    # a singular (e.g. deterministic) initial state is allowed: gaussian_draws goes through the eigen-decomposition
    lam = np.linalg.eigvalsh(symmetrise(cov))
    if lam.min() < -1e-10 * max(1.0, lam.max()):
        raise ValueError("x0_cov: expected a positive semi-definite matrix")
    return gaussian_draws(mean, cov, N, rng)


def _call_transition(transition, x, u_t, k):
    """transition(x, u_t, k) with its output checked: (mean (N, d_x), cov (N, d_x, d_x)), finite."""
    N, d_x = x.shape
    mean, cov = transition(x, u_t, k)
    mean = np.asarray(mean, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    if mean.shape != (N, d_x) or cov.shape != (N, d_x, d_x):
        raise ValueError(f"transition: expected (mean ({N}, {d_x}), cov ({N}, {d_x}, {d_x})) at step {k}, "
                         f"got {mean.shape} and {cov.shape}")
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError(f"transition: returned NaN or inf moments at step {k}")
    return mean, cov


# ---------------------------------------------------------------------------------------------------------------
# Particle filter
# ---------------------------------------------------------------------------------------------------------------
def particle_filter(transition, C, R, y, u=None, x0_mean=None, x0_cov=None, *, x0_particles=None,
                    num_particles=None, rng=0, ess_threshold=0.5, proposal="adapted", store_particles=False):
    """Particle filter for x_t ~ N(transition(x_{t-1})), y_t ~ N(C x_t, R) (module docstring).

    Parameters
    ----------
    transition : callable
        ``transition(x_prev (N, d_x), u_t (d_u,) or None, k) -> (mean (N, d_x), cov (N, d_x, d_x))``, the moments
        of x_{k+1} given x_k = x_prev (0-based step k, input u_t = u[k]).
    C : array (d_y, d_x)
        Emission matrix.
    R : array (d_y,) or (d_y, d_y)
        Emission noise: diagonal variances or a full symmetric positive-definite covariance.
    y : array (T, d_y)
        Observations y_1..y_T; NaN marks a missing component (module docstring).
    u : array (T, d_u), or None
        Inputs u_1..u_T, passed to ``transition`` one row at a time (None: ``transition`` gets None).
    x0_mean : array (d_x,)
    x0_cov : array (d_x,) or (d_x, d_x)
        Gaussian p(x_0) (diagonal variances or a covariance matrix); or give ``x0_particles`` instead.
    x0_particles : array (N, d_x)
        Equally weighted samples of p(x_0); N is then the number of particles.
    num_particles : int
        N (default 1000 when x_0 is sampled from x0_mean and x0_cov).
    rng : int or numpy.random.Generator
        Seed or generator of all the randomness; the same seed gives identical results.
    ess_threshold : float in [0, 1]
        Resample (systematic) when the ESS falls below ess_threshold * N; 0 never resamples.
    proposal : {"adapted", "bootstrap", "enkf"}
        Fully adapted (optimal, closed form) or bootstrap proposal, or the ensemble Kalman filter (module
        docstring).
    store_particles : bool
        Keep the particles, log-weights and ancestors of every step (needed by :func:`backward_simulation`).

    Returns
    -------
    FilterResult
    """
    if not callable(transition):
        raise ValueError(f"transition: expected a callable, got {type(transition).__name__}")
    if proposal not in PROPOSALS:
        raise ValueError(f"proposal: expected one of {PROPOSALS}, got {proposal!r}")
    check.unit_interval(ess_threshold, "ess_threshold")
    C, R = _check_emission(C, R)
    d_y, d_x = C.shape
    y, u = _check_observations(y, u, d_y)
    store_particles = check.boolean(store_particles, "store_particles")
    rng = _rng(rng)
    x0 = _initial_particles(x0_mean, x0_cov, x0_particles, num_particles, d_x, rng)
    T, N = y.shape[0], x0.shape[0]
    _check_ensemble(proposal, N)
    step = step_function(proposal, transition, R)

    means = np.empty((T, d_x))
    covs = np.empty((T, d_x, d_x))
    log_lik = np.zeros(T)
    ess = np.empty(T)
    resampled = np.zeros(T, dtype=bool)
    outputs = {name: np.empty((T, d_y)) for name in _OUTPUT_FIELDS}
    if store_particles:
        hist_x, hist_logw, hist_anc = np.empty((T, N, d_x)), np.empty((T, N)), np.empty((T, N), dtype=np.intp)

    x, log_w, parents = x0, np.full(N, -np.log(N)), np.arange(N)
    for k in range(T):
        s = filter_step(transition, C, R, step, x, log_w, y[k], None if u is None else u[k], k, ess_threshold, rng)
        x, log_w = s.particles, s.log_weights
        log_lik[k], ess[k], resampled[k], means[k], covs[k] = s.log_likelihood, s.ess, s.resampled, s.mean, s.cov
        for name in _OUTPUT_FIELDS:
            outputs[name][k] = getattr(s, name)
        if store_particles:
            # s.ancestors index the particles propagated at this step; parents maps them to the previous stored ones
            hist_x[k], hist_logw[k], hist_anc[k] = s.stored, s.stored_log_weights, parents[s.ancestors]
        parents = s.parents
    logger.debug("particle_filter (%s, N=%d, T=%d): resampled %d times, min ESS %.1f, log-likelihood %.4f",
                 proposal, N, T, int(resampled.sum()), float(ess.min()), float(log_lik.sum()))
    return FilterResult(
        means=means, covs=covs, log_likelihood=float(log_lik.sum()), log_likelihood_steps=log_lik, ess=ess,
        resampled=resampled, particles=x, log_weights=log_w, initial_particles=x0, proposal=proposal,
        ess_threshold=float(ess_threshold),
        particles_history=hist_x if store_particles else None,
        log_weights_history=hist_logw if store_particles else None,
        ancestors=hist_anc if store_particles else None, **outputs,
    )


def kalman_filter_result(params, y, u, m0, P0, num_particles, rng, store_particles=False):
    """The exact filter of a linear Gaussian model (``kalman.kalman_filter``: dict F, G, b, H, Q, R) over y (T, d_y)
    (NaN entries missing) with inputs u (T, d_u), from x_0 ~ N(m0, P0), as a :class:`FilterResult` with proposal
    "kalman", so that a model that is linear Gaussian can answer ``filter`` with the surface of the particle filters:
    the filtered means and covariances, the output moments and the log-likelihood (and its steps) are the Kalman
    filter's; the ESS is N at every step and nothing is resampled; ``initial_particles``, ``particles`` (uniform
    weights) and, with ``store_particles``, every step's particles are ``num_particles`` independent draws from
    p(x_0), p(x_T | y_{1:T}) and each p(x_t | y_{1:t}), drawn with ``rng`` in that order (``ancestors`` is None:
    the draws have no parents; backward simulation needs none)."""
    rng = _rng(rng)
    N = check.positive_int(num_particles, "num_particles")
    result = kalman_filter(params, y, u, m0, P0)
    H, R = params["H"], params["R"]
    T = len(y)
    steps = step_log_likelihoods(params, result, y)
    x0 = gaussian_draws(m0, P0, N, rng)
    particles = gaussian_draws(result.means[-1], result.covs[-1], N, rng)
    history = (np.array([gaussian_draws(m, P, N, rng) for m, P in zip(result.means, result.covs)])
               if store_particles else None)
    log_w = np.full(N, -np.log(N))
    predicted = result.pred_means @ H.T
    return FilterResult(
        means=result.means, covs=result.covs, log_likelihood=float(steps.sum()), log_likelihood_steps=steps,
        ess=np.full(T, float(N)), resampled=np.zeros(T, dtype=bool), particles=particles, log_weights=log_w,
        initial_particles=x0, proposal="kalman", ess_threshold=0.0, particles_history=history,
        log_weights_history=np.full((T, N), -np.log(N)) if store_particles else None, ancestors=None,
        output_means=result.means @ H.T, output_vars=np.einsum("ij,tjk,ik->ti", H, result.covs, H),
        predicted_output_means=predicted,
        predicted_output_vars=np.einsum("ij,tjk,ik->ti", H, result.pred_covs, H) + np.diag(R),
        innovations=y - predicted)


#: The per-step output moments :func:`filter_step` gives and :class:`FilterResult` collects (module docstring).
_OUTPUT_FIELDS = ("output_means", "output_vars", "predicted_output_means", "predicted_output_vars", "innovations")

#: What :func:`filter_step` returns: the particles that represent p(x_t | y_{1:t}) (``stored``, with
#: ``stored_log_weights``; for the bootstrap filter before resampling), ``ancestors`` of the stored particles among
#: the propagated ones, the log-likelihood increment, ``ess``, ``resampled``, the particles and normalised
#: log-weights carried to the next step and the ``parents`` of the carried particles among the stored ones, the
#: filtered state ``mean`` (d_x,) and ``cov`` (d_x, d_x), and the output moments of :data:`_OUTPUT_FIELDS`.
FilterStep = namedtuple("FilterStep", ("stored", "stored_log_weights", "ancestors", "log_likelihood", "ess",
                                       "resampled", "particles", "log_weights", "parents", "mean", "cov")
                        + _OUTPUT_FIELDS)


def filter_step(transition, C, R, proposal_step, x, log_w, y_t, u_t, k, ess_threshold, rng):
    """One step of the particle filter (module docstring) from the carried particles ``x`` (N, d_x) with normalised
    log-weights ``log_w`` (N,): the transition at step ``k`` with input ``u_t`` (d_u,) or None, the observation
    ``y_t`` (d_y,) (NaN entries missing), ``proposal_step`` from :func:`step_function`. Returns a
    :class:`FilterStep`. C (d_y, d_x) and R (d_y, d_y) as :func:`particle_filter` checks them."""
    if isinstance(proposal_step, FusedAdaptedStep):
        return proposal_step(transition, C, x, log_w, y_t, u_t, k, ess_threshold, rng)
    mean, cov = _call_transition(transition, x, u_t, k)
    predicted_mean, predicted_var = _predicted_output(mean, cov, log_w, C, R)
    stored, stored_log_w, anc, inc, ess, resampled, x, log_w, parents = proposal_step(
        mean, cov, log_w, observed_part(y_t, C, R), ess_threshold, rng)
    m, P = _weighted_moments(stored, stored_log_w)
    return FilterStep(stored, stored_log_w, anc, inc, ess, resampled, x, log_w, parents, m, P, C @ m,
                      np.einsum("ij,jk,ik->i", C, P, C), predicted_mean, predicted_var, y_t - predicted_mean)


def _predicted_output(mean, cov, log_w, C, R):
    """Mean (d_y,) and variances (d_y,) of y_t given y_{1:t-1}: the moments of the mixture of N(C m_i, C S_i C^T + R)
    with weights exp(log_w) (module docstring); ``mean`` (N, d_x), ``cov`` (N, d_x, d_x)."""
    w = np.exp(log_w)
    N, d_x = mean.shape
    Cm = mean @ C.T  # (N, d_y)
    y_mean = w @ Cm
    CC = (C[:, :, None] * C[:, None, :]).reshape(len(C), d_x * d_x)  # rows vec(c_a c_a^T): diag(C S C^T) = S : CC
    spread = cov.reshape(N, d_x * d_x) @ CC.T + (Cm - y_mean) ** 2  # diag(C S_i C^T) + (C m_i - mean)^2, (N, d_y)
    return y_mean, w @ spread + np.diag(R)


def _maybe_resample(log_w, ess_threshold, rng):
    """(ESS, resampled, ancestors, log-weights after the decision) for normalised log-weights."""
    N = log_w.shape[0]
    ess = _ess(log_w)
    if ess < ess_threshold * N:
        return ess, True, systematic_resample(log_w, rng), np.full(N, -np.log(N))
    return ess, False, np.arange(N), log_w


def _adapted_step(mean, cov, log_w, observed, ess_threshold, rng):
    """Fully adapted step. Returns (stored particles, their log-weights, ancestors into the propagated set, log-lik
    increment, ESS, resampled, carried particles, carried log-weights, parents of the carried particles)."""
    inc = 0.0
    if observed is not None:
        mean, cov, log_g = condition(mean, cov, *observed)
        log_w, inc = _normalise(log_w + log_g)
    ess, resampled, anc, log_w = _maybe_resample(log_w, ess_threshold, rng)
    x = _sample_gaussians(mean, cov, rng, anc)
    return x, log_w, anc, inc, ess, resampled, x, log_w, np.arange(x.shape[0])


def _bootstrap_step(mean, cov, log_w, observed, ess_threshold, rng):
    """Bootstrap step; same returns as :func:`_adapted_step`. The stored particles are those before resampling;
    the carried ones are resampled from them (their parents are the resampling indices)."""
    N = mean.shape[0]
    x = _sample_gaussians(mean, cov, rng)
    inc = 0.0
    if observed is not None:
        Co, Ro, yo = observed
        log_g = gaussian_logpdf_chol(yo - x @ Co.T, np.linalg.cholesky(Ro))
        log_w, inc = _normalise(log_w + log_g)
    ess, resampled, idx, carried_log_w = _maybe_resample(log_w, ess_threshold, rng)
    return x, log_w, np.arange(N), inc, ess, resampled, x[idx], carried_log_w, idx


def _enkf_step(mean, cov, log_w, observed, ess_threshold, rng):
    """Ensemble Kalman step (module docstring); same returns as :func:`_adapted_step`, the weights uniform."""
    N = mean.shape[0]
    x = _sample_gaussians(mean, cov, rng)
    inc = 0.0
    if observed is not None:
        Co, Ro, yo = observed
        mbar = x.mean(axis=0)
        dev = x - mbar
        Pxy = dev.T @ (dev @ Co.T) / (N - 1)  # Pbar C^T (d_x, d_o)
        chol = np.linalg.cholesky(symmetrise(Co @ Pxy + Ro))
        inc = float(gaussian_logpdf_chol(yo - Co @ mbar, chol))
        gain = np.linalg.solve(chol.T, np.linalg.solve(chol, Pxy.T)).T  # Pxy (C Pbar C^T + R)^{-1}
        perturbed = yo + rng.standard_normal((N, len(yo))) @ np.linalg.cholesky(Ro).T
        x = x + (perturbed - x @ Co.T) @ gain.T
    return x, log_w, np.arange(N), inc, float(N), False, x, log_w, np.arange(N)


#: The step function of each proposal.
PROPOSAL_STEPS = {"adapted": _adapted_step, "bootstrap": _bootstrap_step, "enkf": _enkf_step}


class FusedAdaptedStep:
    """:func:`filter_step` with the fully adapted proposal through the transition's ``propagate`` and
    ``ops.adapted_step.draw`` (module docstring): the random numbers of :func:`_adapted_step`, in the same order.
    Made once per filter by :func:`step_function` for a diagonal R, whose diagonal ``r`` it keeps."""

    def __init__(self, R):
        self.r = np.diag(R).copy()  # np.diag gives a read-only view, which the kernel would copy at every step

    def __call__(self, transition, C, x, log_w, y_t, u_t, k, ess_threshold, rng):
        mean, chol, log_w, inc, ess, predicted_mean, predicted_var, failed, finite = transition.propagate(
            x, log_w, u_t, C, self.r, y_t)
        if not finite:
            raise ValueError(f"transition: returned NaN or inf moments at step {k}")
        if failed >= 0:
            raise not_positive_definite("transition")
        resampled = ess < ess_threshold * x.shape[0]
        uniform = rng.uniform() if resampled else 0.0  # systematic resampling's one uniform, before the normals
        x, anc, log_w, m, P, output_mean, output_var = draw(mean, chol, log_w, resampled, uniform,
                                                            rng.standard_normal(x.shape), C)
        return FilterStep(x, log_w, anc, inc, ess, resampled, x, log_w, np.arange(x.shape[0]), m, P, output_mean,
                          output_var, predicted_mean, predicted_var, y_t - predicted_mean)


def step_function(proposal, transition, R):
    """The step of ``proposal`` for :func:`filter_step`: the fused fully adapted step when the transition has
    ``propagate`` and R is diagonal (module docstring), else the one of :data:`PROPOSAL_STEPS`."""
    if proposal == "adapted" and hasattr(transition, "propagate") and not np.any(R - np.diag(np.diag(R))):
        return FusedAdaptedStep(R)
    return PROPOSAL_STEPS[proposal]


class OnlineParticleFilter:
    """:func:`particle_filter` one observation at a time: ``update(y_t, u_t)`` runs :func:`filter_step` and returns
    its :class:`FilterStep`. Started from the same initial particles and generator state, the sequence of updates
    gives the same numbers as the batch filter, bit for bit. ``particles`` (N, d_x), ``log_weights`` (N,,
    normalised), ``step`` (the number of updates so far) and ``rng`` (a NumPy Generator, drawn from in place, or an
    integer seed) are the whole state of the filter. ``update`` checks y_t (d_y values, NaN for missing) and u_t."""

    def __init__(self, transition, C, R, particles, log_weights, rng, step=0, ess_threshold=0.5,
                 proposal="adapted"):
        if proposal not in PROPOSALS:
            raise ValueError(f"proposal: expected one of {PROPOSALS}, got {proposal!r}")
        self.C, self.R = _check_emission(C, R)
        self.transition, self.proposal = transition, proposal
        self.ess_threshold = check.unit_interval(ess_threshold, "ess_threshold")
        self._step_function = step_function(proposal, transition, self.R)
        self.particles = check.finite_array(particles, "particles", (2,))
        if self.particles.shape[1] != self.C.shape[1]:
            raise ValueError(f"particles: expected shape (N, {self.C.shape[1]}), got {self.particles.shape}")
        self.log_weights = check.finite_array(log_weights, "log_weights", (1,))
        if self.log_weights.shape != (len(self.particles),):
            raise ValueError(f"log_weights: expected shape ({len(self.particles)},), got {self.log_weights.shape}")
        _check_ensemble(proposal, len(self.particles))
        self.rng, self.step = _rng(rng), check.non_negative_int(step, "step")

    @classmethod
    def start(cls, transition, C, R, x0_mean, x0_cov, num_particles, rng, ess_threshold=0.5, proposal="adapted"):
        """A filter before its first update, its particles drawn from N(x0_mean, x0_cov) with ``rng`` exactly as
        :func:`particle_filter` draws them (x0_cov: variances (d_x,) or a covariance matrix)."""
        C, R = _check_emission(C, R)
        rng = _rng(rng)
        x0 = _initial_particles(x0_mean, x0_cov, None, num_particles, C.shape[1], rng)
        return cls(transition, C, R, x0, np.full(len(x0), -np.log(len(x0))), rng, 0, ess_threshold, proposal)

    def update(self, y_t, u_t=None):
        """Assimilate y_t (d_y,) (NaN entries missing) with the input u_t (d_u,) or None of its step, both checked."""
        y_t = check.step_values(y_t, "y_t", self.C.shape[0], "output", allow_nan=True)
        if u_t is not None:
            u_t = check.step_values(u_t, "u_t", np.size(u_t), "input")
        return self.assimilate(y_t, u_t)

    def assimilate(self, y_t, u_t=None):
        """:meth:`update` without its checks, for a caller that has checked y_t and u_t (the models' online filter,
        ``online.OnlineFilter``, whose ``update`` checks them against the model's dimensions)."""
        s = filter_step(self.transition, self.C, self.R, self._step_function, self.particles, self.log_weights,
                        y_t, u_t, self.step, self.ess_threshold, self.rng)
        self.particles, self.log_weights, self.step = s.particles, s.log_weights, self.step + 1
        return s


# ---------------------------------------------------------------------------------------------------------------
# Smoothing
# ---------------------------------------------------------------------------------------------------------------
def _sample_rows(log_p, rng):
    """One index per row of unnormalised log-probabilities (M, N), by inversion of each row's CDF."""
    cdf = np.exp(log_p - log_p.max(axis=1, keepdims=True))  # the largest entry of each row is 1
    np.cumsum(cdf, axis=1, out=cdf)
    draws = rng.uniform(size=(log_p.shape[0], 1)) * cdf[:, -1:]
    return np.minimum(np.sum(cdf < draws, axis=1), log_p.shape[1] - 1)


class _GaussianMixtureDensity:
    """log N(x_m; mean_n, cov_n) for all pairs of M points and N components, through matrix products.

    With a centre c, x' = x - c, m' = m - c and P_n = cov_n^{-1}::

        (x - m_n)^T P_n (x - m_n) = vec(P_n) . vec(x' x'^T) - 2 (P_n m'_n) . x' + m'_n^T P_n m'_n

    so the (M, N) quadratic forms cost two BLAS products, O(N M d^2). Centring at the mean of the component
    means keeps the cancellation small.
    """

    def __init__(self, mean, cov):
        L = cholesky(cov, "transition")
        L_inv = np.linalg.inv(L)
        N, d = mean.shape
        self.d = d
        self.centre = mean.mean(axis=0)
        m = mean - self.centre
        P = np.swapaxes(L_inv, 1, 2) @ L_inv  # (N, d, d)
        self.P_flat = P.reshape(N, d * d)
        self.Pm = np.einsum("nij,nj->ni", P, m)
        self.mPm = np.sum(self.Pm * m, axis=1)
        self.log_norm = d * LOG_2PI + 2.0 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)

    def log_pdf(self, x):
        """(M, N) log-densities of the points x (M, d) under the N components."""
        xc = x - self.centre
        outer = (xc[:, :, None] * xc[:, None, :]).reshape(x.shape[0], self.d * self.d)
        quad = outer @ self.P_flat.T
        quad -= 2.0 * (xc @ self.Pm.T)
        quad += self.mPm
        np.maximum(quad, 0.0, out=quad)  # >= 0 up to rounding
        quad += self.log_norm
        quad *= -0.5
        return quad


def _require_history(filter_result):
    if not isinstance(filter_result, FilterResult):
        raise ValueError(f"filter_result: expected a FilterResult, got {type(filter_result).__name__}")
    if filter_result.particles_history is None:
        raise ValueError("filter_result: expected a result of particle_filter(..., store_particles=True)")
    return filter_result


def backward_simulation(transition, filter_result, u=None, num_trajectories=100, rng=0, include_initial=False):
    """Smoothed trajectories by backward simulation (FFBSi; Godsill, Doucet & West 2004; module docstring).

    Parameters
    ----------
    transition : callable
        The transition-moments function the filter was run with.
    filter_result : FilterResult
        From :func:`particle_filter` with ``store_particles=True``.
    u : array (T, d_u), or None
        The inputs the filter was run with.
    num_trajectories : int
        M, the number of trajectories drawn (conditionally independent given the filter particles).
    rng : int or numpy.random.Generator
    include_initial : bool
        Also draw x_0 (from the initial particles) and put it first.

    Returns
    -------
    trajectories : ndarray (M, T, d_x), or (M, T + 1, d_x) with x_0 first when ``include_initial``
        Draws from the particle approximation of p(x_{1:T} | y_{1:T}) (x_{0:T}).
    """
    fr = _require_history(filter_result)
    M = check.positive_int(num_trajectories, "num_trajectories")
    rng = _rng(rng)
    X, log_W = fr.particles_history, fr.log_weights_history
    T, N, d_x = X.shape
    u = _check_inputs(u, T, "filter_result")
    include_initial = check.boolean(include_initial, "include_initial")
    out = np.empty((M, T + 1, d_x))
    out[:, T] = X[T - 1][_sample_rows(np.broadcast_to(log_W[T - 1], (M, N)), rng)]
    block = max(1, _BACKWARD_BLOCK_ENTRIES // N)
    for k in range(T - 1, -1 if include_initial else 0, -1):
        # candidates for x at stored step k - 1 (the x_0 particles for k = 0) and their moments at step k
        cand, cand_log_w = (X[k - 1], log_W[k - 1]) if k > 0 else (fr.initial_particles, np.full(N, -np.log(N)))
        mean, cov = _call_transition(transition, cand, None if u is None else u[k], k)
        density = _GaussianMixtureDensity(mean, cov)
        for start in range(0, M, block):
            log_p = density.log_pdf(out[start:start + block, k + 1])  # (m, N)
            log_p += cand_log_w
            out[start:start + block, k] = cand[_sample_rows(log_p, rng)]
    return out if include_initial else out[:, 1:]


def ancestral_paths(filter_result):
    """The particles' genealogies: paths (N, T, d_x) traced back through the ancestors from the particles of the
    last step, and their normalised log-weights (N,). A cheap smoother whose paths degenerate (share a few
    ancestors) far back in time; :func:`backward_simulation` does not."""
    fr = _require_history(filter_result)
    if fr.ancestors is None:
        raise ValueError(f"filter_result: expected a particle filter's result with ancestors, got one of proposal "
                         f"{fr.proposal!r}, whose particles have no parents (use backward_simulation)")
    X, anc = fr.particles_history, fr.ancestors
    T, N, d_x = X.shape
    paths = np.empty((N, T, d_x))
    idx = np.arange(N)
    for k in range(T - 1, -1, -1):
        paths[:, k] = X[k][idx]
        idx = anc[k][idx]
    return paths, fr.log_weights_history[T - 1].copy()


def smoothed_moments(trajectories, log_weights=None):
    """Mean (T, d_x) and covariance (T, d_x, d_x) at each step of trajectories (M, T, d_x), equally weighted or
    with log-weights (M,)."""
    traj = check.finite_array(trajectories, "trajectories", (3,))
    M = traj.shape[0]
    if log_weights is None:
        log_w = np.full(M, -np.log(M))
    else:
        log_w = check.finite_array(log_weights, "log_weights", (1,))
        if log_w.shape != (M,):
            raise ValueError(f"log_weights: expected shape ({M},) to match trajectories, got {log_w.shape}")
        log_w = _normalise(log_w)[0]
    moments = [_weighted_moments(traj[:, k], log_w) for k in range(traj.shape[1])]
    return np.stack([m for m, _ in moments]), np.stack([c for _, c in moments])
