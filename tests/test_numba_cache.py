"""Numba's disk cache of the kernels: a change to any file of gpssm_np/ops invalidates every cached kernel (those of
enkf.py and dmm.py inline rollout.py's steps), wherever the cache lives, NUMBA_CACHE_DIR included."""
import os
import shutil
import subprocess
import sys

import numba
import pytest

from gpssm_np.ops import _compile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_cache_folder_is_where_numba_writes_under_numba_cache_dir(tmp_path):
    code = ("import numpy as np\nfrom gpssm_np.ops import _compile, linalg\n"
            "linalg.cholesky_into(np.eye(2), np.zeros((2, 2)))\nprint(_compile.cache_dirs()[0])")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), GPSSM_NP_NUMBA_CACHE="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    folder = proc.stdout.strip().splitlines()[-1]
    assert folder.startswith(str(tmp_path))
    assert any(name.endswith(".nbi") for name in os.listdir(folder))  # numba wrote its index there
    assert os.path.exists(os.path.join(folder, "gpssm_np_ops.stamp"))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    folder = _compile.cache_dirs()[0]
    assert folder.startswith(str(tmp_path))
    return folder


def kernels(folder):
    os.makedirs(folder, exist_ok=True)
    for name in ("rollout._fwd_blocks-120.py311.nbi", "enkf.enkf_step-40.py311.1.nbc"):
        with open(os.path.join(folder, name), "w") as fh:
            fh.write("compiled")
    return sorted(n for n in os.listdir(folder) if n.endswith((".nbi", ".nbc")))


def test_kernels_compiled_from_other_sources_are_dropped_under_numba_cache_dir(cache_dir):
    kernels(cache_dir)
    with open(os.path.join(cache_dir, "gpssm_np_ops.stamp"), "w") as fh:
        fh.write("the hash of the sources before rollout.py changed")
    _compile._drop_stale_cache()
    assert not [n for n in os.listdir(cache_dir) if n.endswith((".nbi", ".nbc"))]
    with open(os.path.join(cache_dir, "gpssm_np_ops.stamp")) as fh:
        assert fh.read() == _compile._source_stamp(os.path.dirname(_compile.__file__))
    present = kernels(cache_dir)  # compiled from the current sources: kept
    _compile._drop_stale_cache()
    assert sorted(n for n in os.listdir(cache_dir) if n.endswith((".nbi", ".nbc"))) == present
    assert _compile.kernels_on_disk() == _compile.NUMBA_CACHE


def test_a_change_to_any_ops_file_changes_the_stamp(tmp_path):
    folder = tmp_path / "ops"
    shutil.copytree(os.path.dirname(_compile.__file__), folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = _compile._source_stamp(str(folder))
    for name in ("rollout.py", "_fastmath.py", "linalg.py"):
        text = (folder / name).read_text()
        (folder / name).write_text(text + "\n# changed\n")
        assert _compile._source_stamp(str(folder)) != before, name
        (folder / name).write_text(text)
    assert _compile._source_stamp(str(folder)) == before
    (folder / "new_helper.py").write_text("x = 1\n")
    assert _compile._source_stamp(str(folder)) != before
