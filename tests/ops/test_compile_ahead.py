"""ops/compile_ahead.py: child processes compile the training objective's kernels and the particle filter's fused
step into Numba's on-disk cache while the default fit compiles the rest, and the fit loads them from there; nothing
starts when they are on disk already or the cache is off, and the default fit waits for each child before the
kernels it compiles are first used."""
import gc
import os
import subprocess
import sys
import textwrap

import pytest

import gpssm_np as gp
from gpssm_np.datasets import cascaded_tanks
from gpssm_np.ops import compile_ahead
from gpssm_np.models.training import ValidationScore
from gpssm_np.training_loop import AdamRun

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("group, kernels", [
    ("enkf", ("enkf._fwd_blocks", "enkf._vjp_blocks")),
    ("filter", ("adapted_step._propagate_kernel", "adapted_step._draw_kernel"))])
def test_the_child_fills_the_cache_and_this_process_then_loads_instead_of_compiling(tmp_path, group, kernels):
    code = textwrap.dedent(f"""
        from gpssm_np.ops import adapted_step, compile_ahead, enkf, kernels_on_disk
        index = compile_ahead.GROUPS[{group!r}][1]
        assert not kernels_on_disk(index)
        ahead = compile_ahead.start({group!r})
        assert ahead.process is not None
        assert ahead.wait()
        assert ahead.process is None and not ahead.wait()  # a second wait returns at once
        assert kernels_on_disk(index)
        compile_ahead.compile_group({group!r})
        for kernel in ({", ".join(kernels)},):
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


def test_the_default_fit_waits_for_each_child_before_the_kernels_it_compiles_are_first_used(monkeypatch):
    # the "filter" group (the scores' fused filter step) before the first evaluation of the folds, the "enkf" group
    # (the training objective) before the first training step
    events = []

    class Recorder(compile_ahead.Ahead):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def wait(self, timeout=compile_ahead.WAIT_SECONDS):
            events.append(f"wait {self.name}")
            return False

    advance, window_scores = AdamRun.advance, ValidationScore.window_scores

    def recorded(self, steps):
        events.append("advance")
        return advance(self, steps)

    def scored(self, model):
        # stage 1's forecasts of the linear floor and its exact form (the Kalman filter) use no kernel of the group
        particles = hasattr(model, "linear_gaussian") and model.linear_gaussian() is None
        events.append("score" if particles else "exact")
        return window_scores(self, model)

    monkeypatch.setattr(compile_ahead, "start", lambda name: events.append(f"start {name}") or Recorder(name))
    monkeypatch.setattr(AdamRun, "advance", recorded)
    monkeypatch.setattr(ValidationScore, "window_scores", scored)
    y, u, _ = cascaded_tanks(200, seed=4)
    gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, plan=dict(max_steps=2, eval_every=2, num_samples=4, batch_size=4),
                                      progress=False)
    assert set(events[:2]) == {"start enkf", "start filter"}
    assert "score" in events and "advance" in events
    assert events.index("wait filter") < events.index("score")
    assert events.index("wait enkf") < events.index("advance")


def test_the_childs_path_gets_the_package_folder_unless_it_is_a_site_packages_folder(monkeypatch):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(compile_ahead.__file__))))
    monkeypatch.setattr(compile_ahead.site, "getsitepackages", lambda: ["/nowhere/site-packages"])
    assert compile_ahead._package_root() == root
    monkeypatch.setattr(compile_ahead.site, "getsitepackages", lambda: [root + os.sep])
    assert compile_ahead._package_root() is None  # put first, a site-packages folder would shadow the standard library


def sleeping_child():
    """A child process that would run for a minute: what ``start`` returns on a cold cache, without its work."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_stop_ends_a_running_child_and_reaps_one_that_ended():
    running = sleeping_child()
    ahead = compile_ahead.Ahead(running)
    ahead.stop()
    assert running.returncode is not None and ahead.process is None
    ahead.stop()  # later calls, and wait, return at once
    assert not ahead.wait()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended_ahead = compile_ahead.Ahead(ended)
    ended.wait()
    ended_ahead.stop()
    assert ended.returncode == 0 and ended_ahead.process is None


@pytest.mark.parametrize("failing", [False, True])
def test_no_child_outlives_a_default_fit_that_ends_before_training_or_raises(monkeypatch, recwarn, failing):
    # 35 steps are too few for the folds: the fit returns the floor before any evaluation or training step, so it
    # waits for neither child; a fit that raises in stage 1 neither. Only the children's ids are kept here, so that a
    # child left running would reach the garbage collector, which warns
    pids = []

    def start(name):
        child = sleeping_child()
        pids.append(child.pid)
        return compile_ahead.Ahead(child)

    monkeypatch.setattr(compile_ahead, "start", start)
    if failing:
        def floor(self, ys, us, folds=None):
            raise RuntimeError("stage 1 failed")
        monkeypatch.setattr(gp.models.default_fit.DefaultFit, "floor", floor)
    y, u, _ = cascaded_tanks(35, seed=4)
    with pytest.warns(UserWarning, match="too few for the rolling-origin folds") if not failing else \
            pytest.raises(RuntimeError, match="stage 1 failed"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, progress=False)
    gc.collect()
    assert len(pids) == 2
    for pid in pids:  # ended and reaped: the id names no process, not even a zombie
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not [w for w in recwarn if issubclass(w.category, ResourceWarning)]
