"""The GP models' linear floor (models/floor.py): the better of the package's own ARX() and LGSSM(dim_x="auto") on
the same rolling-origin folds, held exactly by the GP model before any gradient step."""
import warnings

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.baselines import arx_simulate
from gpssm_np.baselines.arx import order_errors
from gpssm_np.datasets.folds import mean_error
from gpssm_np.models.training import paired_t
from gpssm_np.models.warm_start import emission_basis, floor_warm_start

DELAY = 7  # y_t reads u_{t-7}: the ARX needs nb = 8 input lags, more than the 5 states the GP models once held


def delayed_plant(T=700, seed=0):
    """A single-output plant whose input acts after 7 steps, y_t = 0.6 y_{t-1} - 0.2 y_{t-2} + u_{t-7} + e_t."""
    rng = np.random.default_rng(seed)
    u = np.repeat(rng.uniform(-1, 1, T // 5 + 1), 5)[:T, None]
    y = np.zeros((T, 1))
    for t in range(DELAY, T):
        y[t] = 0.6 * y[t - 1] - 0.2 * y[t - 2] + u[t - DELAY] + 0.05 * rng.standard_normal()
    return 3.0 * y + 10.0, u  # units that are not the standardised ones


def transition_mean_run(model, x0, u_model):
    """The GP model's noise-free outputs (H, d_y) in model units: x_t = E[x_t | x_{t-1}] from x0 (d_x,)."""
    step = model.transition_moments()
    x, out = x0[None], []
    for t, u_t in enumerate(u_model):
        x = step(x, u_t, t)[0]
        out.append(x[0, :model.spec.dim_y])
    return np.array(out)


def test_before_any_step_the_default_model_is_the_better_linear_model():
    y, u = delayed_plant()
    arx = gp.ARX(dim_y=1, dim_u=1).fit(y, u)
    lgssm = gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u)
    assert max(arx.na_, arx.nb_) >= DELAY + 1  # the plant needs the lags
    scores = {"arx": arx.selection_scores_[(arx.na_, arx.nb_)], "lgssm": lgssm.dim_x_scores_[lgssm.spec.dim_x]}
    better = min(scores, key=scores.get)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).initialise(y, u)
    assert model.warm_start_ == better
    assert model.selection_["floor"]["scores"] == pytest.approx(scores, rel=1e-9)
    sc = model.scaling_
    g, H = 600, 80
    u_future = sc.u_to_model(u[g:g + H])
    if better == "arx":
        n = max(arx.na_, arx.nb_)
        assert model.spec.dim_x == n
        # the observer form's state is fixed by the last n outputs and inputs: run its recursion with the first
        # state set to each past output (a deadbeat observer), then the transition mean over the window
        step, x = model.transition_moments(), np.zeros((1, n))
        for t in range(g - 3 * n, g):
            x = step(x, sc.u_to_model(u[t:t + 1])[0], 0)[0]
            x[0, 0] = sc.y_to_model(y[t:t + 1])[0, 0]
        ours = sc.y_to_original(transition_mean_run(model, x[0], u_future))
        asc = arx.scaling_
        lags = asc.y_to_model(y[g - arx.na_:g])[::-1][None]
        inputs = asc.u_to_model(u[g - max(arx.nb_ - 1, 0):g + H])[None]
        theirs = asc.y_to_original(arx_simulate(arx.theta_, arx.na_, arx.nb_, lags, inputs)[0][0])
    else:
        p = lgssm.get_learned_params()
        state = lgssm.filter(y[g - 100:g], u[g - 100:g])
        T = emission_basis(p["H"], p["Q"])
        ours = sc.y_to_original(transition_mean_run(model, T @ state.means[-1], u_future))
        theirs = lgssm.scaling_.y_to_original(
            lgssm.predict_moments(u_future, state.means[-1], state.covs[-1])[2])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10 * np.abs(theirs).max())


@pytest.mark.parametrize("kind", ["arx", "lgssm"])
def test_a_named_kind_holds_the_floor_to_it(kind):
    """``init="arx"`` or ``"lgssm"`` (``dim_x="auto"``): the default fit with its floor held to that kind at the
    orders the package's own model chooses (the ARX's 8 lags here, where the warm start alone once held at most 5),
    and no stage 3b (there is no other kind to try)."""
    y, u = delayed_plant()
    model = gp.ODGPSSM(dim_y=1, dim_u=1, init=kind, seed=0)
    assert isinstance(model.training_plan(), gp.Plan)
    model.initialise(y, u)
    floor = model.selection_["floor"]
    assert floor["kind"] == model.warm_start_ == kind and set(floor["scores"]) == {kind}
    if kind == "arx":
        arx = gp.ARX(dim_y=1, dim_u=1).fit(y, u)
        assert model.spec.dim_x == max(arx.na_, arx.nb_) >= DELAY + 1
    else:
        assert model.spec.dim_x == gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u).spec.dim_x
    fitted = gp.ODGPSSM(dim_y=1, dim_u=1, init=kind, seed=0).fit(y, u, max_steps=2, plan={"eval_every": 1})
    assert fitted.selection_["floor"]["kind"] == kind and fitted.selection_["other_floor"] is None
    # the repr says how the model was asked for, then what the fit chose
    floor, kept = fitted.selection_["floor"], "kept" if fitted.selection_["gp_part"] else "not kept"
    assert repr(fitted) == (f"ODGPSSM(init={kind!r}) [floor={kind} {tuple(floor['orders'])}, "
                            f"d_x={fitted.spec.dim_x}, GP part {kept}]")


def test_a_fixed_state_dimension_is_the_floors():
    """``dim_x=8`` (an int): the default fit with the floor at that d_x, the better on the same folds of the LGSSM
    with 8 states and the ARX of 8 lags of output and input, each scored as its own order selection scores a
    candidate; with two outputs and an odd d_x no ARX in observer form fits, and the floor is the LGSSM."""
    y, u = delayed_plant()
    model = gp.ODGPSSM(dim_x=8, dim_y=1, dim_u=1, seed=0)
    assert isinstance(model.training_plan(), gp.Plan)
    model.initialise(y, u)
    ym, um = model.scaling_.y_to_model(y), model.scaling_.u_to_model(u)
    lgssm = gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1, standardize=False)
    scores = {"arx": mean_error(order_errors([(ym, um)], 8, 8)),
              "lgssm": lgssm.select_dim_x(ym, um, [8])[1][8]}
    floor = model.selection_["floor"]
    assert floor["scores"] == pytest.approx(scores, rel=1e-12) and model.spec.dim_x == floor["dim_x"] == 8
    assert floor["kind"] == min(scores, key=scores.get)
    assert floor["orders"] == ([8, 8] if floor["kind"] == "arx" else [8])
    two = np.hstack([y, 0.5 * y + np.random.default_rng(1).standard_normal(y.shape)])
    odd = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, seed=0).initialise(two, u)
    assert odd.selection_["floor"]["kind"] == "lgssm" and set(odd.selection_["floor"]["scores"]) == {"lgssm"}


def test_a_list_of_state_dimensions_is_the_floors_choice():
    """``dim_x=[2, 8]``: the default fit with the floor of the lowest fold error over both candidates and both
    kinds, each candidate scored as a fixed d_x is (the 8-lag ARX or the 8-state LGSSM wins on a plant that reads
    its input 7 steps late); every candidate's scores in ``dim_x_scores_`` and ``selection_``; with the ARX alone
    and no multiple of d_y among the candidates, a ValueError naming dim_x."""
    y, u = delayed_plant()
    model = gp.ODGPSSM(dim_x=[8, 2], dim_y=1, dim_u=1, seed=0)
    assert isinstance(model.training_plan(), gp.Plan)
    model.initialise(y, u)
    each = {d: gp.ODGPSSM(dim_x=d, dim_y=1, dim_u=1, seed=0).initialise(y, u).selection_["floor"] for d in (2, 8)}
    floor = model.selection_["floor"]
    assert floor["dim_x_scores"] == {d: each[d]["scores"] for d in (2, 8)}
    best = min((score, kind, d) for d in (2, 8) for kind, score in each[d]["scores"].items())
    assert (floor["kind"], floor["dim_x"]) == (best[1], best[2]) == (floor["kind"], 8) == (model.warm_start_,
                                                                                            model.spec.dim_x)
    assert floor["scores"] == {kind: min(each[d]["scores"][kind] for d in (2, 8)) for kind in ("arx", "lgssm")}
    assert model.dim_x_scores_ == {d: each[d]["scores"][floor["kind"]] for d in (2, 8)}
    assert model.get_config()["dim_x"] == 8 and gp.ODGPSSM(**model.get_config()).dim_x_choice is None
    two = np.hstack([y, 0.5 * y + np.random.default_rng(1).standard_normal(y.shape)])
    with pytest.raises(ValueError, match="dim_x: an ARX floor needs a multiple of dim_y = 2"):
        gp.ODGPSSM(dim_x=[3, 5], dim_y=2, dim_u=1, init="arx").initialise(two, u)


def test_an_arx_floor_is_held_in_a_basis_whose_lag_states_are_white():
    """``warm_start.whitened_basis`` (decision Y): the emission stays [I, 0], only the output states carry the ARX's
    process noise and the noise is diagonal exactly, the lag states' covariance on the training data is I, and
    the transition is the observer form's (a similarity transform)."""
    y, u = delayed_plant()
    ym, um = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)  # model units
    arx = gp.ARX(dim_y=1, dim_u=1, standardize=False).fit(ym, um)
    n = max(arx.na_, arx.nb_)
    start = floor_warm_start(arx, [ym], [um])
    E, p = start.basis, start.lgssm.get_learned_params()
    np.testing.assert_array_equal(E[:1], np.eye(1, n))
    np.testing.assert_allclose(E[1:, :1], 0.0, atol=1e-12)
    noise = E @ p["Q"] @ E.T
    np.testing.assert_allclose(noise - np.diag(np.diag(noise)), 0.0, atol=1e-12)
    assert noise[0, 0] > 1e-3 and np.all(np.diag(noise)[1:] < 1e-5)
    lag_cov = (E @ p["P0"] @ E.T)[1:, 1:]
    np.testing.assert_allclose(lag_cov, np.eye(n - 1), atol=0.05)  # P0 recomputed with the new variance floor
    np.testing.assert_allclose(start.F, E @ p["F"] @ np.linalg.inv(E), atol=1e-10)
    assert np.linalg.cond(E @ p["P0"] @ E.T) < 1e-3 * np.linalg.cond(p["P0"])  # nearly collinear lags, now not


def test_a_floor_that_is_not_beaten_is_returned_with_a_zero_residual():
    """Where the GP part does not win the paired test on the folds (here a bar of 1e6 standard errors, which no fit
    passes), the fit is the floor, A = 0, and selection_ says so."""
    y, u = delayed_plant(T=400, seed=1)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=2,
                                                     plan=dict(eval_every=1, patience=1, switch_t=1e6))
    sel = model.selection_
    assert sel["gp_part"] is False and sel["step"] == 0
    np.testing.assert_array_equal(model.params["A"], 0.0)
    assert [r["step"] for r in sel["record"]] == [0, 1, 2]  # every eval_every steps, up to max_steps
    assert len(sel["origins"]) == 2 and sel["floor"]["kind"] in ("arx", "lgssm")


def test_a_floor_only_fit_forecasts_as_the_arx_it_holds():
    """The end of the pipeline when no GP part is kept: the fit's forecasts from past data are the ARX's, exactly but
    for the variance floors (2e-6 in model units) on R and on the lag states, which leave the Kalman filter's state a
    hair from the ARX's lags: within 5e-4 of the outputs' scale (the particle forecast it replaces was off by 0.06)."""
    y, u = delayed_plant()
    arx = gp.ARX(dim_y=1, dim_u=1).fit(y, u)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=2,
                                                     plan=dict(eval_every=1, patience=1, switch_t=1e6))
    assert model.selection_["floor"]["kind"] == "arx" and model.linear_gaussian() is not None
    g, H = 600, 80
    ours, theirs = (m.forecast(u[g:g + H], y_past=y[g - 100:g], u_past=u[g - 100:g]).mean for m in (model, arx))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=5e-4 * np.std(y))


def test_a_floor_only_prssm_forecasts_as_the_arx_it_holds():
    """PRSSM's zero residual (A = I fixed: q(u) at its prior, the kernel variances at the warm start's floor) is a
    linear Gaussian model too, forecast exactly as ODGPSSM's above (through the particle filter it was off by up to
    30 % of the floor's RMSE on a 10-state LGSSM floor: ``warm_start.zero_residual_variance``)."""
    y, u = delayed_plant()
    arx = gp.ARX(dim_y=1, dim_u=1).fit(y, u)
    model = gp.PRSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=2, plan=dict(eval_every=1, patience=1, switch_t=1e6))
    assert model.selection_["floor"]["kind"] == "arx" and model.selection_["gp_part"] is False
    assert model.linear_gaussian() is not None
    g, H = 600, 80
    ours, theirs = (m.forecast(u[g:g + H], y_past=y[g - 100:g], u_past=u[g - 100:g]).mean for m in (model, arx))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=5e-4 * np.std(y))


class _Constant:
    """A stand-in model whose forecast mean is a constant (for the free-run guard)."""

    def __init__(self, value):
        self.value = value

    def forecast(self, u_future, y_past=None, u_past=None, **options):
        return type("F", (), {"mean": np.full((len(u_future), 1), self.value)})()


def test_the_free_run_guard_drops_a_transition_that_leaves_the_data():
    from gpssm_np.models.guards import free_run_check

    def check(model_value, floor_value, steps=50):  # the default fit's factor (2); the stand-ins draw nothing
        y = np.zeros((steps, 1))
        return free_run_check(_Constant(model_value), _Constant(floor_value), [y], [y], gp.Plan().free_run_factor,
                              seed=0, num_samples=1, num_particles=1)

    assert check(0.5, 1.0) == {"model": 0.5, "floor": 1.0, "passed": True}
    assert check(1.9, 1.0)["passed"]  # a detector of divergence: up to twice the floor's error passes
    assert check(2.0, 1.0)["passed"] and check(3.0, 2.0)["passed"]  # at most twice
    assert not check(2.1, 1.0)["passed"] and not check(0.9, 0.4)["passed"]
    assert not check(np.inf, 1.0)["passed"] and not check(np.nan, 1.0)["passed"]  # diverged
    # a sequence of at most 2 N_INIT = 10 steps is not simulated (5 read, 5 or fewer to score); 11 are
    for steps, scored in ((10, 0.0), (11, 0.7)):
        result = check(0.7, 0.7, steps)
        assert result["model"] == result["floor"] == scored


class _FarField:
    """A stand-in model whose far-field transition is (F, P), with C = [1, 0] and R = r."""

    def __init__(self, F, P, r=1e-8):
        self.far, self.r = (np.asarray(F, float), np.asarray(P, float)), r

    def transition(self):
        return type("T", (), {"far_field": lambda _: self.far})()

    def emission(self):
        return np.array([[1.0, 0.0]]), np.array([self.r])


def test_the_far_field_guard_drops_a_model_whose_filter_diverges_off_the_data():
    """A stable F whose filter is not: with R -> 0 and P = [[1, c], [c, 1]], K = (1, c) and (I - K C) F =
    [[0, 0], [-c a, d - c b]] has radius |d - c b| (the shape of a default model's transition on actuator)."""
    from gpssm_np.models.guards import far_field_check, far_field_radii
    a, b, d, c = 0.9, -1.8, 0.5, 0.7
    F = [[a, b], [0.0, d]]
    coupled, diagonal = _FarField(F, [[1.0, c], [c, 1.0]]), _FarField(F, np.eye(2))
    assert far_field_radii(coupled) == pytest.approx({"run": 0.9, "filter": d - c * b}, rel=1e-6)
    assert far_field_radii(diagonal) == pytest.approx({"run": 0.9, "filter": d}, rel=1e-6)
    assert not far_field_check(coupled, diagonal)["passed"]
    assert far_field_check(diagonal, coupled)["passed"]
    assert far_field_check(coupled, coupled)["passed"]  # no less stable than the floor
    unstable = _FarField([[1.1, 0.0], [0.0, 0.5]], np.eye(2))
    assert not far_field_check(unstable, diagonal)["passed"]  # its free run off the data grows
    marginal = _FarField([[1.0, 0.0], [0.0, 0.5]], np.eye(2))  # radius exactly 1: not below 1, above the floor's
    assert not far_field_check(marginal, diagonal)["passed"]
    # R in the gain: with r = 1 and P = I, K = (1/2, 0) and (I - K C) F = diag(a / 2, d)
    noisy = _FarField([[a, 0.0], [0.0, 0.1]], np.eye(2), r=1.0)
    assert far_field_radii(noisy) == pytest.approx({"run": a, "filter": a / 2}, rel=1e-12)


def test_acceptance_keeps_the_gp_part_only_beyond_one_standard_error():
    from gpssm_np.models.default_fit import DefaultFit
    floor_windows = [1.0, 1.0, 1.0, 1.0]

    def record(gains, other=(0.0, 0.0, 0.0, 0.0)):
        """Step 0 (the floor, the same for both candidates) and step 50, candidate 0 with ``gains``."""
        windows = [[1.0 - g for g in gains], [1.0 - g for g in other]]
        return [{"step": 0, "candidates": [1.0, 1.0], "windows": [floor_windows, floor_windows]},
                {"step": 50, "candidates": [float(np.mean(w)) for w in windows], "windows": windows}]

    pipeline = DefaultFit(None)

    def acceptance(record):
        return pipeline.acceptance(record, floor_windows)  # the exact floor scores as step 0 here
    # d = (0.1, 0.3, 0.1, 0.3): mean 0.2, sd 0.1155, se = sd / sqrt(4 // 2): t = 2.45
    assert acceptance(record([0.1, 0.3, 0.1, 0.3])) == (50, pytest.approx(2.449, abs=1e-3), 0)
    # d = (0.05, 0.35, -0.05, 0.45): t = 1.59, between one and two standard errors: kept
    step, t, candidate = acceptance(record([0.05, 0.35, -0.05, 0.45]))
    assert step == 50 and 1 < t < 2 and candidate == 0
    # d = (0.4, -0.3, 0.5, -0.2): t = 0.47: the floor
    assert acceptance(record([0.4, -0.3, 0.5, -0.2]))[0] == 0
    assert acceptance(record([-0.1, -0.1, -0.1, -0.1]))[0] == 0  # best at step 0
    assert acceptance(record([0.1, 0.3, 0.1, 0.3])[:1]) == (0, None, 0)  # nothing trained
    # the second candidate wins where its windows are lower, and is tested on its own windows
    assert acceptance(record([0.0, 0.0, 0.0, 0.1], other=[0.1, 0.3, 0.1, 0.3]))[::2] == (50, 1)


def test_acceptance_compares_with_the_exact_floor_not_step_0():
    """Step 0 of the runs is the warm start forecast by the particle filter, which can score the floor's windows far
    above the exact floor the fit returns without a GP part (decision BK): a part that beats step 0 by many standard
    errors but not the exact floor is not kept, and t is taken against the exact floor's errors."""
    from gpssm_np.models.default_fit import DefaultFit
    step0, trained, exact = [1.0, 1.1, 1.0, 1.1], [0.80, 0.92, 0.81, 0.90], [0.70, 0.72, 0.74, 0.70]
    record = [{"step": 0, "candidates": [1.05, 1.05], "windows": [step0, step0]},
              {"step": 50, "candidates": [0.8575, 1.05], "windows": [trained, step0]}]
    pipeline = DefaultFit(None)
    assert pipeline.acceptance(record, step0)[0] == 50  # against step 0 it would be kept
    step, t, candidate = pipeline.acceptance(record, exact)
    assert step == 0 and t == pytest.approx(paired_t(exact, trained), rel=1e-12) and t < 0


def test_a_default_fit_judges_its_gp_part_against_the_exact_floors_errors():
    """The fit's paired t is taken over the exact floor's window errors (``selection_["floor_errors"]``), which differ
    from step 0's particle forecasts of the same windows."""
    from gpssm_np.models.default_fit import DefaultFit
    y, u = delayed_plant(T=300)
    chosen = gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=20, plan={"eval_every": 10}, progress=False).selection_
    best, candidate = DefaultFit.best_of(chosen["record"])
    step0 = chosen["record"][0]["windows"][candidate]
    assert best["step"] > 0 and len(chosen["floor_errors"]) == len(step0) and chosen["floor_errors"] != step0
    assert chosen["t"] == pytest.approx(paired_t(chosen["floor_errors"], best["windows"][candidate]), rel=1e-12)
    assert chosen["t"] != pytest.approx(paired_t(step0, best["windows"][candidate]), rel=1e-3)


def test_a_candidate_that_diverged_scores_inf_so_the_step_kept_is_the_step_chosen():
    """A fold run whose forecasts are NaN (diverged) at the step where the other candidate is best: the evaluation
    returns the other candidate's mean (the selection keeps that step's parameters) and stage 3 chooses that step;
    with NaN the two disagreed and the calibration asked for parameters never kept (a KeyError after the refit)."""
    from gpssm_np.models.default_fit import DefaultFit

    class Run:
        def __init__(self, errors):
            self.errors = errors

        def scored(self, window_scores):
            return self.errors

    pipeline, score = DefaultFit(None), type("Score", (), {"window_scores": None})
    step0, diverged, good = [1.0, 1.0, 1.0], [np.nan, 2.0, 3.0], [0.5, 0.4, 0.6]
    pipeline.runs, pipeline.record = [(None, Run(step0), score)] * 4, []  # 2 candidates x 2 folds
    assert pipeline.evaluate(0) == 1.0
    pipeline.runs = [(None, Run(diverged), score)] * 2 + [(None, Run(good), score)] * 2
    assert pipeline.evaluate(50) == pytest.approx(0.5)
    assert pipeline.record[-1]["candidates"][0] == np.inf
    assert pipeline.acceptance(pipeline.record, pipeline.record[0]["windows"][0])[::2] == (50, 1)


def lockstep(plan, errors, steps):
    """A ``DefaultFit`` selection over fold runs that stand in for training: run k's mean window error at step s is
    ``errors[k][s // 50]`` (two windows each); evaluated at ``steps`` and advanced 50 steps between them. Returns
    (the pipeline, its stand-in runs)."""
    from gpssm_np.models.default_fit import DefaultFit

    class Run:
        def __init__(self, errors):
            self.errors, self.steps = errors, 0

        def scored(self, window_scores):
            return [self.errors[self.steps // 50]] * 2

        def advance(self, n):
            self.steps += n

    score = type("Score", (), {"window_scores": None})
    pipeline = DefaultFit(None, plan=plan)
    pipeline.runs = [(None, Run(e), score) for e in errors]
    pipeline.record = []
    for step in steps:
        if step:
            pipeline.advance(50)
        pipeline.evaluate(step)
    return pipeline, [run for _, run, _ in pipeline.runs]


def test_a_candidate_whose_own_error_stalls_stops_training():
    """Each step-size candidate's fold runs stop once its own mean fold error has not fallen below its lowest for
    ``patience`` evaluations (``default_fit.live_candidates``): they take no more steps, score inf from then on, and
    stage 3 chooses among the steps each candidate trained to."""
    stalls, improves = [1.0, 0.9, 0.95, 0.96, 0.97], [1.0, 0.99, 0.98, 0.97, 0.96]
    pipeline, runs = lockstep(gp.Plan(patience=2), (stalls, stalls, improves, improves), range(0, 250, 50))  # 2 x 2
    # the first candidate's lowest is at step 50; after two evaluations without a lower one (100, 150) it stops
    assert [r["candidates"][0] for r in pipeline.record] == [1.0, 0.9, 0.95, 0.96, np.inf]
    assert runs[0].steps == 150 and runs[2].steps == 200
    assert pipeline.record[-1]["windows"][0] == [np.inf] * 4
    assert pipeline.acceptance(pipeline.record, pipeline.record[0]["windows"][0])[::2] == (50, 0)


def test_the_candidates_are_halved_where_the_windows_first_grow():
    """At the end of the first window stage (step max_steps / len(seq_lens)), of the step-size candidates still
    training only the one with the lowest mean fold error so far goes on (``default_fit.live_candidates``, decision
    BC): the other takes no more steps and scores inf from then on, though its own error still falls; before that
    step both train, and a candidate that leads later does not come back."""
    early, late = [1.0, 0.9, 0.8, 0.78, 0.77, 0.76], [1.0, 0.95, 0.9, 0.7, 0.6, 0.5]  # lead at step 100, and after
    plan = gp.Plan(patience=4, max_steps=300, seq_lens=(20, 40, 80))  # halved at step 100
    pipeline, runs = lockstep(plan, (early, early, late, late), range(0, 300, 50))  # 2 candidates x 2 folds
    assert [r["candidates"][1] for r in pipeline.record] == [1.0, 0.95, 0.9, np.inf, np.inf, np.inf]
    assert [r["candidates"][0] for r in pipeline.record] == early
    assert runs[0].steps == 250 and runs[2].steps == 100
    assert pipeline.acceptance(pipeline.record, pipeline.record[0]["windows"][0])[::2] == (250, 0)


def test_the_default_fit_keeps_a_given_num_latent():
    y, u = delayed_plant(T=300)
    assert gp.ODGPSSM(dim_y=1, dim_u=1, num_latent=2).initialise(y, u).spec.num_latent == 2
    model = gp.ODGPSSM(dim_y=1, dim_u=1).initialise(y, u)
    assert model.spec.num_latent == min(model.spec.dim_x, 5)


def resonant_plant(T=600, seed=0):
    """A lightly damped second-order plant seen through 30 % measurement noise: the LGSSM is the better floor (an
    ARX's equation error cannot separate that noise), and its stationary prior has strongly correlated states."""
    rng = np.random.default_rng(seed)
    u = np.repeat(rng.uniform(-1, 1, T // 10 + 1), 10)[:T, None]
    x, y = np.zeros(2), np.zeros((T, 1))
    for t in range(T):
        x = np.array([[1.6, -0.8], [1.0, 0.0]]) @ x + np.array([1.0, 0.0]) * u[t, 0] + 0.05 * rng.standard_normal(2)
        y[t] = x[0]
    return y + 0.3 * y.std() * rng.standard_normal((T, 1)), u


def test_a_floor_only_fit_simulates_as_the_lgssm_it_holds_from_a_few_outputs():
    """The simulate protocol reads 5 outputs, so the start state is mostly the prior: a floor-only fit's full q(x0)
    is the LGSSM's stationary prior in the emission basis (warm_start.py, step 4), and its forecast from 5 outputs is
    the LGSSM's, to 1e-10 (the diagonal of that prior alone moved it by 4 % of the outputs' scale)."""
    y, u = resonant_plant()
    lgssm = gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y[:500], u[:500])
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y[:500], u[:500], max_steps=2,
                                                     plan=dict(eval_every=1, patience=1, switch_t=1e6))
    assert model.selection_["floor"]["kind"] == "lgssm" and model.spec.x0_covariance == "full"
    assert lgssm.spec.dim_x >= 2 and model.linear_gaussian() is not None
    ours, theirs = (m.forecast(u[505:], y_past=y[500:505], u_past=u[500:505]).mean for m in (model, lgssm))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10 * np.std(y))
    L = model.constrained_params()["x0_sqrt"]
    E = emission_basis(lgssm.get_learned_params()["H"], lgssm.get_learned_params()["Q"])
    np.testing.assert_allclose(L @ L.T, E @ lgssm.get_learned_params()["P0"] @ E.T, rtol=1e-8, atol=1e-12)


def test_a_series_too_short_for_the_folds_is_said():
    """With too few training steps for the rolling-origin folds to score either linear model, the floor is the
    fallback (choose_floor's docstring) and the fit says so in a UserWarning; with enough it says nothing of it."""
    rng = np.random.default_rng(0)
    u = rng.normal(size=(300, 1))
    y = np.convolve(u[:, 0], [0.0, 0.5, 0.3], mode="full")[:300, None] + 0.05 * rng.normal(size=(300, 1))
    with pytest.warns(UserWarning, match="too few for the rolling-origin folds") as caught:
        short = gp.ODGPSSM(dim_y=1, dim_u=1).fit(y[:35], u[:35], max_steps=2, plan={"eval_every": 1}, progress=False)
    assert [w.filename for w in caught] == [__file__]  # the warning names the test's line, not the package's
    assert not np.isfinite(short.selection_["floor"]["scores"][short.selection_["floor"]["kind"]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=2, plan={"eval_every": 1}, progress=False)
    assert not [w for w in caught if "too few for the rolling-origin folds" in str(w.message)]


def nearly_collinear(seed, T=300, eps=1e-3):
    """Two outputs of one second-order linear plant, the second the first times 1 + eps plus white noise of eps."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((T, 1))
    x, first = np.zeros(2), []
    for t in range(T):
        x = np.array([0.9 * x[0] + 0.2 * x[1] + 0.5 * u[t, 0], -0.1 * x[0] + 0.8 * x[1]])
        x = x + 0.05 * rng.standard_normal(2)
        first.append(x[0])
    first = np.array(first)
    return np.stack([first, (1 + eps) * first + eps * rng.standard_normal(T)], 1), u


def test_a_floor_the_gp_models_form_cannot_hold_is_not_the_floor():
    """Over two nearly collinear outputs the GP model's form of the LGSSM (diagonal noise in a basis whose emission
    rows nearly coincide) forecasts the folds several times worse than the LGSSM: where the folds chose the LGSSM,
    stage 1 takes the ARX, whose form holds it; with the LGSSM the only kind allowed, a UserWarning says so."""
    y, u = nearly_collinear(seed=1)
    model = gp.ODGPSSM(dim_y=2, dim_u=1).initialise(y, u)
    chosen = model.selection_["floor"]
    assert chosen["scores"]["lgssm"] < chosen["scores"]["arx"]  # the folds' choice was the LGSSM
    assert chosen["kind"] == "arx" and chosen["refused"] == "lgssm" and chosen["form_ratio"] < 1.2
    said = "form of its floor, the lgssm .* times worse than the lgssm itself"
    with pytest.warns(UserWarning, match=said) as caught:
        alone = gp.ODGPSSM(dim_y=2, dim_u=1, init="lgssm").initialise(y, u)
    assert [w.filename for w in caught] == [__file__]  # the warning names the test's line, not the package's
    assert alone.selection_["floor"]["form_ratio"] > 3 and alone.selection_["floor"]["refused"] is None
    # where the forms hold their floors, nothing changes
    plant_y, plant_u = delayed_plant(T=300)
    held = gp.ODGPSSM(dim_y=1, dim_u=1).initialise(plant_y, plant_u).selection_["floor"]
    assert held["refused"] is None and abs(held["form_ratio"] - 1) < 0.05


def noiseless_plant(T=400):
    """(y, u) of a first-order plant with a saturating input and no noise: an ARX of enough lags fits it exactly."""
    u = np.sign(np.sin(np.arange(T) / 9.0))[:, None]
    y = np.zeros((T, 1))
    for k in range(1, T):
        y[k] = 0.8 * y[k - 1] + 0.5 * np.tanh(2 * u[k - 1]) + 0.02 * np.sin(k)
    return y, u


def test_the_form_of_an_exact_floor_is_judged_at_the_forms_noise_resolution():
    """On noiseless data the ARX fits exactly (fold error about 1e-15) and its form, whose variances are at least
    ``warm_start.VAR_MIN``, forecasts at about 1e-4: below the form's resolution, so the form holds the floor and
    nothing warns (the ratio against 1e-15 was 1e11)."""
    y, u = noiseless_plant()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = gp.ODGPSSM(dim_y=1, dim_u=1).initialise(y, u).selection_["floor"]
    assert not [w for w in caught if "form of its floor" in str(w.message)]
    assert chosen["kind"] == "arx" and chosen["scores"]["arx"] < 1e-12 and chosen["refused"] is None
    assert chosen["form_ratio"] < 1


def test_the_floor_a_part_was_judged_against_is_read_from_the_record():
    """``default_fit.floor_rmse``: the exact floor's mean fold error, or for a record written before the fit kept it,
    step 0's (what the part was judged against then)."""
    from gpssm_np.models.default_fit import floor_rmse
    record = [{"step": 0, "rmse": 0.5}, {"step": 50, "rmse": 0.4}]
    assert floor_rmse({"record": record, "floor_errors": [0.2, 0.4]}) == pytest.approx(0.3)
    assert floor_rmse({"record": record}) == 0.5
    assert floor_rmse({"record": [{"step": 0, "rmse": None}], "floor_errors": []}) is None


def test_a_tie_between_the_kinds_goes_to_the_arx_and_the_lower_fold_error_wins():
    from gpssm_np.models.floor import AS_FLOOR, choose_floor
    rng = np.random.default_rng(3)
    y, u = [rng.standard_normal((200, 1))], [rng.standard_normal((200, 1))]
    arx = gp.ARX(na=1, nb=1, dim_y=1, dim_u=1, **AS_FLOOR).fit(y, u)
    lgssm = gp.LGSSM(dim_x=2, dim_y=1, dim_u=1, **AS_FLOOR).fit(y, u)
    tied = choose_floor(y, u, fitted={"arx": (arx, [0.2, 0.3]), "lgssm": (lgssm, [0.2, 0.3])})
    assert tied.kind == "arx" and tied.scores == {"arx": 0.25, "lgssm": 0.25}
    assert choose_floor(y, u, fitted={"arx": (arx, [0.2, 0.31]), "lgssm": (lgssm, [0.2, 0.3])}).kind == "lgssm"


def test_the_fallback_floors_and_an_arx_floor_without_inputs():
    """choose_floor's fallbacks where the folds score nothing (35 steps): the LGSSM at d_x = max(4, d_y), and with
    the ARX alone, one lag of each; a fixed d_x without inputs: the ARX of d_x / d_y output lags and none of inputs."""
    from gpssm_np.models.floor import choose_floor
    rng = np.random.default_rng(0)
    y, u = rng.normal(size=(35, 2)), rng.normal(size=(35, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fallback = choose_floor([y], [u])
    assert (fallback.kind, fallback.dim_x) == ("lgssm", 4) and not np.isfinite(fallback.scores["arx"])
    arx = choose_floor([y], [u], kinds=("arx",))
    assert (arx.kind, arx.orders, arx.dim_x) == ("arx", (1, 1), 2)
    long = rng.normal(size=(300, 1))
    held = choose_floor([long], [np.zeros((300, 0))], kinds=("arx",), dim_x=3)
    assert held.orders == (3, 0) and held.dim_x == 3
