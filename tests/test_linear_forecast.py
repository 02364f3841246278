"""A GP model without a GP residual (the default fit's floor: A = 0, or PRSSM's zero residual) is a linear Gaussian
state-space model, and forecasts exactly as one (``GPSSM.linear_gaussian``, ``kalman.forecast_trajectories``)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.estimator import GradientTrainedModel
from gpssm_np.kalman import kalman_filter, predicted_moments
from gpssm_np.transforms import positive_inverse

from .test_floor import delayed_plant


@pytest.fixture(scope="module")
def floor_model():
    """The default ODGPSSM's warm start with its residual switched off and an intercept, as a zero-residual fit."""
    y, u = delayed_plant(T=400, seed=2)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).initialise(y, u)
    assert model.linear_gaussian() is None  # the warm start's GP residual has prior variance: not linear yet
    model.params["A"] = np.zeros_like(model.params["A"])
    model.params["b"] = model.params["b"] + 0.3  # every term of the transition mean enters
    return model, y, u


def test_the_point_forecast_and_its_std_are_the_kalman_prediction(floor_model):
    """The mean and the std (sqrt(P_t[:d_y, :d_y] + R), in original units) are exact for every seed and number of
    samples (the std was the samples' spread: 0.7-1.6 times the exact one with 10 samples)."""
    model, y, u = floor_model
    params = model.linear_gaussian()
    sc = model.scaling_
    m0, P0 = model.q_x0(full_cov=True)
    filtered = kalman_filter(params, sc.y_to_model(y[200:300]), sc.u_to_model(u[200:300]), m0, P0)
    means, covs = predicted_moments(params, sc.u_to_model(u[300:360]), filtered.means[-1], filtered.covs[-1])
    expected = sc.y_to_original(means[:, :1])
    expected_std = np.sqrt(covs[:, :1, 0] + params["R"][0, 0]) * sc.y_std
    for seed, num_samples in ((0, 7), (1, 3)):  # no Monte-Carlo error
        fc = model.forecast(u[300:360], y_past=y[200:300], u_past=u[200:300], num_samples=num_samples, seed=seed)
        np.testing.assert_allclose(fc.mean, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
        assert fc.samples.shape == (num_samples, 60, 1) and fc.origin == "y_past"
        np.testing.assert_allclose(fc.std, expected_std * (1.0 if fc.std_scale is None else fc.std_scale), rtol=1e-10)


@pytest.mark.parametrize("past", [50, 1])
def test_the_linear_baselines_intervals_are_exact(past):
    """LGSSM: sqrt(H P_t H^T + R); ARX: the variance of its simulated outputs, exactly, also where the simulate
    protocol's few outputs leave lags to complete (past 1 of 3 lags). Checked against the samples of a very large
    forecast, and the same for every seed and number of samples."""
    y, u = delayed_plant(T=400, seed=3)
    lgssm = gp.LGSSM(dim_x=3, dim_y=1, dim_u=1, calibrate=False).fit(y[:300], u[:300])
    p = lgssm.get_learned_params()
    state = lgssm.filter(y[300 - past:300], u[300 - past:300])
    _, covs = predicted_moments(p, lgssm.scaling_.u_to_model(u[300:340]), state.means[-1], state.covs[-1])
    expected = np.sqrt(np.einsum("ij,tjk,ik->ti", p["H"], covs, p["H"]) + np.diag(p["R"])) * lgssm.scaling_.y_std
    arx = gp.ARX(na=3, nb=3, dim_y=1, dim_u=1, calibrate=False).fit(y[:300], u[:300])
    for model, exact in ((lgssm, expected), (arx, None)):
        forecasts = [model.forecast(u[300:340], y_past=y[300 - past:300], u_past=u[300 - past:300],
                                    num_samples=n, seed=seed) for n, seed in ((200_000, 0), (4, 1), (50, 2))]
        sampled = np.sqrt(forecasts[0].samples.var(axis=0) + forecasts[0].obs_var)
        np.testing.assert_allclose(forecasts[0].std, sampled, rtol=0.005)
        for fc in forecasts[1:]:
            np.testing.assert_allclose(fc.std, forecasts[0].std, rtol=1e-12)
        if exact is not None:
            np.testing.assert_allclose(forecasts[0].std, exact, rtol=1e-10)


def test_the_exact_forecast_is_what_the_particle_forecast_approximates():
    """The same model through the particle filter and particle free run (the path of a model with a residual):
    with many particles the two point forecasts agree to their Monte-Carlo error. A two-state LGSSM warm start,
    whose states all carry noise: with the default's ARX floor (input-lag states that only later outputs inform)
    the fully adapted particle filter degenerates (effective sample size 1) and is itself off, by 1-2 filtered
    standard deviations of those states; likewise with the warm start's second state, whose variance is 2e-6."""
    y, u = delayed_plant(T=400, seed=2)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, dim_x=2, init="lgssm", seed=0).initialise(y, u)
    model.params["A"] = np.zeros_like(model.params["A"])
    model.params["b"] = model.params["b"] + 0.05
    model.params["process_noise"] = positive_inverse(np.full(2, 0.02))  # no near-deterministic state
    exact = model.forecast(u[300:340], y_past=y[200:300], u_past=u[200:300], num_samples=4000)
    particles = GradientTrainedModel._forecast(
        model, model.scaling_.u_to_model(u[300:340]), model.scaling_.y_to_model(y[200:300]),
        model.scaling_.u_to_model(u[200:300]), 4000, 0, None, 4000, 50).in_original_units()
    spread = exact.std.max()
    np.testing.assert_allclose(particles.mean, exact.mean, rtol=0, atol=0.08 * spread)
    np.testing.assert_allclose(particles.std, exact.std, rtol=0.05)


def test_a_model_with_a_gp_residual_keeps_the_particle_forecast(floor_model):
    model, y, u = floor_model
    with_residual = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
    with_residual.__dict__.update({k: v for k, v in model.__dict__.items() if k != "params"})
    with_residual.params = dict(model.params, A=np.full_like(model.params["A"], 1e-3))
    assert with_residual.linear_gaussian() is None
    a, b = (with_residual.forecast(u[300:340], y_past=y[200:300], u_past=u[200:300], seed=s).mean for s in (0, 1))
    assert not np.allclose(a, b, rtol=0, atol=1e-12)  # particles: the seed moves the point forecast


def test_prssm_is_linear_only_with_its_zero_residual():
    """PRSSM (A = I) is linear Gaussian when q(u) is at its prior with zero mean and the kernel variances at the
    warm start's floor, with each state's process variance raised by that kernel variance; a nonzero q(u) mean, a
    q(u) off its prior or a kernel variance above the floor (a warm start with the GP's share) keeps the particles."""
    from gpssm_np.models.warm_start import VAR_MIN, zero_residual_variance
    from gpssm_np.params import constrain

    y, u = delayed_plant(T=400, seed=2)
    model = gp.PRSSM(dim_y=1, dim_u=1, dim_x=2, init="lgssm", seed=0).initialise(y, u)
    spec, params = model.spec, model.params
    assert zero_residual_variance(spec, params) is None  # the warm start's GP share is above the floor
    floor = positive_inverse(np.full(spec.dim_x, VAR_MIN))
    model.params = dict(params, variance=floor)
    lg = model.linear_gaussian()
    p = constrain(model.params, spec)
    np.testing.assert_allclose(np.diag(lg["Q"]), p["process_var"] + p["variance"], rtol=1e-15)
    for name, value in (("q_mu", params["q_mu"] + 1e-3), ("q_sqrt", 0.5 * params["q_sqrt"]),
                        ("variance", floor + 1.0)):
        model.params = dict(dict(params, variance=floor), **{name: value})
        assert model.linear_gaussian() is None, name
