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
from ..inference import check_backend, draw_noise, elbo, kl_weights, transition_regression_elbo
from ..optim import Adam
from ..params import constrain, init_params
from ..recognition import LSTMRecognition, MLPRecognition

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


RECOGNITION_NETWORKS = {"lstm": LSTMRecognition, "mlp": MLPRecognition}


def make_recognition(kind, spec, options=None):
    """The recognition network ``kind`` (None, "lstm" or "mlp") for a model with ``spec``."""
    if kind is None:
        if not spec.free_x0:
            raise ValueError("recognition: spec.free_x0 is False, so a recognition network ('lstm' or 'mlp') is needed")
        return None
    if kind not in RECOGNITION_NETWORKS:
        raise ValueError(f"recognition: expected None, 'lstm' or 'mlp', got {kind!r}")
    if spec.free_x0:
        raise ValueError("recognition: a recognition network replaces the free q(x0); build the spec with free_x0=False")
    return RECOGNITION_NETWORKS[kind](spec.dim_x, spec.dim_y, spec.dim_u, **(options or {}))
