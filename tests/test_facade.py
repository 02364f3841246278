"""The model facade (estimator.py): abstract hooks, one list of training options, and the linear baselines saved
and loaded like the GP models."""
import inspect

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.io import MODEL_CLASSES
from gpssm_np.estimator import (DATA_OPTIONS, EPOCH_OPTIONS, PLAN_OPTIONS, TRAINING_OPTIONS, GradientTrainedModel,
                                StateSpaceModel)
from gpssm_np.models.gpssm import GPSSM


def test_the_base_classes_are_abstract_and_name_their_hooks():
    with pytest.raises(TypeError, match="abstract"):
        StateSpaceModel()
    with pytest.raises(TypeError, match="abstract"):
        GradientTrainedModel()
    assert StateSpaceModel.__abstractmethods__ == {"get_config", "get_learned_params", "set_learned_params", "fit",
                                                   "_q_x0", "_forecast", "constrained_params"}
    assert GradientTrainedModel.__abstractmethods__ == {"get_config", "_q_x0", "param_shapes", "elbo_function",
                                                        "transition_moments", "obs_var", "_free_run",
                                                        "constrained_params", "_start_afresh"}

    class Incomplete(GradientTrainedModel):  # every hook but the free run
        get_config = _q_x0 = param_shapes = elbo_function = transition_moments = obs_var = lambda self: None
        _start_afresh = get_config
        constrained_params = get_config

    with pytest.raises(TypeError, match="_free_run"):
        Incomplete()


def test_training_options_are_the_keyword_arguments_of_fit():
    names = list(inspect.signature(GradientTrainedModel.fit).parameters)
    assert names[:3] == ["self", "y", "u"] and tuple(names[3:]) == EPOCH_OPTIONS + DATA_OPTIONS
    names = list(inspect.signature(GPSSM.fit).parameters)
    assert names[:3] == ["self", "y", "u"] and set(names[3:]) == set(TRAINING_OPTIONS)
    assert set(TRAINING_OPTIONS) == set(EPOCH_OPTIONS + PLAN_OPTIONS + DATA_OPTIONS)


def test_fit_of_the_gp_models_takes_at_most_twelve_parameters():
    """The channel names (``y_names``, ``u_names``) come with every fit (``estimator._fit_surface``)."""
    for cls in (gp.ODGPSSM, gp.PRSSM):
        names = [n for n in inspect.signature(cls.fit).parameters if n != "self"]
        assert len(names) + 2 <= 12, names


def test_every_saved_class_implements_the_facade():
    for name, cls in MODEL_CLASSES.items():
        assert issubclass(cls, StateSpaceModel) and not inspect.isabstract(cls), name


def simulated(rng, T=120, dy=1, du=1):
    u = rng.normal(size=(T, du))
    y = np.zeros((T, dy))
    for t in range(1, T):
        y[t] = 0.7 * y[t - 1] + 0.5 * u[t, :dy] + 0.1 * rng.normal(size=dy)
    return y, u


@pytest.mark.parametrize("make, dy", [(lambda: gp.ARX(dim_y=1), 1), (lambda: gp.ARX(na=2, nb=2, dim_y=2), 2),
                                      (lambda: gp.LGSSM(dim_x=2, num_iters=3), 1)])
def test_linear_baselines_round_trip_through_save_and_load(tmp_path, rng, make, dy):
    y, u = simulated(rng, dy=dy, du=2)
    model = make()
    model = type(model)(**dict(model.get_config(), dim_u=2)).fit(y[:80], u[:80])
    assert model.scaling_ is not None  # fitted on unstandardised data: the scaling goes into the file
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))
    assert type(loaded) is type(model) and loaded.get_config() == model.get_config()
    assert loaded.history_ == model.history_
    for name, value in model.get_learned_params().items():
        np.testing.assert_array_equal(loaded.get_learned_params()[name], value)
    kwargs = dict(y_past=y[:80], u_past=u[:80], num_samples=7, seed=3)
    before, after = model.forecast(u[80:], **kwargs), loaded.forecast(u[80:], **kwargs)
    np.testing.assert_array_equal(after.samples, before.samples)
    np.testing.assert_array_equal(after.in_original_units().mean, before.in_original_units().mean)
    if model.has_latent_state:
        np.testing.assert_array_equal(loaded.q_x0(y[80:], u[80:])[1], model.q_x0(y[80:], u[80:])[1])


@pytest.mark.parametrize("model", [gp.ARX(), gp.LGSSM()])
def test_unfitted_baselines_round_trip_unfitted(tmp_path, model):
    assert model.get_learned_params() == {}
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))
    assert not loaded.fitted and loaded.get_config() == model.get_config()
    with pytest.raises(ValueError, match="not fitted"):
        loaded.forecast(np.zeros((3, 1)))


# ---------------------------------------------------------------------------------------------------------------
# the familiar surface: predict, score, repr, summary, keyword and argument-order checks
# ---------------------------------------------------------------------------------------------------------------
def tiny_models():
    return [gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=1),
            gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors"),
            gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4), gp.ARX(na=2, nb=1), gp.LGSSM(dim_x=2)]


@pytest.fixture(scope="module")
def fitted_models():
    y, u = simulated(np.random.default_rng(5), T=260)
    models = tiny_models()
    for model in models[3:]:
        model.fit(y[:100], u[:100])
    return models, y, u


def test_predict_is_the_mean_forecast(fitted_models):
    models, y, u = fitted_models
    for model in models:
        kwargs = dict(y_past=y[:40], u_past=u[:40], num_samples=7, seed=2)
        mean = model.predict(u[40:52], **kwargs)
        assert mean.shape == (12, 1), type(model).__name__
        np.testing.assert_array_equal(mean, model.forecast(u[40:52], **kwargs).mean)


def test_one_channel_can_be_a_one_dimensional_array(fitted_models):
    models, y, u = fitted_models
    y1, u1 = y[:, 0], u[:, 0]
    for model in models:
        name = type(model).__name__
        kwargs = dict(num_samples=5, seed=3)
        np.testing.assert_array_equal(model.predict(u1[40:52], y_past=y1[:40], u_past=u1[:40], **kwargs),
                                      model.predict(u[40:52], y_past=y[:40], u_past=u[:40], **kwargs), err_msg=name)
        assert model.score(y1[:200], u1[:200], num_samples=5) == model.score(y[:200], u[:200], num_samples=5), name
    for make, options in ((lambda: gp.ARX(na=2, nb=1), {}), (lambda: gp.LGSSM(dim_x=2), {}),
                          (lambda: gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=1),
                           {"max_steps": 3, "plan": {"eval_every": 1}})):
        fits = [make().fit(a, b, **options) for a, b in ((y1[:100], u1[:100]), (y[:100], u[:100]))]
        for key, value in fits[0].get_learned_params().items():
            np.testing.assert_array_equal(value, fits[1].get_learned_params()[key], err_msg=key)
    with pytest.raises(ValueError, match="u: a one-dimensional array is one channel, but the model has 2"):
        gp.ARX(dim_u=2).fit(y, u1)
    with pytest.raises(ValueError, match="y: a one-dimensional array is one channel, but the model has 2"):
        gp.LGSSM(dim_y=2).fit(y1, u)


def test_score_is_the_causal_rmse_after_a_burn_in(fitted_models):
    models, y, u = fitted_models
    for model in (models[0], models[3]):
        # the 160 steps after the burn-in of 100: windows at 0 and 60 (the tail), each filtered from the 100 before
        errors = []
        for k, s in enumerate((100, 160)):
            mean = model.predict(u[s:s + 100], y_past=y[s - 100:s], u_past=u[s - 100:s], num_samples=5, seed=k)
            errors.append(np.sqrt(np.mean((mean - y[s:s + 100]) ** 2)))
        score = model.score(y, u, num_samples=5, num_particles=1000)
        assert score == pytest.approx(float(np.mean(errors)), rel=1e-12), type(model).__name__
    assert models[3].score(y[:130], u[:130], num_samples=5) > 0  # 30 steps left: one 30-step window
    with pytest.raises(ValueError, match="burn_in"):
        models[3].score(y[:100], u[:100])


def test_repr_shows_the_arguments_that_differ_from_the_defaults():
    # dim_x defaults to None: "auto" with the warm start (shown as nothing), else max(4, dim_y)
    assert repr(gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=2)) == "ODGPSSM(dim_u=2, dim_x=4)"
    assert repr(gp.ODGPSSM(dim_y=2)) == "ODGPSSM(dim_y=2)"
    # an argument that another decides anyway is not shown (init="random" resolves dim_x to max(4, dim_y))
    assert repr(gp.ODGPSSM(dim_y=1, dim_u=1, init="random")) == "ODGPSSM(init='random')"
    assert repr(gp.ODGPSSM(dim_y=1, dim_u=1, init="random", dim_x=5)) == "ODGPSSM(dim_x=5, init='random')"
    assert repr(gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, settings="authors", recognition="lstm")) == \
        "ODGPSSM(settings='authors', recognition='lstm')"
    assert repr(gp.PRSSM(dim_x=3, dim_y=1, seed=3, mean_function="identity")) == \
        "PRSSM(seed=3, dim_x=3, mean_function='identity')"
    assert repr(gp.DSSM(hidden=8)) == "DSSM(hidden=8)"
    assert repr(gp.ARX(na=2, dim_u=0)) == "ARX(dim_u=0, na=2)"
    assert repr(gp.LGSSM()) == "LGSSM()"
    for model in tiny_models():  # the repr rebuilds the model
        assert eval(repr(model), {name: getattr(gp, name) for name in MODEL_CLASSES}).get_config() == \
            model.get_config()
    y, u = simulated(np.random.default_rng(5), T=200, du=2)
    lgssm = gp.LGSSM(dim_x="auto", dim_y=1, dim_u=2).fit(y, u)  # fitted: the arguments as given, then the choice
    assert repr(lgssm) == f"LGSSM(dim_x='auto', dim_u=2) [d_x={lgssm.spec.dim_x} chosen from 1-10]"


def test_repr_shows_initial_values_and_arguments_that_need_another():
    """``repr`` raised for a recognition network's options (rebuilding without the network refused them) and left
    out the initial values a GP model collects in ``**values``, so two different models printed alike."""
    namespace = {name: getattr(gp, name) for name in MODEL_CLASSES}
    models = [gp.ODGPSSM(dim_y=1, init="random", recognition="mlp", recognition_options={"num_steps": 8}),
              gp.PRSSM(dim_y=1, recognition="lstm", recognition_options={"hidden": 8}),
              gp.ODGPSSM(dim_y=1, lengthscale=3.0), gp.ODGPSSM(dim_y=1, init="random", process_noise=0.2)]
    for model in models:
        rebuilt = eval(repr(model), namespace)
        assert rebuilt.get_config() == model.get_config()
        for name, value in model.get_learned_params().items():  # the initial values given were rebuilt too
            np.testing.assert_array_equal(rebuilt.get_learned_params()[name], value)
    assert repr(models[2]) == "ODGPSSM(lengthscale=3.0)"
    assert repr(models[3]) == "ODGPSSM(init='random', process_noise=0.2)"


def test_summary_gives_the_constrained_parameters_by_name(fitted_models):
    models, _, _ = fitted_models
    odgpssm, prssm, dssm, arx, lgssm = models
    summary = odgpssm.summary()
    assert set(summary) == set(odgpssm.constrained_params())
    np.testing.assert_allclose(summary["obs_var"], np.log1p(np.exp(odgpssm.params["obs_noise"])) + 1e-6)
    np.testing.assert_array_equal(prssm.summary()["A"], np.eye(2))
    assert "obs_var" in dssm.summary() and "obs_noise" not in dssm.summary()
    np.testing.assert_array_equal(dssm.summary()["obs_var"], dssm.obs_var())
    assert set(arx.summary()) == {"a", "b", "c", "noise_cov", "y_mean", "u_mean", "lag_mean", "lag_cov"}
    np.testing.assert_array_equal(lgssm.summary()["Q"], lgssm.params_["Q"])
    with pytest.raises(ValueError, match="not fitted"):
        gp.LGSSM().summary()


def test_every_model_defaults_to_one_input():
    import inspect

    for cls in MODEL_CLASSES.values():
        assert inspect.signature(cls).parameters["dim_u"].default == 1, cls.__name__
    assert gp.ODGPSSM(dim_x=2, dim_y=1).spec.dim_u == gp.DSSM().spec.dim_u == gp.ARX().spec.dim_u == 1
    with pytest.raises(ValueError, match="u=None .*dim_u=0"):  # a model without inputs says so
        gp.PRSSM(dim_x=2, dim_y=1, num_inducing=3).elbo(np.zeros((5, 1)))


@pytest.mark.parametrize("cls, valid", [
    (gp.ODGPSSM, "dim_x, dim_y, dim_u, .*num_inducing.*lengthscale"),
    (gp.PRSSM, "dim_x, dim_y, dim_u, .*num_inducing.*lengthscale"),
    (gp.DSSM, "dim_x, dim_y, dim_u, seed, hidden, rnn_hidden, .*backend, standardize$"),
    (gp.ARX, "na, nb, max_order, selection, origins, dim_y, dim_u, seed, standardize, calibrate$"),
    (gp.LGSSM, "dim_x, dim_y, dim_u, method, .*max_spectral_radius, seed, standardize, calibrate$")])
def test_an_unknown_constructor_keyword_names_it_and_the_valid_ones(cls, valid):
    with pytest.raises(ValueError, match=f"n_latent: unknown keyword argument of {cls.__name__}; expected one of "
                                         f"{valid}"):
        cls(dim_x=2, dim_y=1, n_latent=3) if cls in (gp.ODGPSSM, gp.PRSSM) else cls(n_latent=3)
    with pytest.raises(ValueError, match=f"a, b: unknown keyword arguments of {cls.__name__}"):
        cls(dim_x=2, dim_y=1, b=1, a=2) if cls in (gp.ODGPSSM, gp.PRSSM) else cls(b=1, a=2)


@pytest.mark.parametrize("cls", [gp.ODGPSSM, gp.PRSSM])
def test_the_gp_models_take_initial_values_as_keywords(cls):
    assert cls(dim_x=2, dim_y=1, num_inducing=3, lengthscale=0.5).constrained_params()["lengthscale"][0, 0] == \
        pytest.approx(0.5)
    from gpssm_np.params import init_params

    with pytest.raises(ValueError, match="scale: unknown keyword argument of init_params"):
        init_params(cls(dim_x=2, dim_y=1).spec, np.random.default_rng(0), scale=1.0)


def test_swapped_y_and_u_are_caught_when_the_dimensions_differ(rng):
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 2))
    for model in (gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=2, num_inducing=4), gp.ARX(dim_u=2), gp.LGSSM(dim_u=2),
                  gp.DSSM(dim_u=2, hidden=4, rnn_hidden=4)):
        options = {"epochs": 1} if isinstance(model, GradientTrainedModel) else {}
        with pytest.raises(ValueError, match="y and u look swapped"):
            model.fit(u, y, **options)
    # equal widths: only the shapes can be checked; the message names the shape passed, not the batched one
    with pytest.raises(ValueError, match=r"y: expected dim_y = 1 columns \(last axis\), got shape \(60, 2\)$"):
        gp.ARX(dim_u=2).fit(u, u)


def test_a_forecast_from_past_data_names_the_past_arguments(fitted_models):
    """Every model forecasts from one past record, y_past with u_past: missing or mismatched past inputs are a
    ValueError naming u_past (not the u of fit), for the ARX too (whose lags may still outnumber the past)."""
    models, y, u = fitted_models
    for model in models:
        with pytest.raises(ValueError, match="^u_past: the model has dim_u = 1 inputs, got u_past=None"):
            model.forecast(u[100:105], y_past=y[90:100])
        with pytest.raises(ValueError, match=r"^u_past: expected shape \(10, 1\) to match y_past"):
            model.forecast(u[100:105], y_past=y[90:100], u_past=u[91:100])


def test_forecast_from_a_state_covariance(rng):
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    drawn = []
    model._free_run = lambda x0, u, rng: drawn.append(x0) or np.repeat(x0[:, None], len(u), axis=1)
    cov = np.array([[1.0, 0.6], [0.6, 0.5]])
    model.forecast(np.zeros((3, 1)), x0=(np.array([1.0, -1.0]), cov), num_samples=20000, seed=0)
    np.testing.assert_allclose(np.cov(drawn[0].T), cov, atol=0.03)
    np.testing.assert_allclose(drawn[0].mean(axis=0), [1.0, -1.0], atol=0.03)
    model.forecast(np.zeros((3, 1)), x0=(np.zeros(2), np.array([0.5, 2.0])), num_samples=3, seed=0)  # variances
    for bad, match in (((np.zeros(2), -np.eye(2)), "positive semi-definite"), ((np.zeros(2), np.ones(3)), "shapes"),
                       ((np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]])), "symmetric"), (np.zeros(2), "pair")):
        with pytest.raises(ValueError, match=match):
            model.forecast(np.zeros((3, 1)), x0=bad)


def test_evaluate_warns_when_the_model_was_fitted_on_other_data(rng, tmp_path):
    import warnings

    y, u = rng.normal(size=(300, 1)), rng.normal(size=(300, 1))
    actuator, ballbeam = (gp.datasets.from_arrays(y, u, name=name) for name in ("actuator", "ballbeam"))
    model = gp.ARX(na=2, nb=2).fit(actuator.y_train, actuator.u_train, data_name=actuator.name)
    assert model.data_name_ == "actuator"
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))
    assert loaded.data_name_ == "actuator"
    with pytest.warns(UserWarning, match="fitted on 'actuator' but is evaluated on 'ballbeam'") as caught:
        gp.evaluate(loaded, ballbeam, "causal", num_samples=3)
    assert caught[0].filename == __file__  # the warning names the line that called evaluate
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.evaluate(loaded, actuator, "causal", num_samples=3)  # the same name: nothing to say
        gp.evaluate(loaded, (ballbeam.y_test, ballbeam.u_test), "causal", num_samples=3)  # arrays have no name
        refitted = model.fit(actuator.y_train, actuator.u_train)  # a fit without the name forgets the old one
        assert refitted.data_name_ is None and "data_name" not in refitted.extra_state()
        gp.evaluate(refitted, ballbeam, "causal", num_samples=3)
    with pytest.raises(ValueError, match="data_name: expected a non-empty str"):
        gp.LGSSM(dim_x=2).fit(y, u, data_name=3)
    gpssm = gp.PRSSM(dim_x=2, dim_y=1, num_inducing=3, settings="authors")
    options = dict(epochs=1, plan=dict(seq_len=20, num_samples=2), data_name="mine")
    assert gpssm.fit(y[:60], u[:60], **options).data_name_ == "mine"
    dssm = gp.DSSM(dim_x=2, hidden=3, rnn_hidden=3)
    assert dssm.fit(y[:60], u[:60], **options).data_name_ == "mine"


def test_a_model_without_inputs_refuses_inputs_and_takes_the_forecast_length_once(rng):
    """dim_u = 0: u_future is None with ``steps``, or an array (T, 0); inputs with columns, a string or a length
    other than ``steps`` are a ValueError naming the argument (they were dropped, or a string's length read as T),
    and so are inputs given to the online filter's update. With inputs, ``steps`` must be u_future's length."""
    y = np.sin(np.arange(300) / 7.0)[:, None] + 0.01 * rng.normal(size=(300, 1))
    for model in (gp.ARX(dim_u=0).fit(y), gp.LGSSM(dim_x=2, dim_u=0).fit(y)):
        assert model.forecast(steps=10).mean.shape == (10, 1)
        np.testing.assert_array_equal(model.forecast(np.zeros((10, 0))).mean, model.forecast(steps=10).mean)
        for bad in ("abc", np.ones((10, 3)), np.ones(10), np.zeros((0, 0))):
            with pytest.raises(ValueError, match="u_future"):
                model.forecast(bad)
        for call in (lambda: model.forecast(np.zeros((10, 0)), steps=5), lambda: model.forecast()):
            with pytest.raises(ValueError, match="steps"):
                call()
        with pytest.raises(ValueError, match="u_t"):
            model.online_filter().update(y[0], np.array([5.0]))
        model.online_filter().update(y[0], np.zeros(0))
    u = rng.normal(size=(300, 1))
    arx = gp.ARX(dim_u=1).fit(y, u)
    assert arx.forecast(u[:10], steps=10).mean.shape == (10, 1)
    with pytest.raises(ValueError, match="steps"):
        arx.forecast(u[:10], steps=5)


def test_bad_arguments_of_the_surface_are_value_errors_naming_them(rng):
    """Unknown keywords of predict, score, filter, smooth and online_filter, a list given to score, something not a
    model given to evaluate, a non-positive initial value and particle options an exact path does not use: each a
    ValueError naming the argument (Python's TypeError, an unpacking error, an AttributeError or an unnamed
    message before; the exact paths took any value)."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    arx, lgssm = gp.ARX().fit(y, u), gp.LGSSM(dim_x=2, num_iters=2).fit(y, u)
    for model in (arx, lgssm):
        for method in ("predict", "score", "online_filter") + (("filter", "smooth") if model is lgssm else ()):
            call = getattr(model, method)
            with pytest.raises(ValueError, match=f"foo: unknown keyword argument of {type(model).__name__}.{method}"):
                call(y, u, foo=1) if method in ("score", "filter", "smooth") else call(foo=1)
        with pytest.raises(ValueError, match="y: expected one sequence"):
            model.score([y, y], [u, u])
        for options in ({"num_particles": 0}, {"init_window": -1}):
            with pytest.raises(ValueError, match=next(iter(options))):
                model.forecast(u[:10], y_past=y[:50], u_past=u[:50], **options)
    for past in ({"y_past": y[:50], "u_past": u[:50]}, {"y_past": y[:50]}, {"u_past": u[:50]}):
        with pytest.raises(ValueError, match="x0: a forecast starts from x0 or from the past data"):
            lgssm.forecast(u[:10], x0=(np.zeros(2), np.ones(2)), **past)
    with pytest.raises(ValueError, match="model: expected a model of the package"):
        gp.evaluate("m", (y, u), "causal")
    with pytest.raises(ValueError, match="lengthscale: expected positive finite values"):
        gp.ODGPSSM(dim_x=2, settings="authors", lengthscale=-1.0)


def test_filter_method_is_checked_when_set(tmp_path):
    """filter_method set on a model (as docs/guide.md shows) takes only FILTER_METHODS: another value is a ValueError
    naming it (it was ignored by filter and written into a model file that would not load)."""
    model = gp.ODGPSSM(dim_x=2, num_inducing=4)
    with pytest.raises(ValueError, match="filter_method: expected one of"):
        model.filter_method = "EnKF"
    model.filter_method = "enkf"
    assert gp.load(gp.save(model, tmp_path / "m.npz")).filter_method == "enkf"
    with pytest.raises(ValueError, match="filter_method"):
        gp.ODGPSSM(dim_x=2, filter_method="kalman")
