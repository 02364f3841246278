"""Channel names kept by every model (fit's y_names/u_names, the model file) and checked where data come with names
(evaluate on a Dataset, forecast's y_names/u_names, the online filter's update by name); unknown keywords of fit,
forecast and evaluate are ValueErrors."""
import warnings

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.io import load, save
from gpssm_np.protocols import evaluate


def plant(rng, T=300):
    u = rng.normal(size=(T, 2))
    y = np.zeros((T, 2))
    for t in range(1, T):
        y[t] = [0.8 * y[t - 1, 0] + 0.5 * u[t, 0], 0.5 * y[t - 1, 1] - 0.7 * u[t, 1] + 0.2 * y[t - 1, 0]]
    y += 0.05 * rng.normal(size=y.shape)
    return y * [10.0, 1.0] + [14.0, 20.0], u


@pytest.fixture
def named(rng):
    y, u = plant(rng)
    ds = gp.datasets.from_arrays(y, u, name="plant")
    ds = type(ds)(**{**ds.__dict__, "y_names": ("level", "temp"), "u_names": ("pump", "heater")})
    model = gp.ARX(na=1, nb=1, dim_y=2, dim_u=2).fit(ds.y_train, ds.u_train, y_names=ds.y_names,
                                                     u_names=ds.u_names)
    return model, ds


def swapped(ds):
    return type(ds)(**{**ds.__dict__, **{k: np.ascontiguousarray(getattr(ds, k)[:, ::-1]) for k in (
        "y_train", "y_test", "u_train", "u_test", "y_raw", "u_raw")}, **{k: getattr(ds, k)[::-1] for k in (
            "y_mean", "y_std", "u_mean", "u_std", "y_names", "u_names")}})


@pytest.mark.parametrize("make", [lambda: gp.ARX(na=1, nb=1, dim_y=2, dim_u=2),
                                  lambda: gp.LGSSM(dim_x=2, dim_y=2, dim_u=2, num_iters=2),
                                  lambda: gp.ODGPSSM(dim_x=2, dim_y=2, dim_u=2, num_inducing=4),
                                  lambda: gp.PRSSM(dim_x=2, dim_y=2, dim_u=2, num_inducing=4),
                                  lambda: gp.DSSM(dim_x=2, dim_y=2, dim_u=2)])
def test_every_model_keeps_its_names_through_the_model_file(tmp_path, rng, make):
    y, u = plant(rng, T=120)
    model = make()
    options = {} if isinstance(model, (gp.ARX, gp.LGSSM)) else {"epochs": 1, "plan": {"seq_len": 20, "num_samples": 2}}
    model.fit(y, u, y_names=["level", "temp"], u_names=("pump", "heater"), **options)
    assert model.y_names_ == ("level", "temp") and model.u_names_ == ("pump", "heater")
    loaded = load(save(model, tmp_path / "m.npz"))
    assert loaded.y_names_ == ("level", "temp") and loaded.u_names_ == ("pump", "heater")
    with pytest.raises(ValueError, match="y_names: expected 2 names"):
        make().fit(y, u, y_names=["level"], **options)


def test_a_file_without_names_loads_without_them(tmp_path, rng):
    y, u = plant(rng, T=120)
    model = gp.ARX(na=1, nb=1, dim_y=2, dim_u=2).fit(y, u)
    assert model.y_names_ is None and "y_names" not in model.extra_state()
    assert load(save(model, tmp_path / "m.npz")).y_names_ is None


def test_evaluate_reorders_a_dataset_by_name(named):
    model, ds = named
    reference = evaluate(model, ds, "causal", num_samples=5)
    reordered = evaluate(model, swapped(ds), "causal", num_samples=5)
    assert reordered["rmse_per_output"] == pytest.approx(reference["rmse_per_output"], rel=1e-9)
    assert reordered["y_names"] == ["level", "temp"]  # the order of the per-output lists: the model's, not the data's
    unnamed = gp.ARX(na=1, nb=1, dim_y=2, dim_u=2).fit(ds.y_train, ds.u_train)
    as_given = evaluate(unnamed, swapped(ds), "causal", num_samples=5)
    assert as_given["rmse"] != pytest.approx(reference["rmse"]) and as_given["y_names"] == ["temp", "level"]


def test_evaluate_names_the_mismatch(named):
    model, ds = named
    other = type(ds)(**{**ds.__dict__, "y_names": ("level", "pressure")})
    with pytest.raises(ValueError, match=r"dataset.y_names: .*missing \['temp'\]; unknown \['pressure'\]"):
        evaluate(model, other, "causal", num_samples=5)


def test_forecast_reorders_by_name(named):
    model, ds = named
    y_past, u_past, u_future = ds.y_raw[:150], ds.u_raw[:150], ds.u_raw[150:170]
    fc = model.forecast(u_future, y_past=y_past, u_past=u_past, num_samples=5)
    swapped_fc = model.forecast(u_future[:, ::-1], y_past=y_past[:, ::-1], u_past=u_past[:, ::-1], num_samples=5,
                                y_names=["temp", "level"], u_names=["heater", "pump"])
    np.testing.assert_allclose(swapped_fc.mean, fc.mean[:, ::-1], rtol=1e-12)
    np.testing.assert_allclose(swapped_fc.std, fc.std[:, ::-1], rtol=1e-12)
    with pytest.raises(ValueError, match="u_names: the model was fitted on the inputs"):
        model.forecast(u_future, y_past=y_past, u_past=u_past, u_names=["pump", "fan"])


@pytest.mark.parametrize("argument, value, message", [
    ("y_past", [[1.0, 2.0], [3.0]], "y_past: expected an array of shape"),
    ("y_past", np.zeros((20, 1)), r"y_past: expected 2 columns, one per name given, got shape \(20, 1\)"),
    ("y_past", 5.0, r"y_past: expected 2 columns, one per name given, got shape \(\)"),
    ("u_past", np.zeros((20, 3)), r"u_past: expected 2 columns, one per name given, got shape \(20, 3\)"),
    ("u_future", [[1.0], [2.0, 3.0]], "u_future: expected an array of shape")])
def test_forecast_names_the_argument_whose_columns_cannot_be_reordered(named, argument, value, message):
    model, ds = named
    data = {"u_future": ds.u_raw[20:25], "y_past": ds.y_raw[:20], "u_past": ds.u_raw[:20], argument: value}
    with pytest.raises(ValueError, match=message):
        model.forecast(**data, y_names=["temp", "level"], u_names=["heater", "pump"])


def test_online_filter_reads_values_by_name(rng):
    y, u = plant(rng, T=120)
    model = gp.LGSSM(dim_x=2, dim_y=2, dim_u=2, num_iters=2).fit(y, u, y_names=["level", "temp"],
                                                                 u_names=["pump", "heater"])
    by_position, by_name = model.online_filter(), model.online_filter()
    for t in range(5):
        a = by_position.update(y[t], u[t])
        b = by_name.update({"temp": y[t, 1], "level": y[t, 0]}, {"heater": u[t, 1], "pump": u[t, 0]})
        np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="y_t: .*missing \\['temp'\\]"):
        by_name.update({"level": 1.0, "pressure": 2.0}, u[0])
    unnamed = gp.LGSSM(dim_x=2, dim_y=2, dim_u=2, num_iters=2).fit(y, u)
    with pytest.raises(ValueError, match="fitted without outputs names"):
        unnamed.online_filter().update({"level": 1.0, "temp": 2.0}, u[0])


@pytest.mark.parametrize("make", [lambda: gp.ARX(), lambda: gp.LGSSM(dim_x=1, num_iters=1),
                                  lambda: gp.ODGPSSM(dim_x=1, num_inducing=4), lambda: gp.DSSM(dim_x=1)])
def test_unknown_keywords_of_fit_are_value_errors(rng, make):
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    model = make()
    valid = r"data_name" if isinstance(model, (gp.ARX, gp.LGSSM)) else r"epochs"  # the valid ones are named
    with pytest.raises(ValueError, match=r"maxsteps: unknown keyword argument.*" + valid):
        model.fit(y, u, maxsteps=5)


def test_unknown_keywords_of_forecast_and_evaluate_are_value_errors(named):
    model, ds = named
    with pytest.raises(ValueError, match=r"num_sample: unknown keyword argument of ARX.forecast; expected one of "
                                         r"u_future, .*num_samples"):
        model.forecast(ds.u_raw[:5], num_sample=5)
    with pytest.raises(ValueError, match=r"burn_in: unknown keyword argument of evaluate\(protocol='freerun'\); "
                                         r"expected one of num_particles"):
        evaluate(model, ds, "freerun", burn_in=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(model, ds, "causal", num_samples=2, burn_in=10, window=50)


def test_rmse_original_units_is_not_averaged_across_outputs(named):
    model, ds = named
    res = evaluate(model, ds, "causal", num_samples=5)
    assert res["rmse_original_units"] is None and len(res["rmse_original_units_per_output"]) == 2
    res = evaluate(model, ds, "envi")
    assert res["rmse_original_units"] is None and len(res["rmse_original_units_per_output"]) == 2
