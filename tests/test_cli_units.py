"""The command line in the file's units: the model keeps the CSV file's scaling, forecasts and scores come in the
file's units beside the standardised scale; channel names are kept and checked; a CSV without rows, another train
fraction and the help text."""
import json

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.cli import main, make_parser


@pytest.fixture(scope="module")
def plant_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    T = 400
    u = rng.normal(size=(T, 2))
    y = np.zeros((T, 2))
    for t in range(1, T):
        y[t] = [0.8 * y[t - 1, 0] + 0.5 * u[t, 0], 0.5 * y[t - 1, 1] - 0.7 * u[t, 1] + 0.2 * y[t - 1, 0]]
    y += 0.05 * rng.normal(size=y.shape)
    table = np.hstack([y * [2.0, 5.0] + [14.0, 60.0], u * [1.0, 3.0] + [5.0, 2.0]])
    path = tmp_path_factory.mktemp("csv") / "plant.csv"
    np.savetxt(path, table, delimiter=",", header="level_cm,temp_C,pump_V,heater_kW", comments="")
    return str(path)


CSV = ["--outputs", "level_cm", "temp_C", "--inputs", "pump_V", "heater_kW"]
SWAPPED = ["--outputs", "temp_C", "level_cm", "--inputs", "heater_kW", "pump_V"]


@pytest.fixture(scope="module")
def fitted(plant_csv, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "arx.npz"
    assert main(["fit", "--csv", plant_csv, *CSV, "--model", "arx", "--out", str(path)]) == 0
    return str(path)


def test_fit_keeps_the_files_units_and_names(fitted, plant_csv):
    model = gp.load(fitted)
    ds = gp.datasets.from_csv(plant_csv, outputs=["level_cm", "temp_C"], inputs=["pump_V", "heater_kW"])
    np.testing.assert_allclose(model.scaling_.y_mean, ds.y_mean, rtol=1e-9)
    np.testing.assert_allclose(model.scaling_.y_std, ds.y_std, rtol=1e-9)
    assert model.y_names_ == ("level_cm", "temp_C") and model.u_names_ == ("pump_V", "heater_kW")
    assert model.train_fraction_ == 0.5
    # given raw data from Python, it forecasts in the file's units
    fc = model.forecast(ds.u_raw[200:220], y_past=ds.y_raw[100:200], u_past=ds.u_raw[100:200])
    assert abs(np.mean(fc.mean[:, 0]) - 14.0) < 3.0 and abs(np.mean(fc.mean[:, 1]) - 60.0) < 8.0


def test_forecast_json_and_plot_are_in_the_files_units(fitted, plant_csv, tmp_path, monkeypatch):
    labels = []
    import gpssm_np.plotting as plotting

    original = plotting.plot_forecast_figure
    monkeypatch.setattr(plotting, "plot_forecast_figure",
                        lambda *a, **k: labels.append(k["y_label"]) or original(*a, **k))
    assert main(["forecast", fitted, "--csv", plant_csv, *CSV, "--steps", "30", "--num-samples", "5",
                 "--out", str(tmp_path)]) == 0
    fc = json.loads((tmp_path / "forecast.json").read_text())
    mean, truth = np.array(fc["mean"]), np.array(fc["truth"])
    assert fc["outputs"] == ["level_cm", "temp_C"]
    assert abs(truth[:, 0].mean() - 14.0) < 4.0 and abs(mean[:, 0].mean() - 14.0) < 4.0
    ds = gp.datasets.from_csv(plant_csv, outputs=["level_cm", "temp_C"], inputs=["pump_V", "heater_kW"])
    np.testing.assert_allclose(np.array(fc["standardised"]["mean"]), (mean - ds.y_mean) / ds.y_std, rtol=1e-9)
    np.testing.assert_allclose(np.array(fc["standardised"]["std"]), np.array(fc["std"]) / ds.y_std, rtol=1e-9)
    assert labels == ["level_cm", "temp_C"]  # a panel per output


def test_evaluate_prints_both_scales_causal_first_and_reorders_by_name(fitted, plant_csv, tmp_path, capsys):
    out = tmp_path / "e.json"
    assert main(["evaluate", fitted, "--csv", plant_csv, *CSV, "--num-samples", "5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed[:3]] == ["causal", "simulate", "freerun"]
    assert "standardised; in the file's units: level_cm " in printed[0] and " temp_C " in printed[0]
    results = json.loads(out.read_text())["results"]
    swapped = tmp_path / "s.json"
    assert main(["evaluate", fitted, "--csv", plant_csv, *SWAPPED, "--protocol", "causal", "--num-samples", "5",
                 "--out", str(swapped)]) == 0
    assert json.loads(swapped.read_text())["results"]["causal"]["rmse"] == pytest.approx(results["causal"]["rmse"],
                                                                                         rel=1e-9)
    ds = gp.datasets.from_csv(plant_csv, outputs=["level_cm", "temp_C"], inputs=["pump_V", "heater_kW"])
    causal = results["causal"]
    np.testing.assert_allclose(causal["rmse_original_units_per_output"],
                               np.array(causal["rmse_per_output"]) * ds.y_std, rtol=1e-9)


def test_other_names_are_an_error_and_another_train_fraction_a_warning(fitted, plant_csv, capsys):
    other = ["--outputs", "level_cm", "pump_V", "--inputs", "temp_C", "heater_kW"]
    assert main(["evaluate", fitted, "--csv", plant_csv, *other, "--protocol", "causal"]) == 2
    assert "the model was fitted on the outputs ['level_cm', 'temp_C']" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="--train-fraction: the model was fitted on the first 0.5") as caught:
        assert main(["evaluate", fitted, "--csv", plant_csv, *CSV, "--train-fraction", "0.7", "--protocol",
                     "causal", "--num-samples", "3"]) == 0
    assert [w.filename for w in caught] == [__file__]  # the line that called main: every frame below is the package's


def test_a_csv_without_rows_is_a_clean_error(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("level,inflow\n")
    assert main(["fit", "--csv", str(path), "--outputs", "level", "--inputs", "inflow", "--model", "arx"]) == 2
    err = capsys.readouterr().err
    assert f"{path} has a header and no data rows; expected at least 4 rows" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="empty.csv has a header and no data rows"):
        gp.datasets.from_csv(path, outputs="level", inputs="inflow")


def test_help_has_no_restructuredtext_markup():
    text = make_parser().format_help()
    assert "``" not in text and "gpssm-np" in text


def test_the_command_line_gives_a_model_the_data_in_the_units_evaluate_does(fitted, plant_csv, tmp_path):
    """One rule (``protocols.fitted_on_raw_series``) says which units a model is given a data set in: a model fitted
    in Python on part of the standardised arrays (its statistics are not the identity) is scored by the command
    line as by ``gp.evaluate``, and so is the command line's own fit on the file's units."""
    ds = gp.datasets.from_csv(plant_csv, outputs=["level_cm", "temp_C"], inputs=["pump_V", "heater_kW"])
    part = gp.ARX(dim_y=2, dim_u=2).fit(ds.y_train[:150], ds.u_train[:150])
    assert np.all(part.scaling_.y_std != 1.0)
    path = str(tmp_path / "part.npz")
    gp.save(part, path)
    for model_file in (path, fitted):
        out = tmp_path / "e.json"
        assert main(["evaluate", model_file, "--csv", plant_csv, *CSV, "--protocol", "causal", "--out",
                     str(out)]) == 0
        expected = gp.evaluate(gp.load(model_file), ds, "causal")["rmse"]
        assert json.loads(out.read_text())["results"]["causal"]["rmse"] == pytest.approx(expected, rel=1e-9)
