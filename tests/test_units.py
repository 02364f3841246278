"""Units inside the models (``gpssm_np.units``): fit standardises with its data's statistics, the public methods
take and return original units, the model file keeps the statistics."""
import types

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.units import Scaling

SCALE, SHIFT = 50.0, 300.0  # outputs in "raw units": 50 y + 300
U_SCALE, U_SHIFT = 3.0, -2.0


def linear_plant(T=400, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sin(np.arange(T) / 9.0)[:, None] + 0.5 * rng.normal(size=(T, 1))
    x = np.zeros(T)
    for t in range(1, T):
        x[t] = 0.9 * x[t - 1] + 0.4 * u[t, 0] + 0.05 * rng.normal()
    return (x + 0.05 * rng.normal(size=T))[:, None], u


@pytest.fixture(scope="module")
def data():
    """The same series standardised (a Dataset's halves) and in raw units (its raw series: 50 y + 300, 3 u - 2)."""
    y, u = linear_plant()
    return gp.datasets.from_arrays(SCALE * y + SHIFT, U_SCALE * u + U_SHIFT, train_fraction=0.5, name="plant")


MODELS = {
    "odgpssm": (lambda: gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=0),
                {"max_steps": 10, "plan": {"eval_every": 5}}),
    "dssm": (lambda: gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4, seed=0),
             {"epochs": 1, "plan": {"seq_len": 20, "num_samples": 3}}),
    "lgssm": (lambda: gp.LGSSM(dim_x=2, num_iters=5), {}),
    "arx": (lambda: gp.ARX(na=2, nb=2), {}),
}


def fitted(name, y, u):
    make, options = MODELS[name]
    return make().fit(y, u, **options)


def raw_train(ds):
    n = len(ds.y_train)
    return ds.y_raw[:n], ds.u_raw[:n]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_fit_on_raw_units_forecasts_in_raw_units_like_the_standardised_fit(data, name):
    standardised = fitted(name, data.y_train, data.u_train)
    raw = fitted(name, *raw_train(data))
    np.testing.assert_allclose(raw.scaling_.y_mean, data.y_mean, rtol=1e-12)
    np.testing.assert_allclose(raw.scaling_.y_std, data.y_std, rtol=1e-12)
    np.testing.assert_allclose(raw.scaling_.u_std, data.u_std, rtol=1e-12)
    # the training data they saw agree to rounding, so do their parameters and forecasts
    for key, value in standardised.get_learned_params().items():
        np.testing.assert_allclose(raw.get_learned_params()[key], value, rtol=1e-6, atol=1e-8, err_msg=key)
    n = len(data.y_train)
    past = slice(n - 100, n)
    kwargs = {"num_samples": 20, "seed": 1, "num_particles": 200}
    fc_std = standardised.forecast(data.u_test[:50], y_past=data.y_train[past], u_past=data.u_train[past], **kwargs)
    fc_raw = raw.forecast(data.u_raw[n:n + 50], y_past=data.y_raw[past], u_past=data.u_raw[past], **kwargs)
    np.testing.assert_allclose(fc_raw.mean, data.to_original_y(fc_std.mean), rtol=1e-6)
    np.testing.assert_allclose(fc_raw.std, fc_std.std * data.y_std, rtol=1e-6)
    # the forecast in model units is the standardised one, and maps back
    in_model_units = raw.forecast(data.u_raw[n:n + 50], y_past=data.y_raw[past], u_past=data.u_raw[past],
                                  units="model", **kwargs)
    np.testing.assert_allclose(in_model_units.mean, fc_std.mean, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(in_model_units.in_original_units().mean, fc_raw.mean)
    # evaluate: the raw series scores like the standardised arrays, on the standardised scale; a Dataset works for both
    for protocol in ("paper", "causal", "freerun"):  # paper: q_x0 of the window, in its units
        options = {"num_samples": 10, **({} if protocol == "paper" else {"num_particles": 100})}
        on_dataset = gp.evaluate(standardised, data, protocol, **options)
        raw_on_dataset = gp.evaluate(raw, data, protocol, **options)
        raw_arrays = gp.evaluate(raw, (data.y_raw[n:], data.u_raw[n:]), protocol, history=raw_train(data), **options)
        for result in (raw_on_dataset, raw_arrays):
            assert result["rmse"] == pytest.approx(on_dataset["rmse"], rel=1e-6)
            assert result["nlpd"] == pytest.approx(on_dataset["nlpd"], rel=1e-6)
            assert result["rmse_original_units"] == pytest.approx(on_dataset["rmse_original_units"], rel=1e-6)
    # score and predict are in the units of the data given
    y_raw, u_raw = data.y_raw[n - 100:], data.u_raw[n - 100:]
    y_std, u_std = np.concatenate([data.y_train[-100:], data.y_test]), np.concatenate([data.u_train[-100:],
                                                                                       data.u_test])
    assert raw.score(y_raw, u_raw, num_particles=200) == pytest.approx(
        standardised.score(y_std, u_std, num_particles=200) * SCALE * data.y_std[0] / SCALE, rel=1e-6)
    np.testing.assert_allclose(raw.predict(data.u_raw[n:n + 20], y_past=data.y_raw[past], u_past=data.u_raw[past]),
                               data.to_original_y(standardised.predict(data.u_test[:20], y_past=data.y_train[past],
                                                                       u_past=data.u_train[past])), rtol=1e-6)


def test_evaluate_gives_a_model_fitted_on_part_of_the_raw_series_the_raw_series(data):
    """A model fitted on a stretch of the raw series (its statistics near the data set's, not equal) is given the
    raw series by evaluate, as the explicit arrays give it; one fitted on a stretch of the standardised arrays the
    standardised arrays."""
    n = len(data.y_train)
    raw = gp.ARX(na=2, nb=2).fit(data.y_raw[:150], data.u_raw[:150])
    standardised = gp.ARX(na=2, nb=2).fit(data.y_train[:150], data.u_train[:150])
    standardised_arrays = (np.concatenate([data.y_train, data.y_test]), np.concatenate([data.u_train, data.u_test]))
    for model, (y, u) in ((raw, (data.y_raw, data.u_raw)), (standardised, standardised_arrays)):
        explicit = gp.evaluate(model, (y[n:], u[n:]), "causal", history=(y[:n], u[:n]))
        assert gp.evaluate(model, data, "causal")["rmse_original_units"] == pytest.approx(
            explicit["rmse_original_units"] * (1.0 if model is raw else data.y_std[0]), rel=1e-9)


@pytest.mark.parametrize("shift, y_spread, u_spread",
                         [(0.0, 5.0, 3.0), (0.0, 3.0, 5.0), (0.0, 1.5, 1.5), (3.0, 1.0, 1.0)])
def test_a_raw_series_that_differs_from_its_standardised_arrays_by_its_spread_or_mean_alone_is_told_apart(
        shift, y_spread, u_spread):
    """A raw series that differs from the standardised arrays (means 0, spreads 1) by its spreads alone, or by its
    means alone: ``protocols.fitted_on_raw_series`` still tells which view a model was fitted on (the squared
    distances of the means and of the spreads add, the standardised view's at mean 0 and spread 1, over outputs and
    inputs alike, whichever spread is the wider)."""
    from gpssm_np.protocols import fitted_on_raw_series

    y, u = linear_plant()
    n = len(y) // 2  # the training part, whose statistics the data set keeps
    y = shift + y_spread * (y - y[:n].mean()) / y[:n].std()
    u = shift + u_spread * (u - u[:n].mean()) / u[:n].std()
    ds = gp.datasets.from_arrays(y, u, train_fraction=0.5, name="centred")
    assert len(ds.y_train) == n and np.allclose([ds.y_mean, ds.u_mean], shift, atol=1e-12)
    np.testing.assert_allclose([ds.y_std, ds.u_std], [[y_spread], [u_spread]], rtol=1e-12)
    assert fitted_on_raw_series(gp.ARX(na=2, nb=2).fit(ds.y_raw[:n], ds.u_raw[:n]), ds)
    assert not fitted_on_raw_series(gp.ARX(na=2, nb=2).fit(ds.y_train, ds.u_train), ds)
    with pytest.warns(UserWarning, match="keeps no statistics of its training data") as caught:  # not the identity
        gp.evaluate(gp.ARX(na=2, nb=2, standardize=False).fit(ds.y_train, ds.u_train), ds, "causal")
    assert caught[0].filename == __file__  # the warning names the line that called evaluate


def test_evaluate_warns_that_a_model_without_statistics_is_given_the_standardised_arrays(data):
    """A model fitted with standardize=False keeps no statistics, so evaluate cannot tell the units it was fitted
    in: it gives it the standardised arrays and says so, unless those are the raw series anyway."""
    import warnings

    model = gp.ARX(na=2, nb=2, standardize=False).fit(*raw_train(data))
    with pytest.warns(UserWarning, match="^model: this ARX keeps no statistics of its training data"):
        gp.evaluate(model, data, "causal")
    plain = gp.datasets.from_arrays(np.concatenate([data.y_train, data.y_test]),  # statistics of 0 and 1
                                    np.concatenate([data.u_train, data.u_test]), train_fraction=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.evaluate(gp.ARX(na=2, nb=2, standardize=False).fit(plain.y_train, plain.u_train), plain, "causal")
    # a data set of its own kind that keeps no statistics: nothing to tell apart, nothing said
    bare = types.SimpleNamespace(**{name: getattr(data, name) for name in ("y_train", "u_train", "y_test", "u_test",
                                                                            "y_std")})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.evaluate(model, bare, "causal")


@pytest.mark.parametrize("name", ["odgpssm", "lgssm"])
def test_filter_takes_and_returns_raw_units(data, name):
    standardised = fitted(name, data.y_train, data.u_train)
    raw = fitted(name, *raw_train(data))
    y, u = data.y_raw[:120].copy(), data.u_raw[:120]
    y[7] = np.nan
    y_std = (y - data.y_mean) / data.y_std
    log_jacobian = -119 * np.log(data.y_std[0])  # one entry missing
    if name == "lgssm":
        assert raw.log_likelihood(y[8:], u[8:]) == pytest.approx(
            standardised.log_likelihood(y_std[8:], data.u_train[8:120]) - 112 * np.log(data.y_std[0]), rel=1e-8)
        return
    res_std = standardised.filter(y_std, data.u_train[:120], num_particles=200, seed=2)
    res_raw = raw.filter(y, u, num_particles=200, seed=2)
    np.testing.assert_allclose(res_raw.output_means, data.to_original_y(res_std.output_means), rtol=1e-6)
    np.testing.assert_allclose(res_raw.predicted_output_vars, res_std.predicted_output_vars * data.y_std**2,
                               rtol=1e-6)
    np.testing.assert_allclose(res_raw.innovations, res_std.innovations * data.y_std, rtol=1e-5, atol=1e-6)
    assert np.isnan(res_raw.innovations[7, 0]) and not np.isnan(res_raw.innovations[8, 0])
    assert res_raw.log_likelihood == pytest.approx(res_std.log_likelihood + log_jacobian, rel=1e-6)
    np.testing.assert_allclose(res_raw.means, res_std.means, rtol=1e-6, atol=1e-8)  # the latent states are the model's


def test_one_sequence_given_as_a_batch_of_one_is_converted_as_the_sequence(data):
    """A (1, T, d) array is the one sequence (T, d) (``_validation.one_sequence``): a fitted model takes it to model
    units as it takes the sequence, so the filter and the likelihood are the same."""
    model = fitted("lgssm", *raw_train(data))
    y, u = data.y_raw[:120], data.u_raw[:120]
    batch = model.filter(y[None], u[None])
    np.testing.assert_array_equal(batch.means, model.filter(y, u).means)
    assert model.log_likelihood(y[None], u[None]) == model.log_likelihood(y, u)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_model_file_keeps_the_units(data, name, tmp_path):
    """An embedded user needs the model file only: forecasts and the online filter in raw units after loading."""
    raw = fitted(name, *raw_train(data))
    loaded = gp.load(gp.save(raw, tmp_path / "m.npz"))
    for field in ("y_mean", "y_std", "u_mean", "u_std"):
        np.testing.assert_array_equal(getattr(loaded.scaling_, field), getattr(raw.scaling_, field))
    n = len(data.y_train)
    u_future = data.u_raw[n:n + 30]
    # from past data in raw units; the GP models and the DSSM also from the end of their training data (kept in the
    # file, in model units)
    for kwargs in [{"y_past": data.y_raw[n - 60:n], "u_past": data.u_raw[n - 60:n]}] + (
            [{}] if name in ("odgpssm", "dssm") else []):
        fc = loaded.forecast(u_future, seed=3, **kwargs)
        np.testing.assert_array_equal(fc.samples, raw.forecast(u_future, seed=3, **kwargs).samples)
        assert abs(np.mean(fc.mean) - SHIFT) < 3 * SCALE  # raw units


def test_data_already_standardised_pass_through_bit_for_bit(data):
    """Statistics within SNAP of 0 and 1 are exactly 0 and 1: a fit on a Dataset's arrays (the benchmarks) trains on
    the same numbers as without standardisation, and the scaling changes nothing."""
    y, u = data.y_train, data.u_train
    assert abs(y.mean()) > 0  # standardised, but not exactly
    on = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=0).fit(y, u, max_steps=10, plan=dict(eval_every=5))
    off = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=0, standardize=False).fit(
        y, u, max_steps=10, plan=dict(eval_every=5))
    assert off.scaling_ is None
    for field in ("y_mean", "u_mean"):
        assert not np.any(getattr(on.scaling_, field))
    for field in ("y_std", "u_std"):
        assert np.all(getattr(on.scaling_, field) == 1.0)
    for key, value in off.get_learned_params().items():
        np.testing.assert_array_equal(on.get_learned_params()[key], value)
    kwargs = {"y_past": data.y_test[:50], "u_past": data.u_test[:50], "seed": 4, "num_particles": 100}
    np.testing.assert_array_equal(on.forecast(data.u_test[50:80], **kwargs).samples,
                                  off.forecast(data.u_test[50:80], **kwargs).samples)


def test_scaling_statistics_and_arguments():
    ys = [np.array([[1.0, 5.0], [3.0, 5.0]]), np.array([[5.0, 5.0]])]
    us = [np.zeros((2, 0)), np.zeros((1, 0))]
    s = Scaling.of(ys, us)
    np.testing.assert_allclose(s.y_mean, [3.0, 5.0])
    np.testing.assert_allclose(s.y_std, [np.sqrt(8.0 / 3.0), 1.0])  # a constant column keeps std 1
    assert s.u_mean.shape == (0,)
    np.testing.assert_allclose(s.y_to_original(s.y_to_model(ys[0])), ys[0])
    spread = np.array([[2.0, 3.0]])  # a std in model units, and a variance: each power of y_std back and forth
    np.testing.assert_allclose(s.y_spread_to_original(spread), spread * s.y_std)
    np.testing.assert_allclose(s.y_spread_to_model(s.y_spread_to_original(spread, 2), 2), spread)
    np.testing.assert_allclose(s.y_spread_to_model(spread), spread / s.y_std)
    with pytest.raises(ValueError, match="standardize"):
        gp.ODGPSSM(dim_x=2, dim_y=1, standardize="yes")
    with pytest.raises(ValueError, match="units"):
        gp.LGSSM(dim_x=2).fit(*linear_plant(100)).forecast(np.zeros((5, 1)), units="raw")
    assert gp.ARX(standardize=False).get_config()["standardize"] is False


def test_a_constant_column_is_found_through_rounding():
    """0.1 repeated has a computed std of about 1e-17, not 0: it was taken for a spread, the column divided by it,
    and a test input 1e-3 off the constant forecast at 1e10. A constant column keeps std 1 however its mean rounds,
    and ``from_arrays`` refuses it as it refuses an exact one."""
    y, u, _ = gp.datasets.cascaded_tanks(400, seed=0)
    for c in (0.1, 0.3, -2.7, 7e12, 0.0):  # an all-zero column too (std 0 at a largest magnitude of 0)
        column = np.full((400, 1), c)
        s = Scaling.of([y], [np.hstack([u, column])])
        assert s.u_std[1] == 1.0 and np.isclose(s.u_mean[1], c, rtol=1e-12, atol=0.0)
        with pytest.raises(ValueError, match="u: column 1 is constant in the training part"):
            gp.datasets.from_arrays(y, np.hstack([u, column]))
    U = np.hstack([u, np.full((400, 1), 0.1)])
    m = gp.ARX(dim_y=1, dim_u=2).fit(y[:200], U[:200])
    u_future = U[200:210].copy()
    u_future[:, 1] += 1e-3
    ref = gp.ARX(dim_y=1, dim_u=1).fit(y[:200], u[:200])
    np.testing.assert_allclose(m.predict(u_future, y_past=y[150:200], u_past=U[150:200]),
                               ref.predict(u[200:210], y_past=y[150:200], u_past=u[150:200]), rtol=1e-8)
    tiny = np.array([[1.0], [1.0 + 1e-9], [1.0 - 1e-9]])  # a small spread is a spread
    assert Scaling.of([tiny], [np.zeros((3, 0))]).y_std[0] < 1e-8


def test_statistics_snap_relative_to_the_columns_own_scale():
    """A column is constant when its std is at most CONSTANT_RTOL times its magnitude, a mean is 0 within SNAP of its
    own std, a std 1 within SNAP of 1; a model file's zero standard deviation is refused."""
    from gpssm_np.units import CONSTANT_RTOL, SNAP
    none = [np.zeros((4, 0))]
    big = 1e6 + 1e-7 * np.array([[1.0], [-1.0], [1.0], [-1.0]])  # std 1e-7: below 1e-12 of 1e6, rounding
    assert 1e-7 <= CONSTANT_RTOL * 1e6 and Scaling.of([big], none).y_std[0] == 1.0
    wide = 1e-9 + 100.0 * np.array([[1.0], [-1.0], [1.0], [-1.0]])  # mean 1e-9, within SNAP of a std of 100
    assert 1e-9 <= SNAP * 100.0
    s = Scaling.of([wide], none)
    assert s.y_mean[0] == 0.0 and s.y_std[0] == 100.0
    near_one = (1.0 + 1e-12) * np.array([[1.0], [-1.0], [1.0], [-1.0]])
    assert Scaling.of([near_one], none).y_std[0] == 1.0
    arrays = Scaling.of([wide], none).arrays()
    with pytest.raises(ValueError, match="expected positive standard deviations"):
        Scaling.from_arrays(dict(arrays, scaling_y_std=np.zeros(1)))
    with_input = dict(arrays, scaling_u_mean=np.zeros(1), scaling_u_std=np.ones(1))
    with pytest.raises(ValueError, match="expected positive standard deviations"):
        Scaling.from_arrays(dict(with_input, scaling_u_std=np.zeros(1)))
    with pytest.raises(ValueError, match="scaling_u_mean"):  # an input's statistics are checked as the outputs' are
        Scaling.from_arrays(dict(with_input, scaling_u_mean=np.array([np.nan])))
    # a model file's statistics must fit the model, outputs and inputs each
    assert Scaling.from_state(dict(with_input), 1, 1).u_std[0] == 1.0
    for dim_y, dim_u in ((1, 2), (2, 1)):
        with pytest.raises(ValueError, match=f"^state: a scaling of 1 outputs and 1 inputs, the model has dim_y = "
                                             f"{dim_y}, dim_u = {dim_u}$"):
            Scaling.from_state(dict(with_input), dim_y, dim_u)


def test_the_scores_of_test_arrays_are_on_the_models_standardised_scale(data):
    """Test arrays are scored on the scale of the model's own statistics: the RMSE, NLPD and coverage of the forecast
    and the outputs, each divided by the model's standard deviation of the outputs (about 96 here)."""
    from gpssm_np.metrics import coverage, nlpd, rmse

    model = fitted("lgssm", *raw_train(data))
    n = len(data.y_train)
    y, u = data.y_raw, data.u_raw
    res = gp.evaluate(model, (y[n:], u[n:]), "simulate", history=(y[:n], u[:n]))
    fc = model.forecast(u[n + 5:], y_past=y[n:n + 5], u_past=u[n:n + 5])
    scale = model.scaling_.y_std
    assert scale[0] > 10.0  # far from 1: a score on another scale would show
    z, mean, std = y[n + 5:] / scale, fc.mean / scale, fc.std / scale
    lower, upper = (bound / scale for bound in fc.interval(0.95))
    assert res["rmse"] == pytest.approx(rmse(z, mean), rel=1e-12)
    assert res["nlpd"] == pytest.approx(nlpd(z, mean, std), rel=1e-12)
    assert res["coverage95"] == coverage(z, lower, upper)
