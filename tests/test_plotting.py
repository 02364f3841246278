"""Plot helpers on the Agg backend: what they draw, given axes, input checks, and no matplotlib at import."""
import os
import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import PolyCollection

from gpssm_np.plotting import plot_forecast, plot_history, plot_states


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def labels(ax):
    return [line.get_label() for line in ax.get_lines()]


def test_import_does_not_load_matplotlib():
    code = "import sys, gpssm_np, gpssm_np.plotting; assert 'matplotlib' not in sys.modules, 'matplotlib loaded'"
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr


def test_plot_forecast_draws_mean_band_and_truth(rng):
    T = 12
    mean = rng.normal(size=T)
    ax = plot_forecast(mean, mean - 1, mean + 1, y_true=rng.normal(size=(T, 1)), t=np.arange(T) + 100.0,
                       level=0.9, label="ODGPSSM")
    assert labels(ax) == ["ODGPSSM", "truth"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), mean)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), np.arange(T) + 100.0)
    assert ax.get_lines()[1].get_marker() == "." and ax.get_lines()[1].get_linestyle() == "None"
    (band,) = bands(ax)
    assert band.get_label() == "90% interval"
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert set(legend) == {"ODGPSSM", "90% interval", "truth"}


def test_plot_forecast_accepts_column_arrays_and_a_given_ax(rng):
    _, ax = plt.subplots()
    mean = rng.normal(size=(8, 1))
    assert plot_forecast(mean, mean - 2, mean + 2, ax=ax) is ax
    assert labels(ax) == ["forecast"]
    assert bands(ax)[0].get_label() == "95% interval"
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), np.arange(8))
    assert len(plt.get_fignums()) == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"forecast_lower": np.zeros(5)}, "forecast_lower: expected 6 values"),
    ({"forecast_mean": np.zeros((6, 2))}, r"forecast_mean: expected shape \(T,\) or \(T, 1\)"),
    ({"forecast_lower": np.full(6, 2.0)}, "lower <= upper"),
    ({"y_true": np.zeros(7)}, "y_true: expected 6 values"),
    ({"t": np.arange(5)}, "t: expected 6 times"),
    ({"level": 95}, r"level: expected a number in \(0, 1\)"),
    ({"forecast_mean": "abc"}, "forecast_mean: expected a numeric array"),
])
def test_plot_forecast_rejects_bad_input(kwargs, message):
    args = {"forecast_mean": np.zeros(6), "forecast_lower": -np.ones(6), "forecast_upper": np.ones(6)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        plot_forecast(**args)


def test_plot_states_one_panel_per_dimension_with_bands(rng):
    T, d_x = 10, 3
    t = np.linspace(0, 1, T)
    truth = rng.normal(size=(T, d_x))
    estimates = {"smoother": (truth + 0.1, np.full((T, d_x), 0.2)), "filter": (truth - 0.1, None),
                 "bare": truth * 2}
    axes = plot_states(t, truth, estimates)
    assert isinstance(axes, np.ndarray) and axes.shape == (d_x,)
    for d, ax in enumerate(axes):
        assert labels(ax) == ["truth", "smoother", "filter", "bare"]
        np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), truth[:, d])
        (band,) = bands(ax)
        assert band.get_label().startswith("smoother")
        lower_upper = band.get_paths()[0].vertices[:, 1]
        assert lower_upper.min() == pytest.approx((truth[:, d] + 0.1 - 0.4).min())
        assert lower_upper.max() == pytest.approx((truth[:, d] + 0.1 + 0.4).max())
        assert ax.get_ylabel() == f"x[{d}]"
    assert axes[0].get_legend() is not None
    assert [ax.get_xlabel() for ax in axes] == ["", "", "t"]  # on the last panel only
    (band,) = bands(plot_states(t, truth, {"exact": (truth, np.zeros((T, d_x)))}, dims=[0])[0])  # a std of 0 too
    assert band.get_label().startswith("exact")


def test_an_estimate_of_two_steps_given_as_an_array_is_a_mean_not_a_pair(rng):
    # (mean, std) is a tuple; an array of two rows (T = 2) is one mean, drawn without a band
    truth = rng.normal(size=(2, 2))
    axes = plot_states(np.arange(2), truth, {"filter": truth + 1.0, "list": [list(row) for row in truth - 1.0]})
    for d, ax in enumerate(axes):
        assert labels(ax) == ["truth", "filter", "list"] and not bands(ax)
        np.testing.assert_array_equal(ax.get_lines()[1].get_ydata(), truth[:, d] + 1.0)
        np.testing.assert_array_equal(ax.get_lines()[2].get_ydata(), truth[:, d] - 1.0)


def test_plot_states_selected_dims_given_axes_and_names(rng):
    T = 6
    mean = rng.normal(size=(T, 4))
    _, given = plt.subplots(2, 1)
    axes = plot_states(np.arange(T), estimates={"q": (mean, np.ones((T, 4)))}, dims=[3, 1], axes=given,
                       names=["velocity", "position"])
    assert list(axes) == list(given)
    np.testing.assert_array_equal(axes[0].get_lines()[0].get_ydata(), mean[:, 3])
    np.testing.assert_array_equal(axes[1].get_lines()[0].get_ydata(), mean[:, 1])
    assert [ax.get_ylabel() for ax in axes] == ["velocity", "position"]
    assert len(plt.get_fignums()) == 1


def test_plot_states_truth_only():
    axes = plot_states(np.arange(4), truth=np.arange(8.0).reshape(4, 2))
    assert len(axes) == 2 and all(labels(ax) == ["truth"] for ax in axes)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "truth, estimates: expected at least one"),
    ({"truth": np.zeros((5, 2))}, "truth: expected 4 rows"),
    ({"truth": np.zeros((4, 2)), "estimates": {"a": np.zeros((4, 3))}}, r"estimates\['a'\] mean: expected 2 state"),
    ({"estimates": {"a": (np.zeros((4, 2)), -np.ones((4, 2)))}}, r"estimates\['a'\] std: expected non-negative"),
    ({"estimates": {"a": np.zeros((4, 2)), "b": (np.zeros((4, 3)), np.ones((4, 3)))}},
     r"estimates\['b'\] mean: expected 2 state dimensions \(as 'a'\), got 3"),  # without truth, the first estimate's
    ({"estimates": [np.zeros((4, 2))]}, "estimates: expected a dict"),
    ({"truth": np.zeros((4, 2)), "dims": [2]}, r"dims: expected state indices in 0\.\.1"),
    ({"truth": np.zeros((4, 2)), "names": ["a"]}, "names: expected 2 names"),
    ({"truth": np.zeros((4, 2)), "axes": [None]}, "axes: expected 2 axes"),
])
def test_plot_states_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_states(np.arange(4), **kwargs)


def test_plot_history_raw_and_smoothed(rng):
    history = list(np.linspace(10, 1, 20) + rng.normal(size=20))
    ax = plot_history(history)
    assert labels(ax) == ["loss"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), np.arange(1, 21))
    _, given = plt.subplots()
    assert plot_history(history, ax=given, smooth=5) is given
    _, average = given.get_lines()
    assert average.get_label() == "moving average (5)"
    np.testing.assert_array_equal(average.get_xdata(), np.arange(5, 21))
    assert average.get_ydata()[0] == pytest.approx(np.mean(history[:5]))
    assert average.get_ydata()[-1] == pytest.approx(np.mean(history[-5:]))
    for window in (1, 20):  # the bounds of the window: every step alone, all of them
        _, ax = plt.subplots()
        assert len(plot_history(history, ax=ax, smooth=window).get_lines()[1].get_xdata()) == 21 - window


def test_plot_history_takes_a_model():
    class Fitted:
        def __init__(self):
            self.history_ = [3.0, 2.0, 1.5]

    np.testing.assert_array_equal(plot_history(Fitted()).get_lines()[0].get_ydata(), [3.0, 2.0, 1.5])


@pytest.mark.parametrize("history, smooth, message", [
    ([], None, "history: expected a non-empty array"),
    ([[1.0, 2.0]], None, "history: expected a non-empty array with 1 dimensions"),
    ([1.0, 2.0], 3, "smooth: expected an integer window from 1 to len"),
    ([1.0, 2.0], 0.5, "smooth: expected an integer"),
])
def test_plot_history_rejects_bad_input(history, smooth, message):
    with pytest.raises(ValueError, match=message):
        plot_history(history, smooth=smooth)


def test_history_with_validation_scores():
    class Fitted:
        history_ = [3.0, 2.0, 1.5, 1.2]
        validation_ = [{"step": 0, "rmse": 0.5}, {"step": 2, "rmse": 0.3}, {"step": 4, "rmse": 0.4}]

    ax = plot_history(Fitted())
    (right,) = [other for other in ax.figure.axes if other is not ax]
    (curve, star) = right.lines
    np.testing.assert_array_equal(curve.get_xdata(), [0, 2, 4])
    assert star.get_xdata()[0] == 2 and star.get_ydata()[0] == 0.3
    ax = plot_history([3.0, 2.0], validation=[{"step": 5, "rmse": np.nan}])  # no finite score: the first marked
    (right,) = [other for other in ax.figure.axes if other is not ax]
    assert right.lines[1].get_xdata()[0] == 5


def _forecast(rng, T=20, d_y=2):
    from gpssm_np.forecast import Forecast

    samples = rng.normal(size=(30, T, d_y))
    return Forecast(samples=samples, states=samples, obs_var=np.full(d_y, 0.1))


def test_forecast_figure_shows_the_past_data_and_the_inputs(rng):
    import gpssm_np as gp

    plot_forecast_figure = gp.plotting.plot_forecast_figure  # gp.plotting, as the README shows it
    fc = _forecast(rng)
    y_past, u_past, u_future = rng.normal(size=(15, 2)), rng.normal(size=(15, 2)), rng.normal(size=(20, 2))
    axes = plot_forecast_figure(fc, u_future, y_past=y_past, u_past=u_past, y_true=rng.normal(size=(20, 2)),
                                output=1, y_label="level (m)", u_labels=["inflow", "valve"])
    top, bottom = axes
    assert len(top.figure.axes) == 2
    assert top.get_ylabel() == "level (m)" and bottom.get_ylabel() == "input"
    assert bottom.get_xlabel() == "steps from the forecast origin" and top.get_xlabel() == ""
    past = next(line for line in top.get_lines() if line.get_label() == "past data (filtered)")
    np.testing.assert_array_equal(past.get_xdata(), np.arange(-15, 0))
    np.testing.assert_array_equal(past.get_ydata(), y_past[:, 1])
    mean = next(line for line in top.get_lines() if line.get_label() == "forecast")
    np.testing.assert_array_equal(mean.get_xdata(), np.arange(20))
    np.testing.assert_array_equal(mean.get_ydata(), fc.mean[:, 1])
    inputs = [line for line in bottom.get_lines() if line.get_label() in ("inflow", "valve")]
    assert len(inputs) == 2
    np.testing.assert_array_equal(inputs[1].get_xdata(), np.arange(-15, 20))
    np.testing.assert_array_equal(inputs[1].get_ydata(), np.concatenate([u_past[:, 1], u_future[:, 1]]))
    assert {t.get_text() for t in top.get_legend().get_texts()} == {
        "past data (filtered)", "forecast origin", "forecast", "95% interval", "truth"}
    assert {t.get_text() for t in bottom.get_legend().get_texts()} == {"inflow", "valve"}


def test_forecast_figure_marks_the_origin_between_the_past_and_the_forecast_on_each_panel(rng):
    from gpssm_np.plotting import plot_forecast_figure

    axes = plot_forecast_figure(_forecast(rng), rng.normal(size=(20, 1)), y_past=rng.normal(size=(5, 2)),
                                u_past=rng.normal(size=(5, 1)))
    for ax in axes:
        (origin,) = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
        np.testing.assert_array_equal(origin.get_xdata(), [-0.5, -0.5])  # past ends at -1, forecast starts at 0


def test_a_one_output_forecast_takes_its_past_as_a_vector(rng):
    from gpssm_np.plotting import plot_forecast_figure

    y_past = rng.normal(size=7)  # (P,) for (P, 1)
    (ax,) = plot_forecast_figure(_forecast(rng, d_y=1), y_past=y_past)
    past = next(line for line in ax.get_lines() if line.get_label() == "past data (filtered)")
    np.testing.assert_array_equal(past.get_ydata(), y_past)


def test_a_forecast_figure_needs_a_forecast():
    from gpssm_np.plotting import plot_forecast_figure

    for not_a_forecast in (np.zeros((5, 1)), object()):  # an array's mean is a method
        with pytest.raises(ValueError, match="forecast: expected a gpssm_np.forecast.Forecast"):
            plot_forecast_figure(not_a_forecast)


def test_a_band_of_zero_width_is_drawn(rng):
    mean = rng.normal(size=6)  # a forecast without spread: lower = upper
    (band,) = bands(plot_forecast(mean, mean, mean))
    assert band.get_label() == "95% interval"


def test_forecast_figure_without_inputs_or_past_has_one_labelled_panel(rng):
    from gpssm_np.plotting import plot_forecast_figure

    fc = _forecast(rng, d_y=1)
    (ax,) = plot_forecast_figure(fc, np.zeros((20, 0)))
    assert len(ax.figure.axes) == 1 and ax.get_ylabel() == "y[0]"
    assert "past data (filtered)" not in labels(ax)
    (ax,) = plot_forecast_figure(fc)
    assert ax.get_xlabel() == "steps from the forecast origin"


@pytest.mark.parametrize("kwargs, message", [
    ({"output": 2}, r"output: expected an output index in 0..1"),
    ({"u_future": np.zeros((19, 1))}, "u_future: expected 20 rows"),
    ({"u_future": np.zeros((20, 1)), "u_past": np.zeros((5, 1))}, "u_past: expected with y_past"),
    ({"u_future": np.zeros((20, 1)), "y_past": np.zeros((5, 2)), "u_past": np.zeros((5, 2))},
     "u_past: expected 1 columns"),
    ({"y_past": np.zeros((5, 1))}, "y_past: expected 2 columns"),
    ({"u_future": np.zeros((20, 2)), "u_labels": ["a"]}, "u_labels: expected 2 labels"),
    ({"u_future": np.zeros((20, 1)), "axes": [None]}, "axes: expected 2 axes"),
])
def test_forecast_figure_rejects_bad_input(rng, kwargs, message):
    from gpssm_np.plotting import plot_forecast_figure

    with pytest.raises(ValueError, match=message):
        plot_forecast_figure(_forecast(rng), **kwargs)


def test_q_study_figure_has_integer_ticks_and_a_legend_on_each_panel():
    from gpssm_np.experiments.q_study import figure

    runs = [{"protocol": p, "model": f"odgpssm_q{q}", "dataset": d, "rmse": 0.1 * q + s}
            for p in ("paper", "causal") for q in (1, 2, 3, 4, 8) for d in ("actuator", "dryer") for s in (0, 0.1)]
    fig = figure({"runs": runs})
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert list(ax.get_xticks()) == [1, 2, 3, 4, 8]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["actuator", "dryer"]
        assert ax.get_xlabel() == "Q (number of latent GPs)" and ax.get_ylabel() == "test RMSE (standardised)"


def test_history_of_a_fit_that_kept_no_gp_part_draws_its_validation(rng):
    # a default fit that keeps the floor has no loss on all the data (history_ empty) but its selection's scores
    class FloorOnly:
        history_ = []
        validation_ = [{"step": 0, "rmse": 0.5}, {"step": 50, "rmse": 0.6}]

    ax = plot_history(FloorOnly())
    (right,) = [other for other in ax.figure.axes if other is not ax]
    np.testing.assert_array_equal(right.lines[0].get_xdata(), [0, 50])


def test_one_input_label_may_be_a_string(rng):
    from gpssm_np.plotting import plot_forecast_figure

    axes = plot_forecast_figure(_forecast(rng, d_y=1), rng.normal(size=(20, 1)), u_labels="inflow")
    assert "inflow" in [line.get_label() for line in axes[1].get_lines()]


def test_plot_history_names_a_bad_validation_and_marks_the_lowest_finite_score():
    for bad in ([1, 2], "abc", [{"rmse": 0.5}]):
        with pytest.raises(ValueError, match="validation: expected model.validation_"):
            plot_history([1.0, 0.5], validation=bad)
    ax = plot_history([1.0, 0.5], validation=[{"step": 0, "rmse": np.nan}, {"step": 5, "rmse": 0.4},
                                              {"step": 10, "rmse": 0.6}])
    star = [line for line in ax.figure.axes[1].lines if line.get_label() == "selected"][0]
    assert star.get_xdata()[0] == 5 and star.get_ydata()[0] == 0.4
    plt.close("all")


def test_plot_forecast_names_a_bad_ax_and_bad_input_labels(rng):
    from gpssm_np.plotting import plot_forecast_figure

    mean = rng.normal(size=(10, 1))
    with pytest.raises(ValueError, match="ax: expected a matplotlib Axes"):
        plot_forecast(mean, mean - 1, mean + 1, ax="x")
    fc = gp_forecast(rng)
    with pytest.raises(ValueError, match="u_labels: expected a sequence"):
        plot_forecast_figure(fc, rng.normal(size=(10, 1)), u_labels=5)
    plt.close("all")


def gp_forecast(rng):
    from gpssm_np.forecast import Forecast

    samples = rng.normal(size=(20, 10, 1))
    return Forecast(samples=samples, states=samples, obs_var=np.array([0.1]))
