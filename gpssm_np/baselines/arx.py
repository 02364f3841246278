r"""ARX: a linear model of past outputs and inputs, fitted by least squares, orders chosen on the training data.

For output y_t (d_y) and input u_t (d_u)::

    y_t = sum_{i=1..na} A_i y_{t-i} + sum_{j=0..nb-1} B_j u_{t-j} + c + e_t,     e_t ~ N(0, Sigma)

so nb = 1 is the input of the same step only (the GPSSM convention) and nb = 0 no input at all. With the regressor
phi_t = [y_{t-1}, ..., y_{t-na}, u_t, ..., u_{t-nb+1}, 1] and Theta = [A_1 .. A_na, B_0 .. B_{nb-1}, c]^T,
y_t = Theta^T phi_t + e_t is fitted by ordinary least squares over every t with a full regressor (t >= max(na,
nb - 1)); Sigma is the residuals' covariance with n - p degrees of freedom (p regressors), its diagonal sigma^2 the
residual variances. The outputs' noise is correlated where their residuals are: two outputs that move together
(nearly collinear ones above all, whose coefficients then weigh one against the other) get noise that moves together,
so that sampled runs do not add independent noise to a difference the coefficients amplify.

Order selection uses **only the training data given to fit**. Candidates: 1 <= na <= max_order and 0 <= nb <=
max_order (nb = 0 when d_u = 0; a given na or nb is kept fixed); a candidate whose fit on the whole training data
is unstable (AR companion matrix with spectral radius >= 1) is rejected, as its free runs diverge.

* ``selection="simulation"`` (default): rolling-origin cross-validation of the task the protocols score
  (``datasets/folds.py``, ``origins`` origins): each fold's model is fitted on the training data before its origin
  and scored by the RMSE of noise-free simulations -- free runs from the true past, fed back their own outputs --
  over the fold's forecast windows after the origin. The score is the mean RMSE over all windows of all folds
  (``fold_errors_`` keeps the chosen orders' per-window errors); ties go to the fewer lags. The LGSSM's
  ``dim_x="auto"`` and the GP models' linear floor are chosen on the same folds with the same score.
* ``selection="bic"``: every candidate is fitted on the common rows t >= max_order of the training data and the
  smallest BIC = n sum_d log sigma_d^2 + p d_y log n wins.

The chosen orders are then refitted on the whole training data.

Forecast: simulation from the na outputs (and nb - 1 inputs) before the forecast start, feeding back its own sampled
outputs, y^(s)_t = Theta^T phi^(s)_t + L eps^(s)_t with L L^T = Sigma. ``Forecast.samples`` holds the conditional means
Theta^T phi^(s)_t (the noise-free part, the analogue of C x_t), ``obs_var`` = sigma^2, so that the Forecast's
variance (the means' variance + obs_var) is the variance of the simulated outputs; ``Forecast.states`` holds the
sampled outputs y^(s)_t themselves (spec.dim_x = d_y). Both are re-centred so that their mean over the samples is
the noise-free run, which is the exact predictive mean of a linear model (as the LGSSM's forecasts are), and
``Forecast.output_var`` is the exact variance of the conditional means (:func:`arx_output_variances`): neither the
point forecast nor the intervals carry Monte-Carlo error. Without ``y_past`` the forecast continues from the end of
the training data, as the GP models' do; ``y_past`` and ``u_past`` are one record, of the same length, ending at
the forecast's start. A past shorter than the lags (fewer than na rows, or than nb - 1 inputs, as the simulate
protocol's 5 outputs give an ARX of more lags), or with missing (NaN) outputs among them, is completed by
:func:`complete_lags`: the missing lags are drawn, one draw per sample, from their Gaussian given the lags that were
seen, under the mean and covariance of the lag vector over the training rows (``lag_mean``, ``lag_cov``), and the
noise-free run starts from its mean, the best linear estimate of the missing lags from the seen ones under the
training data's second moments: the part the stationary prior and the Kalman filter over the outputs read play for
the LGSSM and for the GP models' ARX floor (its observer form, ``arx_state_space.py``). A model file without these
statistics fills the missing lags with the training means. The ARX has no latent state: ``has_latent_state =
False``, and ``q_x0`` and ``forecast(x0=...)`` raise ValueError (the paper protocol must use the causal path for it).

The fitted arrays (:meth:`ARX.get_learned_params`, what a model file keeps) are the coefficients A_i, B_j, c,
Sigma, the training means, and the lag vector's mean and covariance that complete a short past; the orders are
the lengths of A and B.

Reference: L. Ljung, System Identification (1999), ch. 4 and 7 (ARX, least squares).
"""
import numpy as np

from .. import _validation as check
from ..datasets.folds import MIN_LENGTH, ORIGINS, fold_errors, mean_error, rolling_origin
from ..online import OnlineFilterBase, check_online_state
from ..ops.linalg import symmetrise
from ._base import COV_FLOOR, LinearBaseline

def _order(value, name):
    """None or a non-negative integer."""
    return None if value is None else check.non_negative_int(value, name)


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


def arx_output_variances(theta, na, nb, dim_u, noise_cov, steps, lag_cov=None):
    """The exact variances (steps, d_y) of the conditional means Theta^T phi_t of an ARX run (:func:`arx_simulate`)
    whose outputs are fed back with noise of covariance ``noise_cov`` (d_y, d_y) and whose lag vector
    (:func:`lag_vector`, the seen entries fixed) has covariance ``lag_cov`` (p, p) (None: every lag seen). The run is
    affine in its noise and its lags, so the variance is the sum over the noise of the steps before t and over the lags
    of their responses squared: the responses are runs from unit perturbations minus a run from zero."""
    dy, n_u = theta.shape[1], max(nb - 1, 0)
    p = na * dy + n_u * dim_u
    runs = 1 + dy + p
    lags, noise = np.zeros((runs, na, dy)), np.zeros((runs, steps, dy))
    inputs = np.zeros((runs, n_u + steps, dim_u))
    noise[1 + np.arange(dy), 0, np.arange(dy)] = 1.0  # a unit noise on each output at the first step
    basis = np.eye(p)  # a unit perturbation of each lag, most recent first as lag_vector orders them
    lags[1 + dy:] = basis[:, :na * dy].reshape(p, na, dy)
    inputs[1 + dy:, :n_u] = basis[:, na * dy:].reshape(p, n_u, dim_u)[:, ::-1]  # time order
    response = arx_simulate(theta, na, nb, lags, inputs, noise)[0] - arx_simulate(theta, na, nb, lags[:1],
                                                                                   inputs[:1])[0]
    # the noise of step k moves the mean of step t by the first run's response at t - k (time-invariant)
    R = response[1:1 + dy]  # (d_y, steps, d_y): to output o at lag t of a unit noise on output i
    if np.count_nonzero(noise_cov - np.diag(np.diagonal(noise_cov))):  # noise correlated across outputs
        per_step = np.einsum("ito,ij,jto->to", R, noise_cov, R)
    else:  # the sum of squares, as rounded before Sigma was kept whole
        per_step = np.einsum("ito,i->to", R**2, np.diagonal(noise_cov))
    variance = np.cumsum(per_step, axis=0)
    if lag_cov is not None and p:
        J = response[1 + dy:]  # (p, steps, d_y)
        variance = variance + np.einsum("kto,kl,lto->to", J, lag_cov, J)
    return variance


def _lstsq(rows, targets):
    """Least-squares coefficients (p, d_y) and the residuals' covariance Sigma (d_y, d_y) with n - p degrees of
    freedom, :data:`COV_FLOOR` added to its diagonal (the residual variances, summed as squares); n > p rows
    (``ARX._fit_orders`` refuses fewer)."""
    theta = np.linalg.lstsq(rows, targets, rcond=None)[0]
    resid = targets - rows @ theta
    dof = len(rows) - rows.shape[1]
    cov = symmetrise(resid.T @ resid / dof)
    np.fill_diagonal(cov, np.sum(resid**2, axis=0) / dof + COV_FLOOR)
    return theta, cov


def arx_blocks(theta, na, nb, dim_u):
    """The coefficients A_1..A_na (na, d_y, d_y) and B_0..B_{nb-1} (nb, d_y, d_u) held in the rows of Theta
    (module docstring; a last intercept row, if any, is ignored)."""
    dy = theta.shape[1]
    a = theta[:na * dy].T.reshape(dy, na, dy).transpose(1, 0, 2)
    b = theta[na * dy:na * dy + nb * dim_u].T.reshape(dy, nb, dim_u).transpose(1, 0, 2)
    return a, b


def arx_is_stable(theta, na):
    """Whether the AR part of Theta (module docstring) is stable: the block companion matrix of A_1..A_na has
    spectral radius < 1 (always true for na = 0)."""
    dy = theta.shape[1]
    if na == 0:
        return True
    companion = np.eye(na * dy, k=-dy)
    companion[:dy] = theta[:na * dy].T
    return bool(np.max(np.abs(np.linalg.eigvals(companion))) < 1.0)


def lag_statistics(data, na, nb):
    """Mean (p,) and covariance (p, p) of the lag vector z_t = [y_{t-1}, ..., y_{t-na}, u_{t-1}, ..., u_{t-nb+1}]
    (p = na d_y + max(nb - 1, 0) d_u; most recent first, as the regressors phi_t hold them) over the rows
    t >= max(na, nb - 1) of the sequences ``data`` (a list of (y, u)): the Gaussian :func:`complete_lags`
    conditions."""
    first = max(na, nb - 1)
    rows = [arx_regressors(y, u, na, nb, first) for y, u in data if len(y) > first]
    rows = np.concatenate(rows)
    dy, du = data[0][0].shape[1], data[0][1].shape[1]
    z = np.concatenate([rows[:, :na * dy], rows[:, na * dy + du:na * dy + nb * du]], axis=1)
    cov = np.atleast_2d(np.cov(z, rowvar=False)) if len(z) > 1 else np.zeros((z.shape[1],) * 2)
    return z.mean(axis=0), cov


def lag_rows(theta, na, nb, dim_u):
    """The rows of Theta (module docstring) that multiply the lag vector of :func:`lag_statistics`: those of
    y_{t-1}..y_{t-na} and u_{t-1}..u_{t-nb+1} ((p, d_y); u_t's and the intercept's left out)."""
    dy = theta.shape[1]
    return np.concatenate([theta[:na * dy], theta[na * dy + dim_u:na * dy + nb * dim_u]])


def lag_vector(y_lags, u_lags):
    """The lag vector z (p,) of :func:`lag_statistics` from the output lags ``y_lags`` (na, d_y) and input lags
    ``u_lags`` (nb - 1, d_u), both in time order (the last row the most recent); NaN entries stay NaN."""
    return np.concatenate([y_lags[::-1].reshape(-1), u_lags[::-1].reshape(-1)])


def lag_posterior(z, lag_mean, lag_cov):
    """The Gaussian of the lag vector ``z`` (p,) given its finite entries, under N(lag_mean, lag_cov) of
    :func:`lag_statistics`: (mean (p,), covariance (p, p)), the finite entries themselves with zero (co)variance,
    the NaN ones their conditional mean and covariance (the best linear estimate from the seen ones under the
    training data's second moments)."""
    observed = np.isfinite(z)
    missing = ~observed
    mean, cov = np.array(z, dtype=np.float64), np.zeros((len(z), len(z)))
    if missing.any():
        S_oo, S_mo = lag_cov[np.ix_(observed, observed)], lag_cov[np.ix_(missing, observed)]
        gain = np.linalg.lstsq(S_oo, S_mo.T, rcond=None)[0].T if observed.any() else np.zeros((missing.sum(), 0))
        mean[missing] = lag_mean[missing] + gain @ (z[observed] - lag_mean[observed])
        cov[np.ix_(missing, missing)] = lag_cov[np.ix_(missing, missing)] - gain @ S_mo.T
    return mean, cov


def complete_lags(y_lags, u_lags, lag_mean, lag_cov, num_samples, rng):
    """The start of ``num_samples`` ARX runs from lags of which some were not seen (module docstring, "Forecast"):
    ``y_lags`` (na, d_y) and ``u_lags`` (nb - 1, d_u) in time order, NaN where a lag was not seen (before the past
    read, or a missing output). Returns (mean_lags (na, d_y), mean_inputs (nb - 1, d_u), lags (M, na, d_y), inputs
    (M, nb - 1, d_u), the covariance (p, p) of the lag vector), the lags most recent first, the inputs in time order:
    the unseen entries are the Gaussian of :func:`lag_posterior`, its mean for the mean run and one draw each for the
    M samples (with nothing unseen, the lags themselves; ``rng`` then draws nothing)."""
    na, dy = y_lags.shape
    n_u, du = u_lags.shape
    z = lag_vector(y_lags, u_lags)
    mean, cov = lag_posterior(z, lag_mean, lag_cov)
    missing = ~np.isfinite(z)
    draws = np.broadcast_to(mean, (num_samples, len(mean))).copy()
    if missing.any():
        part = cov[np.ix_(missing, missing)]
        w, V = np.linalg.eigh(0.5 * (part + part.T))
        root = V * np.sqrt(np.clip(w, 0.0, None))
        draws[:, missing] = mean[missing] + rng.standard_normal((num_samples, len(w))) @ root.T

    def split(v):
        lags = v[..., :na * dy].reshape(v.shape[:-1] + (na, dy))
        inputs = v[..., na * dy:].reshape(v.shape[:-1] + (n_u, du))[..., ::-1, :]  # time order
        return lags, inputs

    return (*split(mean), *split(draws), cov)


class ARX(LinearBaseline):
    """Linear ARX model fitted by least squares, orders chosen on the training data (module docstring).

    Parameters
    ----------
    na, nb : int or None
        Output and input orders (nb counts u_t, u_{t-1}, ..., so nb = 1 is u_t alone); None: chosen in fit.
    max_order : int
        Largest na and nb tried by the order selection.
    selection : {"simulation", "bic"}
        Order selection criterion (module docstring).
    origins : int
        Origins of the rolling-origin cross-validation (``selection="simulation"``; ``datasets/folds.py``), >= 2.
    dim_y, dim_u : int
        Output and input dimensions (dim_u may be 0, for no inputs); dim_u = 1 by default in every model of the
        package (:class:`gpssm_np.ODGPSSM` says why).
    seed : int
        Kept for a uniform interface (fitting is deterministic; forecasts take their own seed).
    standardize : bool
        ``fit`` z-scores outputs and inputs with the statistics of its data (mean and population std of each
        column) and the model then takes and returns original units (``gpssm_np.units``; the
        statistics are in ``scaling_`` and the model file); False: the model works in the units it is given.
    calibrate : bool
        ``fit`` widens the forecasts' intervals per output where forecasts of its rolling-origin folds needed it
        (``baselines/_base.py``, "Calibration"; ``origins`` origins); False keeps the model's own.

    Attributes (after fit)
    ----------------------
    na_, nb_ : int
        The orders used.
    theta_ : ndarray (na d_y + nb d_u + 1, d_y)
        Theta (module docstring); :meth:`coefficients` splits it.
    noise_cov_ : ndarray (d_y, d_y)
        Sigma, the noise covariance.
    noise_var_ : ndarray (d_y,)
        sigma^2, its diagonal (read-only).
    selection_scores_ : dict
        (na, nb) -> cross-validated RMSE or BIC of every candidate, inf for a rejected one (empty when both orders
        were given).
    fold_errors_ : list of float or None
        The chosen orders' RMSE in every window of the rolling-origin folds (``selection="simulation"`` with orders
        to choose; None otherwise).
    interval_scale_ : ndarray (d_y,) or None
        The factors on the forecasts' predictive std (``calibrate``; None without folds).
    """

    has_latent_state = False
    RENAMED_ARGUMENTS = {"folds": "origins"}

    def __init__(self, na=None, nb=None, max_order=10, selection="simulation", origins=ORIGINS, dim_y=1, dim_u=1,
                 seed=0, standardize=True, calibrate=True, **unknown):
        check.keywords(unknown, ARX.__init__)
        super().__init__(dim_y, dim_y, dim_u, seed, standardize, calibrate)
        self.na = _order(na, "na")
        self.nb = _order(nb, "nb")
        self.max_order = check.positive_int(max_order, "max_order")
        if selection not in ("simulation", "bic"):
            raise ValueError(f"selection: expected 'simulation' or 'bic', got {selection!r}")
        self.selection = selection
        self.origins = check.int_at_least(origins, "origins", 2, "rolling origins")
        if dim_u == 0 and self.nb not in (None, 0):
            raise ValueError(f"nb: expected 0 (or None) for a model without inputs, got {nb!r}")
        self.lag_mean_ = self.lag_cov_ = None

    def _fitted_choices(self):
        """The orders chosen, once fitted (the repr's bracket)."""
        return f"na_={self.na_}, nb_={self.nb_}" if self.fitted else ""

    def get_config(self):
        """Constructor arguments as plain JSON types: ``ARX(**model.get_config())`` rebuilds the (unfitted) model."""
        return {"na": self.na, "nb": self.nb, "max_order": self.max_order, "selection": self.selection,
                "origins": self.origins, "dim_y": self.spec.dim_y, "dim_u": self.spec.dim_u,
                "seed": self.seed, "standardize": self.standardize, "calibrate": self.calibrate}

    FIT_RECORD = ("selection_scores_", "fold_errors_")  # how the orders were chosen: a model file keeps it

    def get_learned_params(self):
        """The fitted arrays, empty before fit: the coefficients "a" (na, d_y, d_y), "b" (nb, d_y, d_u) and "c"
        (d_y,) of :meth:`coefficients`, "noise_cov" Sigma (d_y, d_y), and the training means "y_mean" (d_y,) and
        "u_mean" (d_u,), and the lag vector's "lag_mean" (p,) and "lag_cov" (p, p) (:func:`lag_statistics`) that
        complete a short past. ``selection_scores_`` is not part of them."""
        if not self.fitted:
            return {}
        params = dict(self.coefficients(), noise_cov=self.noise_cov_.copy(), y_mean=self.y_mean_.copy(),
                      u_mean=self.u_mean_.copy())
        if self.lag_mean_ is not None:
            params.update(lag_mean=self.lag_mean_.copy(), lag_cov=self.lag_cov_.copy())
        return params

    def set_learned_params(self, params):
        """Set the arrays of :meth:`get_learned_params` (the orders are the lengths of "a" and "b"); the model then
        counts as fitted. An empty dict leaves it unfitted. "lag_mean" and "lag_cov" may be absent (a model file
        written before the ARX kept them): a short past is then filled with the training means. A model file
        written before the ARX kept Sigma whole holds "noise_var" (its diagonal) instead of "noise_cov": its noise
        is then independent across outputs, as that ARX's was."""
        dy, du = self.spec.dim_y, self.spec.dim_u
        if isinstance(params, dict) and "noise_var" in params and "noise_cov" not in params:
            noise_var = np.array(params["noise_var"], dtype=np.float64)
            if noise_var.shape != (dy,) or not np.all(np.isfinite(noise_var)) or np.any(noise_var <= 0):
                raise ValueError(f"params['noise_var']: expected {dy} positive variances, got {noise_var!r}")
            params = {("noise_cov" if k == "noise_var" else k): v for k, v in params.items()}
            params["noise_cov"] = np.diag(noise_var)
        names, lag_names = ("a", "b", "c", "noise_cov", "y_mean", "u_mean"), ("lag_mean", "lag_cov")
        arrays = self._learned_arrays(params, names, lag_names)
        if arrays is None:
            return self
        a, b, c, noise_cov, y_mean, u_mean = (arrays[name] for name in names)
        for name, value, ok in (("a", a, a.ndim == 3 and a.shape[1:] == (dy, dy)),
                                ("b", b, b.ndim == 3 and b.shape[1:] == (dy, du)),
                                ("c", c, c.shape == (dy,)), ("noise_cov", noise_cov, noise_cov.shape == (dy, dy)),
                                ("y_mean", y_mean, y_mean.shape == (dy,)), ("u_mean", u_mean, u_mean.shape == (du,))):
            if not ok or not np.all(np.isfinite(value)):
                raise ValueError(f"params[{name!r}]: expected a finite array shaped as get_learned_params() gives "
                                 f"it, got shape {value.shape}")
        if not np.array_equal(noise_cov, noise_cov.T) or np.any(np.diagonal(noise_cov) <= 0):
            raise ValueError("params['noise_cov']: expected a symmetric matrix with a positive diagonal")
        try:
            np.linalg.cholesky(noise_cov)
        except np.linalg.LinAlgError:
            raise ValueError("params['noise_cov']: expected a positive definite matrix") from None
        if du == 0 and len(b):
            raise ValueError(f"params['b']: a model without inputs has nb = 0, got {len(b)} input lags")
        na, nb = len(a), len(b)
        # the inverse of coefficients(): Theta^T = [A_1 .. A_na, B_0 .. B_{nb-1}, c]; C order as least squares
        # gives it, since BLAS may round a product differently for another memory layout
        self.theta_ = np.ascontiguousarray(np.concatenate([a.transpose(1, 0, 2).reshape(dy, na * dy),
                                                           b.transpose(1, 0, 2).reshape(dy, nb * du), c[:, None]],
                                                          axis=1).T)
        self.lag_mean_ = self.lag_cov_ = None
        if "lag_mean" in arrays:
            p = na * dy + max(nb - 1, 0) * du
            lag_mean, lag_cov = (arrays[name] for name in lag_names)
            for name, value, shape in (("lag_mean", lag_mean, (p,)), ("lag_cov", lag_cov, (p, p))):
                if value.shape != shape or not np.all(np.isfinite(value)):
                    raise ValueError(f"params[{name!r}]: expected a finite array of shape {shape} for na = {na}, "
                                     f"nb = {nb}, got shape {value.shape}")
            self.lag_mean_, self.lag_cov_ = lag_mean, lag_cov
        self.na_, self.nb_ = na, nb
        self.noise_cov_, self.y_mean_, self.u_mean_ = noise_cov, y_mean, u_mean
        self.fitted = True
        return self

    @property
    def noise_var_(self):
        """sigma^2 (d_y,), the diagonal of the noise covariance ``noise_cov_``."""
        return np.diagonal(self.noise_cov_).copy()

    # -- fitting ---------------------------------------------------------------------------------------------
    def _candidates(self):
        nas = range(1, self.max_order + 1) if self.na is None else [self.na]
        nbs = [0] if self.spec.dim_u == 0 else (range(self.max_order + 1) if self.nb is None else [self.nb])
        return [(na, nb) for na in nas for nb in nbs]

    @staticmethod
    def _fit_orders(data, na, nb, first=None):
        """Least squares on the rows t >= ``first`` (default: the first full regressor) of every sequence."""
        first = max(na, nb - 1) if first is None else first
        rows, targets = [], []
        for y, u in data:
            if len(y) <= first:
                continue
            rows.append(arx_regressors(y, u, na, nb, first))
            targets.append(y[first:])
        rows = np.concatenate(rows) if rows else np.zeros((0, 1))
        if len(rows) <= rows.shape[1]:
            raise ValueError(f"y: {len(rows)} usable steps cannot fit the {rows.shape[1]} coefficients of the "
                             f"orders na = {na}, nb = {nb}")
        return _lstsq(rows, np.concatenate(targets))

    @staticmethod
    def _cross_validation(folds, na, nb):
        """The RMSE of the noise-free free run in every window of the rolling-origin ``folds`` (module docstring;
        ``datasets.folds.fold_errors``), each fold's orders fitted on its training part only."""

        def fit(ys, us):
            return ARX._fit_orders(list(zip(ys, us)), na, nb)[0]

        def free_run(theta, window):
            if len(window.y_past) < max(na, nb - 1):  # too short a past to start from
                return np.full(window.y.shape, np.inf)
            lags = window.y_past[len(window.y_past) - na:][::-1][None]
            inputs = np.concatenate([window.u_past[len(window.u_past) - max(nb - 1, 0):], window.u])[None]
            return arx_simulate(theta, na, nb, lags, inputs)[0][0]

        return fold_errors(folds, fit, free_run)

    def _bic(self, data, na, nb):
        theta, noise_cov = self._fit_orders(data, na, nb, first=self.max_order)
        noise_var = np.diagonal(noise_cov)
        n = sum(len(y) - self.max_order for y, _ in data)
        return float(n * np.sum(np.log(noise_var)) + theta.size * np.log(n))

    def _score(self, data, folds, na, nb):
        """(criterion, per-window errors) of (na, nb): the mean fold error (``selection="simulation"``) or the BIC,
        inf when the orders cannot be fitted or give an unstable model; the errors are None for the BIC."""
        try:
            theta, _ = self._fit_orders(data, na, nb)
            if not arx_is_stable(theta, na):
                return np.inf, None
            if self.selection == "bic":
                return self._bic(data, na, nb), None
        except ValueError:  # too few steps for these orders
            return np.inf, None
        errors = self._cross_validation(folds, na, nb)
        return mean_error(errors), errors

    def fit(self, y, u=None, data_name=None):
        """Choose the orders (unless both given) and fit by least squares on ``y`` (T, d_y) with ``u`` (T, d_u), or
        lists of such sequences. ``data_name``: the name of the training data, kept in ``data_name_`` and the
        model file (``evaluate`` warns on a data set of another name). The GP models' training options (``epochs``,
        ``plan``, ...) are refused by name: they would change nothing here. Returns ``self``."""
        self._record_data_name(data_name)
        data = self._training_data(y, u)
        candidates = self._candidates()
        self.selection_scores_, self.fold_errors_ = {}, None
        best = candidates[0]
        if len(candidates) > 1:
            folds = rolling_origin([y_i for y_i, _ in data], [u_i for _, u_i in data], self.origins)
            if self.selection == "simulation" and not folds:
                raise ValueError(f"y: {max(len(y_i) for y_i, _ in data)} steps are too few to choose the orders by "
                                 f"forecasting held-out steps (at least {MIN_LENGTH}); give a longer series (the "
                                 "command line: a larger --train-fraction), or ARX(na=..., nb=...) or "
                                 "ARX(selection='bic')")
            scored = {orders: self._score(data, folds, *orders) for orders in candidates}
            self.selection_scores_ = {orders: score for orders, (score, _) in scored.items()}
            best = min(self.selection_scores_, key=self.selection_scores_.get)  # ties: the first, fewest lags
            self.fold_errors_ = scored[best][1]
            if not np.isfinite(self.selection_scores_[best]):
                raise ValueError("y: no candidate ARX orders give a stable model that can be fitted and "
                                 "cross-validated on the training data; lower max_order or give longer sequences")
        self.na_, self.nb_ = best
        self.theta_, self.noise_cov_ = self._fit_orders(data, *best)
        all_y = np.concatenate([y_i for y_i, _ in data])
        all_u = np.concatenate([u_i for _, u_i in data])
        self.y_mean_, self.u_mean_ = all_y.mean(axis=0), all_u.mean(axis=0)
        self.lag_mean_, self.lag_cov_ = lag_statistics(data, *best)
        self.fitted = True
        self._remember_tail(data)
        return self._calibrated(data, self.origins)._attach_scaling()

    def _fold_model(self, ys, us):
        return ARX(na=self.na_, nb=self.nb_, dim_y=self.spec.dim_y, dim_u=self.spec.dim_u, standardize=False,
                   calibrate=False).fit(ys, us)

    def coefficients(self):
        """Copies of the fitted ARX coefficients: {"a": (na, d_y, d_y) A_i, "b": (nb, d_y, d_u) B_j, "c": (d_y,)}
        (``arx_blocks`` gives views of Theta, which an edit of the result would change)."""
        self._check_fitted()
        a, b = arx_blocks(self.theta_, self.na_, self.nb_, self.spec.dim_u)
        return {"a": a.copy(), "b": b.copy(), "c": self.theta_[-1].copy()}

    # -- protocol surface ------------------------------------------------------------------------------------
    def _q_x0(self, y=None, u=None, full_cov=False):
        """Not available: the ARX has no latent state (``has_latent_state`` is False); raises ValueError."""
        raise ValueError("model: the ARX has no latent state, so there is no q(x0); forecast from past data "
                         "(y_past, u_past) instead")

    def _own_start(self):
        """Without past data or a data tail the ARX's lags are the training means."""
        return "training means"

    def _forecast(self, u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window):
        """Simulated forecast from the outputs ``y_past`` (T_p, d_y) and inputs ``u_past`` (T_p, d_u) before the
        forecast start, with known future inputs ``u_future`` (T, d_u) (or ``steps`` when d_u = 0); module
        docstring. Without ``y_past`` it continues from the end of the training data (``data_tail_``, as the GP
        models do; ``Forecast.origin`` says which), or, for a model without it, from the training means.
        ``num_particles`` and ``init_window`` are accepted for a uniform interface and ignored.
        Returns a :class:`gpssm_np.forecast.Forecast`."""
        self._check_fitted()
        if x0 is not None:
            raise ValueError("x0: the ARX has no latent state; give the past outputs y_past (and u_past) instead")
        num_samples = check.positive_int(num_samples, "num_samples")
        seed = check.seed(seed)
        y_past, u_past, origin = self._forecast_origin(y_past, u_past)
        return self.run_from(u_future, y_past, u_past, num_samples, seed, origin)

    def run_from(self, u_future, y_past, u_past, num_samples, seed, origin):
        """The forecast of :meth:`_forecast` (model units) from the last na rows of the outputs ``y_past`` and the
        last nb - 1 rows of the inputs ``u_past`` (checked arrays; either may hold fewer rows, or be None, and the
        outputs NaN entries: the lags not seen are completed, module docstring), with ``num_samples`` sampled runs
        from ``seed``; ``origin`` names the start in the :class:`gpssm_np.forecast.Forecast`.
        :class:`ARXOnlineFilter` forecasts from its windows with it."""
        rng = np.random.default_rng(seed)
        na, nb, dy = self.na_, self.nb_, self.spec.dim_y
        du, n_u = self.spec.dim_u, max(nb - 1, 0)
        y_hist = self._past(y_past, dy, na, np.full(dy, np.nan))  # NaN: a lag not seen
        u_hist = self._past(u_past, du, n_u, np.full(du, np.nan))
        unseen = np.isnan(y_hist).any() or np.isnan(u_hist).any()
        lag_cov = None
        if unseen and self.lag_mean_ is not None:  # completed by their Gaussian given the lags seen
            y_hist, u_hist, lags, u_starts, lag_cov = complete_lags(y_hist, u_hist, self.lag_mean_, self.lag_cov_,
                                                                    num_samples, rng)
            y_hist = y_hist[::-1]  # time order, as the seen past's
        else:
            if unseen:  # a model file without the lag statistics: the training means in their place
                y_hist = np.where(np.isnan(y_hist), self.y_mean_, y_hist)
                u_hist = np.where(np.isnan(u_hist), self.u_mean_, u_hist)
            lags = np.broadcast_to(y_hist[::-1], (num_samples, na, dy))
            u_starts = np.broadcast_to(u_hist, (num_samples,) + u_hist.shape)
        inputs = np.concatenate([u_starts, np.broadcast_to(u_future, (num_samples,) + u_future.shape)], axis=1)
        noise = rng.standard_normal((num_samples, len(u_future), dy)) @ np.linalg.cholesky(self.noise_cov_).T
        means, outputs = arx_simulate(self.theta_, na, nb, lags, inputs, noise)
        exact = arx_simulate(self.theta_, na, nb, y_hist[::-1][None],  # the noise-free run: the exact mean
                             np.concatenate([u_hist, u_future])[None])[0]
        means += exact - means.mean(axis=0)
        outputs += exact - outputs.mean(axis=0)
        variance = arx_output_variances(self.theta_, na, nb, du, self.noise_cov_, len(u_future), lag_cov)
        return self._forecast_result(means, outputs, self.noise_var_, origin, variance)

    def online_filter(self, num_particles=None, seed=0, state=None, x0=None):
        """The ARX one measurement at a time (:class:`ARXOnlineFilter`, the surface of the other models'
        ``online_filter``): a running window of the last na outputs and nb - 1 inputs, from the end of the training
        data (or the training means for a model without it), or from ``state`` (a dict of
        :meth:`ARXOnlineFilter.state`). ``num_particles`` and ``seed`` are accepted for the common surface and not
        used; ``x0`` is a ValueError (the ARX has no latent state)."""
        self._check_fitted()
        check.unused_particle_options(num_particles, seed)
        if x0 is not None:
            raise ValueError("x0: the ARX has no latent state; its online filter starts from the end of the "
                             "training data (or give state=)")
        na, nb_1, dy, du = self.na_, max(self.nb_ - 1, 0), self.spec.dim_y, self.spec.dim_u
        if state is not None:
            check_online_state(state, ARXOnlineFilter.STATE_KEYS, self)
            y_window = np.asarray(state["y_window"], dtype=np.float64)
            u_window = np.asarray(state["u_window"], dtype=np.float64)
            y_window = y_window.reshape(-1, dy) if y_window.size else y_window.reshape(0, dy)
            u_window = u_window.reshape(-1, du) if u_window.size else u_window.reshape(0, du)
            if y_window.shape != (na, dy) or u_window.shape != (nb_1, du) or not (
                    np.all(~np.isinf(y_window)) and np.all(np.isfinite(u_window))):
                raise ValueError(f"state: expected windows y_window ({na}, {dy}) (NaN: a missing output) and finite "
                                 f"u_window ({nb_1}, {du}), got {y_window.shape} and {u_window.shape}")
            return ARXOnlineFilter(self, y_window, u_window, check.non_negative_int(state["step"], "step"))
        y_tail, u_tail, _ = self._forecast_origin(None, None)
        return ARXOnlineFilter(self, self._past(y_tail, dy, na, self.y_mean_),
                               self._past(u_tail, du, nb_1, self.u_mean_))

    @staticmethod
    def _past(values, width, count, fill):
        """The last ``count`` rows of ``values`` (T_p, width), left-padded with ``fill`` rows; None reads as no rows.
        The callers pass checked arrays: a forecast's past (``_sequences``), the training data's end, the online
        filter's windows."""
        values = np.zeros((0, width)) if values is None else values
        values = values[len(values) - min(count, len(values)):]
        return np.concatenate([np.tile(fill, (count - len(values), 1)), values])


def order_errors(data, na, nb, origins=ORIGINS):
    """The per-window errors with which ``ARX.fit`` scores the orders (``na``, ``nb``) on the rolling-origin folds
    of ``data`` (a list of (y, u) in the units the ARX is fitted in; ``origins`` folds): None when no sequence is
    long enough for a fold, inf where the orders cannot be fitted to all of the data or give an unstable model."""
    folds = rolling_origin([y for y, _ in data], [u for _, u in data], origins)
    if not folds:
        return None
    d_y, d_u = data[0][0].shape[1], data[0][1].shape[1]
    _, errors = ARX(na=na, nb=nb, dim_y=d_y, dim_u=d_u, standardize=False)._score(data, folds, na, nb)
    return [np.inf] if errors is None else errors


class ARXOnlineFilter(OnlineFilterBase):
    """The ARX one measurement at a time (``ARX.online_filter``; the surface of ``online.OnlineFilterBase``): it
    keeps the last na outputs and nb - 1 inputs (model units). An update with y_t and u_t predicts y_t from them,
    Theta^T phi_t, with variance sigma^2 (``predicted_mean``, ``predicted_var``), then moves the window on; the
    "filtered" noise-free output is that conditional mean, known exactly given the past (variance 0). A missing
    (NaN) output stays NaN in the window: while it is among the lags, they are the Gaussian of :func:`lag_posterior`
    given the ones seen (the training data's lag statistics), the prediction is made from its mean, its variance
    adds the variance of Theta^T phi_t under that Gaussian, the filtered output is that Gaussian conditioned on the
    observed entries of y_t, and :meth:`predict` (``ARX.run_from`` from the window) draws the missing lags. The
    state: the windows (NaN marking missing outputs; Python's json writes and reads it as NaN) and the step
    count."""

    STATE_KEYS = ("y_window", "u_window", "step")

    def __init__(self, model, y_window, u_window, step=0):
        super().__init__(model)
        self.y_window, self.u_window, self._step = y_window, u_window, step

    @property
    def step(self):
        return self._step

    def _update(self, y_t, u_t):
        model = self.model
        u_t = np.zeros(model.spec.dim_u) if u_t is None else u_t
        y_lags = self.y_window
        dy = model.spec.dim_y
        lag_cov = np.zeros((dy, dy))  # covariance of the noise-free output Theta^T phi_t given the lags seen
        missing = np.isnan(y_lags).any()
        if missing and model.lag_mean_ is None:  # a model file without the lag statistics
            y_lags = np.where(np.isnan(y_lags), model.y_mean_, y_lags)
        elif missing:  # a missing output among the lags: their Gaussian given the rest
            mean, cov = lag_posterior(lag_vector(y_lags, self.u_window), model.lag_mean_, model.lag_cov_)
            rows = lag_rows(model.theta_, model.na_, model.nb_, model.spec.dim_u)  # Theta's rows of the lags
            lag_cov = rows.T @ cov @ rows
            y_lags = mean[:y_lags.size].reshape(len(y_lags), -1)[::-1]  # time order
        inputs = np.concatenate([self.u_window, u_t[None]])  # u_{t-nb+1}..u_t (u_t alone, unused, for nb = 0)
        means, _ = arx_simulate(model.theta_, model.na_, model.nb_, y_lags[::-1][None], inputs[None])
        predicted = means[0, 0]
        # the noise-free output given y_t too: Gaussian conditioning on its observed entries (y_t = output + e_t)
        filtered, filtered_cov = predicted.copy(), lag_cov.copy()
        observed = ~np.isnan(y_t)
        if observed.any() and lag_cov.any():
            S = (lag_cov + model.noise_cov_)[np.ix_(observed, observed)]
            gain = np.linalg.solve(S, lag_cov[observed]).T  # (d_y, observed)
            filtered = predicted + gain @ (y_t[observed] - predicted[observed])
            filtered_cov = lag_cov - gain @ lag_cov[observed]
        self.y_window = np.concatenate([self.y_window, y_t[None]])[1:] if model.na_ else self.y_window
        if len(self.u_window):
            self.u_window = np.concatenate([self.u_window, u_t[None]])[1:]
        self._step += 1
        return filtered, np.diag(filtered_cov).copy(), predicted, np.diag(lag_cov) + model.noise_var_, y_t - predicted

    def _predict(self, u_future, num_samples, seed):
        return self.model.run_from(u_future, self.y_window, self.u_window if len(self.u_window) else None,
                                   num_samples, seed, "online filter")

    def _state(self):
        """The windows of past outputs (na, d_y) and inputs (nb - 1, d_u) (copies, model units) and the step
        count."""
        return {"y_window": self.y_window.copy(), "u_window": self.u_window.copy(), "step": self._step}
