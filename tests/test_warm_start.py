"""The linear-Gaussian warm start (warm_start.py), the linear mean and training with a validation block (the models of
those tests name its plan, ``gp.BlockPlan``; without it a linear init runs the default fit)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets import random_linear_system, simulate_linear
from gpssm_np.datasets.windowing import window_starts
from gpssm_np.models.default_fit import DefaultFit
from gpssm_np.models.floor import choose_floor
from gpssm_np.models.training import ValidationScore, split_validation
from gpssm_np.models.warm_start import (VAR_MIN, check_outputs, emission_basis, floor_warm_start, gp_inputs,
                                        initial_params, kmeans, orthonormal_rows, stationary_sqrt, whitened_basis)
from gpssm_np.transforms import positive


def standardised_linear_data(seed=0, T=700, dim_x=3):
    system = random_linear_system(dim_x=dim_x, dim_y=1, dim_u=1, seed=seed)
    y, u, _ = simulate_linear(system, T, seed=seed)
    mean, std = y[:500].mean(axis=0), y[:500].std(axis=0)
    return (y - mean) / std, u


def test_emission_basis_gives_identity_emission_and_block_diagonal_noise():
    rng = np.random.default_rng(0)
    for d_y, d_x in ((1, 1), (1, 4), (2, 5)):
        H = rng.normal(size=(d_y, d_x))
        L = rng.normal(size=(d_x, d_x))
        Q = L @ L.T + 0.1 * np.eye(d_x)
        T = emission_basis(H, Q)
        np.testing.assert_allclose(H @ np.linalg.inv(T), np.eye(d_y, d_x), atol=1e-10)
        Qp = T @ Q @ T.T
        off = Qp - np.diag(np.diag(Qp))
        off[:d_y, :d_y] = 0.0  # the output block keeps its correlations (module docstring)
        np.testing.assert_allclose(off, 0.0, atol=1e-10)
    with pytest.raises(ValueError, match="dim_x"):
        emission_basis(np.ones((2, 1)), np.eye(1))
    with pytest.raises(ValueError, match="has rank 1 < dim_y = 2: the outputs are linearly dependent"):
        emission_basis(np.ones((2, 3)), np.eye(3))


def test_a_constant_output_is_named_before_the_warm_start():
    y, u = standardised_linear_data()
    y = np.concatenate([y, np.full_like(y, 2.0)], axis=1)  # the second output never moves
    for kind in ("lgssm", "arx"):
        with pytest.raises(ValueError, match=r"y: output column\(s\) \[1\] are constant"):
            choose_floor([y], [u], kinds=(kind,))
    with pytest.raises(ValueError, match=r"y: output column\(s\) \[1\]"):
        gp.ODGPSSM(dim_y=2, dim_u=1).fit(y, u, max_steps=1)
    choose_floor([y[:, :1]], [u])  # the varying output alone is fine


@pytest.mark.parametrize("second", ["copy", "shifted_scaled", "nearly", "nearly_rescaled"])
def test_linearly_dependent_outputs_are_named_as_such(second):
    """Two outputs of which one is an affine function of the other (a copy; 2 y + 1; 2 y + 1 plus a part 1e-7 of its
    spread, in its units or a hundred times them) leave the LGSSM's emission H without full row rank and the ARX's
    regressors collinear; the default fit names y and says the outputs are dependent before either floor is fitted
    (not init, an argument a default user never sets), so the answer does not depend on which floor the folds would
    prefer. The nearly dependent pair passed NumPy's rank tolerance and failed later with a LinAlgError or NaN
    moments."""
    y, u = standardised_linear_data()
    noise = 1e-7 * np.random.default_rng(0).normal(size=y.shape)
    second_output = {"copy": y, "shifted_scaled": 2 * y + 1, "nearly": 2 * y + 1 + noise,
                     "nearly_rescaled": 100 * (2 * y + 1 + noise)}[second]
    y = np.concatenate([y, second_output], axis=1)
    with pytest.raises(ValueError, match=r"^y: the 2 outputs span only 1 dimension\(s\) over the training data, "
                                         r"to 1e-06 of their spread: they are linearly dependent"):
        gp.ODGPSSM(dim_y=2, dim_u=1, seed=0).fit(y, u, max_steps=1, progress=False)


def test_outputs_off_centre_or_on_other_scales_are_judged_centred_at_unit_spread():
    """``check_outputs`` centres the outputs and scales each to unit spread before it judges them: the default fit
    hands it standardised data, whose means are 0 and spreads 1 already, so both are seen only on data in their own
    units (``standardize=False``)."""
    y, _ = standardised_linear_data()
    with pytest.raises(ValueError, match=r"^y: the 2 outputs span only 1 dimension"):
        check_outputs([np.concatenate([y + 3.0, 2 * y + 1], axis=1)])
    check_outputs([np.concatenate([y + 3.0, y ** 2 + 1], axis=1)])  # not an affine function of the first: passes
    # each output at unit spread first: independent outputs on scales 1e7 apart are not dependent
    second = np.random.default_rng(1).normal(size=y.shape)
    check_outputs([np.concatenate([1e4 * y, 1e-3 * second], axis=1)])


def test_a_singular_lag_covariance_is_a_value_error():
    """Lag states without spread (outputs or inputs nearly repeating others) made the ARX floor's basis a raw
    LinAlgError."""
    P = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="^y, u: the ARX floor's lag states have a singular covariance"):
        whitened_basis(P, 1)


def test_kmeans_and_orthonormal_rows():
    rng = np.random.default_rng(1)
    points = np.concatenate([rng.normal(size=(50, 2)) * 0.05 + c for c in ([0, 0], [3, 0], [0, 3])])
    centres = kmeans(points, 3, rng)
    assert sorted(np.round(np.linalg.norm(centres, axis=1)).tolist()) == [0.0, 3.0, 3.0]
    few = kmeans(points[:2], 5, rng)  # k >= P: the points themselves, then jittered copies of them
    np.testing.assert_array_equal(few[:2], points[:2])
    nearest = np.min(np.linalg.norm(few[2:, None] - points[None, :2], axis=2), axis=1)
    assert few.shape == (5, 2) and np.all((nearest > 0) & (nearest < 1e-2))
    np.testing.assert_array_equal(kmeans(points[:4], 4, rng), points[:4])  # k = P: the points, in their order
    A = orthonormal_rows(3, 5, rng)
    np.testing.assert_allclose(A @ A.T, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("cls", [gp.ODGPSSM, gp.PRSSM])
def test_warm_started_model_forecasts_like_the_kalman_filter(cls):
    """Before any gradient step the model is the LGSSM in the emission basis: the same causal forecasts up to the
    Monte-Carlo error of the particle filter and the free run."""
    y, u = standardised_linear_data(seed=0)
    # standardize=False: the warm start below sees the same data (y[:500] is not standardised on its own)
    model = cls(dim_x=3, dim_y=1, dim_u=1, seed=0, standardize=False, init="lgssm").initialise(y[:500], u[:500])
    lgssm = gp.LGSSM(dim_x=3, dim_y=1, dim_u=1, standardize=False).fit([y[:500]], [u[:500]])  # the floor
    g = 560
    past = slice(g - 60, g)
    kalman = lgssm.forecast(u[g:g + 100], y_past=y[past], u_past=u[past])
    fc = model.forecast(u[g:g + 100], y_past=y[past], u_past=u[past], num_samples=2000, num_particles=2000)
    scale = np.abs(kalman.mean).max()
    assert np.abs(fc.mean - kalman.mean).max() < 0.03 * scale
    # the predictive spread matches too (sample spread of 2000 particles against the exact Kalman variance)
    _, _, _, y_cov = lgssm.predict_moments(u[g:g + 100], *lgssm.filter(y[past], u[past]).means[-1:],
                                           lgssm.filter(y[past], u[past]).covs[-1])
    np.testing.assert_allclose(fc.std[:, 0], np.sqrt(y_cov[:, 0, 0]), rtol=0.1)


def test_warm_start_on_a_real_dataset():
    try:
        ds = gp.datasets.load("gas_furnace")
    except FileNotFoundError:
        pytest.skip("GPSSM_NP_DATA does not point at the data")
    model = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, seed=0, init="lgssm").initialise(ds.y_train, ds.u_train)
    lgssm = gp.LGSSM(dim_x=4, dim_y=1, dim_u=1).fit(ds.y_train, ds.u_train)  # the floor, in the data's units
    g = 40
    past = slice(0, g)
    kalman = lgssm.forecast(ds.u_test[g:g + 60], y_past=ds.y_test[past], u_past=ds.u_test[past])
    fc = model.forecast(ds.u_test[g:g + 60], y_past=ds.y_test[past], u_past=ds.u_test[past], num_samples=2000,
                        num_particles=2000)
    assert np.abs(fc.mean - kalman.mean).max() < 0.05 * np.abs(kalman.mean).max()


def test_linear_mean_parameters_and_settings():
    m = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=2)
    assert m.spec.mean_function == "linear" and m.init == "linear" and m.initial_state == "shared"
    assert m.params["F"].shape == (3, 3) and m.params["G"].shape == (3, 2) and m.params["b"].shape == (3,)
    authors = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=2, settings="authors")
    assert authors.spec.mean_function == "zero" and authors.init == "random" and "F" not in authors.params
    with pytest.raises(ValueError, match="settings"):
        gp.ODGPSSM(dim_x=3, dim_y=1, settings="paper")
    with pytest.raises(ValueError, match="init"):
        gp.ODGPSSM(dim_x=3, dim_y=1, mean_function="zero", init="lgssm")
    for options in ({"settings": "authors", "initial_state": "smoothed"}, {"initial_state": "filtered"},
                    {"initial_state": "smoothed", "recognition": "mlp"}):
        with pytest.raises(ValueError, match="^initial_state: expected 'shared', or 'smoothed' with a warm start"):
            gp.ODGPSSM(dim_x=3, dim_y=1, **options)


def test_split_validation_and_score_read_only_the_past():
    y, u = standardised_linear_data(seed=1, T=300)
    train_y, train_u, cuts = split_validation([y], [u], 0.2)
    assert cuts == [240] and len(train_y[0]) == 240
    assert split_validation([y[:60]], [u[:60]], 0.2)[2] == [None]  # a 12-step block is too short to cut
    score = ValidationScore([y], [u], cuts, burn_in=50)
    (y_past, u_past, u_w, y_w), = score.tasks
    np.testing.assert_array_equal(y_past, y[190:240])
    np.testing.assert_array_equal(y_w, y[240:300])


def test_every_validation_window_is_scored():
    y, u = standardised_linear_data(seed=1, T=2000)
    cuts = split_validation([y], [u], 0.2)[2]  # a 400-step block: windows of 100 at stride 50
    every = ValidationScore([y], [u], cuts).tasks
    assert len(every) == 7 and every[-1][3].shape[0] == 100
    np.testing.assert_array_equal(every[0][3], y[1600:1700])
    np.testing.assert_array_equal(every[-1][3], y[1900:2000])


def test_the_loop_keeps_the_best_validation_score_and_is_deterministic():
    y, u = standardised_linear_data(seed=2, T=400)
    kwargs = dict(max_steps=40, eval_every=10, patience=2, num_samples=10, batch_size=8, refit=False)
    a = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=8, seed=3).fit(y, u, plan=gp.BlockPlan(**kwargs))
    scores = [r["rmse"] for r in a.validation_]
    assert a.validation_[0]["step"] == 0 and len(scores) >= 2
    # the selected parameters score the minimum of the record (the warm start included)
    check = ValidationScore([y], [u], split_validation([y], [u], 0.2)[2], seed=3)
    assert check(a) == pytest.approx(min(scores), rel=1e-12)
    b = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=8, seed=3).fit(y, u, plan=gp.BlockPlan(**kwargs))
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert a.history_ == b.history_


def test_restarts_keep_the_run_with_the_best_validation_score(monkeypatch):
    y, u = standardised_linear_data(seed=4, T=300)
    kwargs = dict(max_steps=20, eval_every=10, patience=2, num_samples=5, batch_size=8, refit=False)
    single = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=5).fit(y, u, plan=gp.BlockPlan(**kwargs))
    seeds, initialise = [], gp.ODGPSSM._initialise

    def recorded(self, *args):  # the seed each restart starts from
        seeds.append(args[-1])
        return initialise(self, *args)

    monkeypatch.setattr(gp.ODGPSSM, "_initialise", recorded)
    best = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=5).fit(y, u,
                                                                           plan=gp.BlockPlan(**kwargs, restarts=2))
    assert seeds == [5, 6]
    # restart 0 is the single run; restart 1 starts from seed 6 and is scored with the same validation noise
    assert len(best.restart_scores_) == 2 and best.restart_scores_[0] == min(r["rmse"] for r in single.validation_)
    assert min(r["rmse"] for r in best.validation_) == min(best.restart_scores_)
    score = ValidationScore([y], [u], split_validation([y], [u], 0.2)[2], seed=5)
    assert score(best) == pytest.approx(min(r["rmse"] for r in best.validation_), rel=1e-12)


def test_lr_is_one_positive_step_size():
    y, u = standardised_linear_data(seed=4, T=300)
    for bad in ((), (0.01, -1.0), [0.05, 0.002], "0.01", 0.0, float("nan")):
        with pytest.raises(ValueError, match="lr: expected a positive finite number"):
            gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1).fit(y, u, plan=dict(lr=bad), max_steps=10)


def test_average_keeps_the_moving_average_of_the_iterates():
    y, u = standardised_linear_data(seed=6, T=200)
    kwargs = dict(validation=0.0, num_samples=4, batch_size=8)  # nothing scored: the last parameters kept

    def fit(steps, average=False):
        model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5).fit(y, u, max_steps=steps, seed=2,
                                                                           plan=gp.BlockPlan(**kwargs, average=average))
        return model.params

    iterates = [fit(1), fit(2), fit(3)]  # a shorter run is a prefix of a longer one (same seed)
    start = fit(3, average=1 - 1e-12)  # the average that never leaves the initial parameters
    kept = fit(3, average=0.75)
    for name in kept:  # 0.75^3 theta_0 + 0.25 (0.75^2 theta_1 + 0.75 theta_2 + theta_3)
        expected = (0.421875 * start[name] + 0.140625 * iterates[0][name] + 0.1875 * iterates[1][name]
                    + 0.25 * iterates[2][name])
        np.testing.assert_allclose(kept[name], expected, rtol=1e-8, atol=1e-9)
    assert any(not np.allclose(iterates[2][name], start[name]) for name in start)
    np.testing.assert_array_equal(fit(3, average=np.float32(0.75))["A"], fit(3, average=float(np.float32(0.75)))["A"])
    for bad in (0.0, 1.0, True, "0.9"):  # False: the iterates themselves
        with pytest.raises(ValueError, match="average"):
            gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1).fit(y, u, max_steps=2, plan=gp.BlockPlan(average=bad))


def test_average_is_what_the_validation_scores_and_keeps():
    y, u = standardised_linear_data(seed=4, T=300)
    kwargs = dict(max_steps=30, eval_every=10, patience=3, num_samples=5, batch_size=8, refit=False)
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(y, u, plan=gp.BlockPlan(**kwargs, average=0.8),
                                                                      seed=5)
    plain = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(y, u, plan=gp.BlockPlan(**kwargs, average=False),
                                                                      seed=5)
    score = ValidationScore([y], [u], split_validation([y], [u], 0.2)[2], seed=5)
    assert score(model) == pytest.approx(min(r["rmse"] for r in model.validation_), rel=1e-12)
    assert [r["rmse"] for r in model.validation_][1:] != [r["rmse"] for r in plain.validation_][1:]
    assert model.validation_[0]["rmse"] == plain.validation_[0]["rmse"]  # step 0: the same warm start


def test_the_loop_keeps_the_average_with_decay_0_99_by_default():
    y, u = standardised_linear_data(seed=4, T=300)
    kwargs = dict(max_steps=20, eval_every=10, patience=2, num_samples=5, batch_size=8, refit=False)
    default = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(y, u, plan=gp.BlockPlan(**kwargs), seed=5)
    averaged = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(y, u, seed=5,
                                                                         plan=gp.BlockPlan(**kwargs, average=0.99))
    assert [r["rmse"] for r in default.validation_] == [r["rmse"] for r in averaged.validation_]
    for name in default.params:
        np.testing.assert_array_equal(default.params[name], averaged.params[name])
    # the epoch loop keeps the iterates: a warm-started model's epochs are the validation-block loop's steps with
    # no block and no average
    epochs = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(y, u, epochs=1, seed=5,
                                                                      plan=dict(batch_size=8, num_samples=5))
    steps = len(epochs.history_)
    assert steps == -(-(300 - 50 + 1) // 8)  # one epoch: every 50-step window of the 300 once, in minibatches of 8
    plain = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6).fit(
        y, u, seed=5, plan=gp.BlockPlan(max_steps=steps, validation=0.0, eval_every=steps, seq_len=50, batch_size=8,
                                        num_samples=5, average=False))
    for name in epochs.params:
        np.testing.assert_array_equal(epochs.params[name], plain.params[name])


def test_lr_scales_slows_the_named_parameters_and_fixed_holds_them():
    y, u = standardised_linear_data(seed=2, T=400)
    kwargs = dict(max_steps=10, validation=0.0, num_samples=10, batch_size=8, average=False)

    def fitted(**options):
        model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=8, seed=3)
        return model.fit(y, u, plan=gp.BlockPlan(**kwargs, **options)).params

    start = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=8, seed=3).initialise(y, u).params
    plain, slow, held = fitted(), fitted(lr_scales={"F": 1e-3}), fitted(fixed=("F",))
    moved = np.abs(plain["F"] - start["F"]).max()
    assert moved > 5e-3  # ten Adam steps of 0.01 move F
    # Adam moves a coordinate by at most about its step per step: 10 steps of 0.01 * 1e-3
    assert 0 < np.abs(slow["F"] - start["F"]).max() < 1.5 * 10 * 0.01 * 1e-3
    np.testing.assert_array_equal(held["F"], start["F"])
    assert np.abs(slow["A"] - start["A"]).max() > 1e-3  # the other parameters still train
    for bad, message in [({"W": 0.1}, "lr_scales: unknown parameter names"), ({"F": 0.0}, r"lr_scales\['F'\]"),
                         (0.1, "lr_scales: expected a dict")]:
        with pytest.raises(ValueError, match=message):
            fitted(lr_scales=bad)
    with pytest.raises(ValueError, match=r"plan: EpochPlan has no field \['lr_scales'\]"):
        gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, settings="authors").fit(y, u, epochs=1, plan=dict(lr_scales={"F": 0.1}))


@pytest.mark.parametrize("cls", [gp.ODGPSSM, gp.PRSSM])
def test_a_given_lengthscale_is_the_warm_starts_and_the_default_fits(cls):
    """The constructor's ``lengthscale`` is where the lengthscales start under a warm start too (otherwise the spread
    of each GP input); the transition's moments at the start do not depend on it, so the floor is held either way."""
    y, u = standardised_linear_data(seed=2, T=300)
    given = cls(dim_x=3, dim_y=1, dim_u=1, seed=0, init="lgssm", lengthscale=2.5).initialise(y, u)
    np.testing.assert_allclose(given.constrained_params()["lengthscale"], 2.5, rtol=1e-12)
    spread = cls(dim_x=3, dim_y=1, dim_u=1, seed=0, init="lgssm").initialise(y, u)
    assert np.abs(spread.constrained_params()["lengthscale"] - 2.5).min() > 0.1
    for name in ("F", "A", "process_noise", "obs_noise", "x0_mean", "Z"):
        if name in given.params:
            np.testing.assert_array_equal(given.params[name], spread.params[name])
    fitted = cls(dim_y=1, dim_u=1, seed=0, lengthscale=2.5).fit(y, u, max_steps=1, progress=False)
    assert not fitted.selection_["gp_part"]  # the floor with a zero residual: its lengthscales are the start's
    np.testing.assert_allclose(fitted.constrained_params()["lengthscale"], 2.5, rtol=1e-12)


@pytest.mark.parametrize("cls, names", [(gp.ODGPSSM, ("process_noise", "obs_noise", "x0_var", "inducing_range")),
                                        (gp.PRSSM, ("variance",))])
def test_an_initial_value_the_warm_start_sets_is_a_value_error(cls, names):
    for name in names:
        with pytest.raises(ValueError, match=f"{name}: the linear warm start \\(init='linear'\\) sets this initial"):
            cls(dim_x=2, dim_y=1, **{name: 0.5})
        cls(dim_x=2, dim_y=1, init="random", **{name: 0.5})  # the random start takes it
    gp.ODGPSSM(dim_x=2, dim_y=1, variance=0.5)  # ODGPSSM's kernel variance scales A under a warm start


def test_smoothed_initial_states_start_each_window_from_the_floors_smoothed_state():
    """``initial_state="smoothed"`` runs the default fit, its training windows started from the floor's smoothed
    state before each (``DefaultFit.training_run``), where the default starts them from the filtered one."""
    y, u = standardised_linear_data(seed=3, T=400)
    for initial_state, moments in (("smoothed", "initial_states"), ("shared", "filtered_states")):
        model = gp.ODGPSSM(dim_y=1, dim_u=1, initial_state=initial_state, num_inducing=6, seed=0, standardize=False)
        assert isinstance(model.training_plan(), gp.Plan)
        pipeline = DefaultFit(model)
        floor = pipeline.floor([y], [u])
        warm = model.start_from_floor(floor.model, [y], [u], 0)
        run = pipeline.training_run(model, warm, [y], [u], 0, {})
        means, variances = getattr(warm, moments)(0, window_starts(400, 20, 1))
        np.testing.assert_array_equal(run.x0[0], means)
        np.testing.assert_array_equal(run.x0[1], variances)
    fitted = gp.ODGPSSM(dim_y=1, dim_u=1, initial_state="smoothed", num_inducing=6, seed=0).fit(
        y, u, max_steps=4, plan={"eval_every": 2, "num_samples": 4, "batch_size": 4})
    assert fitted.selection_["floor"]["dim_x"] == fitted.spec.dim_x and len(fitted.selection_["record"]) >= 2


def test_the_lengthscales_start_at_each_gp_inputs_spread_at_least_1e_3():
    """Without a given ``lengthscale`` each ARD lengthscale starts at the standard deviation of its GP input (the
    floor's smoothed states and the inputs, ``gp_inputs``) over the training data; an input that never moves gets
    1e-3, not 0."""
    y, u = standardised_linear_data(seed=2, T=300)
    u = np.concatenate([u, np.full_like(u, 0.5)], axis=1)  # a second input that never moves
    model = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=2, seed=0, standardize=False)
    start = floor_warm_start(gp.LGSSM(dim_x=3, dim_y=1, dim_u=2, standardize=False).fit(y, u), [y], [u])
    params = initial_params(model.spec, model.params, start, [u], np.random.default_rng(0))
    spread = gp_inputs(start, [u]).std(axis=0)
    assert spread[-1] == 0.0 and np.all(spread[:-1] > 1e-2)
    expected = np.broadcast_to(np.maximum(spread, 1e-3), params["lengthscale"].shape)
    np.testing.assert_allclose(positive(params["lengthscale"]), expected, rtol=1e-12)


def test_a_stationary_covariance_that_is_not_positive_definite_gets_the_variance_floor():
    """``stationary_sqrt`` factors the prior's covariance as it is, and only where that fails (a singular one, as a
    deterministic state gives) with VAR_MIN added to its diagonal."""
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    np.testing.assert_array_equal(stationary_sqrt(cov), np.linalg.cholesky(cov))
    singular = np.ones((2, 2))
    L = stationary_sqrt(singular)
    np.testing.assert_allclose(L @ L.T, singular + VAR_MIN * np.eye(2), rtol=0, atol=1e-15)


def test_kmeans_plus_plus_seeds_one_centre_in_each_far_cluster():
    """The seeding alone (no Lloyd iterations): each further centre is drawn with probability proportional to its
    squared distance from the nearest centre so far, so three tight clusters far apart get one seed each."""
    rng = np.random.default_rng(4)
    clusters = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, -10.0]])
    points = np.concatenate([rng.normal(size=(40, 2)) * 0.05 + c for c in clusters])
    for seed in range(5):
        seeds = kmeans(points, 3, np.random.default_rng(seed), iterations=0)
        assert all(np.any(np.all(points == s, axis=1)) for s in seeds)  # seeds are points
        nearest = np.argmin(np.linalg.norm(seeds[:, None] - clusters[None], axis=2), axis=1)
        assert sorted(nearest.tolist()) == [0, 1, 2], seed
    # points all alike leave no distance to draw by: any point then (the centres coincide, no division by 0)
    alike = np.ones((10, 2))
    np.testing.assert_array_equal(kmeans(alike, 3, np.random.default_rng(0)), np.ones((3, 2)))


def test_the_block_plan_is_frozen_and_its_average_is_checked():
    """A plan is a value (its fields cannot be reassigned); ``average`` False or None means the iterates (None), a
    decay in (0, 1) is taken, True (no decay) is refused."""
    import dataclasses

    from gpssm_np.models.training import check_average

    with pytest.raises(dataclasses.FrozenInstanceError):
        gp.BlockPlan().max_steps = 5
    assert check_average(None) is None and check_average(False) is None and check_average(0.9) == 0.9
    with pytest.raises(ValueError, match="average: expected False or a decay in"):
        check_average(True)


def test_a_validation_block_of_min_validation_steps_is_cut():
    """A validation block (and a training part) of exactly MIN_VALIDATION = 20 steps is cut; one step fewer is not."""
    y40, u40 = np.zeros((40, 1)), np.zeros((40, 1))
    assert split_validation([y40], [u40], 0.5)[2] == [20] and split_validation([y40[:39]], [u40[:39]], 0.5)[2] == [None]
    assert split_validation([np.zeros((100, 1))], [np.zeros((100, 1))], 0.2)[2] == [80]


def test_the_kept_step_and_patience_of_the_record():
    """``selected_step`` is the first step of the lowest score, the last step where nothing was scored; training stops
    after ``patience`` scores without an improvement."""
    from gpssm_np.datasets.windowing import windows
    from gpssm_np.models.training import selected_step, train_steps
    from gpssm_np.optim import Adam

    record = [{"step": s, "rmse": r} for s, r in ((0, 0.5), (10, 0.4), (20, 0.4), (30, 0.45))]
    assert selected_step(record, 0.0) == 10 and selected_step(record, 0.5) == 0
    assert selected_step([{"step": 0, "rmse": None}, {"step": 10, "rmse": None}], 0.0) == 10
    y, u = standardised_linear_data(seed=4, T=300)
    fitted = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6)
    x0 = fitted.initialise(y, u)._initialise([y], [u], 20, 1, 0)
    Y, U = windows([y], [u], 20, 1)

    class Scripted:
        """Scores in the order given, then the last one again."""
        def __init__(self, *values):
            self.values = list(values)

        def __bool__(self):
            return True

        def window_scores(self, m):
            return [self.values.pop(0) if len(self.values) > 1 else self.values[0]] * 2

    def steps(score, min_delta=0.0):
        record = train_steps(fitted, Y, U, x0, np.random.default_rng(0), Adam(0.01), (), score, 100, 2, 3, min_delta,
                             4, 4, 5)
        return [r["step"] for r in record]

    assert steps(Scripted(1.0)) == [0, 2, 4, 6]
    assert steps(Scripted(1.0, 0.9, 0.9)) == [0, 2, 4, 6, 8]  # patience counts from the last improvement
    # improvements by less than min_delta (relative) are none
    assert steps(Scripted(1.0, 0.99, 0.98, 0.97, 0.96), min_delta=0.05) == [0, 2, 4, 6]


def test_the_validation_windows_follow_the_cut_with_their_burn_in():
    """Windows of min(100, block) steps at a stride of half that from the cut on (and one ending at the block's end,
    ``window_starts``), each with the (at most) ``burn_in`` outputs and inputs before it as its past."""
    y = np.arange(400.0)[:, None]
    u = -y
    score = ValidationScore([y], [u], [180], burn_in=100)
    starts = [180, 230, 280, 300]
    assert [t[3][0, 0] for t in score.tasks] == starts and all(len(t[3]) == 100 for t in score.tasks)
    for (y_past, u_past, u_w, y_w), g in zip(score.tasks, starts):
        np.testing.assert_array_equal(y_past[:, 0], np.arange(g - 100, g))
        np.testing.assert_array_equal(u_past, -y_past)
        np.testing.assert_array_equal(u_w, -y_w)
    short = ValidationScore([y[:60]], [u[:60]], [20], burn_in=100)  # a 40-step block: one window, 20 steps before
    [(y_past, _, _, y_w)] = short.tasks
    assert len(y_past) == 20 and y_w[:, 0].tolist() == list(range(20, 60))
