r"""Forecast evaluation protocols on a standardised data set (``datasets.Dataset``): ``paper``, ``causal``,
``freerun``.

All three forecast with the true inputs u and assimilate no output inside the scored span; they differ in how the
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

Besides RMSE each protocol reports the mean negative log predictive density of the outputs (a Gaussian with the
particle mean and variance of C x_t plus R) and the coverage of its 95% interval.
"""
import numpy as np

from . import _validation as check
from .datasets.windowing import window_starts
from .metrics import coverage, nlpd, rmse

PROTOCOLS = ("paper", "causal", "freerun")


def scored_windows(num_steps, window=100, max_windows=6):
    """Start indices of the scored windows of a test half of ``num_steps`` steps: stride ``window`` plus a tail
    window (the authors' loader), the first ``max_windows`` of them."""
    return [int(s) for s in window_starts(num_steps, window, window)][:max_windows]


def _scores(forecast, y):
    lower, upper = forecast.interval(0.95)
    return {"rmse": rmse(y, forecast.mean), "nlpd": nlpd(y, forecast.mean, forecast.std),
            "coverage95": coverage(y, lower, upper)}


def _summarise(protocol, windows, scores, y_std):
    result = {"protocol": protocol, "windows": windows, "per_window": [s["rmse"] for s in scores]}
    for key in ("rmse", "nlpd", "coverage95"):
        result[key] = float(np.mean([s[key] for s in scores]))
    # a single-output RMSE scales with the standard deviation; several outputs mix scales, so report None
    result["rmse_original_units"] = float(result["rmse"] * y_std[0]) if len(y_std) == 1 else None
    return result


def evaluate_paper(model, dataset, num_samples=50, seed=0, window=100, max_windows=6):
    """The authors' protocol (module docstring). Returns a dict (see :func:`evaluate`). A model without a latent
    state (``model.has_latent_state`` False, e.g. ARX) has no x0 to infer from the window; it is scored as in the
    causal protocol, from the observations before each window."""
    if not getattr(model, "has_latent_state", True):
        return dict(evaluate_causal(model, dataset, num_samples, seed, window, max_windows), protocol="paper")
    starts = scored_windows(len(dataset.y_test), window, max_windows)
    scores = []
    for k, s in enumerate(starts):
        y_w, u_w = dataset.y_test[s:s + window], dataset.u_test[s:s + window]
        x0 = model.q_x0(y_w, u_w)  # reads the window it forecasts
        fc = model.forecast(u_w, x0=x0, num_samples=num_samples, seed=seed + k)
        scores.append(_scores(fc, y_w))
    return _summarise("paper", starts, scores, dataset.y_std)


def causal_forecasts(model, dataset, num_samples=50, seed=0, window=100, max_windows=6, burn_in=100,
                     num_particles=1000):
    """The forecasts the causal protocol scores: a list of (start in the test half, ``Forecast``) per window, each
    made from the ``burn_in`` observations before the window only (``tests/test_no_lookahead.py`` holds it to
    that)."""
    burn_in = check.positive_int(burn_in, "burn_in")
    y_all = np.concatenate([dataset.y_train, dataset.y_test])
    u_all = np.concatenate([dataset.u_train, dataset.u_test])
    offset = len(dataset.y_train)
    forecasts = []
    for k, s in enumerate(scored_windows(len(dataset.y_test), window, max_windows)):
        g = offset + s  # window start in the whole series
        past = slice(max(0, g - burn_in), g)
        forecasts.append((s, model.forecast(u_all[g:g + window], y_past=y_all[past], u_past=u_all[past],
                                            num_samples=num_samples, seed=seed + k, num_particles=num_particles)))
    return forecasts


def evaluate_causal(model, dataset, num_samples=50, seed=0, window=100, max_windows=6, burn_in=100,
                    num_particles=1000):
    """Same windows as the paper protocol, initial state filtered from the ``burn_in`` preceding steps only."""
    forecasts = causal_forecasts(model, dataset, num_samples, seed, window, max_windows, burn_in, num_particles)
    scores = [_scores(fc, dataset.y_test[s:s + window]) for s, fc in forecasts]
    return _summarise("causal", [s for s, _ in forecasts], scores, dataset.y_std)


def freerun_forecast(model, dataset, num_samples=50, seed=0, num_particles=1000):
    """The forecast the freerun protocol scores: the whole test half from the state filtered over the training
    half."""
    return model.forecast(dataset.u_test, y_past=dataset.y_train, u_past=dataset.u_train, num_samples=num_samples,
                          seed=seed, num_particles=num_particles)


def evaluate_freerun(model, dataset, num_samples=50, seed=0, num_particles=1000):
    """One free run over the test half from the state filtered over the whole training half."""
    fc = freerun_forecast(model, dataset, num_samples, seed, num_particles)
    return _summarise("freerun", [0], [_scores(fc, dataset.y_test)], dataset.y_std)


def evaluate(model, dataset, protocol="causal", num_samples=50, seed=0, **options):
    """Evaluate ``model`` on ``dataset`` (a ``datasets.Dataset``) under ``protocol`` ("paper", "causal" or
    "freerun").

    Returns a dict with "rmse" (mean over windows, standardised scale), "per_window" (RMSE of each window),
    "nlpd" and "coverage95" (means over windows), "rmse_original_units" (RMSE times the output standard
    deviation, for one output), "windows" (start indices in the test half) and "protocol". ``options`` go to the
    protocol's function (window, max_windows, burn_in, num_particles).
    """
    functions = {"paper": evaluate_paper, "causal": evaluate_causal, "freerun": evaluate_freerun}
    if protocol not in functions:
        raise ValueError(f"protocol: expected one of {PROTOCOLS}, got {protocol!r}")
    if model.spec.dim_y != dataset.y_test.shape[1] or model.spec.dim_u != dataset.u_test.shape[1]:
        raise ValueError(f"dataset: has d_y = {dataset.y_test.shape[1]}, d_u = {dataset.u_test.shape[1]}; the model "
                         f"expects d_y = {model.spec.dim_y}, d_u = {model.spec.dim_u}")
    return functions[protocol](model, dataset, num_samples=num_samples, seed=seed, **options)
