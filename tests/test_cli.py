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


def test_forecast_beyond_the_test_half_is_an_error(tmp_path, capsys):
    import gpssm_np as gp

    model = gp.save(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4), tmp_path / "m.npz")
    args = ["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA, "--out", str(tmp_path / "fc")]
    assert main(args + ["--start", "140", "--steps", "20"]) == 2  # the test half has 148 steps
    err = capsys.readouterr().err
    assert "--steps: the test half of gas_furnace has 8 steps from --start 140 on" in err and "got --steps 20" in err
    assert main(args + ["--steps", "0"]) == 2 and "--steps" in capsys.readouterr().err
    assert not (tmp_path / "fc").exists()


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_closed_pipe_ends_the_command_quietly(unbuffered):
    """`gpssm-np info | head` when head has gone: no BrokenPipeError traceback, whether the error comes from a
    print (unbuffered output) or from the flush at the end (buffered)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "gpssm_np", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(env, **({"PYTHONUNBUFFERED": "1"} if unbuffered else {})))
    proc.stdout.close()  # the reader goes away before the command writes
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and b"BrokenPipeError" not in err and b"Traceback" not in err, err.decode()
