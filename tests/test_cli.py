"""The gpssm-np command, run in-process through cli.main."""
import json
import os
import subprocess
import sys

import pytest

from gpssm_np.cli import main

DATA = os.environ.get("GPSSM_NP_DATA") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "numba" in out and "gpssm_np" in out


def test_demo_quick_writes_png_and_json(tmp_path):
    assert main(["demo", "--quick", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "car_tracking.json").read_text())
    assert set(summary["rmse"]) == {"odgpssm", "prssm"}
    assert set(summary["rmse"]["odgpssm"]) == {"p1", "p2", "v1", "v2"}
    assert (tmp_path / "car_tracking.png").stat().st_size > 10_000


def test_fit_evaluate_forecast(tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA, "--epochs", "1", "--num-samples", "5",
                 "--out", str(model)]) == 0
    assert model.exists()
    out = tmp_path / "eval.json"
    assert main(["evaluate", str(model), "--dataset", "gas_furnace", "--data-dir", DATA, "--num-samples", "5",
                 "--out", str(out)]) == 0
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"paper", "causal", "freerun"}
    assert main(["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA, "--steps", "20",
                 "--num-samples", "5", "--out", str(tmp_path / "fc")]) == 0
    fc = json.loads((tmp_path / "fc" / "forecast.json").read_text())
    assert len(fc["mean"]) == 20 and (tmp_path / "fc" / "forecast.png").exists()


def test_errors_are_reported_not_raised(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "missing.npz"), "--dataset", "actuator", "--data-dir", DATA]) == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fit", "--dataset", "actuator", "--model", "lstm"])


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "gpssm_np", "info"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "numpy" in proc.stdout
