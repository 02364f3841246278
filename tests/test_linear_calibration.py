"""The linear models' forecast intervals calibrated on their own rolling-origin folds (``baselines/_base.py``,
"Calibration"): the factors are those of the folds' forecasts, they widen only, they scale the std and not the mean,
they survive a model file, and the GP models' floor fits skip them."""
import numpy as np
import pytest
from scipy.special import ndtri

import gpssm_np as gp
from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.io import load, save
from gpssm_np.models.floor import choose_floor


def heavy_tailed_arx(T=500, seed=0):
    """y_t = 0.8 y_{t-1} + 0.5 u_t + e_t with Student-t (2.5 degrees of freedom) noise: a Gaussian model's
    intervals fitted to it are too narrow in the tails."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(T, 1))
    e = 0.2 * rng.standard_t(2.5, size=T)
    y = np.zeros((T, 1))
    for t in range(1, T):
        y[t] = 0.8 * y[t - 1] + 0.5 * u[t] + e[t]
    return y, u


def fold_z(model_of, y, u):
    """|y - mean| / std of every window of the default folds of (y, u) (model units: the data are given
    standardised), each fold's model ``model_of()`` fitted to the fold's past; the seeds the windows' indices."""
    z, index = [], 0
    for fold in rolling_origin([y], [u]):
        model = model_of().fit(fold.ys, fold.us)
        for w in fold.windows:
            fc = model.forecast(w.u, y_past=w.y_past, u_past=w.u_past, num_samples=50, seed=index)
            z.append(np.abs(w.y - fc.mean) / fc.std)
            index += 1
    return np.concatenate(z)


@pytest.mark.parametrize("kind", ["arx", "lgssm"])
def test_the_factors_are_those_that_make_the_fold_forecasts_cover_95_percent(kind):
    y, u = heavy_tailed_arx()
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    if kind == "arx":
        model = gp.ARX(dim_y=1, dim_u=1, standardize=False).fit(y, u)
        same = dict(na=model.na_, nb=model.nb_, dim_y=1, dim_u=1, standardize=False, calibrate=False)
        z = fold_z(lambda: gp.ARX(**same), y, u)
    else:
        model = gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1, standardize=False).fit(y, u)
        same = dict(dim_x=model.spec.dim_x, dim_y=1, dim_u=1, standardize=False, calibrate=False)
        z = fold_z(lambda: gp.LGSSM(**same), y, u)
    assert model.interval_scale_.shape == (1,) and model.interval_scale_[0] > 1.05  # too narrow: widened
    assert np.mean(z / ndtri(0.975) <= 1.0) < 0.95  # the folds' own intervals covered less than 95 %
    np.testing.assert_allclose(model.interval_scale_, np.quantile(z, 0.95, axis=0) / ndtri(0.975), rtol=1e-12)


@pytest.mark.parametrize("kind", ["arx", "lgssm"])
def test_the_calibration_scales_the_std_not_the_mean_and_survives_a_model_file(kind, tmp_path):
    y, u = heavy_tailed_arx(seed=1)
    y, u = 3.0 + 2.0 * y, u - 1.0  # original units other than the model's
    build = (lambda c: gp.ARX(dim_y=1, dim_u=1, calibrate=c)) if kind == "arx" else \
        (lambda c: gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1, calibrate=c))
    plain, model = build(False).fit(y, u), build(True).fit(y, u)
    assert plain.interval_scale_ is None and model.interval_scale_ is not None
    a = plain.forecast(u[:40], y_past=y[:100], u_past=u[:100], seed=3)
    b = model.forecast(u[:40], y_past=y[:100], u_past=u[:100], seed=3)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_allclose(b.std, a.std * model.interval_scale_, rtol=1e-12)
    save(model, tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.interval_scale_, model.interval_scale_)
    assert loaded.get_config()["calibrate"] is True
    np.testing.assert_array_equal(loaded.forecast(u[:40], y_past=y[:100], u_past=u[:100], seed=3).std, b.std)
    for bad in ([0.5], [np.nan], [1.0, 2.0]):  # a file's factors: one per output, finite, at least 1
        with pytest.raises(ValueError, match="interval_scale"):
            build(True).set_extra_state({"interval_scale": np.array(bad)})


def test_intervals_that_were_wide_enough_are_left_as_they_are():
    # Gaussian noise, the right model: the fold forecasts' intervals are not too narrow by much; the factor is at
    # least 1 and no more than the sampling spread of a 95 % quantile allows
    rng = np.random.default_rng(4)
    u = rng.normal(size=(600, 1))
    y = np.zeros((600, 1))
    for t in range(1, 600):
        y[t] = 0.8 * y[t - 1] + 0.5 * u[t] + 0.2 * rng.normal()
    model = gp.ARX(dim_y=1, dim_u=1).fit(y, u)
    assert 1.0 <= model.interval_scale_[0] < 1.2


def test_a_series_without_folds_keeps_the_model_intervals_and_bad_values_are_named():
    y, u = heavy_tailed_arx(T=30)  # shorter than the folds' shortest sequence
    assert gp.ARX(na=1, nb=1, dim_y=1, dim_u=1).fit(y, u).interval_scale_ is None
    for cls in (gp.ARX, gp.LGSSM):
        with pytest.raises(ValueError, match="calibrate"):
            cls(dim_y=1, dim_u=1, calibrate="yes")


def test_the_floor_fits_of_the_gp_models_are_not_calibrated():
    y, u = heavy_tailed_arx(seed=2)
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    floor = choose_floor([y], [u])
    assert floor.model.interval_scale_ is None and floor.model.calibrate is False
    assert floor.refit([y], [u]).interval_scale_ is None
