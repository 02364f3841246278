"""The model facade: the estimator surface every model of the package offers, as abstract base classes.

:class:`StateSpaceModel` is the surface the evaluation protocols, the sweeps and ``io`` use, shared by the GP models,
the DSSM and the linear baselines (ARX, LGSSM). A subclass supplies (abstract methods):

* ``get_config()``: the constructor arguments as plain JSON types, ``type(model)(**model.get_config())`` rebuilds
  the unfitted model;
* ``get_learned_params()`` / ``set_learned_params(params)``: the learned arrays, name -> float64 ndarray (what a
  model file holds; ``get_params``/``set_params`` are the constructor arguments, as in scikit-learn:
  ``arguments.ConstructorArguments``);
* ``fit(y, u=None, **training_options)``: learn from one sequence (T, d_y) or a list of them; the gradient-trained
  models take the keyword arguments of :meth:`GradientTrainedModel.fit` (the GP models' ``fit`` adds
  ``max_steps``; :data:`TRAINING_OPTIONS`); a model fitted in closed form takes none of them (``data_name``
  only), and names any given in a ValueError;
* ``_q_x0(y=None, u=None, full_cov=False)``: mean and variance (or covariance) of the initial state x_0 before a
  window, in model units (ValueError for a model without a latent state, ``has_latent_state = False``); the public
  ``q_x0`` converts its data;
* ``_forecast(u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window)``: a
  :class:`gpssm_np.forecast.Forecast` with known future inputs, all in model units (built by
  ``_forecast_result``); the public :meth:`~StateSpaceModel.forecast` converts its data and its result;
* ``constrained_params()``: the parameters as the model uses them (positive variances, ...), name -> ndarray;

and sets ``spec`` (with ``dim_x``, ``dim_y``, ``dim_u``); its ``fit`` takes its data through ``_training_data`` and
ends with ``_attach_scaling``. The class gives the seed, ``history_`` (training loss per step), the units (below),
the state that model files keep beside
the parameters (:meth:`~StateSpaceModel.extra_state`, :meth:`~StateSpaceModel.set_extra_state`), and the familiar
surface: :meth:`~StateSpaceModel.predict` (the mean forecast), :meth:`~StateSpaceModel.score` (the causal forecast
RMSE of a sequence), :meth:`~StateSpaceModel.summary` and a ``repr`` with the arguments that differ from the
defaults (``arguments.ConstructorArguments``).

Units (``gpssm_np.units``, whose docstring says which methods take and return which units): with
``standardize=True`` ``fit`` trains on standardised data and keeps the statistics in ``scaling_``.

:class:`GradientTrainedModel` is the part shared by the GP models and the DSSM: all have a state x_t (d_x), inputs
u_t (d_u) and outputs y_t = C x_t + e_t with C = [I_{d_y}, 0] and e_t ~ N(0, diag r). The time convention is the
authors': x_0 ~ q(x0) emits nothing; y_t is emitted by x_t, whose transition reads [x_{t-1}, u_t]
(docs/design.md, "Time convention"). A subclass supplies, besides ``get_config`` and ``_q_x0``:

* ``param_shapes()``: name -> shape of every unconstrained parameter;
* ``elbo_function(y, u, rng, num_samples, num_windows=None, **options)``: the ELBO of windows y (B, T, d_y), u (B,
  T, d_u) with noise drawn from ``rng``, as a function of the parameter dict; :meth:`GradientTrainedModel.elbo`,
  :meth:`~GradientTrainedModel.elbo_and_grad` and the training loss are built on it;
* ``transition_moments()``: the Gaussian transition x_t | x_{t-1} as a function for ``filtering.particle_filter``
  (``filter_transition()``, which ``filter``, ``smooth``, ``online_filter`` and ``forecast``'s filter of past data
  run, may replace it with one that fuses the fully adapted step: the sparse-GP models'
  ``transition.FilterTransition``);
* ``obs_var()``: the diagonal of R;
* ``_free_run(x0, u, rng)``: sampled states (S, T, d_x) from initial states x0 (S, d_x) under inputs u (T, d_u);
* ``_start_afresh()``: the parameters back to the random initialisation construction drew from ``seed``: where a fit
  of the epoch loop starts a model a former fit left;
* ``recognition``: the network that maps a window to q(x0), or None when q(x0) is a free Gaussian (an attribute
  the subclass sets in ``__init__``; a ``forecast`` with neither data nor a fit's data tail then starts from
  p(x0) = N(0, I) instead of q(x0)),

and this class gives ``get_learned_params``/``set_learned_params``, ``fit`` (Adam), ``filter``, ``smooth``,
``forecast`` and ``online_filter`` (:class:`gpssm_np.online.OnlineFilter`, the particle filter one measurement at a
time).
"""
import abc
import copy
import functools
import inspect
import json

import numpy as np
from autograd import value_and_grad

from . import _names, archive
from . import _validation as check
from ._progress import check_progress, fit_started
from ._warn import warn
from .arguments import ConstructorArguments
from .datasets.windowing import sequence_lists, windows
from .filtering import backward_simulation, particle_filter
from .forecast import Forecast
from .inference import finite_elbo
from .kalman import as_covariance
from .ops.threads import blas_single_threaded
from .online import OnlineFilter
from .optim import Adam
from .protocols import EvaluationData, evaluate
from .training_loop import (DATA_OPTIONS, EPOCH_OPTIONS, PLAN_OPTIONS, TRAINING_OPTIONS,  # noqa: F401 (importable here)
                            EpochPlan, TrainingError, epoch_plan, run_epochs, train_step)
from .training_loop import EPOCH_CHECKPOINT_LAYOUT, RESUMABLE_PLAN_FIELDS, fit_fingerprint
from .units import SCALING_FIELDS, UNITS, Scaling

#: The ways the gradient-trained models' filters infer states (``GradientTrainedModel.filter_method``).
FILTER_METHODS = ("particle", "enkf")

#: The keyword arguments ``GradientTrainedModel.filter`` passes on to ``filtering.particle_filter``.
FILTER_OPTIONS = ("proposal", "ess_threshold", "store_particles")


#: The methods of the surface (besides ``fit`` and ``forecast``, which check theirs themselves) whose unknown keyword
#: arguments are a ValueError naming them and the valid ones, as the constructors' are, not Python's TypeError.
KEYWORD_CHECKED = ("predict", "score", "filter", "smooth", "online_filter")


def _keyword_checked(method):
    """``method`` with an unknown keyword argument a ValueError naming it and the valid ones; a method that collects
    its keywords (``**options``) checks them itself and is returned as it is."""
    parameters = list(inspect.signature(method).parameters.values())[1:]
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return method
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    @functools.wraps(method)
    def checked(self, *args, **options):
        check.keywords(options, allowed=named, owner=f"{type(self).__name__}.{method.__name__}")
        return method(self, *args, **options)

    return checked


class StateSpaceModel(ConstructorArguments, abc.ABC):
    """The estimator surface of every model (module docstring): configuration in the constructor, learned arrays
    behind ``get_learned_params``, training history in ``history_``, the units of the data in ``scaling_``."""

    #: Models without a latent state (e.g. ARX) cannot infer an initial state from a window; the ``paper``
    #: protocol then conditions on the observations before the window instead (``protocols.evaluate_paper``).
    has_latent_state = True

    #: The output and input channel names the model was fitted with (``fit(..., y_names=..., u_names=...)``), a
    #: tuple each, kept in the model file; None: not told (``_names`` module).
    y_names_ = None
    u_names_ = None
    #: The share of a data set's rows that was its training part, when the fit was told (the command line records
    #: ``--train-fraction`` for a CSV file and warns when a model is scored at another); kept in the model file.
    train_fraction_ = None

    #: Steps at the end of the training data that ``fit`` keeps (``data_tail_``, in the model file): a forecast
    #: given no past data continues from them (the state-space models filter them, the ARX reads its lags there).
    DATA_TAIL = 200

    def __init_subclass__(cls, **kwargs):
        """Every ``fit`` a subclass defines takes ``y_names``/``u_names`` (:func:`_fit_surface`) and names an unknown
        keyword argument in a ValueError, and so do the methods of :data:`KEYWORD_CHECKED` it defines
        (:func:`_keyword_checked`)."""
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__isabstractmethod__", False) and not hasattr(fit, "_surface"):
            cls.fit = _fit_surface(fit)
        for name in KEYWORD_CHECKED:
            if name in cls.__dict__:
                setattr(cls, name, _keyword_checked(cls.__dict__[name]))

    def __init__(self, seed=0, standardize=True):
        self.seed = check.seed(seed)
        self.standardize = check.boolean(standardize, "standardize")
        self.history_ = []
        self.scaling_ = None  # set by fit (module docstring, "Units")
        self._fit_scaling = None  # the statistics of the data of a fit under way (_training_data)
        self.data_name_ = None  # the name of the data set fit was given, when it was told (fit's data_name)
        self.data_tail_ = None  # (y, u) of the last DATA_TAIL steps fitted on (model units), set by fit
        self.interval_scale_ = None  # (d_y,) factor on the forecasts' predictive std, set by a calibrating fit

    # -- hooks -----------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def get_config(self):
        """Constructor arguments as plain JSON types: ``type(model)(**model.get_config())`` rebuilds the model
        (unfitted, or with freshly initialised parameters)."""

    @abc.abstractmethod
    def get_learned_params(self):
        """Copies of the learned arrays, name -> float64 ndarray."""

    @abc.abstractmethod
    def set_learned_params(self, params):
        """Replace the learned arrays with ``params`` (names and shapes as :meth:`get_learned_params` gives them);
        returns the model."""

    @abc.abstractmethod
    def fit(self, y, u=None, **training_options):
        """Learn from ``y`` (T, d_y) with inputs ``u`` (T, d_u), or lists of such sequences ((T,) for a single
        output or input, ``_validation.columns``); returns ``self``."""

    @abc.abstractmethod
    def _q_x0(self, y=None, u=None, full_cov=False):
        """:meth:`q_x0` with the window in model units."""

    @abc.abstractmethod
    def _forecast(self, u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window):
        """:meth:`forecast` in model units, with ``u_future`` (T, d_u) checked; built by :meth:`_forecast_result`."""

    @abc.abstractmethod
    def constrained_params(self):
        """The parameters as the model uses them, name -> ndarray (e.g. variances rather than their unconstrained
        values)."""

    # -- data in original units -----------------------------------------------------------------------------
    def q_x0(self, y=None, u=None, full_cov=False):
        """Mean and variance, each (d_x,), of the initial state x_0 before the window ``y`` (T, d_y), ``u`` (T, d_u)
        (original units; the state is the model's own); ``full_cov=True`` gives the covariance (d_x, d_x) instead
        of the variances (diagonal where the model's q(x_0) is)."""
        return self._q_x0(self._y_to_model(y), self._u_to_model(u), full_cov=check.boolean(full_cov, "full_cov"))

    def forecast(self, u_future=None, y_past=None, u_past=None, num_samples=50, seed=0, steps=None, x0=None,
                 num_particles=1000, init_window=50, units="original", y_names=None, u_names=None, **unknown):
        """Forecast with known future inputs ``u_future`` (T, d_u) (``steps`` when d_u = 0, or an array (T, 0); given
        beside inputs, ``steps`` must be their length), from ``x0 = (mean, var)`` (the latent state), from the past data
        ``y_past``, ``u_past`` (one or the other: both are a ValueError), or from the model's prior: a
        :class:`gpssm_np.forecast.Forecast`. Data and forecast are
        in original units; ``units="model"`` returns the forecast in the model's standardised units instead
        (``Forecast.in_original_units`` maps it back). Where the forecast starts: the subclass's ``_forecast``.

        ``y_names``, ``u_names``: the channel names of the columns of ``y_past`` and of ``u_future``/``u_past``;
        for a model fitted with names (``y_names_``, ``u_names_``) the columns are reordered to the model's order
        and the forecast's outputs are in the order of ``y_names`` (or the model's, without it); names the model
        was not fitted with, and data without one column per name, are a ValueError. An unknown keyword argument
        is a ValueError naming the valid ones."""
        check.keywords(unknown, StateSpaceModel.forecast, owner=f"{type(self).__name__}.forecast")
        if x0 is not None and (y_past is not None or u_past is not None):
            raise ValueError("x0: a forecast starts from x0 or from the past data (y_past, u_past), not both")
        if u_past is not None and y_past is None:
            raise ValueError("u_past: the past inputs go with the past outputs y_past, which were not given (without "
                             "past data a forecast continues from the end of the training data)")
        if units not in UNITS:
            raise ValueError(f"units: expected one of {UNITS}, got {units!r}")
        y_order = _names.order(self.y_names_, _names.checked(y_names, self.spec.dim_y, "y_names"), "y_names")
        u_order = _names.order(self.u_names_, _names.checked(u_names, self.spec.dim_u, "u_names"), "u_names",
                               "inputs")
        if u_order is not None:
            u_future, u_past = (None if a is None else _names.reordered(a, u_order, name)
                                for a, name in ((u_future, "u_future"), (u_past, "u_past")))
        if y_order is not None and y_past is not None:
            y_past = _names.reordered(y_past, y_order, "y_past")
        u_future = self._future_inputs(u_future, steps)
        # the exact forecasts (Kalman filter, ARX) use neither, but a bad value is refused by every model alike
        check.positive_int(num_particles, "num_particles")
        check.positive_int(init_window, "init_window")
        fc = self._forecast(self._u_to_model(u_future, "u_future"), self._y_to_model(y_past, "y_past"),
                            self._u_to_model(u_past, "u_past"), num_samples, seed, x0, num_particles, init_window)
        fc = fc if units == "model" else fc.in_original_units()
        return fc if y_order is None else fc.outputs_in_order(np.argsort(y_order))

    def _y_to_model(self, y, name="y"):
        return self._to_model(y, "y", name)

    def _u_to_model(self, u, name="u"):
        return self._to_model(u, "u", name)

    def _to_model(self, a, kind, name):
        """``a`` (..., d) of outputs (``kind`` "y") or inputs ("u") in model units. None, or an array whose shape or
        type does not fit, is returned as it is: the method's own check then says what is wrong with it; values
        too large to take (``_validation.bounded``) are a ValueError naming ``name``, in the units given."""
        if a is None or self.scaling_ is None:
            return a
        mean = self.scaling_.y_mean if kind == "y" else self.scaling_.u_mean
        try:
            a = np.asarray(a)
        except ValueError:  # nested sequences of unequal lengths: the method's check names the argument
            return a
        if a.ndim == 1 and len(mean) == 1:
            a = a[:, None]  # one channel as (T,), as check.columns reads it
        if a.dtype.kind not in "biuf" or a.ndim not in (2, 3) or a.shape[-1] != len(mean):
            return a
        a = check.bounded(a.astype(np.float64, copy=False), name)
        return self.scaling_.y_to_model(a) if kind == "y" else self.scaling_.u_to_model(a)

    def _training_data(self, y, u):
        """The training sequences ``y``, ``u`` checked (a list of (y, u) pairs) and in model units: ``fit`` takes
        their statistics (``standardize``), keeps them for :meth:`_attach_scaling` and clears ``scaling_``, so that
        whatever training calls works in model units."""
        data = self._sequences(y, u)
        self._fit_scaling = Scaling.of(*zip(*data)) if self.standardize else None
        self.scaling_ = None
        return self._fit_scaling.to_model(data) if self._fit_scaling is not None else data

    def _attach_scaling(self):
        """The end of ``fit``: the model now takes and returns the units of its training data."""
        self.scaling_ = self._fit_scaling
        return self

    def _log_jacobian(self, y):
        """log |d y_model / d y| summed over the observed entries of ``y`` (T, d_y, original units): added to a
        log-likelihood of model units it gives that of the original units."""
        return 0.0 if self.scaling_ is None else float(np.sum(self.scaling_.log_jacobian(y)))

    # -- the familiar surface --------------------------------------------------------------------------------
    @_keyword_checked
    def predict(self, u_future=None, y_past=None, u_past=None, steps=None, num_samples=50, seed=0):
        """The mean forecast (T, d_y) with known future inputs ``u_future`` (T, d_u) (``steps`` when d_u = 0), from
        the past outputs ``y_past`` (T_p, d_y) and inputs ``u_past`` (T_p, d_u) when given: ``forecast(...).mean``
        (see :meth:`forecast` for where it starts without past data)."""
        return self.forecast(u_future, y_past=y_past, u_past=u_past, num_samples=num_samples, seed=seed,
                             steps=steps).mean

    @_keyword_checked
    def score(self, y, u=None, burn_in=100, window=100, num_samples=50, seed=0, num_particles=1000):
        """The causal forecast RMSE of the sequence ``y`` (T, d_y) with inputs ``u`` (T, d_u), in the units of ``y``
        (lower is better, unlike scikit-learn's ``score``), pooled over the outputs: for outputs in different units
        it is led by the largest, and ``gp.evaluate`` gives the RMSE of each output.

        Protocol (``protocols.evaluate_causal`` with the first ``burn_in`` steps as the history): the steps after
        the first ``burn_in`` are cut into windows of ``window`` steps (stride ``window`` plus a tail window ending
        at the last step; all of them; one window of the remaining length when fewer steps remain); each window is
        forecast with its true inputs from the state a particle filter (``num_particles``) estimates from the
        ``burn_in`` outputs just before it, and scored by the RMSE of the mean of ``num_samples`` sampled runs;
        the score is the mean over windows. No output at or after a window's start is read for its forecast.
        """
        y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u)
        burn_in = check.positive_int(burn_in, "burn_in")
        if len(y) <= burn_in:
            raise ValueError(f"y: {len(y)} steps leave nothing to score after the burn_in of {burn_in} steps")
        ones = np.ones(self.spec.dim_y)  # scored in the units of y, not on the model's standardised scale
        data = EvaluationData(y[:burn_in], u[:burn_in], y[burn_in:], u[burn_in:], ones, ones)
        return evaluate(self, data, "causal", num_samples=num_samples, seed=seed, window=window, max_windows=None,
                        burn_in=burn_in, num_particles=num_particles)["rmse"]

    def summary(self):
        """The parameters as the model uses them, by name (:meth:`constrained_params`): name -> ndarray."""
        return self.constrained_params()

    # -- given -----------------------------------------------------------------------------------------------
    def _record_data_name(self, data_name):
        """Set ``data_name_`` from fit's ``data_name`` (``_names.data_name``): the name of the training data, which the
        model file keeps and ``evaluate`` compares with the name of the data set it scores; None: not told."""
        self.data_name_ = _names.data_name(data_name)

    def _remember_tail(self, data):
        """Keep the last :data:`DATA_TAIL` steps of the last training sequence (``data``: list of (y, u), model
        units)."""
        y, u = data[-1]
        self.data_tail_ = (np.array(y[-self.DATA_TAIL:]), np.array(u[-self.DATA_TAIL:]))

    def _own_start(self):
        """The ``Forecast.origin`` of a forecast from neither ``x0`` nor past data nor a data tail: "q(x0)" (a
        subclass whose start without data differs names its own)."""
        return "q(x0)"

    def _forecast_origin(self, y_past, u_past, x0=None):
        """(y_past, u_past, origin) of every model's ``_forecast``, in the model's units: where the forecast starts
        (``Forecast.origin``) and the data it reads, by one rule: "x0" (given; no data read), else "y_past" (the data
        given, checked as one sequence with a message naming ``y_past`` and ``u_past``), else "end of the training
        data" (the :data:`DATA_TAIL` steps ``fit`` kept, ``data_tail_``), else no data and :meth:`_own_start`."""
        if x0 is not None:
            return None, None, "x0"
        if y_past is not None:
            y_past, u_past = check.one_sequence(y_past, u_past, self.spec.dim_y, self.spec.dim_u, allow_missing=True,
                                                names=("y_past", "u_past"))
            return y_past, u_past, "y_past"
        if self.data_tail_ is not None:
            return (*self.data_tail_, "end of the training data")
        return None, None, self._own_start()

    #: Attributes a fit sets that say how it chose and trained (a subclass names its own, e.g. the ARX's order
    #: scores): a model file keeps them, as JSON under "fit_record" (:func:`_record_json`), so a loaded model says it.
    FIT_RECORD = ()

    def extra_state(self):
        """What a model file keeps beside the parameters, name -> ndarray: the units (``scaling_``), the name of
        the training data (a 0-d str array), the channel names (str arrays), ``train_fraction_``, the end of the
        training data (``data_tail_``), the interval calibration (``interval_scale_``) and the fit's record
        (:data:`FIT_RECORD`), when set."""
        state = {} if self.scaling_ is None else self.scaling_.arrays()
        record = _record_json({name: getattr(self, name, None) for name in self.FIT_RECORD})
        if any(value not in (None, [], {}) for value in record.values()):  # an unfitted model has none
            state["fit_record"] = np.array(json.dumps(record))
        if self.data_tail_ is not None:
            state["tail_y"], state["tail_u"] = self.data_tail_
        if self.interval_scale_ is not None:
            state["interval_scale"] = self.interval_scale_
        if self.data_name_ is not None:
            state["data_name"] = np.array(self.data_name_)
        state.update(_names.arrays(self.y_names_, self.u_names_))
        if self.train_fraction_ is not None:
            state["train_fraction"] = np.array(float(self.train_fraction_))
        return state

    def set_extra_state(self, state):
        """Restore :meth:`extra_state`'s dict; ValueError for an entry this model cannot take (the output scaling
        of old files is dropped: ``units.Scaling.from_state``)."""
        state = dict(state)
        record = state.pop("fit_record", None)
        if record is not None:  # absent from files written before it was kept
            for name, value in _record_value(json.loads(str(np.asarray(record)[()]))).items():
                if name in self.FIT_RECORD:
                    setattr(self, name, value)
        data_name = state.pop("data_name", None)
        tail_y, tail_u = state.pop("tail_y", None), state.pop("tail_u", None)
        if tail_y is not None:  # absent from files of models never fitted; extra_state writes tail_u beside it
            self.data_tail_ = (np.asarray(tail_y, dtype=np.float64).reshape(len(tail_y), self.spec.dim_y),
                               np.asarray(tail_u, dtype=np.float64).reshape(len(tail_y), self.spec.dim_u))
        if "interval_scale" in state:
            scale = np.asarray(state.pop("interval_scale"), dtype=np.float64)
            if scale.shape != (self.spec.dim_y,) or not np.all(np.isfinite(scale)) or np.any(scale < 1.0):
                raise ValueError(f"state: interval_scale must be {self.spec.dim_y} finite factors of at least 1, got "
                                 f"{scale!r}")
            self.interval_scale_ = scale
        for kind, names in zip(("y_names_", "u_names_"), _names.from_arrays(state, self.spec.dim_y, self.spec.dim_u)):
            if names is not None:  # absent from files written before names were kept
                setattr(self, kind, names)
        if "train_fraction" in state:
            self.train_fraction_ = float(state.pop("train_fraction"))
        unknown = sorted(set(state) - {"y_mean", "y_std"} - {"scaling_" + name for name in SCALING_FIELDS})
        if unknown:
            raise ValueError(f"state: a {type(self).__name__} cannot take the entries {unknown}")
        scaling = Scaling.from_state(state, self.spec.dim_y, self.spec.dim_u)
        if scaling is not None:
            self.scaling_ = scaling
        if data_name is not None:
            self._record_data_name(str(data_name[()]))

    def _sequences(self, y, u, names=("y", "u"), allow_missing=False):
        """y, u (one sequence or lists; named ``names`` in the messages; NaN outputs admitted as missing with
        ``allow_missing``) checked, as a list of (y (T, d_y), u (T, d_u)) pairs."""
        out = []
        for yi, ui in zip(*sequence_lists(y, u)):
            yi, ui = check.sequences(yi, ui, self.spec.dim_y, self.spec.dim_u, allow_missing, names)
            if yi.shape[0] != 1:
                raise ValueError(f"{names[0]}: expected a sequence (T, {self.spec.dim_y}) or a list of them, got "
                                 f"shape {yi.shape}")
            out.append((yi[0], ui[0]))
        return out

    def _future_inputs(self, u_future, steps):
        """The future inputs u_future (T, d_u) checked; for a model without inputs zeros (T, 0), T = ``steps`` or the
        length of a u_future of shape (T, 0). ``steps`` given beside u_future must be its length."""
        dim_u = self.spec.dim_u
        if u_future is None:
            if dim_u:
                raise ValueError(f"u_future: the model has dim_u = {dim_u} inputs, got None")
            if steps is None:
                raise ValueError("steps: a model without inputs (dim_u = 0) forecasts `steps` steps; give steps (or "
                                 "u_future of shape (T, 0))")
            return np.zeros((check.positive_int(steps, "steps"), 0))
        if dim_u == 0:
            given = check.rectangular(u_future, "u_future")
            if given.ndim != 2 or given.shape[1] != 0 or given.shape[0] == 0 or given.dtype.kind not in "biuf":
                raise ValueError(f"u_future: the model has no inputs (dim_u = 0): expected None with steps, or a "
                                 f"numeric array of shape (T, 0), got {type(u_future).__name__} of shape "
                                 f"{given.shape}")
            u_future = np.zeros(given.shape)
        else:
            u_future = check.finite_array(check.columns(u_future, dim_u, "u_future"), "u_future", (2,))
            if u_future.shape[1] != dim_u:
                raise ValueError(f"u_future: expected shape (T, {dim_u}), got {u_future.shape}")
        if steps is not None and check.positive_int(steps, "steps") != len(u_future):
            raise ValueError(f"steps: {steps} steps asked, but u_future has {len(u_future)}; give one of them, or "
                             "both alike")
        return u_future

    def future_inputs_in_model_units(self, u_future, steps):
        """The future inputs ``u_future`` (T, d_u) checked (zeros (``steps``, 0) for a model without inputs) and in
        model units: what an online filter's ``predict`` hands to the forecast."""
        return self._u_to_model(self._future_inputs(u_future, steps), "u_future")

    def _forecast_result(self, samples, states, obs_var, origin=None, output_var=None):
        """The :class:`Forecast` of noise-free outputs ``samples`` (S, T, d_y), ``states`` (S, T, d_x) and the
        diagonal ``obs_var`` of R, in model units with the scaling that maps them back; ``origin`` says where it
        starts; ``output_var`` (T, d_y): the outputs' exact variance where the model knows it."""
        y_mean, y_std = (None, None) if self.scaling_ is None else (self.scaling_.y_mean, self.scaling_.y_std)
        return Forecast(samples=samples, states=states, obs_var=obs_var, y_mean=y_mean, y_std=y_std, origin=origin,
                        std_scale=self.interval_scale_, output_var=output_var)


#: The ids of the models whose ``fit`` is under way (:func:`_fit_surface`).
_FITTING = set()


def _fit_surface(fit):
    """``fit`` with the keyword arguments ``y_names`` and ``u_names`` (the channel names, checked against the
    model's dimensions before fitting and kept in ``y_names_``, ``u_names_`` after it; None: unnamed) and, for a
    ``fit`` without ``**options``, a ValueError naming an unknown keyword argument and the valid ones. A fit that
    raises (data it refuses, an interrupt) leaves the model as it was before the call: a fit clears the units of the
    former one first, and parameters of one fit in the units of none would forecast wrongly without a word (a
    checkpoint keeps an interrupted run's progress)."""
    parameters = list(inspect.signature(fit).parameters.values())[1:]
    named = [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters)

    @functools.wraps(fit)
    def fit_with_names(self, *args, y_names=None, u_names=None, **options):
        if not takes_any:
            check.keywords(options, allowed=named + ["y_names", "u_names"], owner=f"{type(self).__name__}.fit")
        names = (_names.checked(y_names, self.spec.dim_y, "y_names"),
                 _names.checked(u_names, self.spec.dim_u, "u_names"))
        if id(self) in _FITTING:  # a subclass's fit calling its base's: the outer call keeps the snapshot
            result = fit(self, *args, **options)
        else:
            before = copy.deepcopy(self.__dict__)
            _FITTING.add(id(self))
            try:
                self._rebuilt_for_fit()
                result = fit(self, *args, **options)
            except BaseException:
                self.__dict__.clear()
                self.__dict__.update(before)
                raise
            finally:
                _FITTING.discard(id(self))
        self.y_names_, self.u_names_ = names
        return result

    fit_with_names._surface = True
    return fit_with_names


class GradientTrainedModel(StateSpaceModel):
    """The GP models and the DSSM (module docstring): parameters in ``self.params`` (dict of unconstrained arrays)
    trained by Adam on the ELBO, states inferred by the particle filter."""

    #: Hook (module docstring): the q(x0) network, set by the subclass; None: q(x0) is a free Gaussian.
    recognition = None

    _filter_method = "particle"

    @property
    def filter_method(self):
        """How :meth:`filter` (and so :meth:`forecast` from past data, the evaluation protocols and the default of
        :meth:`online_filter`) infers states: "particle" (the fully adapted particle filter) or "enkf" (the ensemble
        Kalman filter); ``filtering`` module. Set to another value than those of :data:`FILTER_METHODS`, a
        ValueError (a model file with such a value would not load)."""
        return self._filter_method

    @filter_method.setter
    def filter_method(self, value):
        if not isinstance(value, str) or value not in FILTER_METHODS:
            raise ValueError(f"filter_method: expected one of {FILTER_METHODS}, got {value!r}")
        self._filter_method = value
        signature = inspect.signature(type(self))
        if "filter_method" in signature.parameters:  # a constructor argument: get_params (a clone) keeps the change
            bound = signature.bind_partial(*self._arguments[0], **self._arguments[1])
            bound.arguments["filter_method"] = value
            self._arguments = (bound.args, bound.kwargs)

    def __init__(self, seed=0, standardize=True):
        super().__init__(seed, standardize)
        self.params = {}
        self.clear_training_record()
        self._params_from_fit = False  # whether the parameters are a fit's (fit: they are then no start)

    def clear_training_record(self):
        """Empty ``history_`` (loss per step) and ``training_log_`` (the steps rejected for a non-finite loss and
        the jitter raised): a new training run starts its own record."""
        self.history_, self.training_log_ = [], {"rejected_steps": [], "jitter": []}

    # -- hooks -----------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def param_shapes(self):
        """Name -> shape of every unconstrained parameter."""

    @abc.abstractmethod
    def _start_afresh(self):
        """Set the parameters to the random initialisation drawn from ``seed``, as construction does (:meth:`fit`
        starts here from a former fit's parameters)."""

    @abc.abstractmethod
    def elbo_function(self, y, u, rng, num_samples, num_windows=None, **options):
        """The ELBO of the windows y (B, T, d_y), u (B, T, d_u) (checked arrays) with noise drawn from ``rng``, as
        a function of the parameter dict; ``num_windows`` is the data-set size for the unbiased weighting (None:
        the windows given are all the data); ``options`` are the model's own (e.g. a backend)."""

    def _objective(self, y, u, num_samples, seed, num_windows, **options):
        model_options = [p.name for p in list(inspect.signature(self.elbo_function).parameters.values())[5:]
                         if p.kind is p.POSITIONAL_OR_KEYWORD or p.kind is p.KEYWORD_ONLY]  # after num_windows
        check.keywords(options, allowed=model_options, owner=f"{type(self).__name__}.elbo",
                       also=("num_samples", "seed", "num_windows"))
        y, u = check.sequences(y, u, self.spec.dim_y, self.spec.dim_u)
        num_samples = check.positive_int(num_samples, "num_samples")
        if num_windows is not None:
            num_windows = check.positive_int(num_windows, "num_windows")
        rng = np.random.default_rng(check.seed(seed))
        return self.elbo_function(y, u, rng, num_samples, num_windows, **options)

    def elbo(self, y, u=None, num_samples=50, seed=0, num_windows=None, **options):
        """The ELBO of sequences ``y`` (T, d_y) or (B, T, d_y) with inputs ``u`` of the same leading shape.

        The same ``seed`` draws the same noise, so the value is a deterministic function of the parameters;
        ``num_windows`` is the data-set size for the unbiased weighting (default: the sequences given are the whole
        data); ``options`` are the model's (:meth:`elbo_function`). A non-finite value (data far outside the
        model's scale) raises ValueError."""
        objective = self._objective(y, u, num_samples, seed, num_windows, **options)
        with np.errstate(over="ignore", invalid="ignore"):  # reported by finite_elbo
            return finite_elbo(float(objective(self.params)), y, u)

    def elbo_and_grad(self, y, u=None, num_samples=50, seed=0, num_windows=None, **options):
        """(ELBO, gradient) with the gradient a dict keyed like :meth:`get_learned_params` (w.r.t. unconstrained
        values)."""
        objective = self._objective(y, u, num_samples, seed, num_windows, **options)
        with blas_single_threaded(), np.errstate(over="ignore", invalid="ignore"):
            value, grad = value_and_grad(objective)(self.params)
        return finite_elbo(float(value), y, u), {name: np.asarray(g, dtype=np.float64) for name, g in grad.items()}

    def minibatch_loss(self, y, u, rng, num_samples, num_windows, x0=None):
        """The training loss of the windows y (B, T, d_y), u (B, T, d_u) with fresh noise from ``rng``: -ELBO, per
        window under the unbiased weighting; ``x0`` per-window initial-state moments (models that take them)."""
        objective = self.elbo_function(y, u, rng, num_samples, num_windows, **({} if x0 is None else {"x0": x0}))
        scale = 1.0 / num_windows if self.kl_weighting == "unbiased" else 1.0

        def loss(params):
            return -scale * objective(params)

        return loss

    @abc.abstractmethod
    def transition_moments(self):
        """``(x_prev (N, d_x), u_t (d_u,) or None, k) -> (mean (N, d_x), cov (N, d_x, d_x))`` of x_t | x_{t-1}."""

    def filter_transition(self):
        """The transition as :meth:`filter`, :meth:`smooth`, :meth:`online_filter` and the filter of a forecast
        from past data run it: by default :meth:`transition_moments`."""
        return self.transition_moments()

    @abc.abstractmethod
    def obs_var(self):
        """Diagonal of R (d_y,)."""

    @abc.abstractmethod
    def _free_run(self, x0, u, rng):
        """Sampled states (S, T, d_x) from initial states x0 (S, d_x) under inputs u (T, d_u)."""

    # -- parameters ------------------------------------------------------------------------------------------
    def get_learned_params(self):
        """Copies of the unconstrained parameters, name -> ndarray."""
        return {name: value.copy() for name, value in self.params.items()}

    def set_learned_params(self, params):
        """Replace the parameters with ``params`` (same names and shapes as :meth:`get_learned_params`); returns
        the model."""
        shapes = self.param_shapes()
        if not isinstance(params, dict) or set(params) != set(shapes):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"params: expected a dict with keys {sorted(shapes)}, got {got}")
        new = {}
        for name, shape in shapes.items():
            if 0 in shape:  # e.g. G (d_x, 0) of an autonomous model: nothing to check but the shape
                value = np.asarray(params[name], dtype=np.float64).copy()
            else:
                value = check.finite_array(params[name], f"params[{name!r}]", (len(shape),)).copy()
            if value.shape != shape:
                raise ValueError(f"params[{name!r}]: expected shape {shape}, got {value.shape}")
            new[name] = value
        self.params = new
        self._params_from_fit = False  # set from outside a fit: the next fit starts here
        return self

    # -- latent states and forecasts ------------------------------------------------------------------------
    def emission(self):
        """C = [I, 0] (d_y, d_x) and the diagonal of R (d_y,)."""
        return np.eye(self.spec.dim_y, self.spec.dim_x), self.obs_var()

    def filter(self, y, u=None, num_particles=1000, seed=0, init_window=50, **kwargs):
        """Particle filter over y (T, d_y) with inputs u (T, d_u), both in original units (NaN outputs are
        missing): ``filtering.FilterResult`` (filtered state means and covariances, filtered and predicted output
        moments and innovations in original units, the log marginal likelihood estimate of y in original units,
        final particles). The filter starts from q(x0) (for a recognition network: applied to the first
        ``init_window`` steps, or to as many as the network reads where that is more (an MLP's ``num_steps``); see
        :meth:`filter_start` for missing outputs among them); ``kwargs`` go to
        :func:`gpssm_np.filtering.particle_filter` (proposal, ess_threshold, store_particles); the proposal defaults
        to the fully adapted one, or the ensemble Kalman filter when :attr:`filter_method` is "enkf". A model that
        is linear Gaussian may filter exactly instead (``GPSSM._filter``: the result's proposal is then "kalman")."""
        check.keywords(kwargs, GradientTrainedModel.filter, FILTER_OPTIONS, owner=f"{type(self).__name__}.filter")
        check.seed(seed)
        result = self._filter(self.filter_transition(), self._y_to_model(y), self._u_to_model(u), num_particles, seed,
                              init_window, **kwargs)
        if self.scaling_ is None:
            return result
        return result.in_original_units(self.scaling_)

    def _filter(self, transition, y, u, num_particles=1000, seed=0, init_window=50, **kwargs):
        """:meth:`filter` in model units, through ``transition``."""
        y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u, allow_missing=True)
        init_window = check.positive_int(init_window, "init_window")
        kwargs.setdefault("proposal", self._default_proposal())
        if self.recognition is not None:  # a network reads its own steps (an MLP's num_steps) whatever init_window
            init_window = max(init_window, self.recognition.min_steps)
        mean, cov = as_covariance(*self.filter_start(y[:init_window], u[:init_window]))
        C, R = self.emission()
        return particle_filter(transition, C, R, y, u if self.spec.dim_u else None, mean, cov,
                               num_particles=check.positive_int(num_particles, "num_particles"),
                               rng=np.random.default_rng(seed), **kwargs)

    def _default_proposal(self):
        """The proposal of the model's filters: "enkf" when :attr:`filter_method` is "enkf", else "adapted"."""
        return "enkf" if self.filter_method == "enkf" else "adapted"

    def filter_start(self, y, u):
        """Mean (d_x,) and variances (d_x,) or covariance (d_x, d_x) of the state the particle filter starts from,
        before the first steps y (T0, d_y), u (T0, d_u) of a sequence (model units), in which NaN outputs are
        missing.

        A free q(x0) does not read them. A recognition network reads complete steps only: it is applied to the
        steps before the first one with a missing output, q(x0 | y_{1:k}, u_{1:k}), which is still a distribution
        of the state before y_1. When fewer steps than the network needs are complete before it (y_1 itself
        missing, or fewer than an MLP's ``num_steps``), the filter starts from the prior p(x0) = N(0, I), as a
        forecast without data does, and a warning says so.
        """
        if self.recognition is None:
            return self._free_x0()
        missing = np.flatnonzero(np.isnan(y).any(axis=1))
        complete = int(missing[0]) if len(missing) else len(y)
        needed = self.recognition.min_steps
        if complete >= needed:
            return self._q_x0(y[:complete], u[:complete])
        where = (f"before the first missing output (step {complete + 1})" if len(missing)
                 else "in the sequence")
        warn(f"y: the recognition network of this {type(self).__name__} reads q(x0) from the first "
             f"{needed} complete step{'s' if needed > 1 else ''} of a sequence, but only {complete} "
             f"{'is' if complete == 1 else 'are'} {where}; the filter starts from the prior N(0, I) instead",
             UserWarning)
        return np.zeros(self.spec.dim_x), np.ones(self.spec.dim_x)

    def smooth(self, y, u=None, num_particles=1000, num_trajectories=100, seed=0, init_window=50):
        """Smoothed state trajectories by backward simulation (FFBSi) given y (T, d_y), u (T, d_u) in original
        units (NaN outputs are missing, as in :meth:`filter`): array (num_trajectories, T, d_x). The filter draws
        from ``seed``, the backward pass from ``seed + 1`` (as the LGSSM's smoother)."""
        seed = check.seed(seed)
        y, u = self._y_to_model(y), self._u_to_model(u)
        result = self._filter(self.filter_transition(), y, u, num_particles, seed, init_window, store_particles=True)
        _, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u, allow_missing=True)
        return backward_simulation(self.transition_moments(), result, u if self.spec.dim_u else None,
                                   check.positive_int(num_trajectories, "num_trajectories"),
                                   np.random.default_rng(seed + 1))

    def _forecast(self, u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window):
        """Free-running forecast (``forecast`` module) with known future inputs ``u_future`` (T, d_u).

        The initial state comes from, in order: ``x0 = (mean, var)`` if given (var: the variances (d_x,) or a
        covariance matrix (d_x, d_x)); a particle filter over ``y_past`` (with ``u_past``) if given, which uses no
        data after the forecast origin (``num_particles`` particles, ``num_samples`` of them drawn by weight); after
        ``fit``, the same filter over the last :data:`DATA_TAIL` steps of the training data, so that the forecast
        continues from where the data ended; else q(x0) (free Gaussian), or p(x0) = N(0, I) for a model whose q(x0)
        is a recognition network. ``Forecast.origin`` says which. For an autonomous model (d_u = 0) give ``steps``
        (or u_future (T, 0)).
        """
        spec = self.spec
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        y_past, u_past, origin = self._forecast_origin(y_past, u_past, x0)
        if x0 is None and y_past is not None:
            result = self._filter(self.filter_transition(), y_past, u_past, num_particles, seed, init_window)
            return self.forecast_from_particles(result.particles, result.log_weights, u_future, num_samples, rng,
                                                 origin)
        if x0 is not None:
            mean, spread = check.x0(x0, spec.dim_x)
        else:
            mean, spread = self._prior_x0()
        if spread.ndim == 2:  # a covariance matrix
            x0_particles = rng.multivariate_normal(mean, spread, size=num_samples, method="eigh")
        else:
            x0_particles = mean + np.sqrt(spread) * rng.standard_normal((num_samples, spec.dim_x))
        states = self._free_run(x0_particles, u_future, rng)  # (S, T, d_x)
        return self._forecast_result(states[:, :, :spec.dim_y], states, self.obs_var(), origin)

    def _own_start(self):
        """"q(x0)", or "p(x0)" for a model whose q(x0) is a recognition network: without data it starts from the
        prior N(0, I) (:meth:`_prior_x0`)."""
        return "p(x0)" if self.recognition is not None else super()._own_start()

    def online_filter(self, num_particles=500, seed=0, state=None, x0=None, ess_threshold=0.5, proposal=None):
        """A particle filter to run one measurement at a time (for a model embedded in a controller): an
        :class:`OnlineFilter`.

        Without ``state`` it starts from ``x0 = (mean, var)`` if given, else where :meth:`filter` starts without
        data (q(x0) when it is a free Gaussian, p(x0) = N(0, I) for a recognition network), with ``num_particles``
        particles and the generator ``numpy.random.default_rng(seed)``: for a model whose q(x0) is a free Gaussian
        (ODGPSSM and PRSSM by default), ``update`` over y_1..y_T then gives exactly, bit for bit, what
        ``filter(y, u, num_particles, seed)`` gives. With ``state`` (a dict from :meth:`OnlineFilter.state`) it
        continues where that filter was; ``num_particles``, ``seed`` and ``x0`` are then not used. ``proposal``
        (default: that of :meth:`filter`, by :attr:`filter_method`) and ``ess_threshold`` as ``filter`` takes them.
        """
        if state is not None:
            return OnlineFilter.resume(self, state)
        seed = check.seed(seed)
        mean, var = self._prior_x0() if x0 is None else check.x0(x0, self.spec.dim_x)
        return OnlineFilter.start(self, mean, var, num_particles, seed, ess_threshold,
                                  self._default_proposal() if proposal is None else proposal)

    def _prior_x0(self):
        """Mean (d_x,) and variances (d_x,) or covariance (d_x, d_x) of the state where a run without data starts:
        q(x0) when it is a free Gaussian, p(x0) = N(0, I) when a recognition network gives q(x0) from data."""
        if self.recognition is None:
            return self._free_x0()
        return np.zeros(self.spec.dim_x), np.ones(self.spec.dim_x)

    def _free_x0(self):
        """The free Gaussian q(x0) in the form the filters draw from: (mean (d_x,), variances (d_x,)); a model whose
        q(x0) has a full covariance gives (mean, covariance (d_x, d_x))."""
        return self._q_x0()

    def forecast_from_particles(self, particles, log_weights, u_future, num_samples, rng, origin):
        """The forecast (model units) from ``num_samples`` of the weighted ``particles`` (N, d_x) drawn by weight
        with ``rng``, which then drives the free run under ``u_future`` (T, d_u)."""
        weights = np.exp(log_weights - np.max(log_weights))
        x0_particles = particles[rng.choice(len(weights), num_samples, p=weights / weights.sum())]
        states = self._free_run(x0_particles, u_future, rng)  # (S, T, d_x)
        return self._forecast_result(states[:, :, :self.spec.dim_y], states, self.obs_var(), origin)

    # -- training --------------------------------------------------------------------------------------------
    def fit(self, y, u=None, plan=None, epochs=None, seed=None, progress=None, checkpoint=None, resume=False,
            data_name=None):
        """Maximise the ELBO with Adam over shuffled minibatches of windows, under ``plan`` (an
        :class:`gpssm_np.training_loop.EpochPlan`, or a dict of changes to its defaults, the authors'; ``epochs``:
        the same change written directly).

        ``y`` (T, d_y) or a list of such sequences; ``u`` likewise (or None when d_u = 0). Windows of ``seq_len``
        steps at ``stride`` are cut from each sequence (plus a tail window, as the authors do). The loss per step
        is -ELBO, divided by the number of windows under the unbiased weighting (so it is per window). Returns
        ``self``; ``history_`` holds the loss of each step. Parameters named in the plan's ``fixed`` keep their
        initial values (e.g. ``("x0_mean", "x0_var")`` when the initial state is known). ``seed``: the training's
        random numbers (None: the model's seed).

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

        Where training starts: the model's parameters as construction drew them from its ``seed``, or as
        ``set_learned_params`` (or ``gp.load``) set them since (initial values of one's own, e.g. the inducing
        inputs). Parameters a former fit left are no start: a fitted model starts again from the initialisation
        construction drew (``_start_afresh``), as scikit-learn's ``fit`` does, so fitting a model twice gives what
        one fit of a new model gives.

        ``data_name`` (as every model's ``fit`` takes it): the name of the training data, e.g. ``Dataset.name``;
        kept in ``data_name_`` and in the model file, so that ``evaluate`` warns when it scores the model on a data
        set of another name. ``progress``: None (the default) shows a line per epoch on stderr once the fit has run
        for a few seconds, True from the start, False never (``gpssm_np._progress``).
        """
        self._record_data_name(data_name)
        progress = check_progress(progress)
        plan = epoch_plan(plan, epochs)
        fit_started()
        archive.check_checkpoint(checkpoint, resume)
        if plan.checkpoint_steps is not None and checkpoint is None:
            raise ValueError("checkpoint_steps: needs checkpoint=path to write to")
        data = self._training_data(y, u)
        Y, U = windows([yi for yi, _ in data], [ui for _, ui in data], plan.seq_len, plan.stride)
        rng = np.random.default_rng(self.seed if seed is None else check.seed(seed))
        frozen = self._check_fixed(plan.fixed)
        if self._params_from_fit:
            self._start_afresh()
        self.clear_training_record()
        optimizer = Adam(lr=plan.lr, clip_norm=plan.clip_norm)
        fingerprint = None if checkpoint is None else fit_fingerprint(
            self, [yi for yi, _ in data], [ui for _, ui in data], plan, self.seed if seed is None else seed, frozen,
            EPOCH_CHECKPOINT_LAYOUT, plan_left_out=RESUMABLE_PLAN_FIELDS)
        run_epochs(self, Y, U, rng, optimizer, frozen, plan.epochs, plan.batch_size, plan.num_samples,
                   plan.max_rejections, checkpoint, plan.checkpoint_every, plan.checkpoint_steps, resume, progress,
                   fingerprint)
        self._params_from_fit = True
        self._remember_tail(data)
        return self._attach_scaling()

    def train_step(self, y, u, rng, num_samples, num_windows, optimizer, frozen, max_rejections, x0=None):
        """One accepted Adam step on the minibatch (y, u), rejecting non-finite steps (see :meth:`fit`); ``x0``:
        per-window q(x0) moments (mean (B, d_x), var (B, d_x)) or None for the model's own q(x0).
        :func:`gpssm_np.training_loop.train_step`."""
        train_step(self, y, u, rng, num_samples, num_windows, optimizer, frozen, max_rejections, x0)

    def increase_jitter(self):
        """Hook for models with a Cholesky in their loss: raise the jitter, True if it could still be raised."""
        return False

    def _check_fixed(self, fixed):
        names = (fixed,) if isinstance(fixed, str) else fixed
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"fixed: expected parameter names (a str or a list of them), got {fixed!r}")
        fixed = tuple(names)
        self._check_param_names(fixed, "fixed")
        return fixed

    def _check_param_names(self, names, argname):
        """ValueError naming ``argname`` when any of ``names`` is not a parameter of the model."""
        unknown = sorted(set(names) - set(self.params))
        if unknown:
            raise ValueError(f"{argname}: unknown parameter names {unknown}; expected names from {sorted(self.params)}")


def _record_json(value):
    """A fit's record (:data:`StateSpaceModel.FIT_RECORD`) in JSON's types: NumPy values as Python's, tuples as
    lists, and a dict whose keys are not all strings (the ARX's (na, nb) -> score) as ``{"__pairs__": [[key,
    value], ...]}``; JSON writes inf and NaN as Infinity and NaN. :func:`_record_value` undoes it."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _record_json(v) for k, v in value.items()}
        return {"__pairs__": [[_record_json(k), _record_json(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_record_json(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


def _record_value(value):
    """Undo :func:`_record_json`: pairs back to a dict, a key that was a tuple back to a tuple."""
    if isinstance(value, dict):
        if set(value) == {"__pairs__"}:
            return {(tuple(k) if isinstance(k, list) else k): _record_value(v) for k, v in value["__pairs__"]}
        return {k: _record_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_record_value(v) for v in value]
    return value
