"""A GP model without a GP residual (A = 0: the default fit's floor) filters, smooths and filters online exactly,
as the linear Gaussian state-space model it is (``GPSSM._filter``, ``GPSSM.smooth``, ``GPSSM.online_filter``;
``filtering.kalman_filter_result``, ``kalman.sample_smoothed``, ``online.KalmanOnlineFilter``)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.filtering import ancestral_paths, backward_simulation, kalman_filter_result
from gpssm_np.kalman import kalman_filter, rts_smoother, sample_smoothed, step_log_likelihoods

from .test_floor import delayed_plant


@pytest.fixture(scope="module")
def floor_model():
    """The default ODGPSSM's warm start (an ARX floor in observer form) with its residual switched off, and data
    with two missing outputs."""
    y, u = delayed_plant(T=400, seed=2)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).initialise(y, u)
    model.params["A"] = np.zeros_like(model.params["A"])
    model.params["b"] = model.params["b"] + 0.3
    y = y.copy()
    y[[210, 250]] = np.nan
    return model, y[200:300], u[200:300]


def _kalman(model, y, u):
    sc = model.scaling_
    m0, P0 = model.q_x0(full_cov=True)
    params = model.linear_gaussian()
    return params, kalman_filter(params, sc.y_to_model(y), sc.u_to_model(u), m0, P0)


def test_the_filter_is_the_kalman_filter(floor_model):
    model, y, u = floor_model
    params, exact = _kalman(model, y, u)
    sc = model.scaling_
    result = model.filter(y, u, num_particles=300, seed=4)
    assert result.proposal == "kalman" and result.particles.shape == (300, model.spec.dim_x)
    np.testing.assert_allclose(result.means, exact.means, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.covs, exact.covs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.output_means, sc.y_to_original(exact.means[:, :1]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.predicted_output_vars,
                               (exact.pred_covs[:, :1, 0] + params["R"][0, 0]) * sc.y_std**2, rtol=1e-12)
    assert np.isnan(result.innovations[[10, 50]]).all() and result.log_likelihood_steps[10] == 0.0
    # the log-likelihood of y in original units: the model units' minus log std per observed entry
    np.testing.assert_allclose(result.log_likelihood, exact.log_likelihood - 98 * np.log(sc.y_std[0]), rtol=1e-10)
    assert np.all(result.ess == 300) and not result.resampled.any() and result.ess_threshold == 0.0
    np.testing.assert_allclose(np.exp(result.log_weights).sum(), 1.0, rtol=1e-12)
    # the filtered output variances in original units, and the innovations about the predicted output means
    np.testing.assert_allclose(result.output_vars, exact.covs[:, :1, 0] * sc.y_std**2, rtol=1e-12)
    np.testing.assert_allclose(result.innovations, y - result.predicted_output_means, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.predicted_output_means, sc.y_to_original(exact.pred_means[:, :1]), rtol=0,
                               atol=1e-9)


def test_a_particle_filter_option_gets_the_particle_filter(floor_model):
    model, y, u = floor_model
    assert model.filter(y, u, num_particles=50, proposal="adapted").proposal == "adapted"
    assert model.filter(y, u, num_particles=50, ess_threshold=0.3).proposal == "adapted"


def test_the_filter_keeps_every_steps_particles_only_when_asked(floor_model):
    """As the particle filter (``store_particles`` False by default): without the option no history is drawn; with
    it, (T, N, d_x) draws and their uniform log-weights."""
    model, y, u = floor_model
    plain = model.filter(y, u, num_particles=30, seed=4)
    assert plain.particles_history is None and plain.log_weights_history is None
    kept = model.filter(y, u, num_particles=30, seed=4, store_particles=True)
    assert kept.proposal == "kalman" and kept.particles_history.shape == (100, 30, model.spec.dim_x)
    np.testing.assert_array_equal(kept.log_weights_history, np.full((100, 30), -np.log(30)))


def test_the_step_log_likelihoods_add_up_to_the_filters(floor_model):
    model, y, u = floor_model
    params, exact = _kalman(model, y, u)
    steps = step_log_likelihoods(params, exact, model.scaling_.y_to_model(y))
    assert steps[10] == 0.0 and steps[50] == 0.0 and np.all(steps[:10] != 0.0)
    np.testing.assert_allclose(steps.sum(), exact.log_likelihood, rtol=1e-12)


def test_the_filters_particles_are_draws_from_the_exact_filtered_distributions(floor_model):
    model, y, u = floor_model
    params, exact = _kalman(model, y, u)
    sc = model.scaling_
    m0, P0 = model.q_x0(full_cov=True)
    result = kalman_filter_result(params, sc.y_to_model(y), sc.u_to_model(u), m0, P0, 20000, 0,
                                  store_particles=True)
    sd = np.sqrt(np.diagonal(exact.covs, axis1=1, axis2=2))
    for k in (0, 40, 99):
        draws = result.particles_history[k]
        assert np.all(np.abs(draws.mean(axis=0) - exact.means[k]) <= 5 * sd[k] / np.sqrt(20000) + 1e-12)
        np.testing.assert_allclose(draws.std(axis=0), sd[k], rtol=0.05, atol=1e-12)
    np.testing.assert_allclose(result.particles.mean(axis=0), exact.means[-1], rtol=0, atol=0.05 * sd[-1].max())
    np.testing.assert_allclose(np.exp(result.log_weights_history).sum(axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="ancestors"):
        ancestral_paths(result)
    paths = backward_simulation(model.transition_moments(), result, sc.u_to_model(u), 3)
    assert paths.shape == (3, 100, model.spec.dim_x)


def test_the_online_filter_reproduces_the_filter(floor_model):
    model, y, u = floor_model
    result = model.filter(y, u)
    online = model.online_filter()
    means = np.array([online.update(y_t, u_t)[0] for y_t, u_t in zip(y[:60], u[:60])])
    state = online.state()
    assert set(state) == {"mean", "cov", "step", "model"}
    resumed = model.online_filter(state=state)
    means = np.concatenate([means, [resumed.update(y_t, u_t)[0] for y_t, u_t in zip(y[60:], u[60:])]])
    np.testing.assert_array_equal(means, result.output_means)
    np.testing.assert_array_equal(resumed.predicted_var, result.predicted_output_vars[-1])
    np.testing.assert_array_equal(resumed.predicted_mean, result.predicted_output_means[-1])
    np.testing.assert_array_equal(resumed.innovation, result.innovations[-1])
    assert model.online_filter(proposal="adapted").state()["particles"].shape == (500, model.spec.dim_x)
    for bad in (2, -0.1, "half"):  # not used by the exact filter, refused as the particle filter refuses it
        with pytest.raises(ValueError, match="^ess_threshold: expected a number in \\[0, 1\\]"):
            model.online_filter(ess_threshold=bad)
    # its forecast is the model's exact forecast from the filtered mean and covariance
    end = resumed.state()
    np.testing.assert_array_equal(resumed.predict(u[:20], seed=3).mean,
                                  model.forecast(u[:20], x0=(end["mean"], end["cov"]), seed=3).mean)


def test_the_smoother_draws_from_the_exact_smoothing_distribution(floor_model):
    model, y, u = floor_model
    params, exact = _kalman(model, y, u)
    m0, P0 = model.q_x0(full_cov=True)
    means, covs, cross = rts_smoother(params, exact, m0, P0)
    trajectories = model.smooth(y, u, num_trajectories=4000, seed=1)
    assert trajectories.shape == (4000, 100, model.spec.dim_x)
    sd = np.sqrt(np.diagonal(covs[1:], axis1=1, axis2=2))
    assert np.all(np.abs(trajectories.mean(axis=0) - means[1:]) <= 5 * sd / np.sqrt(4000) + 1e-9)
    np.testing.assert_allclose(trajectories.std(axis=0), sd, rtol=0.1, atol=1e-9)
    d = model.spec.dim_x
    # joint draws: the lag-one covariances Cov(x_t, x_{t-1} | y) are the smoother's (t = 32: index 31 and 30)
    lagged = np.cov(trajectories[:, 31].T, trajectories[:, 30].T)[:d, d:]
    np.testing.assert_allclose(lagged, cross[31], rtol=0, atol=5 * np.outer(sd[31], sd[30]).max() / np.sqrt(4000))
    # drawn with the generator of seed + 1, as backward simulation's
    expected = sample_smoothed(params, exact, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(model.smooth(y, u, num_trajectories=5, seed=2), expected)


def test_the_lgssm_smooths_with_the_surface_of_the_gp_models(floor_model):
    # smooth(y, u) gives the RTS moments of x_0..x_T; with num_trajectories, joint draws of x_1..x_T from the same
    # smoothing distribution, as a GP model's smooth answers
    _, y, u = floor_model
    lgssm = gp.LGSSM(dim_x=3, dim_y=1, dim_u=1, num_iters=5, calibrate=False).fit(*delayed_plant(T=200, seed=3))
    means, covs = lgssm.smooth(y, u)
    assert means.shape == (101, 3) and covs.shape == (101, 3, 3)
    # q(x_0) given a window (no output missing): the smoothed moments of x_0, the state before its first output
    mean0, cov0 = lgssm.q_x0(y[:10], u[:10], full_cov=True)
    first = lgssm.smooth(y[:10], u[:10])
    np.testing.assert_array_equal(mean0, first[0][0])
    np.testing.assert_array_equal(cov0, first[1][0])
    trajectories = lgssm.smooth(y, u, num_trajectories=4000, seed=1)
    assert trajectories.shape == (4000, 100, 3)
    sd = np.sqrt(np.diagonal(covs[1:], axis1=1, axis2=2))
    assert np.all(np.abs(trajectories.mean(axis=0) - means[1:]) <= 5 * sd / np.sqrt(4000) + 1e-9)
    np.testing.assert_allclose(trajectories.std(axis=0), sd, rtol=0.1, atol=1e-9)
    # drawn with the generator of seed + 1, as the GP models' backward simulation
    expected = sample_smoothed(lgssm.params_, lgssm.kalman(*lgssm._window(y, u)), 5, np.random.default_rng(3))
    np.testing.assert_array_equal(lgssm.smooth(y, u, num_trajectories=5, seed=2), expected)
    with pytest.raises(ValueError, match="num_trajectories"):
        lgssm.smooth(y, u, num_trajectories=0)


def test_the_lgssm_filters_with_the_same_result_as_a_gp_model_on_its_floor(floor_model):
    # the LGSSM's filter answers with the GP models' surface (a FilterResult, proposal "kalman"), its output
    # moments, innovations and log-likelihood in original units
    _, y, u = floor_model
    y_fit, u_fit = delayed_plant(T=200, seed=3)
    lgssm = gp.LGSSM(dim_x=3, dim_y=1, dim_u=1, num_iters=5, calibrate=False).fit(y_fit, u_fit)
    result = lgssm.filter(y, u, num_particles=200, seed=1)
    assert result.proposal == "kalman" and result.particles.shape == (200, 3)
    sc, p = lgssm.scaling_, lgssm.params_
    exact = kalman_filter(p, sc.y_to_model(y), sc.u_to_model(u), p["m0"], p["P0"])
    np.testing.assert_allclose(result.means, exact.means, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.output_means, sc.y_to_original(exact.means @ p["H"].T), rtol=1e-12)
    np.testing.assert_allclose(result.predicted_output_means, sc.y_to_original(exact.pred_means @ p["H"].T),
                               rtol=1e-12)
    observed = int(np.sum(~np.isnan(y)))
    np.testing.assert_allclose(result.log_likelihood, exact.log_likelihood - observed * np.log(sc.y_std[0]),
                               rtol=1e-10)
    assert lgssm.log_likelihood(y, u) == pytest.approx(result.log_likelihood, rel=1e-12)
