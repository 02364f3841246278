"""The ARX with missing (NaN) outputs among its lags: forecasts from such a past and its online filter read them
as missing, completing them by the lag vector's Gaussian given the lags seen (``baselines/arx.py``)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.baselines.arx import lag_posterior, lag_rows, lag_vector


def ar2_data(T=600, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(T, 1))
    y = np.zeros((T, 1))
    for t in range(2, T):
        y[t] = 1.2 * y[t - 1] - 0.5 * y[t - 2] + 0.8 * u[t] + 0.4 * u[t - 1] + 0.1 * rng.normal()
    return y, u


def test_the_lag_posterior_is_the_gaussian_conditional():
    mean, cov = lag_posterior(np.array([np.nan, 2.0]), np.zeros(2), np.array([[1.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(mean, [1.0, 2.0])
    np.testing.assert_allclose(cov, [[0.75, 0.0], [0.0, 0.0]])


def test_a_forecast_reads_a_missing_output_among_the_lags_as_missing():
    y, u = ar2_data()
    model = gp.ARX(na=2, nb=2, dim_y=1, dim_u=1, standardize=False, calibrate=False).fit(y[:400], u[:400])
    y_past, u_past, u_future = y[400:450].copy(), u[400:450], u[450:470]
    y_past[-2] = np.nan  # y_{t-2} of the first forecast step
    fc = model.forecast(u_future, y_past=y_past, u_past=u_past, num_samples=2000, seed=1)
    mean, cov = lag_posterior(lag_vector(y_past[-2:], u_past[-1:]), model.lag_mean_, model.lag_cov_)
    filled = y_past.copy()
    filled[-2] = mean[1]  # the conditional mean of the missing lag (z = [y_{t-1}, y_{t-2}, u_{t-1}])
    exact = model.forecast(u_future, y_past=filled, u_past=u_past, num_samples=10, seed=1)
    np.testing.assert_allclose(fc.mean, exact.mean, rtol=1e-12, atol=1e-12)
    assert cov[1, 1] > 0 and fc.std[0, 0] > 1.2 * exact.std[0, 0]  # the missing lag's spread enters the forecast
    # a NaN before the lags is not read
    older = y[400:450].copy()
    older[10] = np.nan
    np.testing.assert_array_equal(model.forecast(u_future, y_past=older, u_past=u_past, seed=1).mean,
                                  model.forecast(u_future, y_past=y[400:450], u_past=u_past, seed=1).mean)


def test_the_online_filter_carries_a_missing_output_until_it_leaves_the_lags(tmp_path):
    y, u = ar2_data(seed=1)
    model = gp.ARX(na=2, nb=2, dim_y=1, dim_u=1, calibrate=False).fit(y[:400], u[:400])
    f = model.online_filter()
    for t in range(400, 420):
        f.update(y[t], u[t])
    noise_var = model.noise_var_[0] * model.scaling_.y_std[0] ** 2  # original units
    assert f.predicted_var[0] == pytest.approx(noise_var, rel=1e-12)
    f.update(np.array([np.nan]), u[420])
    state = f.state()
    assert np.isnan(state["y_window"][-1, 0])
    mean, var = f.update(y[421], u[421])  # y_{420} missing among the two lags
    assert var[0] > 0 and f.predicted_var[0] > noise_var
    z = lag_vector(state["y_window"], state["u_window"])
    _, cov = lag_posterior(z, model.lag_mean_, model.lag_cov_)
    rows = lag_rows(model.theta_, 2, 2, 1)
    assert f.predicted_var[0] - noise_var == pytest.approx(float(rows[:, 0] @ cov @ rows[:, 0])
                                                           * model.scaling_.y_std[0] ** 2, rel=1e-10)
    # the filtered noise-free output is that Gaussian conditioned on y_t (observed with noise variance sigma^2)
    lag_var = f.predicted_var[0] - noise_var
    expected_var = lag_var - lag_var**2 / (lag_var + noise_var)
    expected_mean = f.predicted_mean[0] + lag_var / (lag_var + noise_var) * (y[421, 0] - f.predicted_mean[0])
    assert var[0] == pytest.approx(expected_var, rel=1e-10) and mean[0] == pytest.approx(expected_mean, rel=1e-10)
    resumed = model.online_filter(state=state)  # a state with a missing output resumes
    moved = resumed.update(y[421] + 1.0, u[421])
    assert moved[0][0] - mean[0] == pytest.approx(lag_var / (lag_var + noise_var), rel=1e-9)  # moves with y_t
    assert moved[1][0] == pytest.approx(var[0], rel=1e-12)
    f.update(y[422], u[422])
    f.update(y[423], u[423])  # the missing output has left the lags
    assert f.predicted_var[0] == pytest.approx(noise_var, rel=1e-12)
    assert np.all(np.isfinite(f.predict(u[424:430]).mean))


def test_an_arx_without_inputs_resumes_its_online_filter():
    y, _ = ar2_data(T=300, seed=2)
    model = gp.ARX(na=2, nb=0, dim_y=1, dim_u=0, calibrate=False).fit(y, np.zeros((300, 0)))
    f = model.online_filter()
    f.update(y[0])
    f.update(np.array([np.nan]))
    g = model.online_filter(state=f.state())
    np.testing.assert_array_equal(g.update(y[2]), f.update(y[2]))
