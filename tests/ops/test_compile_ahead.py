"""ops/compile_ahead.py: a child process compiles the training objective's kernels into Numba's on-disk cache while
the default fit compiles the rest, and the fit loads them from there; nothing starts when they are on disk already
or the cache is off, and the default fit waits for the child before its first training step."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpssm_np as gp
from gpssm_np.datasets import cascaded_tanks
from gpssm_np.ops import compile_ahead
from gpssm_np.training_loop import AdamRun

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_child_fills_the_cache_and_this_process_then_loads_instead_of_compiling(tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        from gpssm_np.ops import compile_ahead, enkf, kernels_on_disk
        assert not kernels_on_disk("enkf._vjp_blocks")
        ahead = compile_ahead.start("enkf")
        assert ahead.process is not None
        assert ahead.wait()
        assert ahead.process is None and not ahead.wait()  # a second wait returns at once
        assert kernels_on_disk("enkf._vjp_blocks")
        compile_ahead.forward_and_back(enkf.enkf_loglik, enkf.enkf_example(np.random.default_rng(1)),
                                       compile_ahead.ENKF_ARGNUMS)
        for kernel in (enkf._fwd_blocks, enkf._vjp_blocks):
            stats = kernel.stats
            assert sum(stats.cache_hits.values()) == 1 and not stats.cache_misses, stats
        print("loaded")
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), GPSSM_NP_NUMBA_CACHE="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["loaded"]


@pytest.mark.parametrize("on_disk, cache, executable, frozen", [(True, True, sys.executable, False),
                                                                 (False, False, sys.executable, False),
                                                                 (False, True, "", False),
                                                                 (False, True, sys.executable, True)])
def test_nothing_starts_when_the_kernels_are_on_disk_the_cache_is_off_or_there_is_no_interpreter(
        monkeypatch, on_disk, cache, executable, frozen):
    monkeypatch.setattr(compile_ahead, "kernels_on_disk", lambda kernel: on_disk)
    monkeypatch.setattr(compile_ahead, "NUMBA_CACHE", cache)
    monkeypatch.setattr(compile_ahead.sys, "executable", executable)
    monkeypatch.setattr(compile_ahead.sys, "frozen", frozen, raising=False)
    monkeypatch.setattr(compile_ahead.subprocess, "Popen", lambda *a, **k: pytest.fail("a child was started"))
    ahead = compile_ahead.start("enkf")
    assert ahead.process is None and not ahead.wait()


def test_an_unknown_group_is_a_value_error():
    with pytest.raises(ValueError, match="name: expected one of"):
        compile_ahead.start("rollout")
    with pytest.raises(ValueError, match="name: expected one of"):
        compile_ahead.compile_group("rollout")


def test_the_default_fit_waits_for_the_child_before_its_first_training_step(monkeypatch):
    events = []

    class Recorder(compile_ahead.Ahead):
        def wait(self, timeout=compile_ahead.WAIT_SECONDS):
            events.append("wait")
            return False

    advance = AdamRun.advance

    def recorded(self, steps):
        events.append("advance")
        return advance(self, steps)

    monkeypatch.setattr(compile_ahead, "start", lambda name: events.append(f"start {name}") or Recorder())
    monkeypatch.setattr(AdamRun, "advance", recorded)
    y, u, _ = cascaded_tanks(200, seed=4)
    gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, plan=dict(max_steps=2, eval_every=2, num_samples=4, batch_size=4),
                                      progress=False)
    assert events[:2] == ["start enkf", "wait"] and "advance" in events


def test_the_childs_path_gets_the_package_folder_unless_it_is_a_site_packages_folder(monkeypatch):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(compile_ahead.__file__))))
    monkeypatch.setattr(compile_ahead.site, "getsitepackages", lambda: ["/nowhere/site-packages"])
    assert compile_ahead._package_root() == root
    monkeypatch.setattr(compile_ahead.site, "getsitepackages", lambda: [root + os.sep])
    assert compile_ahead._package_root() is None  # put first, a site-packages folder would shadow the standard library
