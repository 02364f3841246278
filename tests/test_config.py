"""The environment switches of ``gpssm_np._config``: documented values are taken, any other is a ValueError naming
the variable when the package is imported (not a bare int() error, not a silent default)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def imported_with(**env):
    """(returncode, stderr, stdout) of a process that imports gpssm_np with ``env`` set and prints its switches."""
    code = ("from gpssm_np import _config as c\n"
            "print(c.NUMBA_CACHE, c.TAPE_BYTES, c.TAPE_POOL_BYTES, c.NUM_THREADS == c.CPU_COUNT)")
    full = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    proc = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr, proc.stdout.strip()


@pytest.mark.parametrize("env, expected", [
    ({"GPSSM_NP_NUMBA_CACHE": "off", "GPSSM_NP_TAPE_MB": "0", "GPSSM_NP_TAPE_POOL_MB": "64"},
     f"False 0 {64 * 2**20}"),
    ({"GPSSM_NP_NUMBA_CACHE": " Yes ", "GPSSM_NP_TAPE_MB": "", "GPSSM_NP_THREADS": "0"}, f"True {512 * 2**20}"),
])
def test_documented_values_are_taken(env, expected):
    code, err, out = imported_with(**env)
    assert code == 0, err
    assert out.startswith(expected)


@pytest.mark.parametrize("name, value", [("GPSSM_NP_NUMBA_CACHE", "maybe"), ("GPSSM_NP_TAPE_MB", "abc"),
                                         ("GPSSM_NP_TAPE_POOL_MB", "64MB"), ("GPSSM_NP_TAPE_MB", "-5"),
                                         ("GPSSM_NP_THREADS", "1.5")])
def test_other_values_are_value_errors_naming_the_variable(name, value):
    code, err, _ = imported_with(**{name: value})
    assert code != 0 and f"ValueError: {name}: expected" in err
