"""Forecasts, their Gaussian summary, and the three evaluation protocols."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.forecast import Forecast
from gpssm_np.protocols import causal_forecasts, evaluate, scored_windows
from tests.data_dir import DATA_DIR


@pytest.fixture(scope="module")
def actuator(request):
    return gp.datasets.load("actuator", DATA_DIR)


def small_model(**kwargs):
    return gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_latent=2, num_inducing=6, seed=0, **kwargs)


def test_forecast_summary_and_units(rng):
    samples = rng.normal(size=(400, 7, 1)) * 2.0 + 1.0
    fc = Forecast(samples=samples, states=samples, obs_var=np.array([0.5]), y_mean=np.array([10.0]),
                  y_std=np.array([3.0]))
    np.testing.assert_allclose(fc.mean, samples.mean(0))
    np.testing.assert_allclose(fc.std, np.sqrt(samples.var(0) + 0.5))
    lower, upper = fc.interval(0.95)
    np.testing.assert_allclose((upper - lower) / 2, 1.959963984540054 * fc.std)
    orig = fc.in_original_units()
    np.testing.assert_allclose(orig.mean, 3.0 * fc.mean + 10.0)
    np.testing.assert_allclose(orig.std, 3.0 * fc.std)
    with pytest.raises(ValueError, match="level"):
        fc.interval(1.5)
    in_original_units = Forecast(samples=samples, states=samples, obs_var=np.array([0.5]))
    assert in_original_units.in_original_units() is in_original_units  # nothing to undo


def test_interval_takes_a_level_or_statsmodels_alpha(rng):
    samples = rng.normal(size=(50, 4, 2))
    fc = Forecast(samples=samples, states=samples, obs_var=np.array([0.5, 0.1]))
    for a, b in [(fc.interval(alpha=0.05), fc.interval(0.95)), (fc.interval(alpha=0.1), fc.interval(level=0.9)),
                 (fc.interval(), fc.interval(0.95))]:
        np.testing.assert_allclose(a, b, rtol=1e-14)
    np.testing.assert_allclose(fc.interval(alpha=0.32)[1] - fc.mean, 0.994457883 * fc.std, rtol=1e-8)
    with pytest.raises(ValueError, match="level, alpha: .*not both"):
        fc.interval(0.95, alpha=0.05)
    for bad in (0.0, 1.0, -0.1, True, "0.05"):
        with pytest.raises(ValueError, match="alpha: expected a number in \\(0, 1\\)"):
            fc.interval(alpha=bad)


def _summary_columns(fc, lower, upper):
    """The long-format columns summary_frame is expected to hold, output-major."""
    return {"output": [0, 0, 0, 1, 1, 1], "step": [0, 1, 2, 0, 1, 2], "mean": fc.mean.T.ravel(),
            "mean_se": fc.std.T.ravel(), "mean_ci_lower": lower.T.ravel(), "mean_ci_upper": upper.T.ravel()}


def test_summary_frame_without_pandas_is_a_dict_of_arrays(rng, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    samples = rng.normal(size=(30, 3, 2))
    fc = Forecast(samples=samples, states=samples, obs_var=np.array([0.5, 0.1]))
    table = fc.summary_frame(alpha=0.1)
    assert isinstance(table, dict)
    expected = _summary_columns(fc, *fc.interval(0.9))
    assert list(table) == list(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(table[name], value, rtol=1e-14, err_msg=name)


def test_summary_frame_with_pandas_is_a_dataframe(rng, monkeypatch):
    """The DataFrame path with a stand-in pandas module (pandas is optional and not installed in CI); the same
    test runs against the real pandas where it is installed."""
    import sys
    import types

    samples = rng.normal(size=(30, 3, 2))
    fc = Forecast(samples=samples, states=samples, obs_var=np.array([0.5, 0.1]))
    expected = _summary_columns(fc, *fc.interval(0.95))
    try:
        import pandas
    except ImportError:
        class DataFrame:
            def __init__(self, columns):
                self.columns = dict(columns)

            def set_index(self, keys):
                self.index = keys
                return self

        pandas = types.SimpleNamespace(DataFrame=DataFrame)
        monkeypatch.setitem(sys.modules, "pandas", pandas)
        frame = fc.summary_frame()
        assert isinstance(frame, DataFrame) and frame.index == ["output", "step"]
        columns = frame.columns
    else:
        frame = fc.summary_frame()
        assert isinstance(frame, pandas.DataFrame) and list(frame.index.names) == ["output", "step"]
        assert list(frame.columns) == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
        columns = dict(frame.reset_index())
    for name, value in expected.items():
        np.testing.assert_allclose(np.asarray(columns[name]), value, rtol=1e-14, err_msg=name)


def test_forecast_is_reproducible_and_causal(rng):
    model = small_model()
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(80, 1))
    a = model.forecast(u[60:], y_past=y, u_past=u[:60], num_samples=20, seed=3, num_particles=200)
    b = model.forecast(u[60:], y_past=y, u_past=u[:60], num_samples=20, seed=3, num_particles=200)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.samples.shape == (20, 20, 1) and a.states.shape == (20, 20, 2)
    # the forecast depends on the past outputs only through the filter: changing them changes it
    c = model.forecast(u[60:], y_past=y + 1.0, u_past=u[:60], num_samples=20, seed=3, num_particles=200)
    assert not np.allclose(a.mean, c.mean)


def test_forecast_from_given_initial_state_is_the_free_run(rng):
    model = small_model()
    u = rng.normal(size=(15, 1))
    mean, var = np.array([0.3, -0.2]), np.full(2, 1e-12)
    fc = model.forecast(u, x0=(mean, var), num_samples=5, seed=0)
    assert fc.mean.shape == (15, 1) and fc.origin == "x0"
    rng_ = np.random.default_rng(0)  # the forecast's draws: x_0 from N(mean, diag var), then the free run
    states = model._free_run(mean + np.sqrt(var) * rng_.standard_normal((5, 2)), u, rng_)
    np.testing.assert_array_equal(fc.states, states)
    assert not np.allclose(model.forecast(u, x0=(-mean, var), num_samples=5, seed=0).mean, fc.mean)
    with pytest.raises(ValueError, match="u_future"):
        model.forecast(None)
    with pytest.raises(ValueError, match="u_future"):
        model.forecast(np.zeros((5, 3)))
    auto = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=0, num_inducing=4)
    assert auto.forecast(steps=9, num_samples=3).samples.shape == (3, 9, 1)
    with pytest.raises(ValueError, match="steps"):
        auto.forecast()


def test_scored_windows_follow_the_authors_loader():
    assert scored_windows(512) == [0, 100, 200, 300, 400, 412]
    assert scored_windows(250) == [0, 100, 150]
    assert scored_windows(148) == [0, 48]


@pytest.mark.parametrize("protocol", ["paper", "causal", "freerun"])
def test_protocols_run_and_report(actuator, protocol):
    model = small_model(recognition="lstm", recognition_options={"hidden": 4, "num_layers": 1})
    res = evaluate(model, actuator, protocol, num_samples=10, seed=0, **({} if protocol == "paper" else
                                                                        {"num_particles": 100}))
    assert res["protocol"] == protocol
    assert np.isfinite(res["rmse"]) and np.isfinite(res["nlpd"]) and 0 <= res["coverage95"] <= 1
    assert res["rmse"] == pytest.approx(np.mean(res["per_window"]))
    assert res["rmse_original_units"] == pytest.approx(res["rmse"] * actuator.y_std[0])
    assert len(res["per_window"]) == (1 if protocol == "freerun" else 6)


def test_causal_protocol_ignores_the_window_outputs(actuator):
    """Changing the outputs inside the scored windows changes the scores but not the forecasts."""
    from dataclasses import replace

    from gpssm_np.protocols import evaluate_causal

    model = small_model()
    base = evaluate_causal(model, actuator, num_samples=10, num_particles=100, max_windows=2)
    y_test = actuator.y_test.copy()
    y_test[5:100] += 5.0  # window 0 outputs (its first 5 steps stay: window 1's burn-in reads 0..99)
    shifted = evaluate_causal(model, replace(actuator, y_test=y_test), num_samples=10, num_particles=100,
                              max_windows=1)
    assert shifted["per_window"][0] > base["per_window"][0] + 1.0


def test_evaluate_rejects_bad_arguments(actuator):
    with pytest.raises(ValueError, match="protocol"):
        evaluate(small_model(), actuator, "oracle")
    with pytest.raises(ValueError, match=r"^protocol: expected one of .* \(one per call\), got \['causal'\]"):
        evaluate(small_model(), actuator, ["causal"])  # a list of protocols: one protocol a call
    with pytest.raises(ValueError, match="dataset"):
        evaluate(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=0, num_inducing=4), actuator, "paper")


def test_a_recognition_network_filters_data_with_missing_first_outputs(rng):
    import warnings

    lstm = gp.ODGPSSM(dim_x=2, dim_y=1, num_inducing=4, recognition="lstm", recognition_options={"hidden": 3})
    mlp = gp.PRSSM(dim_x=2, dim_y=1, num_inducing=4, recognition="mlp",
                   recognition_options={"hidden": 3, "num_steps": 3})
    dssm = gp.DSSM(dim_x=2, hidden=3, rnn_hidden=3)
    y, u = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    y[4:7] = np.nan  # four complete steps, then three missing ones
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in (lstm, mlp, dssm):  # the network reads the complete steps before the first gap
            for got, expected in zip(model.filter_start(y[:20], u[:20]), model.q_x0(y[:4], u[:4])):
                np.testing.assert_array_equal(got, expected)
            assert np.all(np.isfinite(model.filter(y, u, num_particles=50).means))
        gp.ODGPSSM(dim_x=2, dim_y=1, num_inducing=4).filter(y, u, num_particles=50)  # a free q(x0) reads none
    y[:1] = np.nan  # the first output missing: nothing to read
    for model in (lstm, mlp, dssm):
        with pytest.warns(UserWarning, match="first missing output \\(step 1\\); the filter starts from the prior"):
            result = model.filter(y, u, num_particles=50)
        assert np.all(np.isfinite(result.means)) and result.log_likelihood_steps[0] == 0.0
        with pytest.warns(UserWarning, match="prior"):
            np.testing.assert_array_equal(np.concatenate(model.filter_start(y, u)), [0, 0, 1, 1])
        with pytest.warns(UserWarning, match="prior") as caught:
            assert np.all(np.isfinite(model.forecast(u[:5], y_past=y, u_past=u, num_samples=3).mean))
        assert [w.filename for w in caught] == [__file__]  # the forecast's line, as the filter's would be
    y, u = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    y[2] = np.nan  # two complete steps: fewer than the MLP's three
    with pytest.warns(UserWarning, match="first 3 complete steps of a sequence, but only 2 are before the first"):
        np.testing.assert_array_equal(mlp.filter_start(y, u)[1], [1, 1])
    with pytest.warns(UserWarning, match="but only 2 are in the sequence"):  # short, nothing missing
        mlp.filter(y[:2], u[:2], num_particles=50)
    y, u = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    with warnings.catch_warnings():  # an init_window shorter than the MLP's steps: the network reads its own
        warnings.simplefilter("error")
        short, own = (mlp.filter(y, u, num_particles=50, init_window=n) for n in (2, 3))
    np.testing.assert_array_equal(short.means, own.means)


def test_training_windows_hold_the_steps_a_recognition_network_reads(rng):
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, recognition="mlp",
                       recognition_options={"hidden": 3, "num_steps": 12})
    with pytest.raises(ValueError, match="^seq_len: the recognition network reads the first 12 steps"):
        model.fit(y, u, max_steps=2, plan={"seq_len": 10})
    assert model.training_plan({"seq_len": 12}, max_steps=2).seq_len == 12
    without = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, settings="authors")  # no network: a window of one step will do
    assert without.training_plan({"seq_len": 1}).seq_len == 1


def test_filter_accepts_missing_outputs_but_training_rejects_them(rng):
    model = small_model()
    y, u = rng.normal(size=(20, 1)), rng.normal(size=(20, 1))
    y[5] = np.nan
    result = model.filter(y, u, num_particles=50)
    assert np.all(np.isfinite(result.means)) and result.log_likelihood_steps[5] == 0.0
    with pytest.raises(ValueError, match="NaN is read as a missing output only by the models' filters"):
        model.elbo(y, u)
    for fitted in (model, gp.ARX(dim_y=1, dim_u=1), gp.LGSSM(dim_x=1, dim_y=1, dim_u=1)):  # every fit
        with pytest.raises(ValueError, match="^y: contains NaN or inf; NaN is read as a missing output only"):
            fitted.fit(y, u, **({"max_steps": 1} if fitted is model else {}))
    with pytest.raises(ValueError, match="y: contains inf"):
        model.filter(np.full((20, 1), np.inf), u)


@pytest.mark.parametrize("protocol", ["paper", "causal", "freerun"])
def test_evaluate_takes_test_arrays_with_a_history(actuator, protocol):
    """(y_test, u_test) with history=(y_train, u_train) scores as the Dataset they come from."""
    model = small_model()
    options = {"num_samples": 5, **({} if protocol == "freerun" else {"max_windows": 2}),
               **({} if protocol == "paper" else {"num_particles": 50})}
    from_dataset = evaluate(model, actuator, protocol, **options)
    from_arrays = evaluate(model, (actuator.y_test, actuator.u_test), protocol,
                           history=(actuator.y_train, actuator.u_train), **options)
    # the arrays carry no statistics: their units are the original ones for the model (fitted on them); no names
    original = ("rmse_original_units", "rmse_original_units_per_output", "y_names")
    assert {k: v for k, v in from_arrays.items() if k not in original} == \
        {k: v for k, v in from_dataset.items() if k not in original}
    assert from_arrays["rmse_original_units"] == from_arrays["rmse"]
    assert from_dataset["rmse_original_units"] == from_dataset["rmse"] * actuator.y_std[0]  # one output: as before
    assert from_dataset["rmse_original_units_per_output"] == [from_dataset["rmse_original_units"]]


def test_evaluate_without_history_or_scaling_and_a_short_test_part(rng, caplog):
    model = small_model()
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    with caplog.at_level("WARNING", logger="gpssm_np.protocols"):
        res = evaluate(model, (y.tolist(), u), "causal", num_samples=5, num_particles=50)
    assert res["window"] == 60 and res["windows"] == [0] and np.isfinite(res["rmse"])
    assert "60 steps, fewer than the window of 100" in caplog.text
    # a model without a scaling (not fitted): the arrays' units are the original units
    assert res["rmse_original_units"] == res["rmse"] and res["rmse_original_units_per_output"] == [res["rmse"]]
    # the first window has nothing before it: the forecast starts from q(x0), as forecast() without past data
    fc = model.forecast(u, num_samples=5, seed=0)
    assert res["rmse"] == pytest.approx(float(np.sqrt(np.mean((fc.mean - y) ** 2))))
    assert evaluate(model, (y, u), "paper", num_samples=5)["window"] == 60


def test_rmse_in_original_units_per_output(rng):
    t = np.arange(300)[:, None]
    y = np.hstack([np.sin(t / 7), 50.0 * np.cos(t / 11)]) + 0.1 * rng.normal(size=(300, 2))
    ds = gp.datasets.from_arrays(y, rng.normal(size=(300, 1)), train_fraction=0.5)
    model = gp.ODGPSSM(dim_x=2, dim_y=2, dim_u=1, num_inducing=4, seed=0)
    res = evaluate(model, ds, "causal", num_samples=5, num_particles=50)
    fcs = causal_forecasts(model, ds, num_samples=5, num_particles=50)
    per_output = np.mean([np.sqrt(np.mean((fc.mean - ds.y_test[s:s + 100]) ** 2, axis=0)) for s, fc in fcs], axis=0)
    np.testing.assert_allclose(res["rmse_original_units_per_output"], per_output * ds.y_std, rtol=1e-12)
    assert res["rmse_original_units"] is None  # two outputs of different units: no one number


def test_evaluate_names_bad_data(actuator, rng):
    model = small_model()
    with pytest.raises(ValueError, match="dataset: expected a pair"):
        evaluate(model, (actuator.y_test,))
    with pytest.raises(ValueError, match="dataset: expected a gpssm_np.datasets.Dataset"):
        evaluate(model, actuator.y_test)
    with pytest.raises(ValueError, match="history: a Dataset holds its own history"):
        evaluate(model, actuator, history=(actuator.y_train, actuator.u_train))
    with pytest.raises(ValueError, match="history: u: expected shape"):
        evaluate(model, (actuator.y_test, actuator.u_test), history=(actuator.y_train, actuator.u_train[:5]))
    with pytest.raises(ValueError, match="dataset: y: expected dim_y = 1"):
        evaluate(model, (rng.normal(size=(50, 2)), actuator.u_test[:50]))


def test_forecast_after_fit_continues_from_the_end_of_the_training_data(tmp_path):
    rng = np.random.default_rng(3)
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors").fit(
        y, u, epochs=1, plan=dict(seq_len=10, batch_size=8, num_samples=3))
    assert gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1).forecast(u[:5]).origin == "q(x0)"
    # a recognition network's q(x0) needs data, so a run without any starts from the prior and says so
    assert gp.DSSM(dim_x=2, dim_y=1, dim_u=1).forecast(u[:5]).origin == "p(x0)"
    assert gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, recognition="mlp").forecast(u[:5]).origin == "p(x0)"
    u_next = rng.normal(size=(7, 1))
    tail = model.DATA_TAIL
    continued = model.forecast(u_next, num_samples=5, num_particles=50, seed=1)
    explicit = model.forecast(u_next, y_past=y[-tail:], u_past=u[-tail:], num_samples=5, num_particles=50, seed=1)
    assert continued.origin == "end of the training data" and explicit.origin == "y_past"
    np.testing.assert_array_equal(continued.samples, explicit.samples)
    gp.save(model, tmp_path / "m.npz")
    loaded = gp.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.forecast(u_next, num_samples=5, num_particles=50, seed=1).samples,
                                  continued.samples)


def test_every_model_names_its_forecast_origin_by_one_rule(rng):
    """x0 given, else the past data given, else the training data's tail, else the model's own start: the same
    order and names for the ARX, the LGSSM and the GP models (``StateSpaceModel._forecast_origin``)."""
    y, u = rng.normal(size=(80, 1)), rng.normal(size=(80, 1))
    u_next = rng.normal(size=(6, 1))
    arx = gp.ARX(na=2, nb=2).fit(y, u)
    lgssm = gp.LGSSM(dim_x=2, num_iters=2).fit(y, u)
    odgpssm = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors").fit(
        y, u, epochs=1, plan=dict(seq_len=10, batch_size=8, num_samples=3))
    floor_only = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=2, plan={"eval_every": 1}, progress=False)
    assert floor_only.linear_gaussian() is not None  # its forecasts are the Kalman filter's (GPSSM._forecast)
    for model, own in ((arx, "training means"), (lgssm, "q(x0)"), (odgpssm, "q(x0)"), (floor_only, "q(x0)")):
        kwargs = dict(num_samples=3, num_particles=20)
        if model is not arx:
            x0 = (np.zeros(model.spec.dim_x), np.ones(model.spec.dim_x))
            assert model.forecast(u_next, x0=x0, **kwargs).origin == "x0"
        assert model.forecast(u_next, y_past=y[:10], u_past=u[:10], **kwargs).origin == "y_past"
        with pytest.raises(ValueError, match="u_past"):
            model.forecast(u_next, y_past=y[:10], u_past=u[:9], **kwargs)
        assert model.forecast(u_next, **kwargs).origin == "end of the training data"
        model.data_tail_ = None
        assert model.forecast(u_next, **kwargs).origin == own


def test_methods_that_read_one_sequence_refuse_several(rng):
    """filter, smooth, forecast's past, score and a recognition network's q_x0 read one sequence: several (a list,
    or an array (B, T, d_y), with their inputs or one sequence's) are a ValueError naming the outputs' argument (the
    GP models read the first alone), nested rows of unequal lengths too (NumPy's message named none), and so are
    past inputs without past outputs (they were dropped)."""
    y, u = rng.normal(size=(120, 1)), rng.normal(size=(120, 1))
    two_y, two_u = [y[:10], y[20:30]], [u[:10], u[20:30]]
    ragged_y, ragged_u = [y[:10], y[20:40]], [u[:10], u[20:40]]
    lgssm = gp.LGSSM(dim_x=2, dim_y=1, dim_u=1, num_iters=2).fit(y[:100], u[:100])
    floor_only = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y[:100], u[:100], max_steps=2, plan={"eval_every": 1},
                                                         progress=False)
    assert floor_only.linear_gaussian() is not None  # no GP part kept: the exact (Kalman) paths
    models = [small_model(), gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=3, rnn_hidden=3), lgssm, floor_only]
    for model in models:
        for call in (lambda: model.filter(two_y, two_u), lambda: model.smooth(two_y, two_u),
                     lambda: model.filter(np.stack(two_y), np.stack(two_u)),
                     lambda: model.filter(two_y, u[:10]), lambda: model.filter(np.stack(two_y), u[:10])):
            with pytest.raises(ValueError, match="^y: expected one sequence"):
                call()
        with pytest.raises(ValueError, match="^y_past: expected one sequence"):
            model.forecast(u[:5], y_past=two_y, u_past=two_u)
        with pytest.raises(ValueError, match="^y: expected one sequence"):
            model.filter(ragged_y, ragged_u)
        with pytest.raises(ValueError, match="^y_past: expected one sequence"):
            model.forecast(u[:5], y_past=ragged_y, u_past=ragged_u)
        with pytest.raises(ValueError, match="^y_past: expected one sequence"):  # named before u_past is matched
            model.forecast(u[:5], y_past=np.stack(two_y), u_past=u[:10])
        with pytest.raises(ValueError, match="^y_past: expected an array of shape .* unequal lengths"):
            model.forecast(u[:5], y_past=[[0.1], [0.2, 0.3]], u_past=u[:2])
        with pytest.raises(ValueError, match="^u_past: the past inputs go with the past outputs y_past"):
            model.forecast(u[:5], u_past=u[:10])
    arx = gp.ARX(dim_y=1, dim_u=1).fit(y[:100], u[:100])
    with pytest.raises(ValueError, match="^y_past: expected one sequence"):
        arx.forecast(u[:5], y_past=two_y, u_past=two_u)
    with pytest.raises(ValueError, match="^y_past: expected one sequence"):
        arx.forecast(u[:5], y_past=ragged_y, u_past=ragged_u)
    with pytest.raises(ValueError, match="^y: expected one sequence"):
        arx.score(two_y, two_u)
    mlp = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, recognition="mlp",
                     recognition_options={"hidden": 3, "num_steps": 3})
    with pytest.raises(ValueError, match="^y: expected one sequence"):
        mlp.q_x0(two_y, two_u)


def envi_model(rng, **options):
    """A 160-step series in units of mean 3 and spread 2, and a small ODGPSSM trained one epoch on its first 100
    steps (the rest is the envi protocol's test part)."""
    y, u = 3.0 + 2.0 * rng.normal(size=(160, 1)), rng.normal(size=(160, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors", seed=0, **options).fit(
        y[:100], u[:100], epochs=1, plan=dict(seq_len=10, batch_size=4, num_samples=3), progress=False)
    return y, u, model


@pytest.mark.parametrize("standardize", [True, False])
def test_envi_without_a_history_starts_at_the_end_of_the_training_data(rng, standardize):
    """The envi protocol on test arrays without a history propagates the transition's mean from the state filtered
    at the end of the model's training data, as a forecast without past data starts there: the same score as with
    that history given (it fell back to the mean of a sampled free run). A model fitted with standardize=False keeps
    its tail in the data's own units, with no statistics to map it back."""
    y, u, model = envi_model(rng, standardize=standardize)
    assert model.DATA_TAIL >= 100  # the whole training series is the tail
    alone = gp.evaluate(model, (y[100:], u[100:]), "envi", num_particles=50)["rmse"]
    given = gp.evaluate(model, (y[100:], u[100:]), "envi", history=(y[:100], u[:100]), num_particles=50)["rmse"]
    assert alone == pytest.approx(given, rel=1e-9)


def test_envi_scores_on_the_standardised_scale_and_in_original_units(rng):
    """The envi protocol's RMSE is that of its point forecast on the standardised scale (test arrays: divided by the
    model's own standard deviation, here 2), its original-units RMSE that of the forecast in the data's units."""
    from gpssm_np.protocols import envi_forecast, evaluation_data

    y, u, model = envi_model(rng)
    res = gp.evaluate(model, (y[100:], u[100:]), "envi", history=(y[:100], u[:100]), num_particles=50)
    data = evaluation_data(model, (y[100:], u[100:]), history=(y[:100], u[:100]))
    error = y[100:] - envi_forecast(model, data, num_particles=50)  # data units
    scale = model.scaling_.y_std
    assert abs(scale[0] - 2.0) < 0.5
    assert res["rmse"] == pytest.approx(float(np.sqrt(np.mean((error / scale) ** 2))), rel=1e-12)
    assert res["rmse_original_units"] == pytest.approx(float(np.sqrt(np.mean(error ** 2))), rel=1e-12)
    assert res["rmse_original_units_per_output"] == [res["rmse_original_units"]]
    assert res["rmse_per_output"] == pytest.approx([res["rmse"]], rel=1e-14)


def test_the_paper_protocol_starts_from_a_full_free_q_x0_with_its_covariance():
    """A warm start holds q(x0) with its full covariance (x0_sqrt); the paper protocol drew its forecasts from the
    diagonal of it alone, which moved its NLPD (2.0 against 0.54 on a floor-only default fit of the cascaded
    tanks)."""
    y, u, _ = gp.datasets.cascaded_tanks(400, seed=0)
    ds = gp.datasets.from_arrays(y, u, train_fraction=0.5)
    # the ARX floor: two lag states, whose q(x0) covariance has an off-diagonal entry to lose
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init="arx").fit(ds.y_train, ds.u_train, max_steps=2, plan={"eval_every": 1},
                                                         progress=False)
    assert model.spec.x0_covariance == "full" and model.spec.dim_x >= 2
    res = evaluate(model, ds, "paper", num_samples=20)
    own = model.q_x0
    model.q_x0 = lambda y=None, u=None, full_cov=False: own(y, u, full_cov=True)
    assert evaluate(model, ds, "paper", num_samples=20) == res
    model.q_x0 = lambda y=None, u=None, full_cov=False: own(y, u, full_cov=False)
    assert evaluate(model, ds, "paper", num_samples=20)["nlpd"] != res["nlpd"]  # the diagonal start differs


@pytest.fixture(scope="module")
def long_test_half():
    """A Dataset of a stable linear plant whose test half (800 steps) holds more than the six scored windows."""
    rng = np.random.default_rng(3)
    u = np.repeat(rng.uniform(-1, 1, 321), 5)[:1600, None]
    y = np.zeros((1600, 1))
    for t in range(2, 1600):
        y[t] = 1.2 * y[t - 1] - 0.5 * y[t - 2] + u[t - 1] + 0.1 * rng.standard_normal()
    return gp.datasets.from_arrays(y, u, name="long")


def test_evaluates_defaults_are_the_first_six_windows_a_burn_in_of_100_steps_and_1000_particles(long_test_half):
    """What ``evaluate(model, ds, protocol)`` reads when nothing else is given (module docstring of protocols): the
    first 6 windows of 100 steps at stride 100 (paper, causal), each causal start filtered from the 100 outputs
    before it, the freerun start from the whole training half, 50 forecast samples and 1000 particles for every
    protocol that filters (the GP models' forecasts depend on both)."""
    ds = long_test_half
    lgssm = gp.LGSSM(dim_x=2, dim_y=1, dim_u=1).fit(ds.y_train, ds.u_train)
    for protocol in ("paper", "causal"):
        res = evaluate(lgssm, ds, protocol)
        assert res["windows"] == [0, 100, 200, 300, 400, 500] and res["window"] == 100, protocol
        assert res["rmse_per_output"] == pytest.approx([res["rmse"]], rel=1e-14)  # one output: the windows' mean
    y_all, u_all = np.concatenate([ds.y_train, ds.y_test]), np.concatenate([ds.u_train, ds.u_test])
    by_hand = []
    for s in range(0, 600, 100):
        g = len(ds.y_train) + s
        fc = lgssm.forecast(u_all[g:g + 100], y_past=y_all[g - 100:g], u_past=u_all[g - 100:g])
        by_hand.append(float(np.sqrt(np.mean((fc.mean - ds.y_test[s:s + 100]) ** 2))))
    np.testing.assert_allclose(evaluate(lgssm, ds, "causal")["per_window"], by_hand, rtol=1e-12)
    model = small_model()
    for protocol in ("causal", "simulate", "freerun", "envi"):
        options = {"max_windows": 1} if protocol == "causal" else {}
        default = evaluate(model, ds, protocol, num_samples=5, **options)
        assert default == evaluate(model, ds, protocol, num_samples=5, num_particles=1000, **options), protocol
    assert evaluate(model, ds, "simulate") == evaluate(model, ds, "simulate", num_samples=50)
    freerun = model.forecast(ds.u_test, y_past=ds.y_train, u_past=ds.u_train, num_samples=5, num_particles=1000)
    assert [evaluate(model, ds, p, num_samples=5)["windows"] for p in ("freerun", "envi")] == [[0], [0]]
    assert evaluate(model, ds, "freerun", num_samples=5)["rmse"] == \
        pytest.approx(float(np.sqrt(np.mean((freerun.mean - ds.y_test) ** 2))), rel=1e-12)  # the whole training half
    # the linear model's filter forgets its start within 100 steps; the particles keep the burn-in's length
    assert evaluate(model, ds, "causal", num_samples=5, max_windows=1) == \
        evaluate(model, ds, "causal", num_samples=5, max_windows=1, burn_in=100)
    assert [fc.mean.tolist() for _, fc in causal_forecasts(model, ds, num_samples=5, max_windows=1)] == \
        [fc.mean.tolist() for _, fc in causal_forecasts(model, ds, num_samples=5, max_windows=1, num_particles=1000,
                                                           burn_in=100)]
