"""No lookahead: the ``causal`` and ``freerun`` protocols forecast from data before the forecast origin only.

For every model class, at the level of the forecasts the protocols produce (``protocols.causal_forecasts``,
``protocols.freerun_forecast``): replacing every output from the first forecast step on by arbitrary values leaves
the forecasts bit-identical, and changing the last output observed before the origin changes them (so the test
would see a protocol that reads one output too many, or none at all)."""
import types

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.protocols import causal_forecasts, envi_forecast, evaluate, freerun_forecast

T_TRAIN, T_TEST = 60, 64
WINDOW, MAX_WINDOWS, BURN_IN = 20, 3, 15
OPTIONS = dict(num_samples=6, seed=3, num_particles=40)


def dataset(y_train, u_train, y_test, u_test):
    """What the protocols read of a ``datasets.Dataset``."""
    return types.SimpleNamespace(name="toy", y_train=y_train, u_train=u_train, y_test=y_test, u_test=u_test,
                                 y_std=np.ones(1), y_mean=np.zeros(1))


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    T = T_TRAIN + T_TEST
    u = np.sin(np.arange(T) / 4.0)[:, None] + 0.3 * rng.normal(size=(T, 1))
    x = np.zeros(T)
    for t in range(1, T):
        x[t] = 0.8 * x[t - 1] + 0.5 * u[t, 0] + 0.1 * rng.normal()
    y = (x + 0.1 * rng.normal(size=T))[:, None]
    return dataset(y[:T_TRAIN], u[:T_TRAIN], y[T_TRAIN:], u[T_TRAIN:])


def build(name, data):
    tiny_gp = dict(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=0)
    if name == "odgpssm":
        return gp.ODGPSSM(**tiny_gp)
    if name == "prssm":
        return gp.PRSSM(**tiny_gp)
    if name == "prssm_mlp":
        return gp.PRSSM(**tiny_gp, recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4})
    if name == "odgpssm_trained":
        model = gp.ODGPSSM(**tiny_gp)
        return model.fit(data.y_train, data.u_train, epochs=1,
                         plan=dict(seq_len=20, stride=10, batch_size=4, num_samples=3))
    if name == "dssm":
        return gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4, seed=0)
    if name == "arx":
        return gp.ARX(na=2, nb=2).fit(data.y_train, data.u_train)
    if name == "lgssm":
        return gp.LGSSM(dim_x=2, num_iters=3).fit(data.y_train, data.u_train)
    raise ValueError(name)


MODELS = ["odgpssm", "odgpssm_trained", "prssm", "prssm_mlp", "dssm", "arx", "lgssm"]


def causal(model, data):
    return causal_forecasts(model, data, window=WINDOW, max_windows=MAX_WINDOWS, burn_in=BURN_IN, **OPTIONS)


def same(a, b):
    return np.array_equal(a.samples, b.samples) and np.array_equal(a.states, b.states)


def with_outputs(data, y_all):
    return dataset(y_all[:T_TRAIN], data.u_train, y_all[T_TRAIN:], data.u_test)


@pytest.mark.parametrize("name", MODELS)
def test_causal_forecasts_read_no_output_at_or_after_the_window_start(toy, name):
    model = build(name, toy)
    reference = causal(model, toy)
    assert [s for s, _ in reference] == [0, WINDOW, 2 * WINDOW]
    y_all = np.concatenate([toy.y_train, toy.y_test])
    rng = np.random.default_rng(1)
    for k, (start, forecast) in enumerate(reference):
        g = T_TRAIN + start
        future = y_all.copy()
        future[g:] = 50.0 * rng.normal(size=future[g:].shape)  # arbitrary values from the first forecast step on
        changed = causal(model, with_outputs(toy, future))
        for j in range(k + 1):  # this window and the earlier ones (their origins are earlier still)
            assert same(changed[j][1], reference[j][1]), f"window {j} read outputs from step {g} on"
        last = y_all.copy()
        last[g - 1] += 1.0  # the last output observed before the window
        moved = causal(model, with_outputs(toy, last))
        assert not np.array_equal(moved[k][1].samples, forecast.samples), f"window {k} ignores step {g - 1}"


@pytest.mark.parametrize("name", MODELS)
def test_freerun_forecast_reads_the_training_half_only(toy, name):
    model = build(name, toy)
    reference = freerun_forecast(model, toy, **OPTIONS)
    assert reference.samples.shape[1] == T_TEST
    rng = np.random.default_rng(2)
    changed = freerun_forecast(model, dataset(toy.y_train, toy.u_train, 50.0 * rng.normal(size=toy.y_test.shape),
                                              toy.u_test), **OPTIONS)
    assert same(changed, reference)
    y_train = toy.y_train.copy()
    y_train[-1] += 1.0
    moved = freerun_forecast(model, dataset(y_train, toy.u_train, toy.y_test, toy.u_test), **OPTIONS)
    assert not np.array_equal(moved.samples, reference.samples)


def test_the_protocol_scores_the_forecasts_of_the_hooks(toy):
    """``evaluate`` scores exactly the forecasts the hooks return (so the tests above test the protocols)."""
    model = build("prssm", toy)
    result = evaluate(model, toy, "causal", window=WINDOW, max_windows=MAX_WINDOWS, burn_in=BURN_IN, **OPTIONS)
    forecasts = causal(model, toy)
    expected = [float(np.sqrt(np.mean((toy.y_test[s:s + WINDOW] - fc.mean) ** 2))) for s, fc in forecasts]
    np.testing.assert_allclose(result["per_window"], expected, rtol=1e-12)
    free = evaluate(model, toy, "freerun", **OPTIONS)
    fc = freerun_forecast(model, toy, **OPTIONS)
    np.testing.assert_allclose(free["rmse"], np.sqrt(np.mean((toy.y_test - fc.mean) ** 2)), rtol=1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_envi_forecast_reads_the_training_half_only(toy, name):
    model = build(name, toy)
    options = dict(seed=3, num_particles=40)
    reference = envi_forecast(model, toy, **options)
    assert reference.shape == toy.y_test.shape
    rng = np.random.default_rng(2)
    changed = envi_forecast(model, dataset(toy.y_train, toy.u_train, 50.0 * rng.normal(size=toy.y_test.shape),
                                           toy.u_test), **options)
    assert np.array_equal(changed, reference)
    y_train = toy.y_train.copy()
    y_train[-1] += 1.0
    assert not np.array_equal(envi_forecast(model, dataset(y_train, toy.u_train, toy.y_test, toy.u_test), **options),
                              reference)


def test_envi_propagates_the_filtered_mean_through_the_transition_mean(toy):
    model = build("odgpssm_trained", toy)
    x = model.filter(toy.y_train, toy.u_train, num_particles=40, seed=3).means[-1]
    mean_function = model.transition_moments()  # in the model's units (it standardised the toy data in fit)
    expected = []
    for t, u_t in enumerate(model.scaling_.u_to_model(toy.u_test)):
        x = mean_function(x[None], u_t, t)[0][0]
        expected.append(model.scaling_.y_to_original(x[:1]))
    np.testing.assert_allclose(envi_forecast(model, toy, seed=3, num_particles=40), expected, rtol=1e-12)
    result = evaluate(model, toy, "envi", seed=3, num_particles=40)
    assert result["nlpd"] is None and result["protocol"] == "envi"
    np.testing.assert_allclose(result["rmse"], np.sqrt(np.mean((toy.y_test - np.array(expected)) ** 2)), rtol=1e-12)
