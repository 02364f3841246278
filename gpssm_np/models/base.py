"""The sparse-GP state-space model facade shared by ODGPSSM and PRSSM.

Model (DESIGN.md s1; time convention of the authors' code): x_0 ~ q(x0) emits nothing; for t = 1..T,
x_t = mu(x_{t-1}) + A h([x_{t-1}, u_t]) + v_t with v_t ~ N(0, diag q), and y_t = C x_t + e_t with
C = [I_{d_y}, 0] and e_t ~ N(0, diag r). mu is 0 (authors' code) or the identity (residual=True, PR-SSM).
"""
import logging
import time

import numpy as np
from autograd import value_and_grad

from .. import _validation as check
from ..datasets import windows
from ..filtering import backward_simulation, filter_gpssm, gpssm_transition
from ..forecast import free_run, make_forecast
from ..inference import check_backend, draw_noise, elbo, kl_weights, transition_regression_elbo
from ..optim import Adam
from ..params import constrain, init_params
from ..recognition import NETWORKS

logger = logging.getLogger(__name__)


class GPSSM:
    """Sparse-GP state-space model trained by the reparameterised ELBO of Lin et al. (2023), Eq. ELBO_final.

    Parameters
    ----------
    spec : GPSSMSpec
        Dimensions and structural options.
    seed : int
        Seeds the parameter initialisation.
    backend : {"fused", "ops", "reference"}
        How the ELBO and its gradient are computed (``inference`` module docstring); all give the same numbers.
    kl_weighting : {"unbiased", "paper"}
        Weighting of the KL terms (``inference`` module docstring).
    recognition : {None, "lstm", "mlp"}
        q(x0): a free Gaussian (None; one for all sequences), the authors' LSTM over the reversed window, or a
        PR-SSM-style MLP over the window's first steps (``recognition`` module). ``spec.free_x0`` must be
        ``recognition is None``.
    recognition_options : dict, optional
        Keyword arguments of the recognition network (hidden, num_layers / num_steps).
    **init
        Initial values forwarded to :func:`gpssm_np.params.init_params` (lengthscale, variance, process_noise,
        obs_noise, x0_var, inducing_range).

    Attributes
    ----------
    params : dict of ndarray
        Unconstrained parameters (``gpssm_np.params`` lists names, shapes and transforms).
    history_ : list of float
        Training loss per Adam step (set by :meth:`fit`).
    """

    def __init__(self, spec, seed=0, backend="fused", kl_weighting="unbiased", recognition=None,
                 recognition_options=None, **init):
        self.spec = spec
        self.backend = check_backend(backend)
        kl_weights(kl_weighting, 1, 1)  # validates the name
        self.kl_weighting = kl_weighting
        self.seed = check.seed(seed)
        self.recognition = make_recognition(recognition, spec, recognition_options)
        rng = np.random.default_rng(seed)
        self.params = init_params(spec, rng, **init)
        if self.recognition is not None:
            self.params.update(self.recognition.init_params(rng))
        self.history_ = []
        self.output_scaling = None

    def get_config(self):
        """Constructor arguments as plain JSON types: ``type(model)(**model.get_config())`` rebuilds the model
        (with freshly initialised parameters)."""
        s = self.spec
        config = {"dim_x": s.dim_x, "dim_y": s.dim_y, "dim_u": s.dim_u, "num_inducing": s.num_inducing,
                  "kernel": s.kernel, "shared_inducing": s.shared_inducing, "whiten": s.whiten,
                  "mean_function": "identity" if s.residual else "zero", "seed": self.seed, "backend": self.backend,
                  "kl_weighting": self.kl_weighting, "recognition": None, "recognition_options": None}
        if not s.independent:
            config["num_latent"] = s.num_latent
        if self.recognition is not None:
            rec = self.recognition.get_config()
            config["recognition"] = rec["kind"]
            config["recognition_options"] = {k: v for k, v in rec.items() if k not in ("kind", "dim_x", "dim_y", "dim_u")}
        return config

    # -- parameters ------------------------------------------------------------------------------------------
    def get_params(self):
        """Copies of the unconstrained parameters, name -> ndarray."""
        return {name: value.copy() for name, value in self.params.items()}

    def param_shapes(self):
        """Name -> shape of every unconstrained parameter (transition, emission, q(x0) or its network)."""
        shapes = self.spec.param_shapes()
        if self.recognition is not None:
            shapes.update(self.recognition.param_shapes())
        return shapes

    def set_params(self, params):
        """Replace the parameters with ``params`` (same names and shapes as :meth:`get_params`)."""
        shapes = self.param_shapes()
        if not isinstance(params, dict) or set(params) != set(shapes):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"params: expected a dict with keys {sorted(shapes)}, got {got}")
        new = {}
        for name, shape in shapes.items():
            value = np.array(params[name], dtype=np.float64)
            if value.shape != shape:
                raise ValueError(f"params[{name!r}]: expected shape {shape}, got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"params[{name!r}]: contains NaN or inf")
            new[name] = value
        self.params = new

    def constrained_params(self):
        """The parameters as the model uses them (positive values, Z as (Q, M, D), A = I for PRSSM)."""
        return {name: np.asarray(value) for name, value in constrain(self.params, self.spec).items()}

    def set_output_scaling(self, mean, std):
        """Record the output standardisation y_standardised = (y - mean) / std so that forecasts can be shown in
        original units (``Forecast.in_original_units``). ``mean``, ``std``: (d_y,)."""
        mean = check.finite_array(np.atleast_1d(mean), "mean", (1,))
        std = check.finite_array(np.atleast_1d(std), "std", (1,))
        if mean.shape != (self.spec.dim_y,) or std.shape != (self.spec.dim_y,) or np.any(std <= 0):
            raise ValueError(f"mean, std: expected two arrays of shape ({self.spec.dim_y},) with std > 0")
        self.output_scaling = (mean, std)
        return self

    def _extra_state(self):
        if self.output_scaling is None:
            return {}
        return {"y_mean": self.output_scaling[0], "y_std": self.output_scaling[1]}

    def _set_extra_state(self, state):
        if "y_mean" in state:
            self.set_output_scaling(state["y_mean"], state["y_std"])

    # -- ELBO ------------------------------------------------------------------------------------------------
    def _objective(self, y, u, num_samples, seed, backend, kl_weighting, num_windows):
        spec = self.spec
        y, u = check.sequences(y, u, spec.dim_y, spec.dim_u)
        num_samples = check.positive_int(num_samples, "num_samples")
        if num_windows is not None:
            num_windows = check.positive_int(num_windows, "num_windows")
        noise = draw_noise(np.random.default_rng(seed), y.shape[0], num_samples, y.shape[1], spec.dim_x,
                           spec.num_latent)
        backend = check_backend(backend or self.backend)
        kl_weighting = kl_weighting or self.kl_weighting

        def objective(params):
            return elbo(params, spec, y, u, noise, backend, kl_weighting, num_windows, self.recognition)

        return objective

    def elbo(self, y, u=None, num_samples=50, seed=0, backend=None, kl_weighting=None, num_windows=None):
        """The ELBO of sequences ``y`` (T, d_y) or (B, T, d_y) with inputs ``u`` of the same leading shape.

        The same ``seed`` draws the same noise, so the value is a deterministic function of the parameters.
        ``backend`` and ``kl_weighting`` default to the model's; ``num_windows`` is the data-set size for the
        unbiased weighting (default: the sequences given are the whole data).
        """
        return float(self._objective(y, u, num_samples, seed, backend, kl_weighting, num_windows)(self.params))

    def elbo_and_grad(self, y, u=None, num_samples=50, seed=0, backend=None, kl_weighting=None, num_windows=None):
        """(ELBO, gradient) with the gradient a dict keyed like :meth:`get_params` (w.r.t. unconstrained values)."""
        objective = self._objective(y, u, num_samples, seed, backend, kl_weighting, num_windows)
        value, grad = value_and_grad(objective)(self.params)
        return float(value), {name: np.asarray(g, dtype=np.float64) for name, g in grad.items()}

    # -- latent states and forecasts ------------------------------------------------------------------------
    def q_x0(self, y=None, u=None):
        """Mean and variance (each (d_x,)) of q(x0): the free Gaussian, or the recognition network applied to the
        window y (T, d_y) with inputs u (T, d_u)."""
        if self.recognition is None:
            p = constrain(self.params, self.spec)
            return np.asarray(p["x0_mean"]), np.asarray(p["x0_var"])
        if y is None:
            raise ValueError("y: the model's q(x0) comes from a recognition network, which needs the window y")
        y, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u)
        mean, var = self.recognition.q_x0(self.params, y[:1], u[:1])
        return np.asarray(mean)[0], np.asarray(var)[0]

    def filter(self, y, u=None, num_particles=1000, seed=0, init_window=50, **kwargs):
        """Particle filter over y (T, d_y) with inputs u (T, d_u): ``filtering.FilterResult`` (filtered means and
        covariances, log marginal likelihood estimate, final particles). The filter starts from q(x0) (for a
        recognition network: applied to the first ``init_window`` steps); ``kwargs`` go to
        :func:`gpssm_np.filtering.particle_filter` (proposal, ess_threshold, store_particles)."""
        y, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u)
        y, u = y[0], u[0]
        init_window = check.positive_int(init_window, "init_window")
        mean, var = self.q_x0(y[:init_window], u[:init_window])
        result, _ = filter_gpssm(self, y, u if self.spec.dim_u else None, check.positive_int(num_particles,
                                 "num_particles"), x0_mean=mean, x0_cov=np.diag(var),
                                 rng=np.random.default_rng(seed), **kwargs)
        return result

    def smooth(self, y, u=None, num_particles=1000, num_trajectories=100, seed=0, init_window=50):
        """Smoothed state trajectories by backward simulation (FFBSi): array (num_trajectories, T, d_x)."""
        result = self.filter(y, u, num_particles, seed, init_window, store_particles=True)
        _, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u)
        return backward_simulation(gpssm_transition(self.spec, self.params), result, u[0] if self.spec.dim_u else None,
                                   check.positive_int(num_trajectories, "num_trajectories"),
                                   np.random.default_rng(seed + 1))

    def forecast(self, u_future=None, y_past=None, u_past=None, num_samples=50, seed=0, steps=None, x0=None,
                 num_particles=1000, init_window=50):
        """Free-running forecast (``forecast`` module) with known future inputs ``u_future`` (T, d_u).

        The initial state comes from, in order: ``x0 = (mean, var)`` if given; a particle filter over ``y_past``
        (with ``u_past``) if given, which uses no data after the forecast origin (``num_particles`` particles,
        ``num_samples`` of them drawn by weight); else q(x0) (free Gaussian), or p(x0) = N(0, I) for a model whose
        q(x0) is a recognition network. For an autonomous model (d_u = 0) give ``steps`` instead of u_future.
        Returns a :class:`gpssm_np.forecast.Forecast`.
        """
        spec = self.spec
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        if spec.dim_u > 0:
            if u_future is None:
                raise ValueError(f"u_future: the model has dim_u = {spec.dim_u} inputs, got None")
            u_future = check.finite_array(u_future, "u_future", (2,))
            if u_future.shape[1] != spec.dim_u:
                raise ValueError(f"u_future: expected shape (T, {spec.dim_u}), got {u_future.shape}")
        else:
            u_future = np.zeros((check.positive_int(steps, "steps"), 0))
        if x0 is not None:
            mean, var = (np.asarray(a, dtype=np.float64) for a in x0)
            x0_particles = mean + np.sqrt(var) * rng.standard_normal((num_samples, spec.dim_x))
        elif y_past is not None:
            result = self.filter(y_past, u_past, num_particles, seed, init_window)
            weights = np.exp(result.log_weights - np.max(result.log_weights))
            x0_particles = result.particles[rng.choice(len(weights), num_samples, p=weights / weights.sum())]
        else:
            mean, var = self.q_x0() if self.recognition is None else (np.zeros(spec.dim_x), np.ones(spec.dim_x))
            x0_particles = mean + np.sqrt(var) * rng.standard_normal((num_samples, spec.dim_x))
        states = free_run(spec, self.params, x0_particles, u_future, rng)
        scaling = self.output_scaling or (None, None)
        return make_forecast(spec, self.params, states, *scaling)

    # -- training --------------------------------------------------------------------------------------------
    def fit(self, y, u=None, epochs=70, seq_len=50, stride=1, batch_size=16, lr=0.01, num_samples=50, seed=None,
            clip_norm=None, fixed=(), progress=False):
        """Maximise the ELBO with Adam over shuffled minibatches of windows (the authors' defaults).

        ``y`` (T, d_y) or a list of such sequences; ``u`` likewise (or None when d_u = 0). Windows of ``seq_len``
        steps at ``stride`` are cut from each sequence (plus a tail window, as the authors do). The loss per step
        is -ELBO, divided by the number of windows under the unbiased weighting (so it is per window). Returns
        ``self``; the loss of each step is appended to ``history_``. Parameters named in ``fixed`` keep their
        values (e.g. ``fixed=("x0_mean", "x0_var")`` when the initial state is known).
        """
        spec = self.spec
        epochs = check.positive_int(epochs, "epochs")
        batch_size = check.positive_int(batch_size, "batch_size")
        num_samples = check.positive_int(num_samples, "num_samples")
        lr = check.positive_float(lr, "lr")
        ys = y if isinstance(y, (list, tuple)) else [y]
        us = u if isinstance(u, (list, tuple)) else [u] * len(ys)
        if len(us) != len(ys):
            raise ValueError(f"u: expected {len(ys)} input sequences to match y, got {len(us)}")
        checked = [check.sequences(yi, ui, spec.dim_y, spec.dim_u) for yi, ui in zip(ys, us)]
        Y, U = windows([c[0][0] for c in checked], [c[1][0] for c in checked], seq_len, stride)
        num_windows, T = Y.shape[:2]
        rng = np.random.default_rng(self.seed if seed is None else seed)
        frozen = self._check_fixed(fixed)
        optimizer = Adam(lr=lr, clip_norm=clip_norm)
        scale = 1.0 / num_windows if self.kl_weighting == "unbiased" else 1.0
        started = time.perf_counter()
        for epoch in range(epochs):
            order = rng.permutation(num_windows)
            for start in range(0, num_windows, batch_size):
                idx = order[start:start + batch_size]
                noise = draw_noise(rng, len(idx), num_samples, T, spec.dim_x, spec.num_latent)
                y_b, u_b = Y[idx], U[idx]

                def loss(params):
                    return -scale * elbo(params, spec, y_b, u_b, noise, self.backend, self.kl_weighting,
                                         num_windows, self.recognition)

                value, grads = value_and_grad(loss)(self.params)
                self.params = optimizer.step(self.params, _without(grads, frozen))
                self.history_.append(float(value))
            if progress:
                logger.info("epoch %d/%d  loss %.4f  (%.1f s)", epoch + 1, epochs, self.history_[-1],
                            time.perf_counter() - started)
        return self

    def _check_fixed(self, fixed):
        fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed)
        unknown = sorted(set(fixed) - set(self.params))
        if unknown:
            raise ValueError(f"fixed: unknown parameter names {unknown}; expected names from {sorted(self.params)}")
        return fixed

    def pretrain_transition(self, x_prev, x_next, u=None, iterations=500, lr=0.01, fixed=()):
        """Fit the transition GP to observed state pairs x_next ~ f([x_prev, u]) (paper Section 4.1: the
        car-tracking transition GPs are pre-trained on 20 true state pairs).

        Maximises :func:`gpssm_np.inference.transition_regression_elbo` with Adam; only the transition's
        parameters move (Z, kernel, q(u), A, process noise). ``x_prev``, ``x_next``: (P, d_x); ``u``: (P, d_u) or
        None. Returns ``self``.
        """
        spec = self.spec
        x_prev = check.finite_array(x_prev, "x_prev", (2,))
        x_next = check.finite_array(x_next, "x_next", (2,))
        if x_prev.shape[1] != spec.dim_x or x_next.shape != x_prev.shape:
            raise ValueError(f"x_prev, x_next: expected two arrays of shape (P, {spec.dim_x}), got {x_prev.shape} "
                             f"and {x_next.shape}")
        u = check.inputs(u, (len(x_prev),), spec.dim_u, "x_prev")
        iterations = check.positive_int(iterations, "iterations")
        frozen = self._check_fixed(fixed) + tuple(
            name for name in self.params if name in ("obs_noise", "x0_mean", "x0_var") or name.startswith("rec_"))
        optimizer = Adam(lr=check.positive_float(lr, "lr"))
        scale = 1.0 / len(x_prev)

        def loss(params):
            return -scale * transition_regression_elbo(params, spec, x_prev, u, x_next)

        for _ in range(iterations):
            value, grads = value_and_grad(loss)(self.params)
            self.params = optimizer.step(self.params, _without(grads, frozen))
        return self


def _without(grads, frozen):
    """The gradients with those of the frozen parameters set to zero (Adam then leaves them where they are)."""
    return {name: (np.zeros_like(g) if name in frozen else g) for name, g in grads.items()}


def make_recognition(kind, spec, options=None):
    """The recognition network ``kind`` (None, "lstm" or "mlp") for a model with ``spec``."""
    if kind is None:
        if not spec.free_x0:
            raise ValueError("recognition: spec.free_x0 is False, so a recognition network ('lstm' or 'mlp') is needed")
        return None
    if kind not in NETWORKS:
        raise ValueError(f"recognition: expected None, 'lstm' or 'mlp', got {kind!r}")
    if spec.free_x0:
        raise ValueError("recognition: a recognition network replaces the free q(x0); build the spec with free_x0=False")
    return NETWORKS[kind](spec.dim_x, spec.dim_y, spec.dim_u, **(options or {}))
