"""Arguments that were taken without a check, or refused with a message naming another argument: each is now a
ValueError naming the argument and what it expects (docs/guide.md, "Errors, checkpoints and reliability")."""
import re

import numpy as np
import pytest

import gpssm_np as gp
from tests.test_filtering import scaled_transition


@pytest.mark.parametrize("name", ["whiten", "shared_inducing"])
def test_a_gp_models_switches_take_true_or_false_only(name):
    """A string such as "no" was stored and read as True by every truth test: the model trained whitened with shared
    inducing inputs, the opposite of what was asked."""
    with pytest.raises(ValueError, match=f"{name}: expected True or False, got 'no'"):
        gp.ODGPSSM(dim_y=1, dim_u=1, init="random", **{name: "no"})
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init="random", num_latent=2, num_inducing=3, **{name: np.bool_(False)})
    assert getattr(model.spec, name) is False or getattr(model.spec, name) == np.bool_(False)
    if name == "shared_inducing":
        assert model.get_learned_params()["Z"].shape == (2, 3, 5)  # one set of inducing inputs per latent GP


@pytest.mark.parametrize("value", [(-2, 2), [2.0], "2", None, np.nan, np.inf, -1.0, 0.0, True])
def test_inducing_range_is_a_positive_finite_number(value):
    with pytest.raises(ValueError, match="inducing_range: expected a positive finite number"):
        gp.ODGPSSM(dim_y=1, dim_u=1, init="random", inducing_range=value)


def test_inducing_range_sets_the_span_of_the_random_inducing_inputs():
    for span in (3, 0.5):  # any positive span, also below 1
        Z = gp.ODGPSSM(dim_y=1, dim_u=1, init="random", inducing_range=span, num_inducing=50).get_learned_params()["Z"]
        assert span * 2 / 3 < np.abs(Z).max() <= span


@pytest.mark.parametrize("value", [1e-6, "1", np.nan, np.inf, [1.0, -1.0]])
def test_initial_values_are_positive_finite_numbers_above_the_floor(value):
    """Each fault alone (text, NaN, infinity, a value at the positivity floor 1e-6 or below it) is refused; just
    above the floor is taken."""
    with pytest.raises(ValueError, match="process_noise: expected positive finite values \\(above 1e-06\\)"):
        gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, init="random", process_noise=value)
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, init="random", process_noise=2e-6)
    np.testing.assert_allclose(model.constrained_params()["process_var"], 2e-6, rtol=1e-6)


@pytest.mark.parametrize("name, value, shape", [("process_noise", [0.1, 0.2], (4,)),
                                                ("lengthscale", [1.0, 1.0], (4, 5)), ("variance", (1.0, 2.0), (4,)),
                                                ("obs_noise", [1.0, 2.0], (1,)), ("x0_var", [1.0] * 3, (4,))])
def test_an_initial_value_of_the_wrong_shape_names_the_argument_and_the_shape(name, value, shape):
    with pytest.raises(ValueError, match=re.escape(f"{name}: expected a number or an array that broadcasts to shape "
                                                   f"{shape}, got shape {np.shape(value)}")):
        gp.ODGPSSM(dim_y=1, dim_u=1, init="random", **{name: value})


def test_an_initial_value_of_the_right_shape_is_taken():
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init="random", process_noise=[0.1, 0.2, 0.3, 0.4],
                       x0_var=[1.0, 2.0, 3.0, 4.0])
    params = model.constrained_params()
    np.testing.assert_allclose(params["process_var"], [0.1, 0.2, 0.3, 0.4], rtol=1e-9)
    np.testing.assert_allclose(params["x0_var"], [1.0, 2.0, 3.0, 4.0], rtol=1e-9)


def test_a_y_of_sequences_of_one_step_is_named_not_u(rng):
    """y of shape (T, 1, 1) reads as T sequences of one step; the mismatch with a u of one sequence was reported as
    u's."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    with pytest.raises(ValueError, match=r"y: shape \(200, 1, 1\) reads as 200 sequences of 1 step"):
        gp.ARX(dim_y=1, dim_u=1).fit(y[:, :, None], u)


def test_evaluate_takes_its_test_arrays_as_a_list_too(rng):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    model = gp.ARX(dim_y=1, dim_u=1, na=2, nb=2).fit(y[:150], u[:150])
    as_tuple = gp.evaluate(model, (y[150:], u[150:]), history=(y[:150], u[:150]))
    as_list = gp.evaluate(model, [y[150:], u[150:]], history=[y[:150], u[:150]])
    assert as_list["rmse"] == as_tuple["rmse"]
    with pytest.raises(ValueError, match="dataset: expected a pair .* got a tuple of length 1"):
        gp.evaluate(model, (y[150:],))


def test_max_steps_given_twice_with_two_values_is_refused(rng):
    model = gp.ODGPSSM(dim_y=1, dim_u=1)
    with pytest.raises(ValueError, match="max_steps: given as 20 and in plan as 30"):
        model.training_plan({"max_steps": 30}, max_steps=20)
    assert model.training_plan({"max_steps": 20}, max_steps=20).max_steps == 20


def test_too_few_ensemble_members_are_refused_before_any_work():
    model = gp.ODGPSSM(dim_y=1, dim_u=1)
    with pytest.raises(ValueError, match="num_samples: expected at least 2 ensemble members per window"):
        model.training_plan({"num_samples": 1})
    windows = np.zeros((2, 10, 1))
    with pytest.raises(ValueError, match="num_samples: expected at least 2 ensemble members per window"):
        model.elbo_function(windows, windows, np.random.default_rng(0), num_samples=1)


def test_from_csv_refuses_a_column_named_twice(tmp_path):
    path = tmp_path / "plant.csv"
    rows = np.random.default_rng(0).normal(size=(60, 2))
    np.savetxt(path, rows, delimiter=",", header="inflow,level", comments="")
    with pytest.raises(ValueError, match=r"outputs: the columns \['level'\] are named more than once"):
        gp.datasets.from_csv(path, outputs=["level", "level"], inputs=["inflow"])
    np.savetxt(path, rows, delimiter=",", header="level,level", comments="")  # the file's header names one twice
    with pytest.raises(ValueError, match=r"path: the header of .* repeats the column names \['level'\]"):
        gp.datasets.from_csv(path, outputs=["level"])


def test_arrays_of_three_dimensions_or_none_are_refused(rng):
    for y in (rng.normal(size=(60, 1, 1)), np.empty((0, 1))):
        with pytest.raises(ValueError, match=r"y: expected a non-empty array of shape \(N, d\) or \(N,\), got"):
            gp.datasets.from_arrays(y, rng.normal(size=(60, 1)))


def test_a_non_finite_elbo_names_the_argument_with_huge_values():
    """From about 1e100 squared residuals or kernel distances overflow: the error names what holds such values."""
    from gpssm_np.inference import finite_elbo
    assert finite_elbo(-3.5) == -3.5
    # values just beyond the 1e100 of finite_elbo's docstring are named
    for y, u, named in ((np.full(3, 1.5e100), np.ones(3), "y: "), (np.ones(3), np.full(3, -1e120), "u: "),
                        (np.ones(3), None, "y, u: ")):
        with pytest.raises(ValueError, match=f"^{named}the ELBO is not finite"):
            finite_elbo(np.nan, y, u)


def test_a_short_sequence_that_stops_the_lgssm_floor_says_how_to_keep_to_the_arx(rng):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    ys, us = [y[:170], y[170:]], [u[:170], u[170:]]
    with pytest.raises(ValueError, match="a sequence of 30 steps.*init='arx' keeps the floor to the ARX"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(ys, us, max_steps=2, progress=False)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init="arx").fit(ys, us, max_steps=2, plan={"eval_every": 1}, progress=False)
    assert model.selection_["floor"]["kind"] == "arx"


def test_a_shape_error_of_one_sequence_shows_the_shapes_as_given(rng):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(199, 1))
    expected = "u: expected shape (200, 1) to match y and dim_u = 1, got (199, 1)"
    with pytest.raises(ValueError, match=re.escape(expected)):
        gp.ARX(dim_y=1, dim_u=1).fit(y, u)


def test_an_lgssm_chosen_from_a_list_shows_the_list(rng):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    assert repr(gp.LGSSM(dim_x=[1, 3], dim_y=1, dim_u=1).fit(y, u)).endswith("chosen from [1, 3]]")


def test_a_checkpoint_in_a_missing_folder_is_refused_before_any_work(rng, tmp_path):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    missing = tmp_path / "no" / "such" / "c.ckpt"
    with pytest.raises(ValueError, match="checkpoint: the folder .* does not exist"):
        gp.ODGPSSM(dim_y=1, dim_u=1, settings="authors").fit(y, u, epochs=1, checkpoint=missing)
    with pytest.raises(ValueError, match="checkpoint: the folder .* does not exist"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=2, checkpoint=missing, progress=False)


def test_a_checkpoint_in_a_folder_that_cannot_be_written_is_refused(rng, tmp_path, monkeypatch):
    import gpssm_np.archive as archive

    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    # the tests may run as root, who writes anywhere
    monkeypatch.setattr(archive.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match="checkpoint: cannot write to the folder"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=2, checkpoint=tmp_path / "c.ckpt", progress=False)


@pytest.mark.parametrize("value", [np.zeros((20, 1)), [1, 2], {}])
def test_plot_forecast_figure_names_what_is_not_a_forecast(value):
    from gpssm_np.plotting import plot_forecast_figure

    with pytest.raises(ValueError, match="forecast: expected a gpssm_np.forecast.Forecast"):
        plot_forecast_figure(value)


@pytest.mark.parametrize("value", [1, 0, 2.5, True])
def test_evaluate_asks_for_at_least_two_forecast_trajectories(rng, value):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    model = gp.ARX(dim_y=1, dim_u=1, na=2, nb=2).fit(y[:150], u[:150])
    with pytest.raises(ValueError, match="num_samples: expected at least 2 forecast trajectories"):
        gp.evaluate(model, (y[150:], u[150:]), num_samples=value)


@pytest.mark.parametrize("value", ["a", -1, 1.5, None])
def test_evaluate_names_a_bad_seed(rng, value):
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    model = gp.ARX(dim_y=1, dim_u=1, na=2, nb=2).fit(y[:150], u[:150])
    with pytest.raises(ValueError, match="^seed: expected a non-negative integer"):
        gp.evaluate(model, (y[150:], u[150:]), seed=value)


@pytest.mark.parametrize("kind", ["arx", "lgssm", "odgpssm"])
def test_a_refit_that_fails_leaves_the_former_fit_as_it_was(rng, kind):
    """A second fit that refuses its data (here: too short for the folds) cleared the former fit's units first and
    left its parameters: forecasts in the wrong units, without a word."""
    y, u = 10 * rng.normal(size=(300, 1)) + 50, rng.normal(size=(300, 1))
    model, options = {"arx": (gp.ARX(dim_y=1, dim_u=1), {}), "lgssm": (gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1), {}),
                      "odgpssm": (gp.ODGPSSM(dim_y=1, dim_u=1), {"max_steps": 2, "progress": False})}[kind]
    model.fit(y[:200], u[:200], **options)
    before = model.predict(u[200:210], y[150:200], u[150:200])
    with pytest.raises(ValueError):
        model.fit(y[:12], u[:12], **options)
    np.testing.assert_array_equal(model.predict(u[200:210], y[150:200], u[150:200]), before)


@pytest.mark.parametrize("make", [lambda: gp.ARX(dim_y=1, dim_u=1, na=2, nb=2), lambda: gp.LGSSM(dim_x=2, dim_y=1,
                                                                                                   dim_u=1)])
def test_the_learned_arrays_are_copies(rng, make):
    """Editing what get_learned_params returns left the ARX's own coefficients changed (the other models copy)."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    model = make().fit(y, u)
    before = model.predict(u[:10], y[-50:], u[-50:])
    for value in model.get_learned_params().values():
        value[...] = 0.0
    np.testing.assert_array_equal(model.predict(u[:10], y[-50:], u[-50:]), before)


def test_an_assigned_filter_method_is_a_constructor_argument_a_clone_keeps():
    model = gp.ODGPSSM(dim_y=1, dim_u=1)
    model.filter_method = "enkf"
    assert model.get_params()["filter_method"] == "enkf"
    assert type(model)(**model.get_params()).filter_method == "enkf"


@pytest.mark.parametrize("origins", [1, 0, 2.0, True])
def test_arx_needs_two_rolling_origins(origins):
    with pytest.raises(ValueError, match="origins: expected at least 2 rolling origins"):
        gp.ARX(dim_y=1, dim_u=1, origins=origins)


def test_int_at_least_names_the_argument_and_the_bound():
    from gpssm_np import _validation as check
    assert check.int_at_least(np.int64(3), "n", 3, "things") == 3
    for bad in (2, 3.0, None, False):
        with pytest.raises(ValueError, match=r"n: expected at least 3 things \(why\), got"):
            check.int_at_least(bad, "n", 3, "things (why)")


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix's own
def test_data_whose_squares_overflow_are_refused_and_matrices_taken_as_arrays():
    """Finite data near 1e160 standardised to an infinite std and forecast NaN without an error; an np.matrix
    (whose reductions keep two dimensions) failed inside NumPy or chose no ARX orders."""
    y, u, _ = gp.datasets.cascaded_tanks(400, seed=0)
    for model in (gp.ARX(dim_y=1), gp.LGSSM(dim_y=1)):
        with pytest.raises(ValueError, match=r"^y: values up to 3.\d+e\+160 in magnitude; beyond 1e\+150"):
            model.fit(y[:300] * 1e160, u[:300])
        with pytest.raises(ValueError, match=r"^u: values up to"):
            model.fit(y[:300], u[:300] * -1e151)
        plain = type(model)(dim_y=1).fit(y[:300], u[:300]).predict(u[300:310], y[250:300], u[250:300])
        matrix = type(model)(dim_y=1).fit(np.asmatrix(y[:300]), np.asmatrix(u[:300])).predict(
            np.asmatrix(u[300:310]), np.asmatrix(y[250:300]), np.asmatrix(u[250:300]))
        assert type(matrix) is np.ndarray
        np.testing.assert_array_equal(matrix, plain)
    y_past = y[250:300] * 1e160
    y_past[5] = np.nan  # NaN (a missing output) beside large values: the bound reads the others
    with pytest.raises(ValueError, match="y_past: values up to"):
        gp.ARX(dim_y=1).fit(y[:300], u[:300]).predict(u[300:310], y_past, u[250:300])


def test_a_step_budget_replaces_a_plan_objects_and_contradicts_a_dicts():
    """fit's docstring: max_steps on a plan dataclass replaces its own; beside a dict holding another it is refused."""
    model = gp.ODGPSSM(dim_y=1, dim_u=1)
    assert model.training_plan(gp.Plan(max_steps=5), 20).max_steps == 20
    assert model.training_plan(gp.Plan(max_steps=5)).max_steps == 5
    assert model.training_plan({"max_steps": 5}, 5).max_steps == 5
    with pytest.raises(ValueError, match="max_steps: given as 20 and in plan as 5; give it once"):
        model.training_plan({"max_steps": 5}, 20)


def test_the_regime_without_a_plan_follows_the_settings_and_the_budget_given():
    """training_plan's rule: the epoch loop when epochs are given or under settings="authors" without a step budget
    (as an argument or in the dict); a step budget under the authors' settings trains by the validation-block loop,
    the default settings by the default fit."""
    authors, default = gp.ODGPSSM(dim_y=1, dim_u=1, settings="authors"), gp.ODGPSSM(dim_y=1, dim_u=1)
    assert isinstance(authors.training_plan(), gp.EpochPlan)
    assert isinstance(authors.training_plan({"lr": 0.02}), gp.EpochPlan)
    assert type(authors.training_plan(max_steps=5)) is type(authors.training_plan({"max_steps": 5})) is gp.BlockPlan
    assert isinstance(default.training_plan(), gp.Plan) and isinstance(default.training_plan(epochs=2), gp.EpochPlan)
    assert isinstance(default.training_plan({"epochs": 2}), gp.EpochPlan)


def test_the_validation_block_loop_refuses_a_checkpoint_and_resume_each_alone(tmp_path, rng):
    """It keeps its best parameters in memory, so it writes no checkpoint and has none to resume from."""
    y, u = rng.normal(size=(120, 1)), rng.normal(size=(120, 1))
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init="random")
    assert isinstance(model.training_plan(), gp.BlockPlan)
    for options in ({"checkpoint": tmp_path / "run.ckpt"}, {"resume": True}):
        with pytest.raises(ValueError, match="checkpoint: checkpoints and resume need the default fit"):
            model.fit(y, u, max_steps=2, progress=False, **options)
    assert not (tmp_path / "run.ckpt").exists()


def test_a_numpy_float16_train_fraction_splits_as_its_value(rng):
    """The checked share is used as a Python float: a float16 product overflowed (NaN rows) before."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    ds = gp.datasets.from_arrays(y, u, train_fraction=np.float16(0.5))
    assert len(ds.y_train) == 100


def test_values_too_large_are_named_in_the_units_given(rng):
    """The magnitude check runs on the data as given, before a fitted model's standardisation divides them."""
    y, u = 50.0 * rng.normal(size=(120, 1)), rng.normal(size=(120, 1))
    model = gp.LGSSM(dim_x=1, num_iters=2).fit(y, u)
    for big in (1e152, 5e151):
        with pytest.raises(ValueError, match=re.escape(f"y: values up to {big:.3g} in magnitude")):
            model.filter(np.r_[y[:10], [[big]]], u[:11])
    with pytest.raises(ValueError, match="y_past: values up to"):
        model.forecast(u[:5], y_past=np.r_[y[:10], [[1e152]]], u_past=u[:11])


@pytest.mark.parametrize("field, value", [("validation", np.int64(0)), ("free_run_factor", np.int64(2)),
                                          ("switch_t", np.int32(1))])
def test_plan_numbers_take_numpy_integers(field, value):
    from gpssm_np.models.default_fit import Plan
    from gpssm_np.models.training import BlockPlan
    plan = (BlockPlan if field == "validation" else Plan)(**{field: value})
    checked = gp.ODGPSSM(dim_y=1, dim_u=1).training_plan(plan, None, None)
    assert getattr(checked, field) == float(value)


@pytest.mark.parametrize("field, value, expected", [("validation", 1.0, r"in \[0, 1\)"), ("switch_t", -1e-9, ">= 0"),
                                                    ("free_run_factor", 0.0, "> 0")])
def test_plan_numbers_at_their_bounds(field, value, expected):
    """A share takes 0 but not 1, the threshold t 0 but nothing below, the free-run factor anything above 0."""
    from gpssm_np.models.default_fit import Plan
    from gpssm_np.models.training import BlockPlan
    plan_class = BlockPlan if field == "validation" else Plan
    with pytest.raises(ValueError, match=f"^{field}: expected a number {expected}, got"):
        gp.ODGPSSM(dim_y=1, dim_u=1).training_plan(plan_class(**{field: value}), None, None)
    inside = {"validation": 0.999, "switch_t": 0.0, "free_run_factor": 1e-9}[field]
    assert gp.ODGPSSM(dim_y=1, dim_u=1).training_plan(plan_class(**{field: inside}), None, None)


@pytest.mark.parametrize("field, value", [("validation", True), ("free_run_factor", "2"), ("switch_t", np.True_)])
def test_plan_numbers_refuse_booleans_and_text(field, value):
    from gpssm_np.models.default_fit import Plan
    from gpssm_np.models.training import BlockPlan
    plan = (BlockPlan if field == "validation" else Plan)(**{field: value})
    with pytest.raises(ValueError, match=f"^{field}: expected a number "):
        gp.ODGPSSM(dim_y=1, dim_u=1).training_plan(plan, None, None)


@pytest.mark.parametrize("bad", [None, -1, 1.5, "a"])
def test_filter_and_smooth_name_a_bad_seed(bad, rng):
    """A GP model's and the DSSM's filter and smooth check seed as forecast does (None ran, unreproducibly)."""
    y, u = rng.normal(size=(30, 1)), rng.normal(size=(30, 1))
    for model in (gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors"),
                  gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4)):
        for method in (model.filter, model.smooth):
            with pytest.raises(ValueError, match="seed: expected"):
                method(y, u, num_particles=10, seed=bad)


def test_the_ensemble_kalman_filter_needs_two_members(rng):
    y, u = rng.normal(size=(30, 1)), rng.normal(size=(30, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors")
    with pytest.raises(ValueError, match="num_particles: the ensemble Kalman filter needs at least 2 members"):
        model.filter(y, u, num_particles=1, proposal="enkf")
    with pytest.raises(ValueError, match="num_particles: the ensemble Kalman filter needs at least 2"):
        model.online_filter(num_particles=1, proposal="enkf")


def test_elbo_names_an_unknown_keyword_and_the_valid_ones(rng):
    y, u = rng.normal(size=(20, 1)), rng.normal(size=(20, 1))
    gp_model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors")
    with pytest.raises(ValueError, match="foo: unknown keyword argument of ODGPSSM.elbo; expected one of "
                                         "num_samples, seed, num_windows, backend, kl_weighting, x0$"):
        gp_model.elbo(y, u, num_samples=2, foo=1)
    assert np.isfinite(gp_model.elbo(y, u, num_samples=2, backend="ops"))
    with pytest.raises(ValueError, match="backend: unknown keyword argument of DSSM.elbo; expected one of "
                                         "num_samples, seed, num_windows$"):
        gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4).elbo_and_grad(y, u, num_samples=2, backend="ops")


@pytest.mark.parametrize("name", ["obs_noise", "process_noise", "lengthscale", "variance", "x0_var"])
def test_initial_values_too_large_for_a_model_file_are_refused(name):
    with pytest.raises(ValueError, match=f"{name}: values up to 1e\\+200"):
        gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, settings="authors", **{name: 1e200})


def test_dim_x_candidates_as_an_array_and_below_dim_y():
    assert gp.ODGPSSM(dim_x=np.array([2, 4]), dim_y=1, dim_u=1).dim_x_choice == [2, 4]
    with pytest.raises(ValueError, match=r"dim_x: every candidate needs at least dim_y = 2 states .* got 1 in "
                                         r"\[1, 4\]"):
        gp.ODGPSSM(dim_x=[1, 4], dim_y=2, dim_u=1)


def test_scores_refuse_a_forecast_of_another_shape_than_y():
    """NumPy broadcast a (T, 1) y against a (T,) mean into (T, T): rmse 1.15 where the forecast is exact."""
    from gpssm_np.metrics import coverage, nlpd, rmse
    y, flat = np.arange(3.0)[:, None], np.arange(3.0)
    with pytest.raises(ValueError, match=r"mean: expected shape \(3, 1\) like y, got \(3,\)"):
        rmse(y, flat)
    with pytest.raises(ValueError, match="std: expected shape"):
        nlpd(y, y, np.ones(3))
    with pytest.raises(ValueError, match="upper: expected shape"):
        coverage(y, y - 1, flat + 1)
    assert rmse(y, y) == 0.0 and coverage(y, y - 1, y + 1) == 1.0


def test_evaluate_refuses_a_history_beside_evaluation_data(rng):
    """An EvaluationData holds its own history; one given beside it was dropped without a word."""
    from gpssm_np.protocols import evaluation_data
    model = gp.ARX(dim_y=1, dim_u=1, na=1, nb=1).fit(rng.normal(size=(80, 1)), rng.normal(size=(80, 1)))
    data = evaluation_data(model, (rng.normal(size=(40, 1)), rng.normal(size=(40, 1))))
    with pytest.raises(ValueError, match="history: an EvaluationData holds its own history"):
        gp.evaluate(model, data, "causal", history=(rng.normal(size=(20, 1)), rng.normal(size=(20, 1))))


_linear_transition = scaled_transition(0.9, 0.1)


def test_the_filters_take_inputs_of_width_zero_as_no_inputs(rng):
    """u (T, 0), the package's array for no inputs, was refused as empty by the particle filter and the smoother."""
    from gpssm_np.filtering import backward_simulation, particle_filter
    C, R, y = np.eye(1, 2), np.array([0.1]), rng.normal(size=(15, 1))
    runs = [particle_filter(_linear_transition, C, R, y, u, np.zeros(2), np.ones(2), num_particles=20, rng=3,
                            store_particles=True) for u in (None, np.empty((15, 0)))]
    np.testing.assert_array_equal(runs[0].means, runs[1].means)
    paths = [backward_simulation(_linear_transition, runs[0], u, num_trajectories=4, rng=5)
             for u in (None, np.empty((15, 0)))]
    np.testing.assert_array_equal(paths[0], paths[1])
    with pytest.raises(ValueError, match="store_particles: expected True or False"):
        particle_filter(_linear_transition, C, R, y, None, np.zeros(2), np.ones(2), num_particles=20,
                        store_particles="no")
    with pytest.raises(ValueError, match="include_initial: expected True or False"):
        backward_simulation(_linear_transition, runs[0], include_initial="yes")


def test_the_online_particle_filter_takes_a_seed_and_checks_each_observation(rng):
    from gpssm_np.filtering import OnlineParticleFilter, particle_filter
    C, R, y = np.eye(1, 2), np.array([0.1]), rng.normal(size=(5, 1))
    online = OnlineParticleFilter.start(_linear_transition, C, R, np.zeros(2), np.ones(2), 20, rng=7)
    for y_t in y:
        online.update(y_t)
    batch = particle_filter(_linear_transition, C, R, y, None, np.zeros(2), np.ones(2), num_particles=20, rng=7)
    np.testing.assert_array_equal(online.particles, batch.particles)
    with pytest.raises(ValueError, match=r"y_t: expected 1 real number\(s\), one per output"):
        online.update([0.1, 0.2])
    with pytest.raises(ValueError, match="y_t: expected 1 finite number"):
        online.update([np.inf])
    with pytest.raises(ValueError, match="u_t: expected 1 finite number"):
        online.update([0.1], [np.nan])


def test_init_params_refuses_initial_values_too_large_for_a_model_file():
    """The bound the models' constructors apply; init_params checked only unknown keywords for it."""
    from gpssm_np.params import GPSSMSpec, init_params
    spec = GPSSMSpec(dim_x=2, dim_y=1, dim_u=1, num_latent=2, num_inducing=4)
    for name in ("lengthscale", "inducing_range"):
        with pytest.raises(ValueError, match=f"{name}: values up to 1e\\+200"):
            init_params(spec, np.random.default_rng(0), **{name: 1e200})
    assert np.all(np.isfinite(init_params(spec, np.random.default_rng(0), lengthscale=3.0)["Z"]))


def test_an_lgssm_too_short_to_score_any_state_dimension_says_so(rng):
    """On 35 steps no d_x of "auto" can be scored: the fallback was taken silently and its repr said "chosen"."""
    y, u = rng.normal(size=(35, 1)), rng.normal(size=(35, 1))
    with pytest.warns(gp.baselines.UnscoredOrderWarning, match="scored: 35 training steps"):
        model = gp.LGSSM(dim_x="auto").fit(y, u)
    assert repr(model).endswith("[d_x=4, a fallback: none of 1-10 could be scored]")
    # a GP model's floor says it once, in its own words (the LGSSM's warning is its floor's)
    with pytest.warns(UserWarning) as caught:
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=10, progress=False)
    assert [str(w.message)[:30] for w in caught] == ["y: 35 training steps are too f"]


def test_past_data_that_does_not_fit_the_model_is_named_before_any_change_of_units(rng):
    """A fitted model converts past data to model units only where its type and shape fit the model: a (T, 1) array
    for two outputs would broadcast against their means and pass as two outputs, a (T,) array fail inside NumPy, an
    array of text fail to convert; each is named by the method's own check instead."""
    y, u = rng.normal(size=(120, 2)), rng.normal(size=(120, 1))
    model = gp.ARX(dim_y=2, dim_u=1, na=1, nb=1).fit(y, u)
    for bad in (y[:20, :1], y[:20, 0], y[:20].astype(str)):
        with pytest.raises(ValueError, match="^y_past: "):
            model.predict(u[:5], y_past=bad, u_past=u[:20])


def test_a_fit_given_a_batch_array_names_the_outputs():
    """Several sequences are a list of (T, d) arrays; one (B, T, d) array of B > 1 is refused, naming y."""
    batch = np.zeros((2, 50, 1))
    with pytest.raises(ValueError, match=r"^y: expected a sequence \(T, 1\) or a list of them, got shape \(2, 50, 1\)"):
        gp.ARX(dim_y=1, dim_u=1, na=1, nb=1).fit(batch, batch)
