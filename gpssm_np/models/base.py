"""The estimator surface shared by every state-space model of the package (GPSSMs and DSSM).

All models here have a state x_t (d_x), inputs u_t (d_u) and outputs y_t = C x_t + e_t with C = [I_{d_y}, 0] and
e_t ~ N(0, diag r). The time convention is the authors': x_0 ~ q(x0) emits nothing; y_t is emitted by x_t, whose
transition reads [x_{t-1}, u_t]. A subclass supplies:

* ``spec`` (with ``dim_x``, ``dim_y``, ``dim_u``), ``param_shapes()`` and ``get_config()``;
* ``_minibatch_loss(y, u, rng, num_samples, num_windows)``: the training loss of a minibatch of windows
  (y (B, T, d_y), u (B, T, d_u)), as a function of the parameter dict;
* ``q_x0(y=None, u=None)``: mean and variance of q(x0);
* ``transition_moments()``: the Gaussian transition x_t | x_{t-1} as a function for ``filtering.particle_filter``;
  ``obs_var()``: the diagonal of R;
* ``_free_run(x0, u, rng)``: sampled states (S, T, d_x) from initial states x0 (S, d_x) under inputs u (T, d_u).

and this class gives ``get_params``/``set_params``, ``fit``, ``filter``, ``smooth`` and ``forecast``.
"""
import logging
import os

import numpy as np
from autograd import value_and_grad

from .. import _validation as check
from .._config import MAX_REJECTIONS
from .._progress import Progress
from ..datasets import windows
from ..filtering import backward_simulation, particle_filter
from ..forecast import Forecast
from ..ops._jit import blas_single_threaded
from ..optim import Adam

logger = logging.getLogger(__name__)


class TrainingError(RuntimeError):
    """Training cannot go on (repeated non-finite steps, or a Cholesky that fails at the largest jitter)."""


class StateSpaceModel:
    """Base class: parameters in ``self.params`` (dict of unconstrained arrays), training history in
    ``self.history_``, optional output scaling in ``self.output_scaling``."""

    #: Models without a latent state (e.g. ARX) cannot infer an initial state from a window; the ``paper``
    #: protocol then conditions on the observations before the window instead (``protocols.evaluate_paper``).
    has_latent_state = True

    def __init__(self, seed=0):
        self.seed = check.seed(seed)
        self.params = {}
        self.history_ = []
        self.training_log_ = {"rejected_steps": [], "jitter": []}
        self.output_scaling = None

    # -- parameters ------------------------------------------------------------------------------------------
    def get_params(self):
        """Copies of the unconstrained parameters, name -> ndarray."""
        return {name: value.copy() for name, value in self.params.items()}

    def set_params(self, params):
        """Replace the parameters with ``params`` (same names and shapes as :meth:`get_params`)."""
        shapes = self.param_shapes()
        if not isinstance(params, dict) or set(params) != set(shapes):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"params: expected a dict with keys {sorted(shapes)}, got {got}")
        new = {}
        for name, shape in shapes.items():
            value = check.finite_array(params[name], f"params[{name!r}]", (len(shape),)).copy()
            if value.shape != shape:
                raise ValueError(f"params[{name!r}]: expected shape {shape}, got {value.shape}")
            new[name] = value
        self.params = new

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

    # -- latent states and forecasts ------------------------------------------------------------------------
    def emission(self):
        """C = [I, 0] (d_y, d_x) and the diagonal of R (d_y,)."""
        return np.eye(self.spec.dim_y, self.spec.dim_x), self.obs_var()

    def filter(self, y, u=None, num_particles=1000, seed=0, init_window=50, **kwargs):
        """Particle filter over y (T, d_y) with inputs u (T, d_u): ``filtering.FilterResult`` (filtered means and
        covariances, log marginal likelihood estimate, final particles). The filter starts from q(x0) (for a
        recognition network: applied to the first ``init_window`` steps); ``kwargs`` go to
        :func:`gpssm_np.filtering.particle_filter` (proposal, ess_threshold, store_particles)."""
        y, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u, allow_missing=True)
        y, u = y[0], u[0]
        init_window = check.positive_int(init_window, "init_window")
        mean, var = self.q_x0(y[:init_window], u[:init_window])
        C, R = self.emission()
        return particle_filter(self.transition_moments(), C, R, y, u if self.spec.dim_u else None, mean, np.diag(var),
                               num_particles=check.positive_int(num_particles, "num_particles"),
                               rng=np.random.default_rng(seed), **kwargs)

    def smooth(self, y, u=None, num_particles=1000, num_trajectories=100, seed=0, init_window=50):
        """Smoothed state trajectories by backward simulation (FFBSi): array (num_trajectories, T, d_x)."""
        result = self.filter(y, u, num_particles, seed, init_window, store_particles=True)
        _, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u, allow_missing=True)
        return backward_simulation(self.transition_moments(), result, u[0] if self.spec.dim_u else None,
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
        if x0 is None and y_past is not None:
            result = self.filter(y_past, u_past, num_particles, seed, init_window)
            weights = np.exp(result.log_weights - np.max(result.log_weights))
            x0_particles = result.particles[rng.choice(len(weights), num_samples, p=weights / weights.sum())]
        else:
            if x0 is not None:
                mean, var = (np.asarray(a, dtype=np.float64) for a in x0)
            elif self.recognition is None:
                mean, var = self.q_x0()
            else:
                mean, var = np.zeros(spec.dim_x), np.ones(spec.dim_x)
            x0_particles = mean + np.sqrt(var) * rng.standard_normal((num_samples, spec.dim_x))
        states = self._free_run(x0_particles, u_future, rng)  # (S, T, d_x)
        y_mean, y_std = self.output_scaling or (None, None)
        return Forecast(samples=states[:, :, :spec.dim_y], states=states, obs_var=self.obs_var(), y_mean=y_mean,
                        y_std=y_std)

    # -- training --------------------------------------------------------------------------------------------
    def fit(self, y, u=None, epochs=70, seq_len=50, stride=1, batch_size=16, lr=0.01, num_samples=50, seed=None,
            clip_norm=None, fixed=(), progress=False, checkpoint=None, checkpoint_every=1, resume=False,
            max_rejections=MAX_REJECTIONS, checkpoint_steps=None):
        """Maximise the ELBO with Adam over shuffled minibatches of windows (the authors' defaults).

        ``y`` (T, d_y) or a list of such sequences; ``u`` likewise (or None when d_u = 0). Windows of ``seq_len``
        steps at ``stride`` are cut from each sequence (plus a tail window, as the authors do). The loss per step
        is -ELBO, divided by the number of windows under the unbiased weighting (so it is per window). Returns
        ``self``; the loss of each step is appended to ``history_``. Parameters named in ``fixed`` keep their
        values (e.g. ``fixed=("x0_mean", "x0_var")`` when the initial state is known).

        Robustness: a step whose loss or gradient is not finite is rejected (parameters and Adam state are left
        as they were, the step size is halved, a warning is logged, the step is retried with fresh noise);
        after ``max_rejections`` consecutive rejections training stops with :class:`TrainingError`. A failed
        Cholesky of K(Z, Z) raises the model's jitter tenfold (up to ``_config.MAX_JITTER``) and retries the
        step. Both are recorded in ``training_log_``.

        Checkpoints: with ``checkpoint=path`` the model, Adam state, random-generator state, history and training
        log are written atomically to ``path`` every ``checkpoint_every`` epochs and after the last one; with
        ``checkpoint_steps=n`` also after every n-th step inside an epoch (the checkpoint then records the epoch's
        order of windows and the position in it).
        ``resume=True`` continues from that file if it exists (``epochs`` counts the whole run, so repeating the
        original call with ``resume=True`` finishes it) and ends bit-identical to an uninterrupted run.
        """
        spec = self.spec
        epochs = check.positive_int(epochs, "epochs")
        batch_size = check.positive_int(batch_size, "batch_size")
        num_samples = check.positive_int(num_samples, "num_samples")
        checkpoint_every = check.positive_int(checkpoint_every, "checkpoint_every")
        if checkpoint_steps is not None:
            checkpoint_steps = check.positive_int(checkpoint_steps, "checkpoint_steps")
        max_rejections = check.positive_int(max_rejections, "max_rejections")
        lr = check.positive_float(lr, "lr")
        if resume and checkpoint is None:
            raise ValueError("resume: needs checkpoint=path to resume from")
        if checkpoint_steps is not None and checkpoint is None:
            raise ValueError("checkpoint_steps: needs checkpoint=path to write to")
        ys = y if isinstance(y, (list, tuple)) else [y]
        us = u if isinstance(u, (list, tuple)) else [u] * len(ys)
        if len(us) != len(ys):
            raise ValueError(f"u: expected {len(ys)} input sequences to match y, got {len(us)}")
        checked = [check.sequences(yi, ui, spec.dim_y, spec.dim_u) for yi, ui in zip(ys, us)]
        Y, U = windows([c[0][0] for c in checked], [c[1][0] for c in checked], seq_len, stride)
        num_windows = Y.shape[0]
        rng = np.random.default_rng(self.seed if seed is None else check.seed(seed))
        frozen = self._check_fixed(fixed)
        optimizer = Adam(lr=lr, clip_norm=clip_norm)
        first_epoch, position = 0, None
        if resume and os.path.exists(checkpoint):
            first_epoch, position = self._restore_checkpoint(checkpoint, optimizer, rng)
        report = Progress(epochs, enabled=progress)
        with blas_single_threaded():  # small BLAS calls inside the steps: extra BLAS threads only contend
            for epoch in range(first_epoch, epochs):
                # a checkpoint written inside this epoch holds its order of windows and the next position
                order, first = position if position is not None else (rng.permutation(num_windows), 0)
                position = None
                for start in range(first, num_windows, batch_size):
                    idx = order[start:start + batch_size]
                    self._train_step(Y[idx], U[idx], rng, num_samples, num_windows, optimizer, frozen,
                                     max_rejections)
                    if (checkpoint is not None and checkpoint_steps is not None and start + batch_size < num_windows
                            and len(self.history_) % checkpoint_steps == 0):
                        self._write_checkpoint(checkpoint, optimizer, rng, epoch, (order, start + batch_size))
                report.update(epoch + 1, self.history_[-1])
                if checkpoint is not None and ((epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs):
                    self._write_checkpoint(checkpoint, optimizer, rng, epoch + 1)
        report.close()
        return self

    def _train_step(self, y, u, rng, num_samples, num_windows, optimizer, frozen, max_rejections):
        """One accepted Adam step on the minibatch (y, u), rejecting non-finite steps (see :meth:`fit`)."""
        log = self.training_log_
        rejections = 0
        while True:
            loss = self._minibatch_loss(y, u, rng, num_samples, num_windows)
            try:
                value, grads = value_and_grad(loss)(self.params)
            except np.linalg.LinAlgError as err:
                if not self._increase_jitter():
                    raise TrainingError(f"Cholesky of K(Z, Z) failed even with the largest jitter: {err}") from err
                log["jitter"].append([len(self.history_), float(self.spec.jitter)])
                logger.warning("Cholesky failed; jitter raised to %g", self.spec.jitter)
                continue
            if np.isfinite(value) and all(np.all(np.isfinite(g)) for g in grads.values()):
                break
            rejections += 1
            optimizer.lr *= 0.5
            log["rejected_steps"].append(len(self.history_))
            logger.warning("non-finite loss or gradient at step %d: step rejected, learning rate halved to %g",
                           len(self.history_), optimizer.lr)
            if rejections >= max_rejections:
                raise TrainingError(f"training stopped after {rejections} consecutive non-finite steps (step "
                                    f"{len(self.history_)}); the parameters are those of the last good step")
        self.params = optimizer.step(self.params, _without(grads, frozen))
        self.history_.append(float(value))

    def _increase_jitter(self):
        """Hook for models with a Cholesky in their loss: raise the jitter, True if it could still be raised."""
        return False

    def _write_checkpoint(self, path, optimizer, rng, epochs_done, position=None):
        from ..io import save  # the file format lives above the models; imported when a checkpoint is asked for

        state = optimizer.state_dict()
        arrays = {key: np.asarray(value, dtype=np.float64) for key, value in state.items() if key != "t"}
        info = {"epochs_done": epochs_done, "adam_t": int(state["t"]), "lr": optimizer.lr,
                "rng_state": rng.bit_generator.state, "training_log": self.training_log_}
        if position is not None:  # inside epoch epochs_done + 1: its order of windows and the next position
            info["position"] = {"order": [int(i) for i in position[0]], "next": int(position[1])}
        save(self, path, training={"arrays": arrays, "info": info})

    def _restore_checkpoint(self, path, optimizer, rng):
        from ..io import read_checkpoint

        model, training = read_checkpoint(path)
        if type(model) is not type(self) or set(model.params) != set(self.params):
            raise ValueError(f"checkpoint: {path!r} holds a {type(model).__name__} that does not match this model")
        info, arrays = training["info"], training["arrays"]
        self.params = model.params
        self.spec = model.spec  # keeps a jitter raised during the interrupted run
        self.history_ = list(model.history_)
        self.training_log_ = info["training_log"]
        optimizer.load_state_dict(dict(arrays, t=info["adam_t"]))
        optimizer.lr = info["lr"]
        rng.bit_generator.state = info["rng_state"]
        position = info.get("position")
        if position is not None:
            position = (np.asarray(position["order"], dtype=np.intp), int(position["next"]))
        return int(info["epochs_done"]), position

    def _check_fixed(self, fixed):
        fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed)
        unknown = sorted(set(fixed) - set(self.params))
        if unknown:
            raise ValueError(f"fixed: unknown parameter names {unknown}; expected names from {sorted(self.params)}")
        return fixed


def _without(grads, frozen):
    """The gradients with those of the frozen parameters set to zero (Adam then leaves them where they are)."""
    return {name: (np.zeros_like(g) if name in frozen else g) for name, g in grads.items()}


def finite_elbo(value, y=None, u=None):
    """``value`` if finite; otherwise the data are far outside the model's scale (values of 1e150 and more
    overflow the squared residuals or the kernel distances): say so, naming the argument that holds such values
    (both when neither does), instead of returning a NaN or an infinity."""
    if not np.isfinite(value):
        huge = [name for name, a in (("y", y), ("u", u))
                if a is not None and np.size(a) and np.max(np.abs(np.asarray(a, dtype=np.float64))) > 1e100]
        raise ValueError(f"{', '.join(huge) or 'y, u'}: the ELBO is not finite ({value}) for these data; standardise "
                         "y and u (gpssm_np.datasets does) so that their values are of order one")
    return value
