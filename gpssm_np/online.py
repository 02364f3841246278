"""A fitted model's filter run one measurement at a time (``model.online_filter()``, for a model embedded in a
controller): :class:`OnlineFilterBase`, the surface every model's online filter offers (updates and forecasts in
original units, a state to continue elsewhere), :func:`check_online_state`, and :class:`OnlineFilter`, the particle
filter of the GP models and the DSSM (the step of ``filtering.particle_filter``), and :class:`KalmanOnlineFilter`,
the exact filter of a linear Gaussian model (the LGSSM, and a GP model without a GP residual). The ARX's online
filter (``baselines/arx.py``) derives from the base here too.
"""
import abc
import dataclasses

import numpy as np

from . import _names
from . import _validation as check
from .filtering import OnlineParticleFilter, output_moments_in_original_units
from .kalman import as_covariance, kalman_step
from .units import UNITS


class OnlineFilterBase(abc.ABC):
    """A fitted model's filter, one measurement at a time: the surface of ``model.online_filter()``.

    :meth:`update` assimilates y_t with its input u_t (original units) and returns the filtered output; :meth:`predict`
    forecasts from the current state without changing the filter; :meth:`state` is everything needed to continue
    elsewhere (arrays, numbers and plain Python types, e.g. for ``json`` after ``.tolist()`` of the arrays), which
    ``model.online_filter(state=...)`` takes. After each update ``predicted_mean``, ``predicted_var`` (the output
    predicted before y_t was read, R included) and ``innovation`` (y_t minus that prediction, NaN where y_t is
    missing) are kept, in original units. A subclass supplies the step, the forecast and the state in model units.
    """

    #: The keys of :meth:`state`.
    STATE_KEYS = ()

    def __init__(self, model):
        self.model = model
        self.predicted_mean = self.predicted_var = self.innovation = None

    @property
    @abc.abstractmethod
    def step(self):
        """The number of updates so far (the index t of the last y_t read)."""

    @abc.abstractmethod
    def _update(self, y_t, u_t):
        """One step in model units (u_t None without inputs): the filtered output mean and variances, the predicted
        output mean and variances and the innovation, each (d_y,)."""

    @abc.abstractmethod
    def _predict(self, u_future, num_samples, seed):
        """The forecast (model units, built by the model) from the current state under ``u_future`` (T, d_u)."""

    @abc.abstractmethod
    def _state(self):
        """The filter's state, a dict with the keys :data:`STATE_KEYS` (:meth:`state` adds the model's class)."""

    def state(self):
        """The filter's state: a dict with the keys :data:`STATE_KEYS` and "model", the name of the model's class
        (a filter of another class refuses it: :func:`check_online_state`)."""
        return dict(self._state(), model=type(self.model).__name__)

    def update(self, y_t, u_t=None):
        """Assimilate the output y_t (d_y,) (NaN entries: missing) of the step driven by the input u_t (d_u,) (None
        for a model without inputs), both in original units; for a model fitted with channel names either may be a
        dict name -> value (read by name; other names are a ValueError). Returns the filtered noise-free output
        C x_t given y_{1:t}: its mean (d_y,) and variances (d_y,), in original units."""
        spec, scaling = self.model.spec, self.model.scaling_
        y_t = _names.from_mapping(y_t, self.model.y_names_, "y_t", "outputs")
        u_t = _names.from_mapping(u_t, self.model.u_names_, "u_t", "inputs")
        y_t = check.step_values(y_t, "y_t", spec.dim_y, "output", allow_nan=True)
        if spec.dim_u:
            if u_t is None:
                raise ValueError(f"u_t: the model has dim_u = {spec.dim_u} inputs, got None")
            u_t = check.step_values(u_t, "u_t", spec.dim_u, "input")
        else:
            if u_t is not None:
                check.step_values(u_t, "u_t", 0, "input")  # no inputs: None or an empty array, nothing else
            u_t = None
        if scaling is not None:
            y_t = scaling.y_to_model(y_t)
            u_t = None if u_t is None else scaling.u_to_model(u_t)
        moments = self._update(y_t, u_t)
        if scaling is not None:
            moments = output_moments_in_original_units(scaling, *moments)
        self.predicted_mean, self.predicted_var, self.innovation = moments[2:]
        return moments[0], moments[1]

    def predict(self, u_future=None, num_samples=50, seed=0, steps=None, units="original"):
        """Forecast from the current filtered state (drawn with its own generator from ``seed``, not the filter's)
        with known future inputs ``u_future`` (T, d_u) (``steps`` when d_u = 0): a
        :class:`gpssm_np.forecast.Forecast` in original units (``units="model"``: standardised)."""
        model = self.model
        if units not in UNITS:
            raise ValueError(f"units: expected one of {UNITS}, got {units!r}")
        fc = self._predict(model.future_inputs_in_model_units(u_future, steps),
                           check.positive_int(num_samples, "num_samples"), check.seed(seed))
        return fc if units == "model" else fc.in_original_units()


class OnlineFilter(OnlineFilterBase):
    """The particle filter of a GP model or a DSSM one measurement at a time (``GradientTrainedModel.online_filter``;
    :class:`OnlineFilterBase`): the arithmetic of :func:`gpssm_np.filtering.particle_filter`
    (``filtering.filter_step``), so the updates over a sequence reproduce the batch filter bit for bit. Its
    :meth:`predict` draws ``num_samples`` particles by weight. The state holds the particles, their log-weights and
    the generator's state."""

    STATE_KEYS = ("particles", "log_weights", "step", "rng", "ess_threshold", "proposal")

    def __init__(self, model, online):
        super().__init__(model)
        self._online = online

    @classmethod
    def start(cls, model, mean, var, num_particles, seed, ess_threshold, proposal):
        """The filter of ``model`` (a ``GradientTrainedModel``) before its first update: ``num_particles`` particles
        drawn from N(``mean``, ``var``) (var: variances (d_x,) or a covariance (d_x, d_x)) with the generator
        ``numpy.random.default_rng(seed)``; ``ess_threshold`` and ``proposal`` as ``filtering.particle_filter``
        takes them."""
        C, R = model.emission()
        return cls(model, OnlineParticleFilter.start(
            model.filter_transition(), C, R, *as_covariance(mean, var),
            check.positive_int(num_particles, "num_particles"), np.random.default_rng(seed), ess_threshold, proposal))

    @classmethod
    def resume(cls, model, state):
        """The filter of ``model`` where the filter whose :meth:`state` is ``state`` was."""
        C, R = model.emission()
        transition = model.filter_transition()
        check_online_state(state, cls.STATE_KEYS, model)
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = state["rng"]
        except (TypeError, ValueError, KeyError) as err:
            raise ValueError(f"state: its 'rng' entry is not the state of a {type(rng.bit_generator).__name__} "
                             f"generator: {err}") from None
        return cls(model, OnlineParticleFilter(
            transition, C, R, np.asarray(state["particles"], dtype=np.float64),
            np.asarray(state["log_weights"], dtype=np.float64), rng, state["step"], state["ess_threshold"],
            state["proposal"]))

    @property
    def step(self):
        return self._online.step

    def _update(self, y_t, u_t):
        s = self._online.assimilate(y_t, u_t)  # checked by OnlineFilterBase.update
        return s.output_means, s.output_vars, s.predicted_output_means, s.predicted_output_vars, s.innovations

    def _predict(self, u_future, num_samples, seed):
        return self.model.forecast_from_particles(self._online.particles, self._online.log_weights, u_future,
                                                   num_samples, np.random.default_rng(seed), "online filter")

    def _state(self):
        """The particles (N, d_x) and normalised log-weights (N,) (copies), the step count, the generator state and
        the filter options."""
        online = self._online
        return {"particles": online.particles.copy(), "log_weights": online.log_weights.copy(), "step": online.step,
                "rng": online.rng.bit_generator.state, "ess_threshold": online.ess_threshold,
                "proposal": online.proposal}


def check_online_state(state, keys, model):
    """``state`` if it is a dict with the ``keys`` of an online filter's state, written by a filter of a model of
    ``model``'s class (its "model" entry; a state without that entry is taken); ValueError
    otherwise (a state of another class could have the right shapes and mean something else)."""
    missing = sorted(set(keys) - set(state)) if isinstance(state, dict) else None
    if missing is None or missing:
        raise ValueError(f"state: expected the dict of the online filter's state() with keys {keys}, got "
                         f"{'missing ' + str(missing) if missing else type(state).__name__}")
    written_by, mine = state.get("model", type(model).__name__), type(model).__name__
    if written_by != mine:
        raise ValueError(f"state: written by the online filter of a {written_by}, not of a {mine}")
    return state


class KalmanOnlineFilter(OnlineFilterBase):
    """The Kalman filter of a linear Gaussian model one measurement at a time (:class:`OnlineFilterBase`): each update
    is ``kalman.kalman_step`` with the model's ``params`` (dict F, G, H, Q, R and an optional intercept b), the step
    of ``kalman.kalman_filter``, so the updates reproduce the batch filter bit for bit when d_u <= 1; with more
    inputs the input term G u_t, which the batch filter computes for all steps in one matrix product (whose BLAS
    rounding differs from a product per step), agrees to rounding only. The filtered output is H x_t (mean H m,
    variances diag(H P H^T)), the predicted output H m_pred with variances diag(H P_pred H^T + R). :meth:`predict`
    is the model's forecast from x0 = the current (mean, covariance). The state: the mean (d_x,), the covariance
    (d_x, d_x) and the step count. Used by ``LGSSM.online_filter`` and, for a GP model that is linear Gaussian
    (``GPSSM.linear_gaussian``), by ``GPSSM.online_filter``."""

    STATE_KEYS = ("mean", "cov", "step")

    def __init__(self, model, params, mean, cov, step=0):
        super().__init__(model)
        self.params = params
        self.mean, self.cov, self._step = mean, cov, step

    @classmethod
    def start(cls, model, params, prior, x0=None, state=None):
        """The filter of ``model`` with the linear Gaussian ``params``: where the filter whose :meth:`state` is
        ``state`` was, else from ``x0 = (mean (d_x,), variances (d_x,) or covariance (d_x, d_x))``, else from the
        model's ``prior`` (mean (d_x,), covariance (d_x, d_x))."""
        dx = model.spec.dim_x
        if state is not None:
            check_online_state(state, cls.STATE_KEYS, model)
            mean, cov = (check.finite_array(state[k], k, (n,)) for k, n in (("mean", 1), ("cov", 2)))
            if mean.shape != (dx,) or cov.shape != (dx, dx):
                raise ValueError(f"state: expected a mean ({dx},) and a covariance ({dx}, {dx}), got {mean.shape} "
                                 f"and {cov.shape}")
            return cls(model, params, mean, cov, check.non_negative_int(state["step"], "step"))
        if x0 is None:
            return cls(model, params, prior[0].copy(), prior[1].copy())
        mean, cov = as_covariance(*check.x0(x0, dx))
        return cls(model, params, mean.copy(), cov.copy())

    @property
    def step(self):
        return self._step

    def _update(self, y_t, u_t):
        p = self.params
        drive = np.zeros(len(self.mean)) if u_t is None else u_t @ p["G"].T  # a row of the batch filter's u @ G.T
        if "b" in p:
            drive = drive + p["b"]
        pred_mean, pred_cov, self.mean, self.cov, _ = kalman_step(p, self.mean, self.cov, drive, y_t)
        self._step += 1
        H, R = p["H"], p["R"]
        predicted = H @ pred_mean
        return (H @ self.mean, np.einsum("ij,jk,ik->i", H, self.cov, H), predicted,
                np.einsum("ij,jk,ik->i", H, pred_cov, H) + np.diag(R), y_t - predicted)

    def _predict(self, u_future, num_samples, seed):
        fc = self.model._forecast(u_future, None, None, num_samples, seed, (self.mean, self.cov), None, None)
        return dataclasses.replace(fc, origin="online filter")  # the model's forecast from x0 = the filtered state

    def _state(self):
        """The filtered mean (d_x,) and covariance (d_x, d_x) (copies) and the step count."""
        return {"mean": self.mean.copy(), "cov": self.cov.copy(), "step": self._step}
