"""Matplotlib helpers for forecasts, latent states and training curves.

Matplotlib is imported inside each function, so importing this module (or gpssm_np) does not load it. Every
function draws on the axes it is given (a new figure when none is given), returns the axes, and never shows or
saves the figure.
"""
import numbers
from collections.abc import Mapping

import numpy as np

from . import _validation as check

__all__ = ["plot_forecast", "plot_forecast_figure", "plot_history", "plot_states"]


def plot_forecast(forecast_mean, forecast_lower, forecast_upper, y_true=None, t=None, ax=None, level=0.95,
                  label="forecast"):
    """Forecast mean as a line, the predictive interval as a shaded band and (optionally) the truth as markers.

    Parameters
    ----------
    forecast_mean, forecast_lower, forecast_upper : array (T,) or (T, 1)
        One output dimension; lower <= upper.
    y_true : array (T,) or (T, 1), optional
        Observed values at the same times.
    t : array (T,), optional
        Times (default 0..T-1).
    ax : matplotlib Axes, optional
    level : float in (0, 1)
        Coverage of the interval, used in the band's label (0.95 -> "95% interval").
    label : str
        Label of the mean line.

    Returns
    -------
    matplotlib Axes
    """
    mean = _series(forecast_mean, "forecast_mean")
    T = len(mean)
    lower = _series(forecast_lower, "forecast_lower", T)
    upper = _series(forecast_upper, "forecast_upper", T)
    if np.any(lower > upper):
        raise ValueError("forecast_lower, forecast_upper: expected lower <= upper at every time")
    t = _times(t, T)
    level = check.fraction(level, "level")
    ax = _axes(ax)
    (line,) = ax.plot(t, mean, label=label)
    ax.fill_between(t, lower, upper, color=line.get_color(), alpha=0.25, linewidth=0,
                    label=f"{100 * level:g}% interval")
    if y_true is not None:
        ax.plot(t, _series(y_true, "y_true", T), "k.", markersize=4, label="truth")
    ax.set_xlabel("t")
    ax.legend(loc="best")
    return ax


def plot_forecast_figure(forecast, u_future=None, y_past=None, u_past=None, y_true=None, output=0, level=0.95,
                         y_label=None, u_labels=None, axes=None):
    """A forecast as the filter and the model saw it: above, the past outputs the filter read (``y_past``), then
    the forecast with its interval (:func:`plot_forecast`) and the truth; below, the inputs over the same times
    (past and future), which drive the forecast. A dotted vertical line marks the forecast origin.

    Times are steps from the forecast origin: the past is -P..-1, the forecast 0..T-1.

    Parameters
    ----------
    forecast : gpssm_np.forecast.Forecast
        Its ``mean`` (T, d_y) and ``interval(level)`` are drawn, in the units it holds (a model's forecast is in
        the units of the data it was fitted on).
    u_future : array (T, d_u), optional
        The inputs of the forecast; with ``u_past`` they make the lower panel (none: one panel).
    y_past, u_past : arrays (P, d_y), (P, d_u), optional
        The past data the forecast was filtered from (``forecast(u_future, y_past=..., u_past=...)``).
    y_true : array (T, d_y), optional
        The outputs that happened.
    output : int
        The output drawn.
    level : float in (0, 1)
        Coverage of the interval.
    y_label : str, optional
        Label of the output axis (default "y[output]"); say the units here.
    u_labels : sequence of str, optional
        One label per input (default "u[i]").
    axes : sequence of one or two matplotlib Axes, optional
        Output axis, and input axis when there are inputs (default: a new figure).

    Returns
    -------
    ndarray of matplotlib Axes: (output axis,) or (output axis, input axis).
    """
    mean = np.asarray(getattr(forecast, "mean", None)) if callable(getattr(forecast, "interval", None)) else None
    if mean is None or mean.ndim != 2:  # an array's .mean is a method: refused here, not by an unpacking below
        raise ValueError(f"forecast: expected a gpssm_np.forecast.Forecast (a model's forecast), got "
                         f"{type(forecast).__name__}")
    T, d_y = mean.shape
    if isinstance(output, bool) or not isinstance(output, numbers.Integral) or not 0 <= output < d_y:
        raise ValueError(f"output: expected an output index in 0..{d_y - 1}, got {output!r}")
    lower, upper = forecast.interval(level)
    past = None if y_past is None else _columns(y_past, "y_past", d_y)
    P = 0 if past is None else len(past)
    if u_future is not None and np.shape(u_future)[-1:] == (0,):  # a model without inputs: no input panel
        u_future = u_past = None
    if u_past is not None and (u_future is None or y_past is None):
        raise ValueError("u_past: expected with y_past and u_future (the input panel shows the inputs of the past "
                         "data and of the forecast)")
    inputs = None if u_future is None else _columns(u_future, "u_future", None, T)
    if u_past is not None:
        inputs = np.concatenate([_columns(u_past, "u_past", inputs.shape[1], P), inputs])
    axes = _panel_axes(axes, 1 if inputs is None else 2, "the output panel, and the input panel for inputs")
    top, t = axes[0], np.arange(T)
    if past is not None:
        top.plot(np.arange(-P, 0), past[:, output], color="0.35", linewidth=1, label="past data (filtered)")
    for ax in axes:
        ax.axvline(-0.5, color="0.5", linestyle=":", linewidth=1, label="forecast origin" if ax is top else None)
    plot_forecast(mean[:, output], lower[:, output], upper[:, output],
                  y_true=None if y_true is None else _columns(y_true, "y_true", d_y, T)[:, output], t=t, ax=top,
                  level=level)
    top.set_ylabel(y_label or f"y[{output}]")
    if inputs is not None:
        bottom, d_u = axes[1], inputs.shape[1]
        if isinstance(u_labels, str):  # one input's label, not its characters
            u_labels = [u_labels]
        if u_labels is not None and not isinstance(u_labels, (list, tuple, np.ndarray)):
            raise ValueError(f"u_labels: expected a sequence of {d_u} labels (one per input), got {u_labels!r}")
        names = [f"u[{i}]" for i in range(d_u)] if u_labels is None else [str(n) for n in u_labels]
        if len(names) != d_u:
            raise ValueError(f"u_labels: expected {d_u} labels (one per input), got {len(names)}")
        for i, name in enumerate(names):
            bottom.plot(np.arange(-len(inputs) + T, T), inputs[:, i], label=name)
        bottom.set_ylabel("input")
        bottom.legend(loc="best")
        top.set_xlabel("")
    axes[-1].set_xlabel("steps from the forecast origin")
    return axes


def plot_states(t, truth=None, estimates=None, dims=None, axes=None, names=None):
    """One panel per state dimension: the true state against each estimate, with a +-2 std band where given.

    Parameters
    ----------
    t : array (T,)
        Times.
    truth : array (T, d_x), optional
        True states.
    estimates : dict, optional
        Label -> ``(mean, std)`` with ``mean`` (T, d_x) and ``std`` (T, d_x) or None (no band); a bare ``mean``
        array is accepted for ``(mean, None)``.
    dims : sequence of int, optional
        The state dimensions to draw (default all).
    axes : sequence of matplotlib Axes, optional
        One per drawn dimension (default: a new figure with the panels stacked).
    names : sequence of str, optional
        Panel titles (y labels), one per drawn dimension (default "x[i]").

    Returns
    -------
    ndarray of matplotlib Axes, one per drawn dimension.
    """
    t = _times(t, None)
    T = len(t)
    truth = None if truth is None else _states(truth, "truth", T)
    curves = _estimates(estimates, T)
    if truth is None and not curves:
        raise ValueError("truth, estimates: expected at least one of them to be given")
    reference, dim_x = ("truth", truth.shape[1]) if truth is not None else (curves[0][0], curves[0][1].shape[1])
    for key, mean, std in curves:
        for what, array in (("mean", mean), ("std", std)):
            if array is not None and array.shape[1] != dim_x:
                raise ValueError(f"estimates[{key!r}] {what}: expected {dim_x} state dimensions (as {reference!r}), "
                                 f"got {array.shape[1]}")
    dims = _dims(dims, dim_x)
    names = _names(names, dims)
    axes = _panel_axes(axes, len(dims))
    for ax, d, name in zip(axes, dims, names):
        if truth is not None:
            ax.plot(t, truth[:, d], "k-", linewidth=1.5, label="truth")
        for key, mean, std in curves:
            (line,) = ax.plot(t, mean[:, d], label=key)
            if std is not None:
                ax.fill_between(t, mean[:, d] - 2 * std[:, d], mean[:, d] + 2 * std[:, d], color=line.get_color(),
                                alpha=0.2, linewidth=0, label=f"{key} $\\pm$2 std")
        ax.set_ylabel(name)
    axes[-1].set_xlabel("t")
    axes[0].legend(loc="best")
    return axes


def plot_history(history, ax=None, smooth=None, validation=None):
    """Training loss per step (``model.history_``, or the model itself), optionally with a moving average, and the
    validation score of ``fit``'s stopping rule on a second axis.

    Parameters
    ----------
    history : sequence of float, or an object with ``history_`` (and ``validation_``, used when ``validation`` is
        None; a default fit that kept no GP part has no loss on all the data, and its validation is drawn alone)
    ax : matplotlib Axes, optional
    smooth : int, optional
        Window of a trailing moving average drawn over the (then faded) raw curve; at most ``len(history)``.
    validation : list of dict, optional
        ``model.validation_``: entries with "step" and "rmse" (None entries are skipped); drawn on a right-hand axis
        with the selected (lowest) score marked.

    Returns
    -------
    matplotlib Axes (the loss axis)
    """
    if hasattr(history, "history_"):
        if validation is None:
            validation = getattr(history, "validation_", None)
        history = history.history_
        if not len(history) and any(r.get("rmse") is not None for r in validation or []):
            history = [np.nan]  # a fit that kept no GP part trained none on all the data: its validation alone
    loss = _array(history, "history", (1,))
    if smooth is not None and (isinstance(smooth, bool) or not isinstance(smooth, numbers.Integral)
                               or not 1 <= smooth <= len(loss)):
        raise ValueError(f"smooth: expected an integer window from 1 to len(history) = {len(loss)}, got {smooth!r}")
    ax = _axes(ax)
    steps = np.arange(1, len(loss) + 1)
    ax.plot(steps, loss, alpha=1.0 if smooth is None else 0.35, label="loss")
    if smooth is not None:
        average = np.convolve(loss, np.full(smooth, 1.0 / smooth), mode="valid")
        ax.plot(steps[smooth - 1:], average, label=f"moving average ({smooth})")
        ax.legend(loc="best")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (-ELBO)")
    if validation is not None and (isinstance(validation, (str, bytes)) or not all(
            isinstance(r, Mapping) and "step" in r and "rmse" in r for r in validation)):
        raise ValueError("validation: expected model.validation_, a list of dicts with 'step' and 'rmse'")
    scored = [(r["step"], r["rmse"]) for r in (validation or []) if r.get("rmse") is not None]
    if scored:
        steps_v, rmse_v = np.array(scored, dtype=float).T
        right = ax.twinx()
        right.plot(steps_v, rmse_v, "o-", color="C3", label="validation RMSE")
        best = int(np.nanargmin(rmse_v)) if np.isfinite(rmse_v).any() else 0  # a NaN score is never the lowest
        right.plot(steps_v[best], rmse_v[best], "*", color="C3", markersize=14, label="selected")
        right.set_ylabel("validation RMSE (causal forecast)")
        right.legend(loc="upper right")
    return ax


# -- helpers -----------------------------------------------------------------------------------------------------
def _axes(ax):
    if ax is not None:
        if not hasattr(ax, "plot"):
            raise ValueError(f"ax: expected a matplotlib Axes, got {type(ax).__name__}")
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


def _panel_axes(axes, count, what="one per drawn state dimension"):
    if axes is None:
        import matplotlib.pyplot as plt

        return plt.subplots(count, 1, sharex=True, squeeze=False, figsize=(6.4, 1.6 + 1.6 * count))[1][:, 0]
    axes = np.asarray(axes, dtype=object).reshape(-1)
    if len(axes) != count:
        raise ValueError(f"axes: expected {count} axes ({what}), got {len(axes)}")
    return axes


def _array(x, name, ndims):
    """``x`` as a non-empty float array with a number of dimensions in ``ndims`` (NaN allowed: a gap)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a numeric array, got {type(x).__name__}") from None
    if arr.ndim not in ndims or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array with {' or '.join(map(str, ndims))} dimensions, "
                         f"got shape {arr.shape}")
    return arr


def _series(x, name, length=None):
    """One output dimension as a 1-D array, from (T,) or (T, 1)."""
    arr = _array(x, name, (1, 2))
    if arr.ndim == 2:
        if arr.shape[1] != 1:
            raise ValueError(f"{name}: expected shape (T,) or (T, 1) (one output dimension), got {arr.shape}")
        arr = arr[:, 0]
    if length is not None and len(arr) != length:
        raise ValueError(f"{name}: expected {length} values (as forecast_mean), got {len(arr)}")
    return arr


def _columns(x, name, width=None, length=None):
    """``x`` as a (N, d) array, from (N, d) or (N,) for d = 1, with ``width`` columns and ``length`` rows when
    given."""
    arr = _array(x, name, (1, 2))
    arr = arr[:, None] if arr.ndim == 1 else arr
    if length is not None and len(arr) != length:
        raise ValueError(f"{name}: expected {length} rows (one per time), got {len(arr)}")
    if width is not None and arr.shape[1] != width:
        raise ValueError(f"{name}: expected {width} columns, got shape {arr.shape}")
    return arr


def _times(t, length):
    if t is None:
        if length is None:
            raise ValueError("t: expected an array of times, got None")
        return np.arange(length)
    t = _array(t, "t", (1,))
    if length is not None and len(t) != length:
        raise ValueError(f"t: expected {length} times, got {len(t)}")
    return t


def _states(x, name, length):
    return _columns(x, name, None, length)


def _estimates(estimates, length):
    """[(label, mean, std or None)] from the dict label -> (mean, std) or label -> mean."""
    if estimates is None:
        return []
    if not isinstance(estimates, Mapping):
        raise ValueError(f"estimates: expected a dict label -> (mean, std), got {type(estimates).__name__}")
    curves = []
    for key, value in estimates.items():
        mean, std = value if isinstance(value, tuple) and len(value) == 2 else (value, None)
        mean = _states(mean, f"estimates[{key!r}] mean", length)
        if std is not None:
            std = _states(std, f"estimates[{key!r}] std", length)
            if np.any(std < 0):
                raise ValueError(f"estimates[{key!r}] std: expected non-negative values")
        curves.append((str(key), mean, std))
    return curves


def _dims(dims, dim_x):
    if dims is None:
        return list(range(dim_x))
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    bad = [d for d in dims if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 0 <= d < dim_x]
    if not dims or bad:
        raise ValueError(f"dims: expected state indices in 0..{dim_x - 1}, got {dims!r}")
    return [int(d) for d in dims]


def _names(names, dims):
    if names is None:
        return [f"x[{d}]" for d in dims]
    names = [names] if isinstance(names, str) else list(names)
    if len(names) != len(dims):
        raise ValueError(f"names: expected {len(dims)} names (one per drawn state dimension), got {len(names)}")
    return [str(n) for n in names]
