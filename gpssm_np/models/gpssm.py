"""The sparse-GP state-space model shared by ODGPSSM and PRSSM.

Model (DESIGN.md s1; time convention of the authors' code): x_0 ~ q(x0) emits nothing; for t = 1..T,
x_t = mu(x_{t-1}) + A h([x_{t-1}, u_t]) + v_t with v_t ~ N(0, diag q), and y_t = C x_t + e_t with
C = [I_{d_y}, 0] and e_t ~ N(0, diag r). mu is 0 (authors' code) or the identity (residual=True, PR-SSM).
"""
from dataclasses import replace

import numpy as np
from autograd import value_and_grad

from .. import _validation as check
from .._config import MAX_JITTER
from ..filtering import gpssm_transition
from ..forecast import free_run
from ..inference import check_backend, draw_noise, elbo, kl_weights, transition_regression_elbo
from ..ops._jit import blas_single_threaded
from ..optim import Adam
from ..params import constrain, init_params
from ..recognition import NETWORKS
from .base import StateSpaceModel, _without, finite_elbo


class GPSSM(StateSpaceModel):
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
        super().__init__(seed)
        self.spec = spec
        self.backend = check_backend(backend)
        kl_weights(kl_weighting, 1, 1)  # validates the name
        self.kl_weighting = kl_weighting
        self.recognition = make_recognition(recognition, spec, recognition_options)
        rng = np.random.default_rng(seed)
        self.params = init_params(spec, rng, **init)
        if self.recognition is not None:
            self.params.update(self.recognition.init_params(rng))

    def get_config(self):
        """Constructor arguments as plain JSON types: ``type(model)(**model.get_config())`` rebuilds the model
        (with freshly initialised parameters)."""
        s = self.spec
        config = {"dim_x": s.dim_x, "dim_y": s.dim_y, "dim_u": s.dim_u, "num_inducing": s.num_inducing,
                  "kernel": s.kernel, "shared_inducing": s.shared_inducing, "whiten": s.whiten,
                  "mean_function": "identity" if s.residual else "zero", "seed": self.seed, "backend": self.backend,
                  "kl_weighting": self.kl_weighting, "recognition": None, "recognition_options": None,
                  "jitter": s.jitter}
        if not s.independent:
            config["num_latent"] = s.num_latent
        if self.recognition is not None:
            rec = self.recognition.get_config()
            config["recognition"] = rec["kind"]
            config["recognition_options"] = {k: v for k, v in rec.items()
                                             if k not in ("kind", "dim_x", "dim_y", "dim_u")}
        return config

    # -- parameters ------------------------------------------------------------------------------------------
    def param_shapes(self):
        """Name -> shape of every unconstrained parameter (transition, emission, q(x0) or its network)."""
        shapes = self.spec.param_shapes()
        if self.recognition is not None:
            shapes.update(self.recognition.param_shapes())
        return shapes

    def constrained_params(self):
        """The parameters as the model uses them (positive values, Z as (Q, M, D), A = I for PRSSM)."""
        return {name: np.asarray(value) for name, value in constrain(self.params, self.spec).items()}

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
        objective = self._objective(y, u, num_samples, seed, backend, kl_weighting, num_windows)
        return finite_elbo(float(objective(self.params)), y, u)

    def elbo_and_grad(self, y, u=None, num_samples=50, seed=0, backend=None, kl_weighting=None, num_windows=None):
        """(ELBO, gradient) with the gradient a dict keyed like :meth:`get_params` (w.r.t. unconstrained values)."""
        objective = self._objective(y, u, num_samples, seed, backend, kl_weighting, num_windows)
        with blas_single_threaded():
            value, grad = value_and_grad(objective)(self.params)
        return finite_elbo(float(value), y, u), {name: np.asarray(g, dtype=np.float64) for name, g in grad.items()}

    # -- hooks of StateSpaceModel ----------------------------------------------------------------------------
    def _minibatch_loss(self, y, u, rng, num_samples, num_windows):
        spec = self.spec
        noise = draw_noise(rng, y.shape[0], num_samples, y.shape[1], spec.dim_x, spec.num_latent)
        scale = 1.0 / num_windows if self.kl_weighting == "unbiased" else 1.0  # per-window loss

        def loss(params):
            return -scale * elbo(params, spec, y, u, noise, self.backend, self.kl_weighting, num_windows,
                                 self.recognition)

        return loss

    def _increase_jitter(self):
        """Multiply the jitter of K(Z, Z) by 10 after a failed Cholesky; False once it would exceed MAX_JITTER."""
        jitter = self.spec.jitter * 10.0
        if jitter > MAX_JITTER:
            return False
        self.spec = replace(self.spec, jitter=jitter)
        return True

    def transition_moments(self):
        """x_t | x_{t-1} ~ N(mu + A m_h, A S_h A^T + diag q) as a function for ``filtering.particle_filter``."""
        return gpssm_transition(self.spec, self.params)

    def obs_var(self):
        return np.asarray(constrain(self.params, self.spec)["obs_var"])

    def _free_run(self, x0, u, rng):
        return free_run(self.spec, self.params, x0, u, rng)

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

    # -- training --------------------------------------------------------------------------------------------
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


def make_recognition(kind, spec, options=None):
    """The recognition network ``kind`` (None, "lstm" or "mlp") for a model with ``spec``."""
    if kind is None:
        if not spec.free_x0:
            raise ValueError("recognition: spec.free_x0 is False, so a recognition network ('lstm' or 'mlp') is needed")
        return None
    if kind not in NETWORKS:
        raise ValueError(f"recognition: expected None, 'lstm' or 'mlp', got {kind!r}")
    if spec.free_x0:
        raise ValueError("recognition: a recognition network replaces the free q(x0); "
                         "build the spec with free_x0=False")
    return NETWORKS[kind](spec.dim_x, spec.dim_y, spec.dim_u, **(options or {}))
