"""Each example runs end to end with --quick."""
import os
import subprocess
import sys

import pytest

from tests.data_dir import DATA_DIR

ROOT = os.path.join(os.path.dirname(__file__), "..")


@pytest.mark.parametrize("script, expected", [("car_tracking.py", "car_tracking_states.png"),
                                              ("actuator.py", "actuator_forecast.png")])
def test_example_quick(script, expected, tmp_path):
    env = dict(os.environ, GPSSM_NP_DATA=DATA_DIR, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / expected).exists()
    assert "RMSE" in proc.stdout or "rmse" in proc.stdout.lower() or "=" in proc.stdout


def test_car_tracking_needs_a_seed(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "car_tracking.py"), "--quick", "--seeds",
                           "0", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "argument --seeds: expected a positive integer, got '0'" in proc.stderr
