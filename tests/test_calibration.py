"""fit(calibrate=True): forecast intervals widened per output on the validation block (models/training.py, step 6).
The fits name the validation-block loop's plan (``gp.BlockPlan``; without it a linear init runs the default fit)."""
import warnings

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import norm

import gpssm_np as gp
from gpssm_np.datasets import random_linear_system, simulate_linear
from gpssm_np.forecast import Forecast
from gpssm_np.io import load, save
from gpssm_np.metrics import nlpd, standardised_errors, widening_factors
from gpssm_np.models.training import ValidationScore, split_validation

SMALL = dict(num_inducing=8, seed=3)
BUDGET = dict(max_steps=20, eval_every=10, patience=2, num_samples=10, batch_size=8, refit=False)


def two_output_data(seed=0, T=700):
    y, u, _ = simulate_linear(random_linear_system(dim_x=3, dim_y=2, dim_u=1, seed=seed), T, seed=seed)
    return y, u


def test_std_scale_multiplies_the_predictive_std_not_the_samples():
    rng = np.random.default_rng(0)
    fc = Forecast(samples=rng.normal(size=(50, 4, 2)), states=np.zeros((50, 4, 3)), obs_var=np.array([0.1, 0.2]))
    scaled = Forecast(fc.samples, fc.states, fc.obs_var, std_scale=np.array([2.0, 0.5]))
    np.testing.assert_allclose(scaled.std, fc.std * [2.0, 0.5])
    np.testing.assert_array_equal(scaled.mean, fc.mean)
    np.testing.assert_allclose(scaled.interval(0.95)[1] - scaled.mean, (fc.interval(0.95)[1] - fc.mean) * [2.0, 0.5])


def test_the_factors_widen_the_validation_intervals_to_cover_95_percent():
    y, u = two_output_data(seed=1)
    plain = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, **SMALL).fit(y, u, plan=gp.BlockPlan(**BUDGET, calibrate=False))
    model = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, **SMALL).fit(y, u, plan=gp.BlockPlan(**BUDGET, calibrate=True))
    assert plain.interval_scale_ is None and model.interval_scale_.shape == (2,)
    # the same run (calibration changes no parameter); its validation forecasts, in the fit's units
    for name in plain.params:
        np.testing.assert_array_equal(plain.params[name], model.params[name])
    ys, us = [plain._y_to_model(y)], [plain._u_to_model(u)]
    score = ValidationScore(ys, us, split_validation(ys, us, 0.2)[2], seed=3)
    scaling, plain.scaling_ = plain.scaling_, None  # forecast in model units, as during the fit
    z = np.concatenate([np.abs(y_w - fc.mean) / fc.std for y_w, fc in score.forecasts(plain)])
    plain.scaling_ = scaling
    factors = np.quantile(z, 0.95, axis=0) / ndtri(0.975)
    assert np.any(factors < 1.0)  # this fit's validation intervals were too wide: they are left as they are
    np.testing.assert_allclose(model.interval_scale_, np.maximum(factors, 1.0), rtol=1e-12)
    assert np.all(np.mean(z / model.interval_scale_ <= ndtri(0.975), axis=0) >= 0.95 - 0.01)
    # every later forecast carries the factors
    a = plain.forecast(u[:30], y_past=y[:100], u_past=u[:100], num_samples=20)
    b = model.forecast(u[:30], y_past=y[:100], u_past=u[:100], num_samples=20)
    np.testing.assert_allclose(b.std, a.std * model.interval_scale_, rtol=1e-12)
    np.testing.assert_array_equal(a.mean, b.mean)


def test_widening_factors_widen_too_narrow_intervals_to_95_percent_and_leave_wide_ones():
    z = np.abs(np.random.default_rng(0).normal(size=(20000, 2)) * [2.0, 0.5])  # std 2 and 0.5 where 1 was said
    factors = widening_factors(z)
    assert factors[0] == pytest.approx(2.0, rel=0.03) and factors[1] == 1.0
    assert np.mean(z[:, 0] / factors[0] <= ndtri(0.975)) == pytest.approx(0.95, abs=1e-3)


def test_a_widening_held_at_its_cap_is_said():
    z = np.abs(np.random.default_rng(0).normal(size=(400, 2))) * np.array([1.0, 500.0])
    with pytest.warns(UserWarning, match="capped at 100") as caught:
        factors = widening_factors(z)
    assert [w.filename for w in caught] == [__file__]
    assert factors[1] == 100.0 and 1.0 <= factors[0] < 1.2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        widening_factors(z[:, :1])  # below the cap: nothing said


def test_standardised_errors_are_the_errors_in_predictive_standard_deviations():
    y, mean, std = np.array([[1.0, -2.0]]), np.array([[0.5, 0.0]]), np.array([[0.25, 4.0]])
    np.testing.assert_array_equal(standardised_errors(y, mean, std), [[2.0, 0.5]])


def test_the_calibration_is_that_of_the_validated_run_and_survives_a_model_file(tmp_path):
    y, u = two_output_data(seed=2)
    model = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, **SMALL).fit(y, u, plan=gp.BlockPlan(**BUDGET, calibrate=True))
    refitted = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, **SMALL).fit(y, u, plan=gp.BlockPlan(**dict(BUDGET, calibrate=True,
                                                                                              refit=True)))
    np.testing.assert_array_equal(refitted.interval_scale_, model.interval_scale_)  # computed before the refit
    refitted.fit(y, u, plan=gp.BlockPlan(**BUDGET, calibrate=False))  # a fit without calibration forgets the former one
    assert refitted.interval_scale_ is None
    save(model, tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.interval_scale_, model.interval_scale_)
    with pytest.raises(ValueError, match=r"^calibrate: expected one of \(False, True\), got 'yes'"):
        gp.PRSSM(dim_x=2, dim_y=1, dim_u=1).fit(y[:, :1], u, max_steps=1, plan=gp.BlockPlan(calibrate="yes"))
    with pytest.raises(ValueError, match="calibrate"):
        gp.PRSSM(dim_x=2, dim_y=1, dim_u=1).fit(y[:, :1], u, max_steps=1, plan=gp.BlockPlan(calibrate=1))


def test_a_fit_without_a_gp_part_is_calibrated_on_the_forecasts_of_the_model_it_returns():
    """With no GP part kept the default fit returns each fold floor's zero-residual form, which forecasts exactly
    (Kalman); its intervals were widened by the errors of the warm start's particle forecasts (step 0 of the
    selection's runs), a factor of 7.5 on a plant whose LGSSM calibrates at 1.55. The factors must be those of the
    exact forecasts of the floor refitted to each fold's past."""
    from gpssm_np.models.default_fit import DefaultFit, Plan

    system = random_linear_system(dim_x=3, dim_y=2, dim_u=1, seed=7)
    system["H"] = np.array([[1.0, 0.3, -0.5], [0.9, 0.35, -0.4]])
    system["Q"], system["R"] = 0.05**2 * np.eye(3), 0.02**2 * np.eye(2)
    y, u, _ = simulate_linear(system, 300, seed=8)
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    model = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, init="lgssm", seed=0)
    fit = DefaultFit(model, Plan(max_steps=10, eval_every=10, switch_t=np.inf), dim_x=3)  # the floor, always
    selection = fit.run([y], [u])
    assert not selection["gp_part"] and model.linear_gaussian() is not None
    z = []
    for k, fold in enumerate(fit.folds):
        floor_form = gp.ODGPSSM(dim_x=3, dim_y=2, dim_u=1, init="lgssm", seed=0)
        floor_form.start_from_floor(fit.fold_floors[k], fold.ys, fold.us, k, gp_share=0.0)
        assert floor_form.linear_gaussian() is not None  # forecasts exactly
        for window in [w for f in fit.folds[k:] for w in f.windows]:
            fc = floor_form.forecast(window.u, y_past=window.y_past, u_past=window.u_past, num_samples=5, seed=0)
            z.append(standardised_errors(window.y, fc.mean, fc.std))
    np.testing.assert_allclose(model.interval_scale_, widening_factors(np.concatenate(z)), rtol=1e-12)
    assert np.all(model.interval_scale_ < 2.0)


def test_nlpd_is_the_mean_gaussian_negative_log_density_per_entry():
    rng = np.random.default_rng(0)
    y, mean, std = rng.normal(size=(50, 2)), rng.normal(size=(50, 2)), rng.uniform(0.5, 2.0, size=(50, 2))
    assert nlpd(y, mean, std) == pytest.approx(-np.mean(norm.logpdf(y, mean, std)), rel=1e-12)


def test_a_model_files_interval_scale_must_be_one_finite_factor_of_at_least_1_per_output():
    """``set_extra_state`` (what loading a model file calls) refuses each fault of ``interval_scale`` alone: the
    wrong count, a non-finite factor, a factor below 1 (a calibration only widens); a factor of exactly 1 is taken."""
    for bad in ([1.5], [1.5, np.nan], [1.5, 0.99]):
        with pytest.raises(ValueError, match=r"^state: interval_scale must be 2 finite factors of at least 1"):
            gp.ARX(dim_y=2, dim_u=1).set_extra_state({"interval_scale": np.array(bad)})
    model = gp.ARX(dim_y=2, dim_u=1)
    model.set_extra_state({"interval_scale": np.array([1.0, 1.5])})
    np.testing.assert_array_equal(model.interval_scale_, [1.0, 1.5])
