"""ARX and LGSSM share the GP models' surface: forecasts without past data continue from the end of the training
data, the ARX has an online filter, short reprs show what fit chose, a too short series names its length."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.io import load, save


def series(rng, T=300, dy=1):
    u = rng.normal(size=(T, 1))
    y = np.zeros((T, dy))
    for t in range(2, T):
        y[t] = 1.2 * y[t - 1] - 0.4 * y[t - 2] + 0.6 * u[t] + 0.05 * rng.normal(size=dy)
    return 3.0 * y + 10.0, u


@pytest.mark.parametrize("make", [lambda: gp.ARX(), lambda: gp.LGSSM(dim_x=2, num_iters=5)])
def test_forecast_without_past_continues_from_the_end_of_the_training_data(tmp_path, rng, make):
    y, u = series(rng)
    model = make().fit(y[:200], u[:200])
    fc = model.forecast(u[200:210], num_samples=20)
    explicit = model.forecast(u[200:210], y_past=y[:200], u_past=u[:200], num_samples=20)
    assert fc.origin == "end of the training data"
    np.testing.assert_allclose(fc.mean, explicit.mean, rtol=1e-9, atol=1e-9)
    assert abs(fc.mean[0, 0] - y[200, 0]) < 1.0  # the next step, not the training mean
    loaded = load(save(model, tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.forecast(u[200:210], num_samples=20).mean, fc.mean)


def test_arx_online_filter_predicts_from_its_running_window(rng):
    y, u = series(rng)
    model = gp.ARX().fit(y[:200], u[:200])
    online = model.online_filter()
    for t in range(200, 230):
        expected = model.forecast(u[t:t + 1], y_past=y[:t], u_past=u[:t], num_samples=3).mean[0]
        online.update(y[t], u[t])
        np.testing.assert_allclose(online.predicted_mean, expected, rtol=1e-10)
        np.testing.assert_allclose(online.predicted_var, model.noise_var_ * model.scaling_.y_std**2, rtol=1e-12)
    ahead = online.predict(u[230:240], num_samples=5)
    assert ahead.origin == "online filter"
    ahead = ahead.mean
    np.testing.assert_allclose(ahead, model.forecast(u[230:240], y_past=y[:230], u_past=u[:230],
                                                     num_samples=5).mean, rtol=1e-10)
    resumed = model.online_filter(state=online.state())
    resumed.update(y[230], u[230])
    online.update(y[230], u[230])
    np.testing.assert_array_equal(resumed.predicted_mean, online.predicted_mean)
    with pytest.raises(ValueError, match="x0: the ARX has no latent state"):
        model.online_filter(x0=(np.zeros(1), np.ones(1)))


def test_reprs_are_short_and_show_the_choice(rng):
    y, u = series(rng)
    arx = gp.ARX().fit(y[:200], u[:200])
    assert repr(arx) == f"ARX() [na_={arx.na_}, nb_={arx.nb_}]" and repr(gp.ARX()) == "ARX()"
    lgssm = gp.LGSSM(dim_x="auto", num_iters=3).fit(y[:200], u[:200])
    assert repr(lgssm).endswith(f" [d_x={lgssm.spec.dim_x} chosen from 1-10]")
    assert repr(gp.LGSSM(num_iters=2).fit(y[:200], u[:200])) == "LGSSM(num_iters=2) [d_x=4]"
    ds = gp.datasets.from_arrays(y, u, name="plant")
    assert repr(ds) == "Dataset(name='plant', T_train=150, T_test=150, d_y=1, d_u=1)"
    assert len(repr(gp.datasets.load("actuator"))) < 120


@pytest.mark.parametrize("make, needed", [(lambda: gp.LGSSM(), 23), (lambda: gp.LGSSM(dim_x=2), 21),
                                          (lambda: gp.LGSSM(dim_x="auto"), 31), (lambda: gp.ODGPSSM(), 31)])
def test_a_too_short_series_names_its_length_and_the_minimum(rng, make, needed):
    y, u = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    with pytest.raises(ValueError, match=f"y: the series has 10 steps; .* needs at least {needed} steps") as err:
        make().fit(y, u)
    assert "block_rows" not in str(err.value)


@pytest.mark.parametrize("make", [lambda: gp.ARX(), lambda: gp.LGSSM(dim_x=2, num_iters=5)])
def test_a_gp_training_option_is_refused_by_a_closed_form_fit(rng, make):
    """``epochs``, ``plan`` and the other GP training options would change nothing in a closed-form fit: named in a
    ValueError, not silently ignored; the fit's own keywords still work."""
    y, u = series(rng)
    for option in ({"epochs": 500}, {"plan": {"lr": 0.1}}, {"max_steps": 10}, {"progress": True}):
        with pytest.raises(ValueError, match=f"{next(iter(option))}"):
            make().fit(y, u, **option)
    model = make().fit(y, u, data_name="plant", y_names=["level"])
    assert model.data_name_ == "plant" and model.y_names_ == ("level",)


def test_the_lgssm_fits_at_its_minimum_length(rng):
    for dim_x in (1, 2, 4):
        model = gp.LGSSM(dim_x=dim_x, num_iters=2)
        y, u = rng.normal(size=(model.min_steps(), 1)), rng.normal(size=(model.min_steps(), 1))
        model.fit(y, u)
        assert len(model.history_) == 2 and np.all(np.isfinite(model.history_))
        assert all(np.all(np.isfinite(v)) for v in model.get_learned_params().values())
        with pytest.raises(ValueError, match="needs at least"):
            gp.LGSSM(dim_x=dim_x, num_iters=2).fit(y[1:], u[1:])


def test_missing_past_outputs_are_read_by_both_linear_models(rng):
    """The LGSSM's Kalman filter reads NaN outputs of y_past as missing (its forecast then equals the one from the
    past before them run through the gap by the filter); the ARX, whose lags are past outputs, completes them by their
    Gaussian given the lags seen (tests/test_arx_missing.py), and inf is refused by name for both."""
    y, u = series(rng)
    lgssm = gp.LGSSM(dim_x=2, num_iters=5).fit(y[:200], u[:200])
    gappy = y[150:200].copy()
    gappy[-3:] = np.nan
    fc = lgssm.forecast(u[200:210], y_past=gappy, u_past=u[150:200], num_samples=5)
    state = lgssm.filter(gappy, u[150:200], seed=1)  # seed: the draws of its particles (the moments are exact)
    mean, cov = state.means[-1], state.covs[-1]
    exact = lgssm.forecast(u[200:210], x0=(mean, cov), num_samples=5)
    np.testing.assert_allclose(fc.mean, exact.mean, rtol=1e-10)
    with pytest.raises(ValueError, match="num_particles"):
        lgssm.filter(gappy, u[150:200], num_particles=0)
    arx = gp.ARX().fit(y[:200], u[:200])
    assert np.all(np.isfinite(arx.forecast(u[200:210], y_past=gappy, u_past=u[150:200]).mean))
    gappy[-1] = np.inf
    for model in (lgssm, arx):
        with pytest.raises(ValueError, match="y_past: contains inf"):
            model.forecast(u[200:210], y_past=gappy, u_past=u[150:200])
