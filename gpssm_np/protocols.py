r"""Forecast evaluation protocols on a data set (``datasets.Dataset``, or test arrays with an optional history before
them): ``paper``, ``causal``, ``freerun``, ``envi``, ``simulate``.

All five forecast with the true inputs u and assimilate no output inside the scored span; they differ in how the
initial state of that span is chosen:

* ``"paper"``: the authors' protocol exactly (docs/design.md, authors' code s8): 100-step windows of the test half
  at stride 100 plus a tail window, at most the first 6; q(x0) from the model's recognition network (or its free
  q(x0)) **applied to the same window it then forecasts**, i.e. it sees the window's future outputs when choosing
  x0; 50 particles; the particle mean of the noise-free output; RMSE per window on the standardised scale,
  averaged over windows. Needed to compare with the paper's Table 1; not a real forecast.
* ``"causal"``: the same windows, but the state at each window start comes only from data before it: a particle
  filter over the ``burn_in`` observations that precede the window (reaching back into the training half for the
  first windows), started from q(x0) of its first steps, then a free run over the window. No output at or after
  the window start is used.
* ``"freerun"``: one free run over the whole test half, from the filtered state at the end of the training half
  (PR-SSM / EnVI style); RMSE also in original units.
* ``"envi"``: EnVI's Table II protocol as its code runs it (Lin et al., IEEE TSP 2024; ../shared/research/
  envi_reference.md s5): the filtered mean at the last training step is propagated deterministically through the
  transition's mean, x_t = E[x_t | x_{t-1}] (no noise, one trajectory), over the whole test half with the true inputs;
  the RMSE in original units is sqrt(mean_t (y_t - yhat_t)^2 std^2) for one output, as EnVI's code computes it (for
  several outputs, the RMSE of each output only). Unlike EnVI's code, no test point is scored twice (its loader repeats
  the last 38 Actuator and 2 Gas Furnace points). Test arrays without a history start from the filtered mean at the end
  of the model's own training data, as its forecasts do. A model without a transition mean (ARX, LGSSM) is scored by the
  mean of its free run from the same origin. It has no predictive spread, so its NLPD and coverage are None.

* ``"simulate"``: system identification's simulation protocol (docs/guide.md, "Evaluation protocols"; e.g.
  Schoukens and Noel's benchmark reports): only the first ``n_init`` outputs of the test record are read (default
  5; no training data before them), the state at their end is filtered from them, and the rest of the record is
  simulated from its inputs alone. RMSE over the simulated steps, standardised and in original units. It asks for a
  model that stays right over hundreds of steps, not only over a 100-step window.

A test part shorter than the window (default 100 steps) is scored as one window of its own length (a logged note
says so; the result's "window" records the length used). When nothing precedes a window (test arrays given
without a history), its forecast starts where the model's forecasts without past data start: the state filtered
at the end of its own training data (``forecast``'s origin "end of the training data"; the ARX: its last outputs),
or, for a model without it, its q(x0) or prior.

Besides RMSE each protocol but ``"envi"`` reports the mean negative log predictive density of the outputs (a
Gaussian with the particle mean and variance of C x_t plus R, its standard deviation widened by the model's
calibration, ``interval_scale_``: ``Forecast.std``) and the coverage of its 95% interval (``Forecast.interval``).

Units (:func:`evaluation_data`). The model is given data in the units it was fitted in (``gpssm_np.units``)
and the scores are computed on a standardised scale: a ``Dataset``'s (its ``y_test`` arrays), or for test arrays
the model's own standardisation (``scaling_``; the arrays' units when the model has none). A ``Dataset`` is given to
a model as its standardised arrays (``ds.y_train`` is what a model is normally fitted on), except to a model fitted
on the raw training part (``ds.y_raw[:n_train]``: its ``scaling_`` equals the data set's statistics), which gets
the raw series. A model fitted with ``standardize=False`` keeps no statistics, so this cannot be told: it gets the
standardised arrays, with a warning where they are not the raw series. "rmse_original_units_per_output" maps the
RMSE of each output back with the data set's standard deviations (for test arrays: the model's).
"""
import logging
from collections import namedtuple

import numpy as np

from . import _validation as check
from ._names import align_dataset
from ._warn import warn
from .datasets.windowing import window_starts
from .metrics import coverage, nlpd, rmse

PROTOCOLS = ("causal", "simulate", "freerun", "envi", "paper")
#: Outputs of the test record the simulate protocol reads before it simulates the rest.
N_INIT = 5
#: The keyword arguments ``evaluate`` passes on to each protocol's function.
PROTOCOL_OPTIONS = {"paper": ("window", "max_windows"), "causal": ("window", "max_windows", "burn_in", "num_particles"),
                    "freerun": ("num_particles",), "envi": ("num_particles",), "simulate": ("n_init", "num_particles")}

logger = logging.getLogger(__name__)

#: What the protocols read, in the units the model takes: the history before the test part (``y_train`` (T_h, d_y),
#: ``u_train`` (T_h, d_u), possibly empty), the test part (``y_test`` (T, d_y), ``u_test`` (T, d_u)), the per-output
#: divisor ``y_scale`` (d_y,) that brings them to the standardised scale the scores are computed on, and the
#: standard deviations ``y_std`` (d_y,) that map that scale to original units (module docstring, "Units").
EvaluationData = namedtuple("EvaluationData", "y_train u_train y_test u_test y_scale y_std")
#: What :func:`evaluation_data` reads of a ``datasets.Dataset`` (and, for a model fitted on its raw series, the
#: statistics and ``to_original_y``, ``to_original_u``).
_DATASET_FIELDS = ("y_train", "u_train", "y_test", "u_test", "y_std")


def scored_windows(num_steps, window=100, max_windows=6):
    """Start indices of the scored windows of a test half of ``num_steps`` steps: stride ``window`` plus a tail
    window (the authors' loader), the first ``max_windows`` of them (all of them for None)."""
    if max_windows is not None:
        max_windows = check.positive_int(max_windows, "max_windows")
    return [int(s) for s in window_starts(num_steps, window, window)][:max_windows]


def window_length(num_steps, window=100):
    """The length of the scored windows of a test part of ``num_steps`` steps: ``window``, or ``num_steps`` when the
    test part is shorter (with a logged note)."""
    window = check.positive_int(window, "window")
    if num_steps < window:
        logger.warning("the test part has %d steps, fewer than the window of %d: scoring %d-step windows instead",
                       num_steps, window, num_steps)
        return num_steps
    return window


def _scores(forecast, y, scale):
    """The scores of ``forecast`` against ``y`` (T, d_y), both divided by ``scale`` (d_y,) (the standardised
    scale; a division by 1 is exact)."""
    y, mean, std = np.asarray(y) / scale, forecast.mean / scale, forecast.std / scale
    lower, upper = (bound / scale for bound in forecast.interval(0.95))
    return {"rmse": rmse(y, mean), "nlpd": nlpd(y, mean, std), "coverage95": coverage(y, lower, upper),
            "rmse_per_output": np.sqrt(np.mean((y - mean) ** 2, axis=0))}


def _summarise(protocol, windows, scores, y_std, window):
    result = {"protocol": protocol, "windows": windows, "window": window, "per_window": [s["rmse"] for s in scores]}
    for key in ("rmse", "nlpd", "coverage95"):
        result[key] = float(np.mean([s[key] for s in scores]))
    result["rmse_per_output"] = [float(v) for v in np.mean([s["rmse_per_output"] for s in scores], axis=0)]
    # each output's RMSE scales with its own standard deviation (its own units): never averaged across outputs
    per_output = np.mean([s["rmse_per_output"] for s in scores], axis=0) * y_std
    result["rmse_original_units_per_output"] = [float(v) for v in per_output]
    result["rmse_original_units"] = float(per_output[0]) if len(per_output) == 1 else None  # units differ
    return result


def _past(y, u, start, stop):
    """The outputs and inputs of the steps ``start..stop - 1`` as (y_past, u_past), or (None, None) when there are
    none (the forecast then starts where the model's own training data ended, or from its q(x0) or prior)."""
    return (y[start:stop], u[start:stop]) if stop > start else (None, None)


def evaluate_paper(model, dataset, num_samples=50, seed=0, window=100, max_windows=6):
    """The authors' protocol (module docstring). Returns a dict (see :func:`evaluate`). A model without a latent
    state (``model.has_latent_state`` False, e.g. ARX) has no x0 to infer from the window; it is scored as in the
    causal protocol, from the observations before each window."""
    dataset = evaluation_data(model, dataset)
    if not getattr(model, "has_latent_state", True):
        return dict(evaluate_causal(model, dataset, num_samples, seed, window, max_windows), protocol="paper")
    window = window_length(len(dataset.y_test), window)
    starts = scored_windows(len(dataset.y_test), window, max_windows)
    scores = []
    for k, s in enumerate(starts):
        y_w, u_w = dataset.y_test[s:s + window], dataset.u_test[s:s + window]
        x0 = model.q_x0(y_w, u_w, full_cov=_full_free_x0(model))  # reads the window it forecasts
        fc = model.forecast(u_w, x0=x0, num_samples=num_samples, seed=seed + k)
        scores.append(_scores(fc, y_w, dataset.y_scale))
    return _summarise("paper", starts, scores, dataset.y_std, window)


def _full_free_x0(model):
    """Whether ``model``'s free q(x0) holds a full covariance (a warm start's, ``x0_sqrt``): the paper protocol then
    starts from it, not from its diagonal; a diagonal q(x0) keeps its variances."""
    return getattr(getattr(model, "spec", None), "x0_covariance", None) == "full"


def causal_forecasts(model, dataset, num_samples=50, seed=0, window=100, max_windows=6, burn_in=100,
                     num_particles=1000):
    """The forecasts the causal protocol scores: a list of (start in the test half, ``Forecast``) per window, each
    made from the ``burn_in`` observations before the window only (``tests/test_no_lookahead.py`` holds it to
    that); a window with nothing before it starts where the model's training data ended (a fitted gradient-trained
    model, ``estimator.GradientTrainedModel.forecast``) or from its q(x0) or prior."""
    dataset = evaluation_data(model, dataset)
    burn_in = check.positive_int(burn_in, "burn_in")
    window = window_length(len(dataset.y_test), window)
    y_all = np.concatenate([dataset.y_train, dataset.y_test])
    u_all = np.concatenate([dataset.u_train, dataset.u_test])
    offset = len(dataset.y_train)
    forecasts = []
    for k, s in enumerate(scored_windows(len(dataset.y_test), window, max_windows)):
        g = offset + s  # window start in the whole series
        y_past, u_past = _past(y_all, u_all, max(0, g - burn_in), g)
        forecasts.append((s, model.forecast(u_all[g:g + window], y_past=y_past, u_past=u_past,
                                            num_samples=num_samples, seed=seed + k, num_particles=num_particles)))
    return forecasts


def evaluate_causal(model, dataset, num_samples=50, seed=0, window=100, max_windows=6, burn_in=100,
                    num_particles=1000):
    """Same windows as the paper protocol, initial state filtered from the ``burn_in`` preceding steps only."""
    dataset = evaluation_data(model, dataset)
    window = window_length(len(dataset.y_test), window)
    forecasts = causal_forecasts(model, dataset, num_samples, seed, window, max_windows, burn_in, num_particles)
    scores = [_scores(fc, dataset.y_test[s:s + window], dataset.y_scale) for s, fc in forecasts]
    return _summarise("causal", [s for s, _ in forecasts], scores, dataset.y_std, window)


def freerun_forecast(model, dataset, num_samples=50, seed=0, num_particles=1000):
    """The forecast the freerun protocol scores: the whole test half from the state filtered over the training
    half (when there is no training half: where the model's own training data ended, or its q(x0) or prior)."""
    dataset = evaluation_data(model, dataset)
    y_past, u_past = _past(dataset.y_train, dataset.u_train, 0, len(dataset.y_train))
    return model.forecast(dataset.u_test, y_past=y_past, u_past=u_past, num_samples=num_samples, seed=seed,
                          num_particles=num_particles)


def evaluate_freerun(model, dataset, num_samples=50, seed=0, num_particles=1000):
    """One free run over the test half from the state filtered over the whole training half."""
    dataset = evaluation_data(model, dataset)
    fc = freerun_forecast(model, dataset, num_samples, seed, num_particles)
    return _summarise("freerun", [0], [_scores(fc, dataset.y_test, dataset.y_scale)], dataset.y_std,
                      len(dataset.y_test))


def envi_forecast(model, dataset, seed=0, num_particles=1000):
    """The point forecast (T, d_y) the envi protocol scores (module docstring), in the units of the data (the
    transition runs in the model's units, ``scaling_``)."""
    dataset = evaluation_data(model, dataset)
    transition = getattr(model, "transition_moments", None)
    history = _envi_history(model, dataset)
    if transition is None or history is None:
        return freerun_forecast(model, dataset, seed=seed, num_particles=num_particles).mean
    result = model.filter(*history, num_particles=num_particles, seed=seed)
    step = transition()
    scaling = getattr(model, "scaling_", None)
    u_test = dataset.u_test if scaling is None else scaling.u_to_model(dataset.u_test)
    x, out = result.means[-1][None], []
    for t, u_t in enumerate(u_test):
        x = step(x, u_t if u_t.size else None, t)[0]
        out.append(x[0, :model.spec.dim_y])
    return np.array(out) if scaling is None else scaling.y_to_original(np.array(out))


def _envi_history(model, dataset):
    """The data (y, u) whose filtered mean the envi protocol propagates, in the units of the data: the history
    before the test part, else the end of the model's own training data (``data_tail_``, where its forecasts without
    past data start), else None (the protocol then scores the mean of the model's free run)."""
    if len(dataset.y_train):
        return dataset.y_train, dataset.u_train
    tail, scaling = getattr(model, "data_tail_", None), getattr(model, "scaling_", None)
    if tail is None or scaling is None:
        return tail
    return scaling.y_to_original(tail[0]), scaling.u_to_original(tail[1])


def evaluate_envi(model, dataset, num_samples=50, seed=0, num_particles=1000):
    """EnVI's protocol (module docstring); ``num_samples`` is unused (one deterministic trajectory)."""
    dataset = evaluation_data(model, dataset)
    y = dataset.y_test / dataset.y_scale  # the standardised scale (a division by 1 is exact)
    forecast = envi_forecast(model, dataset, seed, num_particles) / dataset.y_scale
    score = rmse(y, forecast)
    result = {"protocol": "envi", "windows": [0], "window": len(y), "per_window": [score], "rmse": score,
              "nlpd": None, "coverage95": None,
              "rmse_per_output": [float(v) for v in np.sqrt(np.mean((y - forecast) ** 2, axis=0))]}
    err = (y - forecast) * dataset.y_std
    result["rmse_original_units_per_output"] = [float(v) for v in np.sqrt(np.mean(err**2, axis=0))]
    # EnVI's one number sums the outputs' squared errors: kept for one output only, as the outputs' units differ
    result["rmse_original_units"] = float(np.sqrt(np.mean(np.sum(err**2, axis=1)))) if err.shape[1] == 1 else None
    return result


def simulation(model, y, u, n_init=N_INIT, num_samples=50, seed=0, num_particles=1000):
    """The simulation of a record (module docstring, "simulate"): ``model``'s forecast of the steps ``n_init`` ..
    T - 1 of ``y`` (T, d_y) from their inputs ``u`` (T, d_u), its state filtered over the first ``n_init``
    outputs only."""
    return model.forecast(u[n_init:], y_past=y[:n_init], u_past=u[:n_init], num_samples=num_samples, seed=seed,
                          num_particles=num_particles)


def simulate_forecast(model, dataset, num_samples=50, seed=0, n_init=N_INIT, num_particles=1000):
    """The forecast the simulate protocol scores (module docstring): :func:`simulation` of the test part."""
    dataset = evaluation_data(model, dataset)
    n_init = check.positive_int(n_init, "n_init")
    if n_init >= len(dataset.y_test):
        raise ValueError(f"n_init: expected fewer than the {len(dataset.y_test)} steps of the test part, got {n_init}")
    return simulation(model, dataset.y_test, dataset.u_test, n_init, num_samples, seed, num_particles)


def evaluate_simulate(model, dataset, num_samples=50, seed=0, n_init=N_INIT, num_particles=1000):
    """System identification's simulation protocol (module docstring): one run over the test part after its first
    ``n_init`` outputs, the scores over the simulated steps."""
    dataset = evaluation_data(model, dataset)
    fc = simulate_forecast(model, dataset, num_samples, seed, n_init, num_particles)
    result = _summarise("simulate", [n_init], [_scores(fc, dataset.y_test[n_init:], dataset.y_scale)], dataset.y_std,
                        len(dataset.y_test) - n_init)
    return dict(result, n_init=n_init)


def _arrays(model, pair, argname):
    """The pair (y (T, d_y), u (T, d_u) or None; a tuple or a list of two) checked against the model's dimensions:
    two float64 arrays."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        got = f"a {type(pair).__name__} of length {len(pair)}" if isinstance(pair, (tuple, list)) else \
            type(pair).__name__
        raise ValueError(f"{argname}: expected a pair (y, u) of a sequence (T, d_y) and its inputs (T, d_u) or "
                         f"None, got {got}")
    try:
        y, u = check.sequences(pair[0], pair[1], model.spec.dim_y, model.spec.dim_u)
    except ValueError as err:
        raise ValueError(f"{argname}: {err}") from None
    if y.shape[0] != 1:
        raise ValueError(f"{argname}: expected one sequence (T, {model.spec.dim_y}), got shape {y.shape}")
    return y[0], u[0]


def evaluation_data(model, dataset, history=None):
    """The :data:`EvaluationData` of ``dataset``: a ``datasets.Dataset`` (its training half is the history), or a
    tuple ``(y_test, u_test)`` in the units the model was fitted in with ``history = (y_train, u_train)`` of the
    steps just before it (or None: no history; either pair may be a list of two). Units: module docstring. An
    :data:`EvaluationData` is returned as it is (``history`` must then be None)."""
    if isinstance(dataset, EvaluationData):
        if history is not None:
            raise ValueError("history: an EvaluationData holds its own history (y_train, u_train); give history only "
                             "with test arrays, dataset=(y_test, u_test)")
        return dataset
    scaling = getattr(model, "scaling_", None)
    if isinstance(dataset, (tuple, list)):
        y_test, u_test = _arrays(model, dataset, "dataset")
        if history is None:
            y_train, u_train = y_test[:0], u_test[:0]
        else:
            y_train, u_train = _arrays(model, history, "history")
        scale = np.ones(model.spec.dim_y) if scaling is None else scaling.y_std
        return EvaluationData(y_train, u_train, y_test, u_test, scale, scale)
    if history is not None:
        raise ValueError("history: a Dataset holds its own history (the training half); give history only with test "
                         "arrays, dataset=(y_test, u_test)")
    if not all(hasattr(dataset, name) for name in _DATASET_FIELDS):
        raise ValueError(f"dataset: expected a gpssm_np.datasets.Dataset or a tuple (y_test, u_test), got "
                         f"{type(dataset).__name__}")
    if model.spec.dim_y != dataset.y_test.shape[1] or model.spec.dim_u != dataset.u_test.shape[1]:
        raise ValueError(f"dataset: has d_y = {dataset.y_test.shape[1]}, d_u = {dataset.u_test.shape[1]}; the model "
                         f"expects d_y = {model.spec.dim_y}, d_u = {model.spec.dim_u}")
    check_data_name(model, dataset)
    dataset = align_dataset(model, dataset)  # columns in the order of the model's channel names (_names)
    standardised = (dataset.y_train, dataset.u_train, dataset.y_test, dataset.u_test)
    if scaling is None and getattr(model, "standardize", True) is False and not _identity_statistics(dataset):
        warn(f"model: this {type(model).__name__} keeps no statistics of its training data "
             "(standardize=False), so which units it was fitted in cannot be told: it is given the data "
             "set's standardised arrays; a model fitted on the raw series is scored with test arrays in its "
             "units, dataset=(y_test, u_test) with history=(y_train, u_train)", UserWarning)
    if fitted_on_raw_series(model, dataset):
        raw = [to_original(a) for a, to_original in zip(
            standardised, (dataset.to_original_y, dataset.to_original_u) * 2)]
        return EvaluationData(*raw, dataset.y_std, dataset.y_std)
    return EvaluationData(*standardised, np.ones(model.spec.dim_y), dataset.y_std)


def _identity_statistics(dataset):
    """Whether ``dataset``'s raw series are their standardised arrays (its means 0 and standard deviations 1, or it
    keeps no statistics): then the units a model was fitted in do not matter."""
    stats = [getattr(dataset, name, None) for name in ("y_mean", "y_std", "u_mean", "u_std")]
    if any(a is None for a in stats):
        return True
    y_mean, y_std, u_mean, u_std = (np.asarray(a, dtype=np.float64) for a in stats)
    return bool(np.allclose(y_mean, 0) and np.allclose(u_mean, 0) and np.allclose(y_std, 1) and np.allclose(u_std, 1))


def fitted_on_raw_series(model, dataset):
    """Whether ``model`` was fitted on ``dataset``'s raw series rather than on its standardised arrays, which
    decides the units ``model`` is given the data set in (:func:`evaluation_data`, and the command line's
    ``evaluate`` and ``forecast``): its ``scaling_`` statistics are nearer the raw training part's than the
    standardised arrays' (mean 0, standard deviation 1), every output and input measured on its own scale (a mean in
    the data set's standard deviations, a standard deviation by its log ratio). A model fitted on another stretch of
    the raw series (its statistics then are not the training part's exactly) is one too; where the two views are
    equally near, the data set's statistics are about the identity and the two views about agree. False for a model
    without a ``scaling_``."""
    scaling = getattr(model, "scaling_", None)
    if scaling is None:
        return False
    ours = (scaling.y_mean, scaling.y_std, scaling.u_mean, scaling.u_std)
    theirs = tuple(getattr(dataset, name, None) for name in ("y_mean", "y_std", "u_mean", "u_std"))
    if any(a is None for a in theirs):
        return False
    mean_y, std_y, mean_u, std_u = (np.asarray(a, dtype=np.float64) for a in ours)
    ds_mean_y, ds_std_y, ds_mean_u, ds_std_u = (np.asarray(a, dtype=np.float64) for a in theirs)

    def distance(means, stds, scales, centres):
        return float(np.sum(((means - centres) / scales) ** 2) + np.sum(np.log(stds / scales) ** 2))

    raw = distance(mean_y, std_y, ds_std_y, ds_mean_y) + distance(mean_u, std_u, ds_std_u, ds_mean_u)
    standardised = distance(mean_y, std_y, 1.0, 0.0) + distance(mean_u, std_u, 1.0, 0.0)
    return raw < standardised


def check_data_name(model, dataset):
    """Warn (UserWarning) when ``model`` was fitted on data of another name than ``dataset.name``: the model's
    ``data_name_``, recorded by ``fit(..., data_name=...)`` (the command line records ``Dataset.name``) and kept in
    its model file. Nothing is said when either name is unknown."""
    fitted_on, name = getattr(model, "data_name_", None), getattr(dataset, "name", None)
    if fitted_on is not None and name is not None and fitted_on != name:
        warn(f"dataset: the model was fitted on {fitted_on!r} but is evaluated on {name!r}; its scores "
             f"say how a model of {fitted_on!r} forecasts {name!r}", UserWarning)


def evaluate(model, dataset, protocol="causal", num_samples=50, seed=0, history=None, **options):
    """Evaluate ``model`` on ``dataset`` under ``protocol`` ("causal", "simulate", "freerun", "envi" or "paper").

    ``dataset`` is a ``datasets.Dataset`` (e.g. from ``load``, ``from_arrays`` or ``from_csv``), an
    :data:`EvaluationData` (used as it is), or a tuple ``(y_test, u_test)`` of arrays (T, d_y), (T, d_u) (u None
    when d_u = 0) in the units the model was fitted in, with ``history = (y_train, u_train)``, the steps just before
    them, that the causal and freerun protocols filter (:func:`evaluation_data`, and the module docstring for the
    units). A model fitted with ``data_name`` (``fit(..., data_name=ds.name)``; the command line does this) warns
    when the Dataset has another name (:func:`check_data_name`).

    Returns a dict with "rmse" (mean over windows, standardised scale), "per_window" (RMSE of each window),
    "nlpd" and "coverage95" (means over windows, standardised scale), "rmse_original_units_per_output" (the RMSE
    of each output, mean over windows, in original units: a list of d_y values) and "rmse_original_units" (that
    value for one output; None for several, whose units differ), "windows" (start indices in the test half),
    "window" (their length: the option ``window``, or the test length when shorter) and "protocol". ``options`` go
    to the protocol's function, each protocol taking its own (:data:`PROTOCOL_OPTIONS`: "paper" window and
    max_windows; "causal" those, burn_in and num_particles; "freerun" and "envi" num_particles; "simulate" n_init and
    num_particles); another keyword is a ValueError naming the valid ones. A Dataset with channel names is given to a
    model fitted with names in the model's column order (ValueError when the names differ, ``gpssm_np._names``), and
    "y_names" says the order of the per-output lists: the model's names, else the Dataset's, else None.
    """
    functions = {"causal": evaluate_causal, "simulate": evaluate_simulate, "freerun": evaluate_freerun,
                 "envi": evaluate_envi, "paper": evaluate_paper}
    if not isinstance(protocol, str) or protocol not in functions:  # a list is unhashable: one protocol a call
        raise ValueError(f"protocol: expected one of {PROTOCOLS} (one per call), got {protocol!r}")
    check.keywords(options, allowed=PROTOCOL_OPTIONS[protocol], owner=f"evaluate(protocol={protocol!r})")
    seed = check.seed(seed)
    check.int_at_least(num_samples, "num_samples", 2, "forecast trajectories (the NLPD and the coverage read their "
                       "spread)")
    if not all(hasattr(model, name) for name in ("spec", "forecast", "scaling_")):  # the estimator surface
        raise ValueError(f"model: expected a model of the package (ODGPSSM, PRSSM, DSSM, ARX, LGSSM), got "
                         f"{type(model).__name__}")
    data = evaluation_data(model, dataset, history)
    result = functions[protocol](model, data, num_samples=num_samples, seed=seed, **options)
    names = getattr(model, "y_names_", None) or getattr(dataset, "y_names", None)  # the model's order, if it has one
    result["y_names"] = None if names is None else list(names)
    return result
