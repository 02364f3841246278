"""Linear baselines: ARX least squares and order selection, LGSSM Kalman filter/smoother exactness, EM, subspace
identification, forecasts, and the evaluation protocols on real data."""
import dataclasses
import os

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from gpssm_np.baselines import ARX, LGSSM, UnscoredOrderWarning, arx_is_stable, arx_simulate, kalman_filter
from gpssm_np.baselines._base import COV_FLOOR
from gpssm_np.baselines.arx import arx_regressors
from gpssm_np.datasets import from_arrays, load
from gpssm_np.protocols import evaluate
from tests.data_dir import DATA_DIR

needs_data = pytest.mark.skipif(not os.path.isfile(os.path.join(DATA_DIR, "actuator", "actuator.mat")),
                                reason=f"the benchmark data are not in {DATA_DIR}")
A_TRUE, B_TRUE, C_TRUE = np.array([1.2, -0.5]), np.array([0.8, 0.4]), 0.1


def simulate_arx(T, seed, noise_std=0.1):
    """y_t = 1.2 y_{t-1} - 0.5 y_{t-2} + 0.8 u_t + 0.4 u_{t-1} + 0.1 + e_t."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(T, 1))
    y = np.zeros((T, 1))
    for t in range(2, T):
        y[t] = A_TRUE @ y[t - 2:t][::-1, 0] + B_TRUE @ u[t - 1:t + 1][::-1, 0] + C_TRUE + noise_std * rng.normal()
    return y, u


def random_lgssm(rng, dx=2, dy=1, du=1):
    F = rng.normal(size=(dx, dx))
    F *= 0.8 / np.max(np.abs(np.linalg.eigvals(F)))
    W, V = rng.normal(size=(dx, dx)), rng.normal(size=(dx, dx))
    return {"F": F, "G": rng.normal(size=(dx, du)), "H": rng.normal(size=(dy, dx)),
            "Q": 0.1 * W @ W.T + 0.05 * np.eye(dx), "R": 0.1 * np.eye(dy), "m0": rng.normal(size=dx),
            "P0": V @ V.T + np.eye(dx)}


def simulate_lgssm(p, T, rng):
    dx, du = p["G"].shape
    u = rng.normal(size=(T, du))
    x = rng.multivariate_normal(p["m0"], p["P0"])
    ys = []
    for t in range(T):
        x = p["F"] @ x + p["G"] @ u[t] + rng.multivariate_normal(np.zeros(dx), p["Q"])
        ys.append(p["H"] @ x + rng.multivariate_normal(np.zeros(len(p["R"])), p["R"]))
    return np.array(ys), u


def dense_joint(p, u):
    """Mean and covariance of [x_0, x_1..x_T] and of y_1..y_T (stacked) from the explicit linear map
    x_t = F^t x_0 + sum_{k<=t} F^{t-k} (G u_k + w_k)."""
    T, dx, dy = len(u), len(p["m0"]), len(p["R"])
    Fp = [np.linalg.matrix_power(p["F"], k) for k in range(T + 1)]
    A0 = np.concatenate([Fp[t] for t in range(T + 1)])  # coefficient of x_0 in x_t
    Aw = np.zeros(((T + 1) * dx, T * dx))  # coefficient of w_k in x_t
    mean_x = A0 @ p["m0"]
    for t in range(1, T + 1):
        for k in range(1, t + 1):
            Aw[t * dx:(t + 1) * dx, (k - 1) * dx:k * dx] = Fp[t - k]
            mean_x[t * dx:(t + 1) * dx] += Fp[t - k] @ p["G"] @ u[k - 1]
    cov_x = A0 @ p["P0"] @ A0.T + Aw @ np.kron(np.eye(T), p["Q"]) @ Aw.T
    Hbig = np.concatenate([np.zeros((T * dy, dx)), np.kron(np.eye(T), p["H"])], axis=1)
    return mean_x, cov_x, Hbig @ mean_x, Hbig @ cov_x @ Hbig.T + np.kron(np.eye(T), p["R"]), Hbig


# ---------------------------------------------------------------------------------------------------------------
# ARX
# ---------------------------------------------------------------------------------------------------------------
def test_arx_recovers_coefficients():
    y, u = simulate_arx(3000, seed=0)
    m = ARX(na=2, nb=2, standardize=False).fit(y, u)  # coefficients in the units of the data
    coef = m.coefficients()
    np.testing.assert_allclose(coef["a"][:, 0, 0], A_TRUE, atol=0.02)
    np.testing.assert_allclose(coef["b"][:, 0, 0], B_TRUE, atol=0.02)
    np.testing.assert_allclose(coef["c"], [C_TRUE], atol=0.02)
    np.testing.assert_allclose(m.noise_var_, [0.01], rtol=0.1)
    assert m.selection_scores_ == {}


@pytest.mark.parametrize("selection", ["simulation", "bic"])
def test_arx_order_selection_finds_true_orders_and_uses_training_data_only(selection):
    y, u = simulate_arx(600, seed=1)
    m = ARX(max_order=4, selection=selection).fit(y[:400], u[:400])
    assert (m.na_, m.nb_) == (2, 2) if selection == "bic" else m.na_ >= 2 and m.nb_ >= 2
    assert len(m.selection_scores_) == 4 * 5
    # changing everything after the training data changes nothing
    y2 = y.copy()
    y2[400:] = np.random.default_rng(9).normal(size=(200, 1))
    twin = ARX(max_order=4, selection=selection).fit(y2[:400], u[:400])
    assert twin.selection_scores_ == m.selection_scores_
    np.testing.assert_array_equal(twin.theta_, m.theta_)


@needs_data
def test_arx_order_selection_on_dataset_ignores_test_half(monkeypatch):
    monkeypatch.setenv("GPSSM_NP_DATA", DATA_DIR)
    ds = load("gas_furnace")
    scrambled = dataclasses.replace(ds, y_test=ds.y_test[::-1] * 2.0 + 1.0)
    a = ARX(max_order=4).fit(ds.y_train, ds.u_train)
    b = ARX(max_order=4).fit(scrambled.y_train, scrambled.u_train)
    assert (a.na_, a.nb_) == (b.na_, b.nb_)
    assert evaluate(a, ds, "causal")["rmse"] != evaluate(b, scrambled, "causal")["rmse"]


def test_arx_forecast_is_the_exact_ar1_predictive():
    """AR(1) y_t = a y_{t-1} + e_t: h-step mean a^h y_0 and variance sigma^2 (1 - a^{2h}) / (1 - a^2)."""
    a, sigma2 = 0.9, 0.04
    m = ARX(na=1, nb=0, dim_u=0, standardize=False)  # theta_ below is in the units of the data
    m.fit(np.zeros((20, 1)) + np.arange(20)[:, None] % 2, None)  # any data; parameters are set below
    m.theta_, m.noise_cov_ = np.array([[a], [0.0]]), np.array([[sigma2]])
    fc = m.forecast(steps=6, y_past=np.array([[5.0], [2.0]]), num_samples=40000, seed=0)
    h = np.arange(1, 7)
    np.testing.assert_allclose(fc.mean[:, 0], a**h * 2.0, atol=0.01)
    np.testing.assert_allclose(fc.std[:, 0] ** 2, sigma2 * (1 - a ** (2 * h)) / (1 - a**2), rtol=0.03)
    assert fc.states.shape == (40000, 6, 1) and m.spec.dim_x == 1
    # the states are the sampled outputs: the conditional means plus the noise fed back
    np.testing.assert_allclose(fc.samples[:, 1:], a * fc.states[:, :-1], atol=1e-12)


def test_arx_point_forecast_is_the_noise_free_run_for_any_seed():
    """The samples are re-centred on the noise-free run, the exact mean of a linear model: no Monte-Carlo error."""
    rng = np.random.default_rng(3)
    u = rng.standard_normal((300, 1))
    y = np.zeros((300, 1))
    for t in range(2, 300):
        y[t] = 0.5 * y[t - 1] - 0.3 * y[t - 2] + 0.8 * u[t - 1] + 0.1 * rng.standard_normal()
    m = ARX(na=2, nb=2, standardize=False).fit(y, u)
    exact = arx_simulate(m.theta_, 2, 2, y[198:200][::-1][None], u[199:230][None])[0][0]
    for seed in (0, 1):
        fc = m.forecast(u[200:230], y_past=y[:200], u_past=u[:200], num_samples=5, seed=seed)
        np.testing.assert_allclose(fc.mean, exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fc.states.mean(axis=0), exact, rtol=0, atol=1e-12)


def test_arx_completes_a_short_past_by_regression_on_the_seen_lags():
    """With fewer past outputs and inputs than lags, the mean run starts from the least-squares estimate of the
    missing lags from the seen ones over the training rows (the Gaussian conditional mean of lag_statistics),
    computed here independently by a regression with an intercept; the samples add the conditional spread."""
    y, u = simulate_arx(400, seed=2)
    m = ARX(na=4, nb=4, standardize=False).fit(y, u)
    rows = arx_regressors(y, u, 4, 4, 4)
    z = np.concatenate([rows[:, :4], rows[:, 5:8]], axis=1)  # y_{t-1..t-4}, u_{t-1..t-3}
    seen = np.array([True, False, False, False, True, False, False])  # one output and one input read
    design = np.concatenate([np.ones((len(z), 1)), z[:, seen]], axis=1)
    coef = np.linalg.lstsq(design, z[:, ~seen], rcond=None)[0]
    y_past, u_past = y[99:100], u[99:100]
    z_seen = np.array([y_past[0, 0], u_past[0, 0]])
    completed = np.empty(7)
    completed[seen], completed[~seen] = z_seen, np.concatenate([[1.0], z_seen]) @ coef
    lags, inputs = completed[:4].reshape(1, 4, 1), completed[4:][::-1].reshape(1, 3, 1)
    expected = arx_simulate(m.theta_, 4, 4, lags, np.concatenate([inputs, u[None, 100:130]], axis=1))[0][0]
    fc = m.forecast(u[100:130], y_past=y_past, u_past=u_past, num_samples=400, seed=0)
    np.testing.assert_allclose(fc.mean, expected, rtol=0, atol=1e-9)
    assert fc.std[0, 0] ** 2 > 1.2 * m.noise_var_[0]  # the missing lags' spread is in the samples
    with pytest.raises(ValueError, match="u_past: expected shape"):  # a past is one record: as long in y and u
        m.forecast(u[100:130], y_past=y_past, u_past=u[98:100])
    with pytest.raises(ValueError, match="u_past: the model has dim_u = 1 inputs"):
        m.forecast(u[100:130], y_past=y_past)
    full = m.forecast(u[100:130], y_past=y[:100], u_past=u[:100], num_samples=3, seed=0)
    old = ARX(na=4, nb=4, standardize=False).set_learned_params(
        {k: v for k, v in m.get_learned_params().items() if not k.startswith("lag_")})
    np.testing.assert_array_equal(full.samples, old.forecast(u[100:130], y_past=y[:100], u_past=u[:100],
                                                             num_samples=3, seed=0).samples)


def test_arx_simulates_a_long_lag_plant_from_five_outputs():
    """An ARX of eight lags simulated from the five outputs the simulate protocol reads: completing the lags from
    the seen ones forecasts nearly as well as the full past (0.48 against 0.44 when written), where filling them with
    the training means (a model file without the lag statistics) starts far off on this slow plant (0.85)."""
    rng = np.random.default_rng(5)
    a = -np.real(np.poly([0.95 * np.exp(0.2j), 0.95 * np.exp(-0.2j), 0.9 * np.exp(0.9j), 0.9 * np.exp(-0.9j),
                          0.8 * np.exp(1.8j), 0.8 * np.exp(-1.8j), 0.7, -0.5]))[1:]
    b = np.array([0.0, 0.5, 0.3, -0.2, 0.4, 0.1, -0.3, 0.2])
    u = np.repeat(rng.uniform(-1, 1, 400), 3)[:1200, None]
    y = np.zeros((1200, 1))
    for t in range(8, 1200):
        y[t] = a @ y[t - 8:t][::-1, 0] + b @ u[t - 8:t][::-1, 0] + 0.02 * rng.standard_normal()
    m = ARX(na=8, nb=8, standardize=False).fit(y[:600], u[:600])
    old = ARX(na=8, nb=8, standardize=False).set_learned_params(
        {k: v for k, v in m.get_learned_params().items() if not k.startswith("lag_")})
    errors = {}
    for name, model, start in (("completed", m, 5), ("means", old, 5), ("full", m, 8)):
        fc = model.forecast(u[700:800], y_past=y[700 - start:700], u_past=u[700 - start:700], num_samples=2)
        errors[name] = np.sqrt(np.mean((fc.mean - y[700:800]) ** 2))
    assert errors["completed"] < 1.2 * errors["full"] and errors["means"] > 1.5 * errors["completed"], errors


def test_arx_lag_statistics_in_the_learned_params():
    y, u = simulate_arx(300, seed=2)
    m = ARX(na=3, nb=2, standardize=False).fit(y, u)
    params = m.get_learned_params()
    assert params["lag_mean"].shape == (4,) and params["lag_cov"].shape == (4, 4)
    again = ARX(na=3, nb=2, standardize=False).set_learned_params(params)
    np.testing.assert_array_equal(again.lag_cov_, m.lag_cov_)
    with pytest.raises(ValueError, match="lag_cov"):
        ARX(standardize=False).set_learned_params(dict(params, lag_cov=np.eye(3)))
    with pytest.raises(ValueError, match="lag_mean"):
        ARX(standardize=False).set_learned_params({k: v for k, v in params.items() if k != "lag_cov"})


def test_arx_stability_check():
    assert arx_is_stable(np.array([[1.2], [-0.5], [0.3], [0.0]]), 2)
    assert not arx_is_stable(np.array([[1.5], [0.0]]), 1)
    assert not arx_is_stable(np.array([[1.0], [0.0]]), 1)  # a unit root (a random walk): not stable
    assert arx_is_stable(np.array([[7.0]]), 0)


def test_arx_surface_and_errors():
    y, u = simulate_arx(200, seed=3)
    m = ARX(na=2, nb=1)
    with pytest.raises(ValueError, match="not fitted"):
        m.forecast(u[:5], y_past=y)
    assert m.fit(y, u) is m
    assert m.has_latent_state is False and m.history_ == []
    assert ARX(**m.get_config()).get_config() == m.get_config()
    with pytest.raises(ValueError, match="latent state"):
        m.q_x0(y[:10], u[:10])
    with pytest.raises(ValueError, match="x0"):
        m.forecast(u[:5], x0=(np.zeros(1), np.ones(1)))
    with pytest.raises(ValueError, match="epoch: unknown keyword argument of ARX.fit; expected one of y, u, "):
        m.fit(y, u, epoch=3)
    np.testing.assert_array_equal(ARX(na=2, nb=1).fit(y=y, u=u).predict(u[:5]), m.predict(u[:5]))  # as keywords
    with pytest.raises(ValueError, match="u_future"):
        m.forecast(None, y_past=y)
    with pytest.raises(ValueError, match="y_past"):
        m.forecast(u[:5], y_past=np.zeros((3, 2)))
    fc = m.forecast(u[:5], y_past=y, u_past=u)
    assert fc.samples.shape == (50, 5, 1)
    for kwargs, match in [({"selection": "aic"}, "selection"), ({"origins": 1}, "origins"), ({"na": -1}, "na"),
                          ({"dim_u": 0, "nb": 2}, "nb"), ({"max_order": 0}, "max_order")]:
        with pytest.raises(ValueError, match=match):
            ARX(**kwargs)
    with pytest.raises(ValueError, match="3 steps are too few to choose the orders"):
        ARX(max_order=2).fit(y[:3], u[:3])
    explosive = 1.05 ** np.arange(100.0)[:, None]
    with pytest.raises(ValueError, match="no candidate"):  # every order's fit is unstable
        ARX(max_order=2).fit(explosive, np.zeros((100, 1)))
    with pytest.raises(ValueError, match="cannot fit"):
        ARX(na=5, nb=5).fit(y[:8], u[:8])


# ---------------------------------------------------------------------------------------------------------------
# LGSSM
# ---------------------------------------------------------------------------------------------------------------
def test_kalman_filter_and_smoother_are_exact(rng):
    p = random_lgssm(rng, dx=2, dy=2, du=1)
    y, u = simulate_lgssm(p, 5, rng)
    mean_x, cov_x, mean_y, cov_y, Hbig = dense_joint(p, u)
    expected = multivariate_normal(mean_y, cov_y).logpdf(y.ravel())
    assert kalman_filter(p, y, u, p["m0"], p["P0"]).log_likelihood == pytest.approx(expected, rel=1e-10)
    # smoothed x_0..x_T: Gaussian conditioning of the dense joint
    gain = cov_x @ Hbig.T @ np.linalg.inv(cov_y)
    post_mean = mean_x + gain @ (y.ravel() - mean_y)
    post_cov = cov_x - gain @ Hbig @ cov_x
    m = LGSSM(dim_x=2, dim_y=2, dim_u=1).set_learned_params(p)
    means, covs = m.smooth(y, u)
    np.testing.assert_allclose(means.ravel(), post_mean, rtol=1e-9, atol=1e-12)
    for t in range(6):
        np.testing.assert_allclose(covs[t], post_cov[2 * t:2 * t + 2, 2 * t:2 * t + 2], rtol=1e-9, atol=1e-12)
    mean0, cov0 = m.q_x0(y, u, full_cov=True)
    np.testing.assert_allclose(mean0, post_mean[:2], rtol=1e-9)
    np.testing.assert_allclose(m.q_x0(y, u)[1], np.diag(cov0))
    assert m.log_likelihood(y, u) == pytest.approx(expected, rel=1e-10)


def test_em_increases_log_likelihood_monotonically(rng):
    p = random_lgssm(rng, dx=2)
    y, u = simulate_lgssm(p, 300, rng)
    m = LGSSM(dim_x=2, method="em", init="random", num_iters=60, seed=0).fit(y, u)
    nll = np.array(m.history_)
    assert len(nll) == 60
    assert np.all(np.diff(nll) <= 1e-8 * np.abs(nll[:-1]))
    assert nll[-1] < nll[0] - 10.0
    true_ll = LGSSM(dim_x=2).set_learned_params(p).log_likelihood(y, u)
    assert -nll[-1] > true_ll - 1.0  # from a random start EM reaches the likelihood of the true parameters


def test_subspace_then_em_reach_the_true_likelihood(rng):
    p = random_lgssm(rng, dx=2)
    y, u = simulate_lgssm(p, 600, rng)
    true_ll = LGSSM(dim_x=2).set_learned_params(p).log_likelihood(y, u)
    sub = LGSSM(dim_x=2, method="subspace").fit(y, u)
    em = LGSSM(dim_x=2, method="em", num_iters=20).fit(y, u)
    assert sub.history_ == []
    assert sub.log_likelihood(y, u) > true_ll - 0.1 * abs(true_ll)
    assert -em.history_[-1] >= true_ll - 2.0  # the ML estimate is at least about as likely as the truth
    assert np.all(np.abs(np.linalg.eigvals(em.params_["F"])) <= 0.999 + 1e-9)


def test_an_input_without_spread_gets_zero_coefficients(rng):
    """A constant input column (standardised to zeros) leaves the M-step's normal equations singular: LGSSM fits
    anyway, with that input's column of G zero (as ARX's least squares leave it), forecasts as the fit without that
    column does, and the default GP fit, whose floor is such an LGSSM, runs through."""
    import gpssm_np as gp
    p = random_lgssm(rng, dx=2, dy=1, du=1)
    y, u = simulate_lgssm(p, 300, rng)
    u2 = np.hstack([u, np.full_like(u, 3.0)])
    both = LGSSM(dim_x=2, dim_u=2, method="em", num_iters=10).fit(y, u2)
    alone = LGSSM(dim_x=2, method="em", num_iters=10).fit(y, u)
    np.testing.assert_array_equal(both.params_["G"][:, 1], 0.0)
    np.testing.assert_allclose(both.params_["G"][:, :1], alone.params_["G"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(both.predict(u2[:20], y[:50], u2[:50]), alone.predict(u[:20], y[:50], u[:50]),
                               rtol=1e-8, atol=1e-10)
    model = gp.ODGPSSM(dim_y=1, dim_u=2, seed=0).fit(y, u2, max_steps=2, plan={"eval_every": 1}, progress=False)
    assert np.all(np.isfinite(model.predict(u2[:20], y[:50], u2[:50])))


def test_stability_projection(rng):
    m = LGSSM(dim_x=2, max_spectral_radius=0.9)
    F = np.array([[1.1, 0.3], [0.0, 0.5]])
    G = m.stabilise(F)
    np.testing.assert_allclose(np.sort(np.abs(np.linalg.eigvals(G))), [0.5, 0.9])
    stable = np.diag([0.5, 0.2])
    assert m.stabilise(stable) is stable
    assert LGSSM(dim_x=2, max_spectral_radius=None).stabilise(F) is F


def test_lgssm_predictive_moments_in_original_units(rng):
    """Fitted to 5 y + 3, the model in its standardised units is the one fitted to y (up to rounding), and its
    predictive output means and covariances are 5 times and 25 times that model's, shifted by 3."""
    p = random_lgssm(rng, dx=2)
    y, u = simulate_lgssm(p, 120, rng)
    base, scaled = (LGSSM(dim_x=2, num_iters=5, calibrate=False).fit(z, u) for z in (y, 5.0 * y + 3.0))
    x0 = (np.zeros(2), np.eye(2))
    _, _, mean_b, cov_b = base.predict_moments(u[:10], *x0)
    _, _, mean_s, cov_s = scaled.predict_moments(u[:10], *x0)
    np.testing.assert_allclose(mean_s, 5.0 * mean_b + 3.0, rtol=1e-6)
    np.testing.assert_allclose(cov_s, 25.0 * cov_b, rtol=1e-6)


def test_lgssm_learned_params_are_checked_one_by_one(rng):
    """Each array of ``set_learned_params`` has its shape and is finite; Q and P0 may be singular (positive
    semi-definite), R may not."""
    p = random_lgssm(rng, dx=2)
    m = LGSSM(dim_x=2)
    for name, value in (("F", np.eye(3)), ("F", np.full((2, 2), np.nan)), ("m0", np.zeros(3))):
        with pytest.raises(ValueError, match=rf"params\['{name}'\]: expected a finite array of shape"):
            m.set_learned_params(dict(p, **{name: value}))
    singular = np.zeros((2, 2))
    assert m.set_learned_params(dict(p, Q=singular, P0=singular)).fitted
    with pytest.raises(ValueError, match=r"params\['R'\]: expected a symmetric positive definite matrix"):
        m.set_learned_params(dict(p, R=np.zeros((1, 1))))


def test_subspace_states_and_block_rows_of_several_sequences(rng):
    """One state sequence of T_i - 2 i + 1 rows per sequence (here three), i = max(10, d_x + 1) block rows by
    default, which ``min_steps`` counts (2 i - 1 + max(2, d_x))."""
    from gpssm_np.baselines.lgssm import subspace_states

    data = [(rng.normal(size=(T, 1)), rng.normal(size=(T, 1))) for T in (40, 55, 70)]
    states = subspace_states(data, 2, 5)
    assert [s.shape for s in states] == [(31, 2), (46, 2), (61, 2)]
    assert LGSSM(dim_x=12).min_steps() == 2 * 13 - 1 + 12 and LGSSM(dim_x=3).min_steps() == 2 * 10 - 1 + 3


def test_lgssm_forecast_moments(rng):
    p = random_lgssm(rng, dx=2, dy=1, du=1)
    m = LGSSM(dim_x=2).set_learned_params(p)
    y, u = simulate_lgssm(p, 40, rng)
    fc = m.forecast(u[30:], y_past=y[:30], u_past=u[:30], num_samples=20000, seed=1)
    filt = m.filter(y[:30], u[:30])
    _, _, y_mean, y_cov = m.predict_moments(u[30:], filt.means[-1], filt.covs[-1])
    np.testing.assert_allclose(fc.mean, y_mean, rtol=1e-10, atol=1e-12)  # re-centred: exact
    np.testing.assert_allclose(fc.std[:, 0] ** 2, y_cov[:, 0, 0], rtol=0.05)
    # from x0 = (mean, var): diagonal or full covariance
    mean, var = m.q_x0(y[:10], u[:10])
    diag = m.forecast(u[:5], x0=(mean, var), num_samples=10)
    full = m.forecast(u[:5], x0=(mean, np.diag(var)), num_samples=10)
    np.testing.assert_allclose(diag.states, full.states)
    assert diag.samples.shape == (10, 5, 1) and diag.states.shape == (10, 5, 2)
    prior = m.forecast(u[:5], num_samples=10)
    np.testing.assert_allclose(prior.mean, m.predict_moments(u[:5], p["m0"], p["P0"])[2], rtol=1e-10, atol=1e-12)


def test_lgssm_surface_and_errors(rng):
    p = random_lgssm(rng, dx=2)
    y, u = simulate_lgssm(p, 80, rng)
    m = LGSSM(dim_x=2, num_iters=2)
    with pytest.raises(ValueError, match="not fitted"):
        m.q_x0(y, u)
    assert m.fit(y, u) is m and len(m.history_) == 2
    assert m.has_latent_state and m.spec.dim_x == 2
    assert LGSSM(**m.get_config()).get_config() == m.get_config()
    assert set(m.get_learned_params()) == {"F", "G", "H", "Q", "R", "m0", "P0"}
    with pytest.raises(ValueError, match="x0"):
        m.forecast(u[:3], x0=(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="params"):
        m.set_learned_params({"F": np.eye(2)})
    with pytest.raises(ValueError, match="R"):
        m.set_learned_params(dict(p, R=-np.eye(1)))
    for kwargs, match in [({"method": "sgd"}, "method"), ({"init": "zeros"}, "init"), ({"num_iters": 0}, "num_iters"),
                          ({"dim_x": 0}, "dim_x"), ({"dim_x": []}, "dim_x"), ({"dim_x": [0, 2]}, "dim_x"),
                          ({"dim_x": 12, "block_rows": 10}, "block_rows"),
                          ({"max_spectral_radius": -1.0}, "max_spectral_radius")]:
        with pytest.raises(ValueError, match=match):
            LGSSM(**kwargs)
    assert LGSSM(dim_x=4, dim_y=2, block_rows=2).block_rows == 2  # block_rows d_y = d_x is enough
    with pytest.raises(ValueError, match="the series has 15 steps; .* needs at least 21 steps"):
        LGSSM(dim_x=2, method="subspace").fit(y[:15], u[:15])


# ---------------------------------------------------------------------------------------------------------------
# Protocols on real data
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def actuator():
    return load("actuator", data_dir=DATA_DIR)


@pytest.fixture(scope="module")
def fitted(actuator):
    return {"arx": ARX().fit(actuator.y_train, actuator.u_train),
            "lgssm": LGSSM(num_iters=10).fit(actuator.y_train, actuator.u_train)}


@needs_data
@pytest.mark.parametrize("protocol", ["causal", "freerun"])
@pytest.mark.parametrize("name", ["arx", "lgssm"])
def test_protocols_give_finite_results(fitted, actuator, name, protocol):
    result = evaluate(fitted[name], actuator, protocol)
    for key in ("rmse", "nlpd", "coverage95", "rmse_original_units"):
        assert np.isfinite(result[key])
    assert 0.4 < result["rmse"] < 0.9  # linear models on actuator: about 0.6-0.7 (research/anchors.md s1.6)


@needs_data
def test_lgssm_paper_protocol(fitted, actuator):
    result = evaluate(fitted["lgssm"], actuator, "paper")
    assert np.isfinite(result["rmse"]) and result["rmse"] < 0.9


@needs_data
def test_arx_paper_protocol_uses_the_causal_path(fitted, actuator):
    assert evaluate(fitted["arx"], actuator, "paper")["rmse"] == evaluate(fitted["arx"], actuator, "causal")["rmse"]


@needs_data
def test_arx_causal_rmse_on_actuator_matches_anchor(fitted, actuator):
    """research/anchors.md s1.6: ARX on actuator, 100-step windows, causal start: 0.634-0.657."""
    assert 0.58 < evaluate(fitted["arx"], actuator, "causal")["rmse"] < 0.70


@pytest.mark.parametrize("cls", [ARX, LGSSM])
def test_a_bad_output_dimension_is_named_as_given(cls):
    with pytest.raises(ValueError, match="dim_y: expected a positive integer, got 0"):  # not the ARX's d_x
        cls(dim_y=0)


def nearly_collinear_outputs(T=400, eps=1e-4, seed=0):
    """Two outputs of one first-order plant, the second the first plus noise of std ``eps`` (their residuals are
    correlated to 1 - O(eps^2)), and the plant's input."""
    rng = np.random.default_rng(seed)
    u, y1 = rng.normal(size=(T, 1)), np.zeros(T)
    for t in range(1, T):
        y1[t] = 0.8 * y1[t - 1] + 0.5 * u[t, 0] + 0.1 * rng.normal()
    return np.c_[y1, y1 + eps * rng.normal(size=T)], u


def test_arx_noise_is_correlated_across_outputs_as_their_residuals():
    """Sigma is the residuals' covariance: for nearly collinear outputs the coefficients weigh one output's lags
    against the other's, and noise drawn independently per output (a diagonal Sigma) made the sampled runs spread
    30 times wider than the forecast errors; with Sigma whole the intervals are of the errors' size."""
    y, u = nearly_collinear_outputs()
    m = ARX(dim_y=2, dim_u=1).fit(y[:300], u[:300])
    resid_corr = m.noise_cov_[0, 1] / np.sqrt(m.noise_cov_[0, 0] * m.noise_cov_[1, 1])
    assert resid_corr > 0.99 and np.array_equal(m.noise_cov_, m.noise_cov_.T)
    np.testing.assert_array_equal(m.noise_var_, np.diagonal(m.noise_cov_))
    fc = m.forecast(u[300:350], y_past=y[200:300], u_past=u[200:300])
    error = np.sqrt(np.mean((fc.mean - y[300:350]) ** 2))
    assert fc.std.mean() < 3 * error


def test_arx_exact_output_variance_holds_correlated_noise():
    """``arx_output_variances`` with a full Sigma is the variance of the conditional means over sampled runs."""
    y, u = nearly_collinear_outputs(eps=0.05, seed=1)
    m = ARX(na=2, nb=1, dim_y=2, dim_u=1, calibrate=False, standardize=False).fit(y, u)
    fc = m.forecast(u[:8], y_past=y[-2:], u_past=u[-2:], num_samples=40000, seed=0)
    np.testing.assert_allclose(fc.samples.var(axis=0), fc.output_var, rtol=0.04, atol=1e-20)  # 0 at the first step


def test_an_arx_file_with_noise_variances_loads_with_independent_noise():
    """A model file written before the ARX kept Sigma holds "noise_var": read as a diagonal Sigma; a Sigma that is
    not symmetric positive definite is refused by name."""
    y, u = nearly_collinear_outputs(eps=0.05)
    m = ARX(dim_y=2, dim_u=1).fit(y, u)
    old = {k: v for k, v in m.get_learned_params().items() if k != "noise_cov"}
    old["noise_var"] = m.noise_var_
    loaded = ARX(dim_y=2, dim_u=1).set_learned_params(old)
    np.testing.assert_array_equal(loaded.noise_cov_, np.diag(m.noise_var_))
    params = m.get_learned_params()
    for bad, match in ((np.array([[1.0, 0.5], [0.4, 1.0]]), "symmetric"), (np.array([[1.0, 2.0], [2.0, 1.0]]),
                                                                             "positive definite")):
        with pytest.raises(ValueError, match=f"params\\['noise_cov'\\]: expected a {match}"):
            ARX(dim_y=2, dim_u=1).set_learned_params(dict(params, noise_cov=bad))
    with pytest.raises(ValueError, match="params\\['noise_var'\\]"):
        ARX(dim_y=2, dim_u=1).set_learned_params(dict(old, noise_var=np.array([1.0, -1.0])))


def test_the_simulate_protocol_reads_the_first_n_init_outputs_and_scores_the_rest_in_step():
    """An ARX of the plant's own form, fitted to nearly noise-free data, simulates the test part almost exactly only
    where the protocol's forecast starts right after the n_init outputs it reads and is scored against the outputs
    of the same steps."""
    y, u = simulate_arx(400, seed=4, noise_std=1e-6)
    ds = from_arrays(y, u, train_fraction=0.5)
    m = ARX(na=2, nb=2).fit(ds.y_train, ds.u_train)
    result = evaluate(m, ds, "simulate")
    assert result["n_init"] == 5 and result["window"] == len(ds.y_test) - 5
    assert result["rmse"] < 1e-4
    last = evaluate(m, ds, "simulate", n_init=len(ds.y_test) - 1)  # one step left to simulate
    assert last["window"] == 1 and last["n_init"] == len(ds.y_test) - 1
    with pytest.raises(ValueError, match=f"n_init: expected fewer than the {len(ds.y_test)} steps of the test part"):
        evaluate(m, ds, "simulate", n_init=len(ds.y_test))


def test_a_tie_between_arx_orders_goes_to_the_first_candidate_the_fewest_lags(monkeypatch):
    monkeypatch.setattr(ARX, "_score", lambda self, data, folds, na, nb: (0.5, [0.5]))
    y, u = simulate_arx(300, seed=5)
    m = ARX(max_order=3, standardize=False).fit(y, u)
    assert (m.na_, m.nb_) == (1, 0) and len(m.selection_scores_) == 3 * 4


def test_order_errors_score_as_the_arx_does_with_more_outputs_than_inputs():
    """``order_errors`` (the floor's score of given ARX orders) on two outputs and one input gives the fold errors
    with which ``ARX()`` chose the same orders; an autonomous ARX has no input lags (nb = 0)."""
    from gpssm_np.baselines.arx import order_errors
    rng = np.random.default_rng(0)
    u, y = rng.normal(size=(300, 1)), np.zeros((300, 2))
    for t in range(2, 300):
        y[t] = 0.5 * y[t - 1] + 0.2 * y[t - 2] + np.array([0.3, -0.2]) * u[t - 1, 0] + 0.1 * rng.normal(size=2)
    arx = ARX(dim_y=2, dim_u=1, standardize=False).fit(y, u)
    assert arx.fold_errors_ is not None
    assert order_errors([(y, u)], arx.na_, arx.nb_) == arx.fold_errors_
    assert ARX(dim_y=1, dim_u=0).fit(y[:, :1]).nb_ == 0


def test_the_lgssm_defaults_standardise_and_calibrate_and_say_a_fallback_among_two():
    config = LGSSM(dim_x="auto").get_config()
    assert config["standardize"] is True and config["calibrate"] is True
    rng = np.random.default_rng(1)
    with pytest.warns(UnscoredOrderWarning, match="LGSSM: no state dimension could be scored") as caught:
        short = LGSSM(dim_x=[1, 2]).fit(rng.normal(size=(35, 1)), rng.normal(size=(35, 1)))
    assert [w.filename for w in caught] == [__file__]  # the warning names the test's line, not the package's
    assert repr(short).endswith(", a fallback: none of 1-2 could be scored]")


def _rows_by_hand(y, u, na, nb, first):
    """phi_t = [y_{t-1} .. y_{t-na}, u_t .. u_{t-nb+1}, 1] for t = first..T-1 (the module docstring's regressor), one
    output and one input, written out step by step."""
    return np.array([[y[t - i, 0] for i in range(1, na + 1)] + [u[t - j, 0] for j in range(nb)] + [1.0]
                     for t in range(first, len(y))])


def _least_squares_by_hand(rows, targets):
    theta = np.linalg.lstsq(rows, targets, rcond=None)[0]
    resid = targets - rows @ theta
    return theta, np.sum(resid ** 2, axis=0) / (len(rows) - rows.shape[1]) + COV_FLOOR


def test_arx_least_squares_uses_every_row_with_a_full_regressor():
    """Theta by ordinary least squares over every t >= max(na, nb - 1), sigma^2 with n - p degrees of freedom (plus
    the covariance floor 1e-8): here nb - 1 = 2 > na = 1, so the first row is t = 2."""
    y, u = simulate_arx(120, seed=6)
    m = ARX(na=1, nb=3, standardize=False).fit(y, u)
    theta, noise_var = _least_squares_by_hand(_rows_by_hand(y, u, 1, 3, 2), y[2:])
    np.testing.assert_allclose(m.theta_, theta, rtol=1e-10)
    np.testing.assert_allclose(m.noise_var_, noise_var, rtol=1e-10)


def test_the_bic_of_each_candidate_is_its_fit_on_the_common_rows():
    """``selection="bic"``: each candidate fitted on the rows t >= max_order, BIC = n sum_d log sigma_d^2 + p d_y log n
    with n those rows (module docstring)."""
    y, u = simulate_arx(150, seed=7)
    m = ARX(max_order=2, selection="bic", standardize=False).fit(y, u)
    n = len(y) - 2
    for (na, nb), score in m.selection_scores_.items():
        theta, noise_var = _least_squares_by_hand(_rows_by_hand(y, u, na, nb, 2), y[2:])
        assert score == pytest.approx(n * np.sum(np.log(noise_var)) + theta.size * np.log(n), rel=1e-10), (na, nb)
    assert (m.na_, m.nb_) == (2, 2)  # the plant's own orders


def test_two_candidate_orders_are_still_chosen_between():
    """With na given and max_order 1 the candidates are nb = 0 and nb = 1: the folds choose, and the plant, whose input
    acts at once, needs nb = 1."""
    y, u = simulate_arx(300, seed=8)
    m = ARX(na=1, max_order=1, standardize=False).fit(y, u)
    assert sorted(m.selection_scores_) == [(1, 0), (1, 1)] and m.nb_ == 1


def test_as_many_usable_steps_as_coefficients_cannot_be_fitted():
    """Least squares needs more usable steps than coefficients (n - p degrees of freedom): na = nb = 1 has 3
    coefficients and 4 steps leave 3 usable ones."""
    y, u = simulate_arx(5, seed=9)
    with pytest.raises(ValueError, match="^y: 3 usable steps cannot fit the 3 coefficients"):
        ARX(na=1, nb=1, standardize=False).fit(y[:4], u[:4])
    ARX(na=1, nb=1, standardize=False).fit(y, u)  # 4 usable steps


def test_the_lgssm_takes_a_series_of_exactly_its_fewest_steps():
    """``min_steps`` is the fewest steps the subspace identification works with: a series of that length is fitted,
    one step fewer is refused by name; with dim_x="auto" the length is checked before the state dimension's folds, so
    the refusal comes without the folds' fallback warning."""
    import warnings

    y, u = simulate_arx(200, seed=10)
    model = LGSSM(dim_x=2, num_iters=2)
    n = model.min_steps()
    model.fit(y[:n], u[:n])
    with pytest.raises(ValueError, match=f"^y: the series has {n - 1} steps; .* needs at least {n} steps"):
        LGSSM(dim_x=2, num_iters=2).fit(y[:n - 1], u[:n - 1])
    auto = LGSSM(dim_x="auto", num_iters=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"needs at least {auto.min_steps()} steps"):
            auto.fit(y[:auto.min_steps() - 1], u[:auto.min_steps() - 1])


def test_the_lgssms_random_start_has_spectral_radius_0_9():
    y, u = simulate_arx(200, seed=11)
    F = LGSSM(dim_x=3, init="random", seed=4)._random_init([(y, u)])["F"]
    assert np.max(np.abs(np.linalg.eigvals(F))) == pytest.approx(0.9, rel=1e-12)


def test_the_stationary_prior_is_the_smoothed_states_mean_and_covariance():
    """``set_stationary_prior``: m0 and P0 are the mean and covariance of the smoothed states x_1..x_T of every
    sequence (each state's smoothed covariance plus the spread of the smoothed means), COV_FLOOR on P0's diagonal."""
    data = [simulate_arx(150, seed=12), simulate_arx(90, seed=13)]
    model = LGSSM(dim_x=2, num_iters=3, standardize=False).fit([y for y, _ in data], [u for _, u in data])
    smoothed = [model._smooth(y, u) for y, u in data]
    means = np.concatenate([m[1:] for m, _ in smoothed])
    covs = np.concatenate([c[1:] for _, c in smoothed])
    m0 = means.mean(axis=0)
    P0 = covs.mean(axis=0) + np.cov(means.T, bias=True) + COV_FLOOR * np.eye(2)
    model.set_stationary_prior(data)
    params = model.get_learned_params()
    np.testing.assert_allclose(params["m0"], m0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(params["P0"], P0, rtol=1e-8, atol=1e-12)


def test_the_lgssms_em_keeps_f_stable_without_inputs_too():
    """After each M-step F's outlying eigenvalues are scaled back to ``max_spectral_radius``, on a series without
    inputs too: there the projected F was dropped (only the input matrix G was refitted to it), and EM returned an
    explosive F (spectral radius 1.015 on this growing series)."""
    rng = np.random.default_rng(0)
    y = np.zeros((200, 1))
    for t in range(1, 200):
        y[t] = 1.02 * y[t - 1] + 0.1 * rng.normal()
    for dim_x in (1, 2):
        F = LGSSM(dim_x=dim_x, dim_y=1, dim_u=0, num_iters=5).fit(y).get_learned_params()["F"]
        assert np.max(np.abs(np.linalg.eigvals(F))) == pytest.approx(0.999, rel=1e-12)
