r"""Linear baselines with the estimator surface of the state-space models: :class:`ARX` and :class:`LGSSM`.

Both follow the package's time convention (``models/base.py``): the input u_t acts on the step that produces y_t.
Arrays are 0-based, ``y[t]`` and ``u[t]`` belonging to the same step. Both expose what the evaluation protocols
(``protocols.py``) and a sweep use: ``spec`` (dim_x, dim_y, dim_u), ``fit(y, u, **gp_training_options)`` (the GP
training options epochs, seq_len, batch_size, lr, num_samples, progress, ... are accepted and ignored),
``q_x0(y_window, u_window)``, ``forecast(u_future, y_past=None, u_past=None, num_samples=50, seed=0, x0=None, ...)``
returning a :class:`gpssm_np.forecast.Forecast`, ``set_output_scaling``, ``get_config``, ``history_`` and
``has_latent_state``.

ARX
---
For output y_t (d_y) and input u_t (d_u)::

    y_t = sum_{i=1..na} A_i y_{t-i} + sum_{j=0..nb-1} B_j u_{t-j} + c + e_t,     e_t ~ N(0, diag sigma^2)

so nb = 1 is the input of the same step only (the GPSSM convention) and nb = 0 no input at all. With the regressor
phi_t = [y_{t-1}, ..., y_{t-na}, u_t, ..., u_{t-nb+1}, 1] and Theta = [A_1 .. A_na, B_0 .. B_{nb-1}, c]^T,
y_t = Theta^T phi_t + e_t is fitted by ordinary least squares over every t with a full regressor (t >= max(na,
nb - 1)); sigma^2 is the residual variance with n - p degrees of freedom (p regressors).

Order selection uses **only the training data given to fit**. Candidates: 1 <= na <= max_order and 0 <= nb <=
max_order (nb = 0 when d_u = 0; a given na or nb is kept fixed); a candidate whose fit on the whole training data
is unstable (AR companion matrix with spectral radius >= 1) is rejected, as its free runs diverge.

* ``selection="simulation"`` (default): blocked cross-validation of the task the protocols score. Each training
  sequence is cut into ``folds`` contiguous blocks; for each block, the model is fitted on every other step (also
  leaving out the max_order steps after the block, whose regressors read it) and scored by the RMSE of noise-free
  simulations -- free runs from the true past, fed back their own outputs -- over windows of min(100, block) steps
  at stride 25 inside the block. The score is the mean RMSE over all windows.
* ``selection="bic"``: every candidate is fitted on the common rows t >= max_order of the training data and the
  smallest BIC = n sum_d log sigma_d^2 + p d_y log n wins.

The chosen orders are then refitted on the whole training data.

Forecast: simulation from the na outputs (and nb - 1 inputs) before the forecast start, feeding back its own sampled
outputs, y^(s)_t = Theta^T phi^(s)_t + sigma eps^(s)_t. ``Forecast.samples`` holds the conditional means
Theta^T phi^(s)_t (the noise-free part, the analogue of C x_t), ``obs_var`` = sigma^2, so that the Forecast's
variance (sample variance + obs_var) is the exact variance of the simulated outputs; ``Forecast.states`` holds the
sampled outputs y^(s)_t themselves (spec.dim_x = d_y). Missing past outputs or inputs (a short or absent ``y_past``)
are filled with the training means. The ARX has no latent state: ``has_latent_state = False``, and ``q_x0`` and
``forecast(x0=...)`` raise ValueError (the paper protocol must use the causal path for it).

LGSSM
-----
Linear Gaussian state-space model (x_0 emits nothing; t = 1..T)::

    x_0 ~ N(m_0, P_0),   x_t = F x_{t-1} + G u_t + w_t,  w_t ~ N(0, Q),   y_t = H x_t + v_t,  v_t ~ N(0, R)

State inference is exact: Kalman filter (Joseph-form update, symmetrised covariances) and Rauch-Tung-Striebel
smoother with the lag-one covariances Cov(x_t, x_{t-1} | y_{1:T}) = P^s_t J_{t-1}^T (Shumway & Stoffer 1982).

* ``method="subspace"``: N4SID-style identification (Van Overschee & De Moor 1994). With i block rows, the block
  Hankel matrices of past and future inputs and outputs give the oblique projection O = Y_f /_{U_f} [U_p; Y_p]
  (least squares of Y_f on [U_p; Y_p; U_f], keeping the [U_p; Y_p] part); its SVD O ~ U_n S_n V_n^T gives the state
  sequence X = S_n^{1/2} V_n^T, column k estimating the state before step i + k (ours: x_{i+k-1} in 0-based time).
  Then [F G] is the least-squares regression of x_t on [x_{t-1}, u_t], H that of y_t on x_t, and Q, R the residual
  covariances. m_0, P_0: mean and covariance of the estimated states.
* ``method="em"`` (default): expectation-maximisation (Shumway & Stoffer 1982; Ghahramani & Hinton 1996) from the
  subspace estimate (``init="subspace"``) or a random stable model (``init="random"``), ``num_iters`` iterations.
  The M-step is exact for F, G, Q (joint regression of x_t on [x_{t-1}, u_t] under the smoothed moments) and H, R;
  m_0, P_0 stay fixed during EM, so the log-likelihood cannot decrease (generalised EM) -- unless the stability
  constraint below acts. ``history_`` holds
  -log p(y_{1:T}) of the training data before each M-step. After EM, m_0 and P_0 are set to the mean and
  covariance of the smoothed states (a stationary-like prior for windows anywhere in a sequence).

Stability: an F with spectral radius above ``max_spectral_radius`` (default 0.999) -- e.g. on Ballbeam, an
open-loop unstable process -- has its outlying eigenvalues scaled back onto that circle (F = V diag(lambda) V^{-1}),
after the regression (subspace) or after each M-step, G (and Q) being then re-estimated given that F. Unstable
linear models make free runs diverge (as the ARX candidates rejected above); the projection is a heuristic M-step,
so with it EM need not increase the likelihood monotonically.

``q_x0(y, u)`` is the smoothed posterior of the state x_0 before a window's first step given the whole window,
p(x_0 | y_{1:T}, u_{1:T}) (the exact analogue of the paper protocol's recognition network); forecasts propagate the
Gaussian exactly (:meth:`LGSSM.predict_moments`) and also draw ``num_samples`` joint trajectories for the Forecast,
re-centred so that their mean is the exact predictive mean.

References: L. Ljung, System Identification (1999), ch. 4 and 7 (ARX, least squares); P. Van Overschee and B. De
Moor, "N4SID", Automatica 30(1), 1994; R. H. Shumway and D. S. Stoffer, J. Time Series Anal. 3(4), 1982;
Z. Ghahramani and G. E. Hinton, "Parameter estimation for linear dynamical systems", Tech. Rep. CRG-TR-96-2, 1996.
"""
import inspect
from dataclasses import dataclass

import numpy as np

from . import _validation as check
from .forecast import Forecast
from .models.base import StateSpaceModel

#: Length and stride of the simulation windows of the ARX order selection.
SELECTION_WINDOW = 100
SELECTION_STRIDE = 25

#: Added to the diagonals of estimated noise covariances (Q, R, P_0) and ARX residual variances.
COV_FLOOR = 1e-8

#: The keyword arguments of ``StateSpaceModel.fit`` that the baselines accept and ignore.
GP_FIT_OPTIONS = tuple(name for name in inspect.signature(StateSpaceModel.fit).parameters
                       if name not in ("self", "y", "u"))


@dataclass(frozen=True)
class BaselineSpec:
    """Dimensions of a baseline: state (for the ARX: d_y, its sampled outputs), output and input."""

    dim_x: int
    dim_y: int
    dim_u: int


def _make_spec(dim_x, dim_y, dim_u):
    return BaselineSpec(check.positive_int(dim_x, "dim_x"), check.positive_int(dim_y, "dim_y"),
                        check.seed(dim_u, "dim_u"))


def _order(value, name):
    """None or a non-negative integer."""
    return None if value is None else check.seed(value, name)


class _Baseline:
    """What both baselines share: output scaling, ignored training options, data checks."""

    has_latent_state = True
    set_output_scaling = StateSpaceModel.set_output_scaling

    def __init__(self, seed):
        self.seed = check.seed(seed)
        self.history_ = []
        self.output_scaling = None

    def _sequences(self, y, u):
        """y, u (one sequence or lists) as a list of (y (T, d_y), u (T, d_u)) pairs."""
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        us = list(u) if isinstance(u, (list, tuple)) else [u] * len(ys)
        if not ys or len(us) != len(ys):
            raise ValueError(f"u: expected {len(ys)} input sequence(s) to match y, got {len(us)}")
        out = []
        for yi, ui in zip(ys, us):
            yi, ui = check.sequences(yi, ui, self.spec.dim_y, self.spec.dim_u)
            if yi.shape[0] != 1:
                raise ValueError(f"y: expected a sequence (T, {self.spec.dim_y}) or a list of them, got shape "
                                 f"{yi.shape}")
            out.append((yi[0], ui[0]))
        return out

    def _check_fit_options(self, options):
        unknown = sorted(set(options) - set(GP_FIT_OPTIONS))
        if unknown:
            raise ValueError(f"fit: unexpected keyword arguments {unknown}; the GP training options {GP_FIT_OPTIONS} "
                             "are accepted and ignored")

    def _check_fitted(self):
        if not self.fitted:
            raise ValueError(f"model: this {type(self).__name__} is not fitted yet; call fit(y, u) first")

    def _future_inputs(self, u_future, steps):
        """u_future (T, d_u) checked, or zeros (steps, 0) for a model without inputs."""
        if self.spec.dim_u == 0:
            return np.zeros((check.positive_int(steps, "steps") if u_future is None else len(u_future), 0))
        if u_future is None:
            raise ValueError(f"u_future: the model has dim_u = {self.spec.dim_u} inputs, got None")
        u_future = check.finite_array(u_future, "u_future", (2,))
        if u_future.shape[1] != self.spec.dim_u:
            raise ValueError(f"u_future: expected shape (T, {self.spec.dim_u}), got {u_future.shape}")
        return u_future

    def _forecast(self, samples, states, obs_var):
        y_mean, y_std = self.output_scaling or (None, None)
        return Forecast(samples=samples, states=states, obs_var=obs_var, y_mean=y_mean, y_std=y_std)


# ---------------------------------------------------------------------------------------------------------------
# ARX
# ---------------------------------------------------------------------------------------------------------------
def arx_regressors(y, u, na, nb, first):
    """Rows phi_t (module docstring) for t = first..T-1 of one sequence: array (T - first, na d_y + nb d_u + 1)."""
    T = len(y)
    blocks = [y[first - i:T - i] for i in range(1, na + 1)] + [u[first - j:T - j] for j in range(nb)]
    return np.concatenate(blocks + [np.ones((T - first, 1))], axis=1)


def arx_simulate(theta, na, nb, y_lags, u_inputs, noise=None):
    """Free runs of M ARX trajectories over H steps.

    ``y_lags`` (M, na, d_y): y_{t0-1}, ..., y_{t0-na} (most recent first); ``u_inputs`` (M, nb - 1 + H, d_u): the
    inputs u_{t0-nb+1}, ..., u_{t0+H-1} in time order (one leading input fewer when nb = 0: then (M, H, d_u));
    ``noise`` (M, H, d_y) added to each output before it is fed back (None: noise-free). Returns the conditional
    means Theta^T phi_t and the outputs (mean + noise), each (M, H, d_y).
    """
    M, dy, du = y_lags.shape[0], theta.shape[1], u_inputs.shape[2]
    H = u_inputs.shape[1] - max(nb - 1, 0)
    lags = y_lags.reshape(M, na * dy)
    means, outputs = np.empty((M, H, dy)), np.empty((M, H, dy))
    shift = max(nb - 1, 0)
    for h in range(H):
        u_part = u_inputs[:, h + shift - nb + 1:h + shift + 1][:, ::-1].reshape(M, nb * du)  # u_t, ..., u_{t-nb+1}
        means[:, h] = np.concatenate([lags, u_part, np.ones((M, 1))], axis=1) @ theta
        outputs[:, h] = means[:, h] if noise is None else means[:, h] + noise[:, h]
        if na:
            lags = np.concatenate([outputs[:, h], lags[:, :(na - 1) * dy]], axis=1)
    return means, outputs


def _lstsq(rows, targets):
    """Least-squares coefficients (p, d_y) and residual variances (d_y,) with n - p degrees of freedom."""
    theta = np.linalg.lstsq(rows, targets, rcond=None)[0]
    resid = targets - rows @ theta
    dof = max(len(rows) - rows.shape[1], 1)
    return theta, np.sum(resid**2, axis=0) / dof + COV_FLOOR


def arx_is_stable(theta, na):
    """Whether the AR part of Theta (module docstring) is stable: the block companion matrix of A_1..A_na has
    spectral radius < 1 (always true for na = 0)."""
    dy = theta.shape[1]
    if na == 0:
        return True
    companion = np.eye(na * dy, k=-dy)
    companion[:dy] = theta[:na * dy].T
    return bool(np.max(np.abs(np.linalg.eigvals(companion))) < 1.0)


class ARX(_Baseline):
    """Linear ARX model fitted by least squares, orders chosen on the training data (module docstring).

    Parameters
    ----------
    na, nb : int or None
        Output and input orders (nb counts u_t, u_{t-1}, ..., so nb = 1 is u_t alone); None: chosen in fit.
    max_order : int
        Largest na and nb tried by the order selection.
    selection : {"simulation", "bic"}
        Order selection criterion (module docstring).
    folds : int
        Cross-validation blocks per training sequence (``selection="simulation"``), >= 2.
    dim_y, dim_u : int
        Output and input dimensions (dim_u may be 0).
    seed : int
        Kept for a uniform interface (fitting is deterministic; forecasts take their own seed).

    Attributes (after fit)
    ----------------------
    na_, nb_ : int
        The orders used.
    theta_ : ndarray (na d_y + nb d_u + 1, d_y)
        Theta (module docstring); :meth:`coefficients` splits it.
    noise_var_ : ndarray (d_y,)
        sigma^2.
    selection_scores_ : dict
        (na, nb) -> cross-validated RMSE or BIC of every candidate, inf for a rejected one (empty when both orders
        were given).
    """

    has_latent_state = False

    def __init__(self, na=None, nb=None, max_order=10, selection="simulation", folds=4, dim_y=1, dim_u=1, seed=0):
        super().__init__(seed)
        self.spec = _make_spec(dim_y, dim_y, dim_u)
        self.na = _order(na, "na")
        self.nb = _order(nb, "nb")
        self.max_order = check.positive_int(max_order, "max_order")
        if selection not in ("simulation", "bic"):
            raise ValueError(f"selection: expected 'simulation' or 'bic', got {selection!r}")
        self.selection = selection
        self.folds = check.positive_int(folds, "folds")
        if self.folds < 2:
            raise ValueError(f"folds: expected at least 2 cross-validation blocks, got {folds!r}")
        if dim_u == 0 and self.nb not in (None, 0):
            raise ValueError(f"nb: expected 0 (or None) for a model without inputs, got {nb!r}")
        self.fitted = False

    def get_config(self):
        """Constructor arguments as plain JSON types: ``ARX(**model.get_config())`` rebuilds the (unfitted) model."""
        return {"na": self.na, "nb": self.nb, "max_order": self.max_order, "selection": self.selection,
                "folds": self.folds, "dim_y": self.spec.dim_y, "dim_u": self.spec.dim_u,
                "seed": self.seed}

    # -- fitting ---------------------------------------------------------------------------------------------
    def _candidates(self):
        nas = range(1, self.max_order + 1) if self.na is None else [self.na]
        nbs = [0] if self.spec.dim_u == 0 else (range(self.max_order + 1) if self.nb is None else [self.nb])
        return [(na, nb) for na in nas for nb in nbs]

    @staticmethod
    def _fit_orders(data, na, nb, first=None, skip=None):
        """Least squares on the rows t >= ``first`` (default: the first full regressor) of every sequence, leaving
        out the rows t in [lo, hi) of sequence k when ``skip = (k, lo, hi)``."""
        first = max(na, nb - 1) if first is None else first
        rows, targets = [], []
        for k, (y, u) in enumerate(data):
            if len(y) <= first:
                continue
            keep = np.ones(len(y) - first, dtype=bool)
            if skip is not None and skip[0] == k:
                keep[max(skip[1] - first, 0):max(skip[2] - first, 0)] = False
            rows.append(arx_regressors(y, u, na, nb, first)[keep])
            targets.append(y[first:][keep])
        rows = np.concatenate(rows) if rows else np.zeros((0, 1))
        if len(rows) <= rows.shape[1]:
            raise ValueError(f"y: {len(rows)} usable steps cannot fit the {rows.shape[1]} coefficients of the "
                             f"orders na = {na}, nb = {nb}")
        return _lstsq(rows, np.concatenate(targets))

    def _cross_validation(self, data, na, nb):
        """Mean RMSE of noise-free free runs over the windows of every held-out block (module docstring)."""
        errors = []
        for k, (y, u) in enumerate(data):
            for block in np.array_split(np.arange(len(y)), self.folds):
                lo, hi = block[0], block[-1] + 1
                start = max(lo, self.max_order)
                if hi - start < 1:
                    continue
                theta, _ = self._fit_orders(data, na, nb, skip=(k, lo, hi + self.max_order))
                length = min(SELECTION_WINDOW, hi - start)
                starts = np.arange(start, hi - length + 1, SELECTION_STRIDE)
                lags = np.stack([y[s - na:s][::-1] for s in starts])
                inputs = np.stack([u[s - max(nb - 1, 0):s + length] for s in starts])
                with np.errstate(over="ignore", invalid="ignore"):
                    means, _ = arx_simulate(theta, na, nb, lags, inputs)
                    target = np.stack([y[s:s + length] for s in starts])
                    errors.extend(np.sqrt(np.mean((means - target) ** 2, axis=(1, 2))))
        return float(np.mean(errors)) if errors else np.inf

    def _bic(self, data, na, nb):
        theta, noise_var = self._fit_orders(data, na, nb, first=self.max_order)
        n = sum(len(y) - self.max_order for y, _ in data)
        return float(n * np.sum(np.log(noise_var)) + theta.size * np.log(n))

    def _score(self, data, na, nb):
        """The selection criterion of (na, nb); inf when the orders cannot be fitted or give an unstable model."""
        try:
            theta, _ = self._fit_orders(data, na, nb)
            if not arx_is_stable(theta, na):
                return np.inf
            score = self._cross_validation(data, na, nb) if self.selection == "simulation" else self._bic(data, na, nb)
        except ValueError:  # too few steps for these orders
            return np.inf
        return score if np.isfinite(score) else np.inf

    def fit(self, y, u=None, **gp_training_options):
        """Choose the orders (unless both given) and fit by least squares on ``y`` (T, d_y) with ``u`` (T, d_u), or
        lists of such sequences. Keyword arguments of the GP models' ``fit`` are accepted and ignored. Returns
        ``self``."""
        self._check_fit_options(gp_training_options)
        data = self._sequences(y, u)
        candidates = self._candidates()
        self.selection_scores_ = {}
        best = candidates[0]
        if len(candidates) > 1:
            self.selection_scores_ = {orders: self._score(data, *orders) for orders in candidates}
            best = min(self.selection_scores_, key=self.selection_scores_.get)
            if not np.isfinite(self.selection_scores_[best]):
                raise ValueError("y: no candidate ARX orders give a stable model that can be fitted and "
                                 "cross-validated on the training data; lower max_order or give longer sequences")
        self.na_, self.nb_ = best
        self.theta_, self.noise_var_ = self._fit_orders(data, *best)
        all_y = np.concatenate([y_i for y_i, _ in data])
        all_u = np.concatenate([u_i for _, u_i in data])
        self.y_mean_, self.u_mean_ = all_y.mean(axis=0), all_u.mean(axis=0)
        self.fitted = True
        return self

    def coefficients(self):
        """The fitted ARX coefficients: {"a": (na, d_y, d_y) A_i, "b": (nb, d_y, d_u) B_j, "c": (d_y,)}."""
        self._check_fitted()
        dy, du = self.spec.dim_y, self.spec.dim_u
        theta = self.theta_.T  # (d_y, p)
        a = theta[:, :self.na_ * dy].reshape(dy, self.na_, dy).transpose(1, 0, 2)
        b = theta[:, self.na_ * dy:-1].reshape(dy, self.nb_, du).transpose(1, 0, 2)
        return {"a": a, "b": b, "c": theta[:, -1].copy()}

    # -- protocol surface ------------------------------------------------------------------------------------
    def q_x0(self, y=None, u=None):
        """Not available: the ARX has no latent state (``has_latent_state`` is False); raises ValueError."""
        raise ValueError("model: the ARX has no latent state, so there is no q(x0); forecast from past data "
                         "(y_past, u_past) instead")

    def forecast(self, u_future=None, y_past=None, u_past=None, num_samples=50, seed=0, steps=None, x0=None,
                 num_particles=None, init_window=None):
        """Simulated forecast from the outputs ``y_past`` (T_p, d_y) and inputs ``u_past`` (T_p, d_u) before the
        forecast start, with known future inputs ``u_future`` (T, d_u) (or ``steps`` when d_u = 0); module
        docstring. ``num_particles`` and ``init_window`` are accepted for a uniform interface and ignored.
        Returns a :class:`gpssm_np.forecast.Forecast`."""
        self._check_fitted()
        if x0 is not None:
            raise ValueError("x0: the ARX has no latent state; give the past outputs y_past (and u_past) instead")
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        u_future = self._future_inputs(u_future, steps)
        na, nb, dy = self.na_, self.nb_, self.spec.dim_y
        y_hist = self._past(y_past, "y_past", dy, na, self.y_mean_)
        u_hist = self._past(u_past, "u_past", self.spec.dim_u, max(nb - 1, 0), self.u_mean_)
        lags = np.broadcast_to(y_hist[::-1], (num_samples, na, dy))
        inputs = np.broadcast_to(np.concatenate([u_hist, u_future]), (num_samples, len(u_hist) + len(u_future),
                                                                      self.spec.dim_u))
        noise = np.sqrt(self.noise_var_) * rng.standard_normal((num_samples, len(u_future), dy))
        means, outputs = arx_simulate(self.theta_, na, nb, lags, inputs, noise)
        return self._forecast(means, outputs, self.noise_var_.copy())

    @staticmethod
    def _past(values, name, width, count, fill):
        """The last ``count`` rows of ``values`` (T_p, width), left-padded with ``fill`` rows."""
        if values is None:
            values = np.zeros((0, width))
        else:
            values = check.finite_array(values, name, (2,))
            if values.shape[1] != width:
                raise ValueError(f"{name}: expected shape (T, {width}), got {values.shape}")
        values = values[len(values) - min(count, len(values)):]
        return np.concatenate([np.tile(fill, (count - len(values), 1)), values])


# ---------------------------------------------------------------------------------------------------------------
# Kalman filter and smoother
# ---------------------------------------------------------------------------------------------------------------
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


def _sym(a):
    return 0.5 * (a + a.T)


def kalman_filter(params, y, u, m0, P0):
    """Exact Kalman filter of the LGSSM (module docstring) with parameters ``params`` (dict F, G, H, Q, R) over
    y (T, d_y) with inputs u (T, d_u), from x_0 ~ N(m0, P0). Returns a :class:`KalmanResult`."""
    F, G, H, Q, R = (params[k] for k in ("F", "G", "H", "Q", "R"))
    T, dx = len(y), len(m0)
    means, covs = np.empty((T, dx)), np.empty((T, dx, dx))
    pred_means, pred_covs = np.empty((T, dx)), np.empty((T, dx, dx))
    drive = u @ G.T  # G u_t of every step
    m, P, log_lik, I = m0, P0, 0.0, np.eye(dx)
    for t in range(T):
        m = F @ m + drive[t]
        P = _sym(F @ P @ F.T + Q)
        pred_means[t], pred_covs[t] = m, P
        S = _sym(H @ P @ H.T + R)
        L = np.linalg.cholesky(S)
        innovation = y[t] - H @ m
        white = np.linalg.solve(L, innovation)
        log_lik -= 0.5 * (white @ white + len(white) * np.log(2 * np.pi)) + np.sum(np.log(np.diag(L)))
        K = np.linalg.solve(S, H @ P).T  # P H^T S^{-1}
        m = m + K @ innovation
        A = I - K @ H
        P = _sym(A @ P @ A.T + K @ R @ K.T)
        means[t], covs[t] = m, P
    return KalmanResult(means, covs, pred_means, pred_covs, float(log_lik))


def rts_smoother(params, result, m0, P0):
    """Rauch-Tung-Striebel smoother from a :class:`KalmanResult`: smoothed means (T + 1, d_x) and covariances
    (T + 1, d_x, d_x) of x_0..x_T, and the lag-one covariances Cov(x_t, x_{t-1} | y_{1:T}) (T, d_x, d_x), t = 1..T."""
    F = params["F"]
    T, dx = result.means.shape
    filt_means = np.concatenate([m0[None], result.means])
    filt_covs = np.concatenate([P0[None], result.covs])
    means, covs, cross = filt_means.copy(), filt_covs.copy(), np.empty((T, dx, dx))
    for t in range(T, 0, -1):  # x_{t-1} given the smoothed x_t
        J = np.linalg.solve(result.pred_covs[t - 1], F @ filt_covs[t - 1]).T  # P_{t-1|t-1} F^T P_{t|t-1}^{-1}
        means[t - 1] = filt_means[t - 1] + J @ (means[t] - result.pred_means[t - 1])
        covs[t - 1] = _sym(filt_covs[t - 1] + J @ (covs[t] - result.pred_covs[t - 1]) @ J.T)
        cross[t - 1] = covs[t] @ J.T
    return means, covs, cross


# ---------------------------------------------------------------------------------------------------------------
# LGSSM
# ---------------------------------------------------------------------------------------------------------------
def _hankel(a, first, rows, cols):
    """Block Hankel matrix (rows d, cols): block r, column k holds a[first + r + k] (d = a.shape[1])."""
    return np.concatenate([a[first + r:first + r + cols].T for r in range(rows)], axis=0)


def subspace_states(data, dim_x, block_rows):
    """N4SID state sequences (module docstring) of every sequence in ``data`` (list of (y, u)): a list of arrays
    (T_i - 2 i + 1, d_x), row k estimating x_{i+k-1} (0-based time), i = ``block_rows``."""
    i = block_rows
    cols = [len(y) - 2 * i + 1 for y, _ in data]
    past, future_u, future_y = [], [], []
    for (y, u), j in zip(data, cols):
        past.append(np.concatenate([_hankel(u, 0, i, j), _hankel(y, 0, i, j)]))
        future_u.append(_hankel(u, i, i, j))
        future_y.append(_hankel(y, i, i, j))
    W_p, U_f, Y_f = (np.concatenate(blocks, axis=1) for blocks in (past, future_u, future_y))
    coef = np.linalg.lstsq(np.concatenate([W_p, U_f]).T, Y_f.T, rcond=None)[0].T  # Y_f ~ L_w W_p + L_u U_f
    O = coef[:, :len(W_p)] @ W_p
    _, s, right = np.linalg.svd(O, full_matrices=False)
    X = np.sqrt(s[:dim_x])[:, None] * right[:dim_x]  # (d_x, sum_j)
    return np.split(X.T, np.cumsum(cols)[:-1])


def _regress(targets, inputs):
    """Least squares targets ~ inputs W^T: (W, residual covariance)."""
    W = np.linalg.lstsq(inputs, targets, rcond=None)[0].T
    resid = targets - inputs @ W.T
    return W, _sym(resid.T @ resid / len(resid))


class LGSSM(_Baseline):
    """Linear Gaussian state-space model, identified by subspace identification or EM (module docstring).

    Parameters
    ----------
    dim_x, dim_y, dim_u : int
        State, output and input dimensions (dim_u may be 0).
    method : {"em", "subspace"}
        EM from an initial estimate, or the subspace estimate alone.
    init : {"subspace", "random"}
        EM's initial estimate.
    num_iters : int
        EM iterations.
    block_rows : int or None
        Block rows i of the subspace Hankel matrices (default max(10, dim_x + 1)).
    max_spectral_radius : float or None
        Stability constraint on F (module docstring); None leaves F unconstrained.
    seed : int
        Seeds the random initialisation.

    Attributes (after fit)
    ----------------------
    params_ : dict
        F (d_x, d_x), G (d_x, d_u), H (d_y, d_x), Q (d_x, d_x), R (d_y, d_y), m0 (d_x,), P0 (d_x, d_x).
    history_ : list of float
        EM: -log p(y) of the training data at each iteration (before its M-step); empty for "subspace".
    """

    def __init__(self, dim_x=4, dim_y=1, dim_u=1, method="em", init="subspace", num_iters=50, block_rows=None,
                 max_spectral_radius=0.999, seed=0):
        super().__init__(seed)
        self.spec = _make_spec(dim_x, dim_y, dim_u)
        if method not in ("em", "subspace"):
            raise ValueError(f"method: expected 'em' or 'subspace', got {method!r}")
        if init not in ("subspace", "random"):
            raise ValueError(f"init: expected 'subspace' or 'random', got {init!r}")
        self.method, self.init = method, init
        self.num_iters = check.positive_int(num_iters, "num_iters")
        self.block_rows = max(10, dim_x + 1) if block_rows is None else check.positive_int(block_rows, "block_rows")
        if self.block_rows * dim_y < dim_x:
            raise ValueError(f"block_rows: expected block_rows * dim_y >= dim_x = {dim_x}, got {self.block_rows}")
        if max_spectral_radius is not None:
            max_spectral_radius = check.positive_float(max_spectral_radius, "max_spectral_radius")
        self.max_spectral_radius = max_spectral_radius
        self.fitted = False

    def get_config(self):
        """Constructor arguments as plain JSON types: ``LGSSM(**model.get_config())`` rebuilds the unfitted model."""
        s = self.spec
        return {"dim_x": s.dim_x, "dim_y": s.dim_y, "dim_u": s.dim_u, "method": self.method, "init": self.init,
                "num_iters": self.num_iters, "block_rows": self.block_rows,
                "max_spectral_radius": self.max_spectral_radius, "seed": self.seed}

    def get_params(self):
        """Copies of the fitted parameters (``params_``)."""
        self._check_fitted()
        return {k: v.copy() for k, v in self.params_.items()}

    def set_params(self, params):
        """Set F, G, H, Q, R, m0, P0 (shapes as ``params_``); the model then counts as fitted."""
        s = self.spec
        shapes = {"F": (s.dim_x, s.dim_x), "G": (s.dim_x, s.dim_u), "H": (s.dim_y, s.dim_x), "Q": (s.dim_x, s.dim_x),
                  "R": (s.dim_y, s.dim_y), "m0": (s.dim_x,), "P0": (s.dim_x, s.dim_x)}
        if not isinstance(params, dict) or set(params) != set(shapes):
            raise ValueError(f"params: expected a dict with keys {sorted(shapes)}")
        new = {}
        for name, shape in shapes.items():
            value = np.array(params[name], dtype=np.float64)
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ValueError(f"params[{name!r}]: expected a finite array of shape {shape}, got {value.shape}")
            if name in ("Q", "R", "P0"):
                value = _sym(value)
                if np.linalg.eigvalsh(value)[0] < (0.0 if name != "R" else 1e-12):
                    raise ValueError(f"params[{name!r}]: expected a symmetric positive "
                                     f"{'definite' if name == 'R' else 'semi-definite'} matrix")
            new[name] = value
        self.params_ = new
        self.fitted = True
        return self

    # -- fitting ---------------------------------------------------------------------------------------------
    def _subspace_init(self, data):
        i = self.block_rows
        if any(len(y) - 2 * i + 1 < 2 for y, _ in data):
            raise ValueError(f"y: every sequence needs more than 2 block_rows = {2 * i} steps for subspace "
                             "identification")
        states = subspace_states(data, self.spec.dim_x, i)
        prev, nxt, inp, emit, out = [], [], [], [], []
        for (y, u), X in zip(data, states):  # row k of X is x_{i+k-1}
            prev.append(X[:-1])
            nxt.append(X[1:])
            inp.append(u[i:i + len(X) - 1])
            emit.append(X)
            out.append(y[i - 1:i - 1 + len(X)])
        prev, nxt, inp, emit, out = (np.concatenate(a) for a in (prev, nxt, inp, emit, out))
        FG, Q = _regress(nxt, np.concatenate([prev, inp], axis=1))
        F = self._stabilise(FG[:, :self.spec.dim_x])
        if F is not FG[:, :self.spec.dim_x]:  # refit G and Q given the projected F
            G, Q = _regress(nxt - prev @ F.T, inp)
            FG = np.concatenate([F, G], axis=1)
        H, R = _regress(out, emit)
        dx = self.spec.dim_x
        floor = COV_FLOOR * np.eye(dx)
        return {"F": FG[:, :dx], "G": FG[:, dx:], "H": H, "Q": Q + floor, "R": R + COV_FLOOR * np.eye(len(R)),
                "m0": emit.mean(axis=0), "P0": _sym(np.cov(emit.T).reshape(dx, dx)) + floor}

    def _random_init(self, data):
        rng = np.random.default_rng(self.seed)
        s = self.spec
        F = rng.normal(size=(s.dim_x, s.dim_x))
        F *= 0.9 / max(np.max(np.abs(np.linalg.eigvals(F))), 1e-12)  # spectral radius 0.9
        y_var = np.var(np.concatenate([y for y, _ in data]), axis=0)
        return {"F": F, "G": rng.normal(scale=0.5, size=(s.dim_x, s.dim_u)),
                "H": rng.normal(scale=1.0 / np.sqrt(s.dim_x), size=(s.dim_y, s.dim_x)), "Q": 0.1 * np.eye(s.dim_x),
                "R": np.diag(0.5 * y_var + COV_FLOOR), "m0": np.zeros(s.dim_x), "P0": np.eye(s.dim_x)}

    def _em_step(self, data):
        """One EM iteration; returns the log-likelihood of the parameters before the M-step."""
        p = self.params_
        dx, du = self.spec.dim_x, self.spec.dim_u
        D = dx + du
        Phi, Psi, Sxx, Syx, Syy = np.zeros((D, D)), np.zeros((dx, D)), np.zeros((dx, dx)), 0.0, 0.0
        log_lik, n = 0.0, 0
        for y, u in data:
            result = kalman_filter(p, y, u, p["m0"], p["P0"])
            log_lik += result.log_likelihood
            means, covs, cross = rts_smoother(p, result, p["m0"], p["P0"])
            second = covs + means[:, :, None] * means[:, None, :]  # E[x_t x_t^T], t = 0..T
            z_mean = np.concatenate([means[:-1], u], axis=1)  # E[z_t], z_t = [x_{t-1}, u_t], t = 1..T
            Phi += z_mean.T @ z_mean
            Phi[:dx, :dx] += covs[:-1].sum(axis=0)
            Psi += means[1:].T @ z_mean
            Psi[:, :dx] += cross.sum(axis=0)
            Sxx = Sxx + second[1:].sum(axis=0)
            Syx = Syx + y.T @ means[1:]
            Syy = Syy + y.T @ y
            n += len(y)
        FG = np.linalg.solve(Phi, Psi.T).T
        F = self._stabilise(FG[:, :dx])
        if F is not FG[:, :dx] and du:  # F was projected: the best G given that F
            FG = np.concatenate([F, np.linalg.solve(Phi[dx:, dx:], (Psi[:, dx:] - F @ Phi[:dx, dx:]).T).T], axis=1)
        H = np.linalg.solve(Sxx, Syx.T).T
        Q = Sxx - FG @ Psi.T - Psi @ FG.T + FG @ Phi @ FG.T  # E sum (x_t - [F G] z_t)(x_t - [F G] z_t)^T
        self.params_ = dict(p, F=FG[:, :dx], G=FG[:, dx:], H=H, Q=_sym(Q) / n + COV_FLOOR * np.eye(dx),
                            R=_sym(Syy - H @ Syx.T) / n + COV_FLOOR * np.eye(len(H)))
        return log_lik

    def _stabilise(self, F):
        """F itself when its spectral radius is at most ``max_spectral_radius`` (or that is None); otherwise F with
        every eigenvalue of larger modulus scaled back onto that circle, V diag(lambda') V^{-1}."""
        if self.max_spectral_radius is None:
            return F
        values, vectors = np.linalg.eig(F)
        if np.max(np.abs(values)) <= self.max_spectral_radius:
            return F
        scale = np.minimum(1.0, self.max_spectral_radius / np.abs(values))
        return np.real(vectors @ np.diag(values * scale) @ np.linalg.inv(vectors))

    def _stationary_prior(self, data):
        """m0, P0 from the mean and covariance of the smoothed states of the training data."""
        p = self.params_
        first, second, n = 0.0, 0.0, 0
        for y, u in data:
            means, covs, _ = rts_smoother(p, kalman_filter(p, y, u, p["m0"], p["P0"]), p["m0"], p["P0"])
            first = first + means[1:].sum(axis=0)
            second = second + (covs[1:] + means[1:, :, None] * means[1:, None, :]).sum(axis=0)
            n += len(y)
        m0 = first / n
        self.params_ = dict(p, m0=m0, P0=_sym(second / n - np.outer(m0, m0)) + COV_FLOOR * np.eye(len(m0)))

    def fit(self, y, u=None, **gp_training_options):
        """Identify the model from ``y`` (T, d_y) with ``u`` (T, d_u), or lists of such sequences. Keyword arguments
        of the GP models' ``fit`` are accepted and ignored. Returns ``self``."""
        self._check_fit_options(gp_training_options)
        data = self._sequences(y, u)
        use_subspace = self.method == "subspace" or self.init == "subspace"
        self.params_ = self._subspace_init(data) if use_subspace else self._random_init(data)
        self.fitted = True
        self.history_ = []
        if self.method == "em":
            for _ in range(self.num_iters):
                self.history_.append(-self._em_step(data))
            self._stationary_prior(data)
        return self

    # -- state inference -------------------------------------------------------------------------------------
    def _window(self, y, u):
        self._check_fitted()
        [(y, u)] = self._sequences(y, u)
        return y, u

    def filter(self, y, u=None):
        """Kalman filter over y (T, d_y), u (T, d_u) from the prior N(m0, P0): a :class:`KalmanResult`."""
        y, u = self._window(y, u)
        return kalman_filter(self.params_, y, u, self.params_["m0"], self.params_["P0"])

    def log_likelihood(self, y, u=None):
        """log p(y_{1:T} | u_{1:T}) (exact)."""
        return self.filter(y, u).log_likelihood

    def smooth(self, y, u=None):
        """Smoothed means (T + 1, d_x) and covariances (T + 1, d_x, d_x) of x_0..x_T given the whole sequence."""
        y, u = self._window(y, u)
        p = self.params_
        means, covs, _ = rts_smoother(p, kalman_filter(p, y, u, p["m0"], p["P0"]), p["m0"], p["P0"])
        return means, covs

    def q_x0(self, y=None, u=None, full_cov=False):
        """p(x_0 | y_{1:T}, u_{1:T}) of the state before the window y (T, d_y), u (T, d_u): mean (d_x,) and variances
        (d_x,), or the covariance (d_x, d_x) with ``full_cov``. Without y: the prior N(m0, P0)."""
        if y is None:
            self._check_fitted()
            mean, cov = self.params_["m0"], self.params_["P0"]
        else:
            means, covs = self.smooth(y, u)
            mean, cov = means[0], covs[0]
        return mean.copy(), (cov.copy() if full_cov else np.diag(cov).copy())

    # -- forecasts -------------------------------------------------------------------------------------------
    def predict_moments(self, u_future, x0_mean, x0_cov):
        """Exact predictive moments over the steps of ``u_future`` (T, d_u) from x_0 ~ N(x0_mean, x0_cov): state
        means (T, d_x) and covariances (T, d_x, d_x), output means (T, d_y) and covariances (T, d_y, d_y) (with R)."""
        p = self.params_
        m, P = x0_mean, x0_cov
        means, covs = [], []
        for u_t in u_future:
            m = p["F"] @ m + p["G"] @ u_t
            P = _sym(p["F"] @ P @ p["F"].T + p["Q"])
            means.append(m)
            covs.append(P)
        means, covs = np.array(means), np.array(covs)
        H = p["H"]
        return means, covs, means @ H.T, np.einsum("ij,tjk,lk->til", H, covs, H) + p["R"]

    def forecast(self, u_future=None, y_past=None, u_past=None, num_samples=50, seed=0, steps=None, x0=None,
                 num_particles=None, init_window=None):
        """Forecast with known future inputs ``u_future`` (T, d_u) (or ``steps`` when d_u = 0).

        The initial state is, in order: ``x0 = (mean, var)`` (var (d_x,) variances or (d_x, d_x) covariance); the
        Kalman filter over ``y_past``, ``u_past`` (from the prior N(m0, P0)); the prior. ``num_samples`` joint
        trajectories are drawn and re-centred on the exact predictive mean (module docstring); ``Forecast.samples``
        are H x_t, ``obs_var`` the diagonal of R. ``num_particles`` and ``init_window`` are ignored.
        """
        self._check_fitted()
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        u_future = self._future_inputs(u_future, steps)
        p, dx = self.params_, self.spec.dim_x
        if x0 is not None:
            mean = check.finite_array(x0[0], "x0", (1,))
            cov = check.finite_array(x0[1], "x0", (1, 2))
            cov = np.diag(cov) if cov.ndim == 1 else cov
            if mean.shape != (dx,) or cov.shape != (dx, dx):
                raise ValueError(f"x0: expected (mean ({dx},), var ({dx},) or ({dx}, {dx})), got shapes {mean.shape} "
                                 f"and {cov.shape}")
        elif y_past is not None:
            result = self.filter(y_past, u_past)
            mean, cov = result.means[-1], result.covs[-1]
        else:
            mean, cov = p["m0"], p["P0"]
        means, _, _, _ = self.predict_moments(u_future, mean, cov)
        x = rng.multivariate_normal(mean, cov, size=num_samples, method="eigh")
        noise = rng.multivariate_normal(np.zeros(dx), p["Q"], size=(len(u_future), num_samples), method="eigh")
        states = np.empty((num_samples, len(u_future), dx))
        for t, u_t in enumerate(u_future):
            x = states[:, t] = x @ p["F"].T + p["G"] @ u_t + noise[t]
        states += means - states.mean(axis=0)
        return self._forecast(states @ p["H"].T, states, np.diag(p["R"]).copy())
