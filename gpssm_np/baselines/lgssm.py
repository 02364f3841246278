r"""LGSSM: the linear Gaussian state-space model, identified by subspace identification or EM.

Model (the package's time convention: x_0 emits nothing; t = 1..T)::

    x_0 ~ N(m_0, P_0),   x_t = F x_{t-1} + G u_t + w_t,  w_t ~ N(0, Q),   y_t = H x_t + v_t,  v_t ~ N(0, R)

State inference is exact: the Kalman filter (Joseph-form update) and the Rauch-Tung-Striebel smoother with the
lag-one covariances Cov(x_t, x_{t-1} | y_{1:T}) of ``gpssm_np.kalman``.

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
  constraint below acts. ``history_`` holds -log p(y_{1:T}) of the training data before each M-step. After EM,
  m_0 and P_0 are set to the mean and covariance of the smoothed states (a stationary-like prior for windows
  anywhere in a sequence).

Stability: an F with spectral radius above ``max_spectral_radius`` (default 0.999) -- e.g. on Ballbeam, an
open-loop unstable process -- has its outlying eigenvalues scaled back onto that circle (F = V diag(lambda) V^{-1}),
after the regression (subspace) or after each M-step, G (and Q) being then re-estimated given that F. Unstable
linear models make free runs diverge (the ARX rejects unstable candidates for the same reason, ``arx.py``); the
projection is a heuristic M-step, so with it EM need not increase the likelihood monotonically.

``q_x0(y, u)`` is the smoothed posterior of the state x_0 before a window's first step given the whole window,
p(x_0 | y_{1:T}, u_{1:T}) (the exact analogue of the paper protocol's recognition network); forecasts propagate the
Gaussian exactly (:meth:`LGSSM.predict_moments`) and also draw ``num_samples`` joint trajectories for the Forecast,
re-centred so that their mean is the exact predictive mean.

References: P. Van Overschee and B. De Moor, "N4SID", Automatica 30(1), 1994; R. H. Shumway and D. S. Stoffer,
J. Time Series Anal. 3(4), 1982; Z. Ghahramani and G. E. Hinton, "Parameter estimation for linear dynamical
systems", Tech. Rep. CRG-TR-96-2, 1996.
"""
from dataclasses import replace

import numpy as np

from .. import _validation as check
from .._warn import warn
from ..kalman import (as_covariance, forecast_trajectories, kalman_filter, output_variances, predicted_moments,
                      rts_smoother, sample_smoothed)
from ..filtering import kalman_filter_result
from ..online import KalmanOnlineFilter
from ..ops.linalg import symmetrise
from ..units import Scaling
from ._base import COV_FLOOR, LinearBaseline
from .lgssm_order import SELECTION_ITERS, dim_x_candidates, select_dim_x


class UnscoredOrderWarning(UserWarning):
    """``fit`` with ``dim_x="auto"`` on data too short for the rolling-origin folds to score any candidate d_x: the
    fallback d_x was chosen without evidence. A class of its own, so that a caller that reports the fallback in its
    own words (the GP models' floor, ``models/floor.py``) can silence it by category, not by its message."""


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
    return W, symmetrise(resid.T @ resid / len(resid))


def normal_solve(gram, cross):
    """W with W ``gram`` = ``cross``: the M-step's normal equations (``gram`` = E sum z z^T, symmetric positive
    semi-definite; ``cross`` = E sum x z^T). Where ``gram`` is singular, as an input without spread makes it (after
    standardisation its column is zero, and so is its row of ``gram`` and column of ``cross``), the minimum-norm
    solution: that input's coefficients are zero, as ARX's least squares leave them."""
    try:
        return np.linalg.solve(gram, cross.T).T
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(gram, cross.T, rcond=None)[0].T


class LGSSM(LinearBaseline):
    """Linear Gaussian state-space model, identified by subspace identification or EM (module docstring).

    Parameters
    ----------
    dim_x, dim_y, dim_u : int
        State, output and input dimensions (dim_u may be 0, for no inputs); dim_u = 1 by default in every model
        of the package (:class:`gpssm_np.ODGPSSM` says why). ``dim_x="auto"``: ``fit`` chooses d_x from d_y ..
        max(10, 3 d_y) by rolling-origin cross-validation of causal forecasts on its training data
        (``lgssm_order.py``; :meth:`select_dim_x`), then fits that model.
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
    standardize : bool
        ``fit`` z-scores outputs and inputs with the statistics of its data (mean and population std of each
        column) and the model then takes and returns original units (``gpssm_np.units``; the
        statistics are in ``scaling_`` and the model file); False: the model works in the units it is given.
    calibrate : bool
        ``fit`` widens the forecasts' intervals per output where forecasts of its rolling-origin folds needed it
        (``baselines/_base.py``, "Calibration"; each fold's model fitted as this one is, EM with ``num_iters``);
        False keeps the model's own.

    Attributes (after fit)
    ----------------------
    params_ : dict
        F (d_x, d_x), G (d_x, d_u), H (d_y, d_x), Q (d_x, d_x), R (d_y, d_y), m0 (d_x,), P0 (d_x, d_x).
    history_ : list of float
        EM: -log p(y) of the training data at each iteration (before its M-step); empty for "subspace".
    fold_errors_ : list of float or None
        With ``dim_x="auto"``: the chosen d_x's forecast RMSE in every window of the rolling-origin folds.
    dim_x_scores_ : dict
        With ``dim_x="auto"``: candidate d_x -> cross-validated forecast RMSE (model units); empty otherwise.
    interval_scale_ : ndarray (d_y,) or None
        The factors on the forecasts' predictive std (``calibrate``; None without folds).
    """

    def __init__(self, dim_x=4, dim_y=1, dim_u=1, method="em", init="subspace", num_iters=50, block_rows=None,
                 max_spectral_radius=0.999, seed=0, standardize=True, calibrate=True, **unknown):
        check.keywords(unknown, LGSSM.__init__)
        # "auto" or a list: the candidates fit chooses among (None: lgssm_order.dim_x_candidates)
        self.dim_x_auto = isinstance(dim_x, (list, tuple)) or dim_x == "auto"
        self.dim_x_candidates = None
        if isinstance(dim_x, (list, tuple)):
            if not dim_x or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1
                                    for d in dim_x):
                raise ValueError(f"dim_x: expected a positive integer, 'auto' or a non-empty list of positive "
                                 f"integers, got {dim_x!r}")
            self.dim_x_candidates = sorted({int(d) for d in dim_x})
        super().__init__(dim_y if self.dim_x_auto else dim_x, dim_y, dim_u, seed, standardize, calibrate)
        self.dim_x_scores_, self.fold_errors_ = {}, None
        if method not in ("em", "subspace"):
            raise ValueError(f"method: expected 'em' or 'subspace', got {method!r}")
        if init not in ("subspace", "random"):
            raise ValueError(f"init: expected 'subspace' or 'random', got {init!r}")
        self.method, self.init = method, init
        self.num_iters = check.positive_int(num_iters, "num_iters")
        self.block_rows = None if block_rows is None else check.positive_int(block_rows, "block_rows")
        if not self.dim_x_auto:
            self._check_block_rows()
        if max_spectral_radius is not None:
            max_spectral_radius = check.positive_float(max_spectral_radius, "max_spectral_radius")
        self.max_spectral_radius = max_spectral_radius

    def _fitted_choices(self):
        """Once fitted, the state dimension (and the candidates it was chosen from, with ``dim_x="auto"`` or a list;
        a fallback where none could be scored): the repr's bracket; consecutive candidates as "1-10", others as a
        list."""
        if not self.fitted:
            return ""
        scores = sorted(self.dim_x_scores_)
        if not scores:
            return f"d_x={self.spec.dim_x}"
        tried = f"{scores[0]}-{scores[-1]}" if scores == list(range(scores[0], scores[-1] + 1)) else f"{scores}"
        if len(scores) > 1 and not any(np.isfinite(v) for v in self.dim_x_scores_.values()):
            return f"d_x={self.spec.dim_x}, a fallback: none of {tried} could be scored"
        return f"d_x={self.spec.dim_x} chosen from {tried}"

    def _check_block_rows(self):
        if self._block_rows() * self.spec.dim_y < self.spec.dim_x:
            raise ValueError(f"block_rows: expected block_rows * dim_y >= dim_x = {self.spec.dim_x}, got "
                             f"{self.block_rows}")

    def _block_rows(self):
        """i of the subspace step: ``block_rows``, or max(10, d_x + 1)."""
        return max(10, self.spec.dim_x + 1) if self.block_rows is None else self.block_rows

    def get_config(self):
        """Constructor arguments as plain JSON types: ``LGSSM(**model.get_config())`` rebuilds the unfitted model
        (after a fit with ``dim_x="auto"``: the model of the chosen dim_x, as a model file needs)."""
        s = self.spec
        dim_x = (self.dim_x_candidates or "auto") if self.dim_x_auto and not self.fitted else s.dim_x
        return {"dim_x": dim_x, "dim_y": s.dim_y,
                "dim_u": s.dim_u, "method": self.method, "init": self.init, "num_iters": self.num_iters,
                "block_rows": self.block_rows,
                "max_spectral_radius": self.max_spectral_radius, "seed": self.seed, "standardize": self.standardize,
                "calibrate": self.calibrate}

    FIT_RECORD = ("dim_x_scores_", "fold_errors_")  # how d_x was chosen: a model file keeps it

    def get_learned_params(self):
        """Copies of the fitted parameters (``params_``), empty before fit."""
        return {k: v.copy() for k, v in self.params_.items()} if self.fitted else {}

    def set_learned_params(self, params):
        """Set F, G, H, Q, R, m0, P0 (shapes as ``params_``); the model then counts as fitted. An empty dict leaves it
        unfitted."""
        s = self.spec
        shapes = {"F": (s.dim_x, s.dim_x), "G": (s.dim_x, s.dim_u), "H": (s.dim_y, s.dim_x), "Q": (s.dim_x, s.dim_x),
                  "R": (s.dim_y, s.dim_y), "m0": (s.dim_x,), "P0": (s.dim_x, s.dim_x)}
        arrays = self._learned_arrays(params, tuple(shapes))
        if arrays is None:
            return self
        new = {}
        for name, shape in shapes.items():
            value = arrays[name]
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ValueError(f"params[{name!r}]: expected a finite array of shape {shape}, got {value.shape}")
            if name in ("Q", "R", "P0"):
                value = symmetrise(value)
                if np.linalg.eigvalsh(value)[0] < (0.0 if name != "R" else 1e-12):
                    raise ValueError(f"params[{name!r}]: expected a symmetric positive "
                                     f"{'definite' if name == 'R' else 'semi-definite'} matrix")
            new[name] = value
        self.params_ = new
        self.fitted = True
        return self

    # -- fitting ---------------------------------------------------------------------------------------------
    def min_steps(self):
        """The fewest steps per sequence the subspace identification (``method="subspace"`` or
        ``init="subspace"``) works with: 2 i - 1 + max(2, d_x) for i block rows (its state sequence has a row per
        step after the first 2 i - 1, and needs at least d_x of them, and 2); with ``dim_x="auto"`` that of the
        largest candidate d_x."""
        dim_x = max(dim_x_candidates(self.spec.dim_y)) if self.dim_x_auto else self.spec.dim_x
        i = max(10, dim_x + 1) if self.block_rows is None else self.block_rows
        return 2 * i - 1 + max(2, dim_x)

    def _check_length(self, data):
        """ValueError naming the length of a sequence too short for :meth:`min_steps`."""
        short = min(len(y) for y, _ in data)
        needed = self.min_steps()
        if short < needed:
            what = "a sequence of" if len(data) > 1 else "the series has"
            dim_x = (f"auto, up to {max(dim_x_candidates(self.spec.dim_y))}" if self.dim_x_auto
                     else self.spec.dim_x)
            raise ValueError(f"y: {what} {short} steps; the LGSSM's subspace identification (d_x = {dim_x}) needs "
                             f"at least {needed} steps per sequence; give a longer series")

    def _subspace_init(self, data):
        i = self._block_rows()
        self._check_length(data)
        states = subspace_states(data, self.spec.dim_x, i)
        prev, nxt, inp, emit, out = [], [], [], [], []
        for (y, u), X in zip(data, states):  # row k of X is x_{i+k-1}
            prev.append(X[:-1])
            nxt.append(X[1:])
            inp.append(u[i:i + len(X) - 1])
            emit.append(X)
            out.append(y[i - 1:i - 1 + len(X)])
        prev, nxt, inp, emit, out = (np.concatenate(a) for a in (prev, nxt, inp, emit, out))
        FG, _ = _regress(nxt, np.concatenate([prev, inp], axis=1))
        F = self.stabilise(FG[:, :self.spec.dim_x])
        # G and Q given F: refitted to a projected F; for the joint fit's F the same regression repeats its G and its
        # residuals (the joint fit's normal equations), so it runs either way
        G, Q = _regress(nxt - prev @ F.T, inp)
        FG = np.concatenate([F, G], axis=1)
        H, R = _regress(out, emit)
        dx = self.spec.dim_x
        floor = COV_FLOOR * np.eye(dx)
        return {"F": FG[:, :dx], "G": FG[:, dx:], "H": H, "Q": Q + floor, "R": R + COV_FLOOR * np.eye(len(R)),
                "m0": emit.mean(axis=0), "P0": symmetrise(np.cov(emit.T).reshape(dx, dx)) + floor}

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
            result = self.kalman(y, u)
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
        F = self.stabilise(normal_solve(Phi, Psi)[:, :dx])
        # the best G given F: for the joint solution's F its own G (the normal equations), for a projected F refitted
        # (without inputs an empty (d_x, 0) solve)
        G = normal_solve(Phi[dx:, dx:], Psi[:, dx:] - F @ Phi[:dx, dx:])
        FG = np.concatenate([F, G], axis=1)
        H = np.linalg.solve(Sxx, Syx.T).T
        Q = Sxx - FG @ Psi.T - Psi @ FG.T + FG @ Phi @ FG.T  # E sum (x_t - [F G] z_t)(x_t - [F G] z_t)^T
        self.params_ = dict(p, F=FG[:, :dx], G=FG[:, dx:], H=H, Q=symmetrise(Q) / n + COV_FLOOR * np.eye(dx),
                            R=symmetrise(Syy - H @ Syx.T) / n + COV_FLOOR * np.eye(len(H)))
        return log_lik

    def stabilise(self, F):
        """F itself when its spectral radius is at most ``max_spectral_radius`` (or that is None); otherwise F with
        every eigenvalue of larger modulus scaled back onto that circle, V diag(lambda') V^{-1}."""
        if self.max_spectral_radius is None:
            return F
        values, vectors = np.linalg.eig(F)
        if np.max(np.abs(values)) <= self.max_spectral_radius:
            return F
        scale = np.minimum(1.0, self.max_spectral_radius / np.abs(values))
        return np.real(vectors @ np.diag(values * scale) @ np.linalg.inv(vectors))

    def set_stationary_prior(self, data):
        """Set m0, P0 to the mean and covariance of the smoothed states of ``data`` (a list of (y, u) in model
        units), starting from the current m0, P0; returns ``self``."""
        p = self.params_
        first, second, n = 0.0, 0.0, 0
        for y, u in data:
            means, covs = self._smooth(y, u)
            first = first + means[1:].sum(axis=0)
            second = second + (covs[1:] + means[1:, :, None] * means[1:, None, :]).sum(axis=0)
            n += len(y)
        m0 = first / n
        self.params_ = dict(p, m0=m0, P0=symmetrise(second / n - np.outer(m0, m0)) + COV_FLOOR * np.eye(len(m0)))
        return self

    def fit(self, y, u=None, data_name=None):
        """Identify the model from ``y`` (T, d_y) with ``u`` (T, d_u), or lists of such sequences. ``data_name``:
        the name of the training data, kept in ``data_name_`` and the model file (``evaluate`` warns on a data set
        of another name). The GP models' training options (``epochs``, ``plan``, ...) are refused by name: they
        would change nothing here. Returns ``self``."""
        self._record_data_name(data_name)
        data = self._training_data(y, u)
        if self.method == "subspace" or self.init == "subspace":
            self._check_length(data)  # before the d_x selection, whose folds are shorter
        if self.dim_x_auto:
            candidates = self.dim_x_candidates
            if candidates is not None and len(candidates) == 1:  # a list of one: nothing to choose
                chosen, self.dim_x_scores_, self.fold_errors_ = candidates[0], {candidates[0]: np.nan}, None
            else:
                chosen, self.dim_x_scores_, self.fold_errors_ = self._select_dim_x(data, candidates)
                if self.fold_errors_ is None:
                    warn(f"LGSSM: no state dimension could be scored: {sum(len(y) for y, _ in data)} training "
                         f"steps are too few for the rolling-origin folds; d_x = {chosen} is a fallback "
                         "chosen without evidence", UnscoredOrderWarning)
            self.spec = replace(self.spec, dim_x=chosen)
            self._check_block_rows()
        use_subspace = self.method == "subspace" or self.init == "subspace"
        self.params_ = self._subspace_init(data) if use_subspace else self._random_init(data)
        self.fitted = True
        self.history_ = []
        if self.method == "em":
            for _ in range(self.num_iters):
                self.history_.append(-self._em_step(data))
            self.set_stationary_prior(data)
        self._remember_tail(data)
        # as a loaded model holds them (C-order copies): BLAS may round a product differently for another layout
        return self.set_learned_params(self.params_)._calibrated(data)._attach_scaling()

    def select_dim_x(self, y, u=None, candidates=None):
        """(d_x, {candidate d_x: score}): the state dimension ``fit`` chooses with ``dim_x="auto"`` on ``y`` (T, d_y),
        ``u`` (T, d_u) or lists of them, by rolling-origin cross-validation of causal forecasts (``lgssm_order.py``),
        among ``candidates`` (default: ``lgssm_order.dim_x_candidates(dim_y)``), each scored, also a single one (which
        ``fit`` takes without scoring); nothing is fitted to the model itself (and the data are z-scored first when
        ``standardize``)."""
        data = self._sequences(y, u)
        return self._select_dim_x(Scaling.of(*zip(*data)).to_model(data) if self.standardize else data,
                                  candidates)[:2]

    def _select_dim_x(self, data, candidates=None):
        candidates = dim_x_candidates(self.spec.dim_y) if candidates is None else candidates
        fallback = min(max(4, self.spec.dim_y), max(candidates))
        return select_dim_x(data, self.fit_for_selection, candidates,
                            fallback if fallback in candidates else min(candidates))

    def fit_for_selection(self, dim_x, ys, us):
        """This model's configuration with state dimension ``dim_x`` and the selection's EM budget, fitted to ys, us
        (model units; ``lgssm_order.py``)."""
        return self._in_model_units(dim_x, num_iters=min(self.num_iters, SELECTION_ITERS)).fit(ys, us)

    def _fold_model(self, ys, us):
        return self._in_model_units(self.spec.dim_x).fit(ys, us)

    def _in_model_units(self, dim_x, **changes):
        """An unfitted LGSSM of this one's configuration with state dimension ``dim_x`` and ``changes``, for data
        in model units (``standardize=False``) and uncalibrated: the models of the folds."""
        return LGSSM(**dict(self.get_config(), dim_x=dim_x, standardize=False, calibrate=False, **changes))

    # -- state inference -------------------------------------------------------------------------------------
    def _window(self, y, u):
        """One sequence y (T, d_y) (NaN entries missing), u (T, d_u) in original units, checked, in model units."""
        self._check_fitted()
        return check.one_sequence(self._y_to_model(y), self._u_to_model(u), self.spec.dim_y, self.spec.dim_u,
                                  allow_missing=True)

    def filter(self, y, u=None, num_particles=1000, seed=0):
        """Kalman filter over y (T, d_y) (NaN entries missing), u (T, d_u) (original units) from the prior N(m0, P0),
        with the surface of the GP models' ``filter``: a ``filtering.FilterResult`` with proposal "kalman"
        (``filtering.kalman_filter_result``): the filtered state means and covariances, the filtered and predicted
        output moments and the innovations in original units, the exact log-likelihood of y in original units (and
        its steps), and ``num_particles`` draws (from ``seed``) of the initial and the last filtered state."""
        y_model, u = self._window(y, u)
        p = self.params_
        result = kalman_filter_result(p, y_model, u, p["m0"], p["P0"], num_particles,
                                      np.random.default_rng(check.seed(seed)))
        return result if self.scaling_ is None else result.in_original_units(self.scaling_)

    def log_likelihood(self, y, u=None):
        """log p(y_{1:T} | u_{1:T}) (exact; the density of y in original units): :meth:`filter`'s, from the Kalman
        filter's kernel alone (no output moments, no draws), equal to it up to the rounding of its sum over steps."""
        return self.kalman(*self._window(y, u)).log_likelihood + self._log_jacobian(y)

    def smooth(self, y, u=None, num_trajectories=None, seed=0):
        """Given the whole sequence y (T, d_y), u (T, d_u) (original units): the smoothed means (T + 1, d_x) and
        covariances (T + 1, d_x, d_x) of x_0..x_T; with ``num_trajectories`` = S, as the GP models' ``smooth`` answers,
        S joint draws (S, T, d_x) of x_1..x_T from the exact smoothing distribution (``kalman.sample_smoothed``:
        forward filtering, backward sampling, with the generator of ``seed + 1``, as the GP models' backward
        simulation)."""
        y, u = self._window(y, u)
        if num_trajectories is None:
            return self._smooth(y, u)
        num_trajectories = check.positive_int(num_trajectories, "num_trajectories")
        return sample_smoothed(self.params_, self.kalman(y, u), num_trajectories,
                               np.random.default_rng(check.seed(seed) + 1))

    def _smooth(self, y, u):
        p = self.params_
        means, covs, _ = rts_smoother(p, self.kalman(y, u), p["m0"], p["P0"])
        return means, covs

    def kalman(self, y, u):
        """The Kalman filter (``kalman.kalman_filter``) over one sequence ``y`` (T, d_y), ``u`` (T, d_u) in model
        units, NaN outputs missing, from the model's prior N(m0, P0): a ``KalmanResult`` (the states x_1..x_T given
        the outputs up to each, the log-likelihood of y in model units). :meth:`filter` is the same in original
        units with the GP models' surface."""
        p = self.params_
        return kalman_filter(p, y, u, p["m0"], p["P0"])

    def _q_x0(self, y=None, u=None, full_cov=False):
        """p(x_0 | y_{1:T}, u_{1:T}) of the state before the window y (T, d_y), u (T, d_u): mean (d_x,) and variances
        (d_x,), or the covariance (d_x, d_x) with ``full_cov``. Without y: the prior N(m0, P0)."""
        self._check_fitted()
        if y is None:
            mean, cov = self.params_["m0"], self.params_["P0"]
        else:
            y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u)
            means, covs = self._smooth(y, u)
            mean, cov = means[0], covs[0]
        return mean.copy(), (cov.copy() if full_cov else np.diag(cov).copy())

    def online_filter(self, num_particles=None, seed=0, state=None, x0=None):
        """The Kalman filter one measurement at a time (``online.KalmanOnlineFilter``, the surface of the GP models'
        ``online_filter``): from the prior N(m0, P0), from ``x0 = (mean, var or covariance)``, or from ``state`` (a
        dict of its ``state()``). The updates over y_1..y_T reproduce :meth:`filter` (bit for bit with at most one
        input; to rounding with more, see ``KalmanOnlineFilter``). ``num_particles`` and ``seed`` are accepted for
        the common surface and not used (the filter is exact)."""
        self._check_fitted()
        check.unused_particle_options(num_particles, seed)
        p = self.params_
        return KalmanOnlineFilter.start(self, p, (p["m0"], p["P0"]), x0, state)

    # -- forecasts -------------------------------------------------------------------------------------------
    def predict_moments(self, u_future, x0_mean, x0_cov):
        """Exact predictive moments over the steps of ``u_future`` (T, d_u) from x_0 ~ N(x0_mean, x0_cov): state
        means (T, d_x) and covariances (T, d_x, d_x), output means (T, d_y) and covariances (T, d_y, d_y) (with R),
        inputs and outputs in original units."""
        means, covs, y_means, y_covs = self._moments(self._u_to_model(self._future_inputs(u_future, None)), x0_mean,
                                                     x0_cov)
        if self.scaling_ is not None:
            std = self.scaling_.y_std
            y_means, y_covs = self.scaling_.y_to_original(y_means), y_covs * np.outer(std, std)
        return means, covs, y_means, y_covs

    def _moments(self, u_future, x0_mean, x0_cov):
        """:meth:`predict_moments` in model units."""
        p = self.params_
        means, covs = predicted_moments(p, u_future, x0_mean, x0_cov)
        H = p["H"]
        return means, covs, means @ H.T, np.einsum("ij,tjk,lk->til", H, covs, H) + p["R"]

    def _forecast(self, u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window):
        """Forecast with known future inputs ``u_future`` (T, d_u) (or ``steps`` when d_u = 0).

        The initial state is, in order: ``x0 = (mean, var)`` (var (d_x,) variances or (d_x, d_x) covariance); the
        Kalman filter over ``y_past``, ``u_past`` (from the prior N(m0, P0)); the same filter over the end of the
        training data (``data_tail_``, so that the forecast continues from where the data ended, as the GP models'
        do); the prior (a model without that tail). ``Forecast.origin`` says which. ``num_samples`` joint
        trajectories are drawn and re-centred on the exact predictive mean (module docstring); ``Forecast.samples``
        are H x_t, ``obs_var`` the diagonal of R. ``num_particles`` and ``init_window`` are ignored.
        """
        self._check_fitted()
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        p, dx = self.params_, self.spec.dim_x
        y_past, u_past, origin = self._forecast_origin(y_past, u_past, x0)
        if x0 is not None:
            mean, cov = as_covariance(*check.x0(x0, dx))
        elif y_past is not None:
            result = self.kalman(y_past, u_past)
            mean, cov = result.means[-1], result.covs[-1]
        else:
            mean, cov = p["m0"], p["P0"]
        states, covs = forecast_trajectories(p, u_future, mean, cov, num_samples, rng)
        return self._forecast_result(states @ p["H"].T, states, np.diag(p["R"]).copy(), origin,
                                     output_variances(p["H"], covs))
