"""Checkpoints of the default fit (models/default_fit.py, "Checkpoints"): a fit interrupted after any checkpoint and
resumed ends bit-identical to an uninterrupted one, in-process and after a ``kill -9`` of a child process, and after
rejected steps (the halved step size restored)."""
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np import archive
from gpssm_np.datasets import cascaded_tanks
from gpssm_np.models import checkpoint, default_fit, floor
from gpssm_np.models.default_fit import DefaultFit

# tiny settings, the GP part kept at s* = 6 (forced: :func:`kept`), so the refit runs too (8 steps: r = 200 / 144,
# stage 4): 12 checkpoints in all (selection at steps 0, 2, 4, 6; the refit at steps 0, 2, 4, 6, 8; refitted; checked;
# done)
PLAN = dict(max_steps=6, eval_every=2, patience=2, num_samples=4, batch_size=4)
WRITES = 12


def data():
    y, u, _ = cascaded_tanks(200, seed=4)
    return (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)


@contextlib.contextmanager
def kept():
    """Stage 3 keeps the GP part at the selection's best step (its paired t taken as +inf): six Adam steps do not
    beat the exact floor, and the refit's checkpoints are what these tests resume from."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(default_fit, "paired_t", lambda floor, part: np.inf)
        yield


def fit(model=None, **kwargs):
    with kept():
        return (model or gp.ODGPSSM(dim_y=1, dim_u=1)).fit(*data(), plan=PLAN, progress=False, **kwargs)


@pytest.fixture(scope="module")
def uninterrupted():
    model = fit()
    assert model.selection_["step"] == 6 and model.selection_["gp_part"]  # the refit is exercised
    return model


def assert_identical(model, reference):
    assert set(model.params) == set(reference.params)
    for name in reference.params:
        assert np.array_equal(model.params[name], reference.params[name]), name
    assert model.selection_ == reference.selection_
    assert model.history_ == reference.history_
    assert model.training_log_ == reference.training_log_
    assert model.spec == reference.spec
    assert np.array_equal(model.interval_scale_, reference.interval_scale_)


class Interrupted(Exception):
    pass


def stop_after(monkeypatch, k):
    """Make the k-th checkpoint write the last: the fit raises right after it."""
    write, count = DefaultFit.write_checkpoint, [0]

    def counted(self, state, arrays):
        write(self, state, arrays)
        count[0] += 1
        if count[0] == k:
            raise Interrupted(state["stage"])

    monkeypatch.setattr(DefaultFit, "write_checkpoint", counted)
    return count


def test_writes_and_does_not_change_the_fit(tmp_path, monkeypatch, uninterrupted):
    count = stop_after(monkeypatch, 0)
    model = fit(checkpoint=tmp_path / "fit.ckpt")
    assert count[0] == WRITES
    assert_identical(model, uninterrupted)


# after the 2nd write: inside the selection; 4th: its end; 5th: the refit's start (between stages); 7th: inside the
# refit; 10th, 11th, 12th: after the refit, after the free-run guard, at the end
@pytest.mark.parametrize("k", [2, 4, 5, 7, 10, 11, 12])
def test_resume_after_an_interruption_is_bit_identical(tmp_path, monkeypatch, uninterrupted, k):
    path = tmp_path / "fit.ckpt"
    stop_after(monkeypatch, k)
    with pytest.raises(Interrupted):
        fit(checkpoint=path)
    monkeypatch.undo()
    assert_identical(fit(checkpoint=path, resume=True), uninterrupted)


# a GP part never beats the floor by 1e9 standard errors, so stage 3 keeps nothing and stage 3b runs the pipeline
# again from the other kind's floor, checkpointing beside the first: 7 writes each (selection at steps 0, 2, 4, 6;
# refitted; checked; done)
NOTHING_KEPT = dict(PLAN, switch_t=1e9)


def test_stage_3b_resumes_bit_identically(tmp_path, monkeypatch):
    def fit_3b(**kwargs):
        return gp.ODGPSSM(dim_y=1, dim_u=1).fit(*data(), plan=NOTHING_KEPT, progress=False, **kwargs)

    reference = fit_3b()
    assert reference.selection_["other_floor"] is not None and not reference.selection_["gp_part"]
    for k in (9, 14):  # inside stage 3b's selection; its last write
        path = tmp_path / f"fit{k}.ckpt"
        count = stop_after(monkeypatch, k)
        with pytest.raises(Interrupted):
            fit_3b(checkpoint=path)
        monkeypatch.undo()
        assert os.path.exists(str(path) + ".other") and count[0] == k
        count = stop_after(monkeypatch, 0)
        assert_identical(fit_3b(checkpoint=path, resume=True), reference)
        assert count[0] == 14 - k  # resumed where it stopped (the finished first pipeline writes nothing)
        monkeypatch.undo()


def test_stage_3b_takes_the_other_kind_as_stage_1_fitted_it(monkeypatch):
    """Stage 3b's floor is the other kind's linear model from stage 1 (``floor.choose_floor``'s ``fitted``), not
    fitted again, and the fit is the same to the last bit as with it fitted again."""
    def fit_3b():
        return gp.ODGPSSM(dim_y=1, dim_u=1).fit(*data(), plan=NOTHING_KEPT, progress=False)

    fit_kind, kinds_fitted = floor.fit_kind, []

    def counted(kind, *args, **kwargs):
        kinds_fitted.append(kind)
        return fit_kind(kind, *args, **kwargs)

    monkeypatch.setattr(floor, "fit_kind", counted)
    reference = fit_3b()
    assert reference.selection_["other_floor"] is not None and sorted(kinds_fitted) == ["arx", "lgssm"]
    choose = floor.choose_floor
    monkeypatch.setattr(default_fit, "choose_floor", lambda *args, fitted=None, **kwargs: choose(*args, **kwargs))
    kinds_fitted.clear()
    again = fit_3b()
    assert len(kinds_fitted) == 3  # both kinds, then the other one again
    assert_identical(again, reference)


def reject_each_runs_second_step(monkeypatch):
    """Every training run's (each fold run's, the refit's) second step is non-finite once: rejected, with the step
    size halved, as a NaN loss would make it (``training_loop.train_step``). Decided by the run's own record, so
    that it falls on the same step however the runs interleave on the threads and after a resume."""
    loss_of = gp.ODGPSSM.minibatch_loss

    def minibatch_loss(self, *args, **kwargs):
        loss = loss_of(self, *args, **kwargs)
        if len(self.history_) == 1 and not self.training_log_["rejected_steps"]:
            return lambda params: loss(params) * np.nan
        return loss

    monkeypatch.setattr(gp.ODGPSSM, "minibatch_loss", minibatch_loss)


# after the 2nd write: inside the selection; 7th: inside the refit; both after each run's halved step
@pytest.mark.parametrize("k", [2, 7])
def test_resume_after_a_rejected_step_keeps_the_halved_step_size(tmp_path, monkeypatch, k):
    reject_each_runs_second_step(monkeypatch)
    reference = fit()
    assert reference.training_log_["rejected_steps"] == [1] and reference.selection_["refit_steps"] > 2
    path = tmp_path / "fit.ckpt"
    stop_after(monkeypatch, k)
    with pytest.raises(Interrupted):
        fit(checkpoint=path)
    monkeypatch.undo()
    reject_each_runs_second_step(monkeypatch)  # the same faults, without the interruption
    assert_identical(fit(checkpoint=path, resume=True), reference)


def test_resume_twice(tmp_path, monkeypatch, uninterrupted):
    path = tmp_path / "fit.ckpt"
    stop_after(monkeypatch, 3)
    with pytest.raises(Interrupted):
        fit(checkpoint=path)
    stop_after(monkeypatch, 3)  # three more writes from the resumed state: into the refit
    with pytest.raises(Interrupted, match="refit"):
        fit(checkpoint=path, resume=True)
    monkeypatch.undo()
    assert_identical(fit(checkpoint=path, resume=True), uninterrupted)


def test_a_checkpoint_of_other_data_or_settings_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "fit.ckpt"
    stop_after(monkeypatch, 1)
    with pytest.raises(Interrupted):
        fit(checkpoint=path)
    monkeypatch.undo()
    y, u = data()
    with pytest.raises(ValueError, match="other data or settings.*data_sha256"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y[:190], u[:190], checkpoint=path, resume=True, plan=PLAN, progress=False)
    with pytest.raises(ValueError, match="other data or settings.*plan"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, checkpoint=path, resume=True, plan=dict(PLAN, eval_every=3),
                                         progress=False)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_LAYOUT", checkpoint.CHECKPOINT_LAYOUT + 1)  # a newer layout
    with pytest.raises(ValueError, match="other data or settings.*layout"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, checkpoint=path, resume=True, plan=PLAN, progress=False)
    monkeypatch.undo()
    # a floor other than this fit's (the fingerprint does not see the floor's code, which could change between
    # versions): refused before anything is restored
    state, arrays = archive.read_state(path, checkpoint.CHECKPOINT_KIND)
    state["floor"] = dict(state["floor"], dim_x=state["floor"]["dim_x"] + 1)
    archive.write_state(path, checkpoint.CHECKPOINT_KIND, state, arrays)
    with pytest.raises(ValueError, match="was written after the floor .*'dim_x': [0-9]+.*, this fit chose"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, checkpoint=path, resume=True, plan=PLAN, progress=False)
    with pytest.raises(ValueError, match="resume: needs checkpoint"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, resume=True, plan=PLAN, progress=False)
    model_file = tmp_path / "model.npz"
    gp.save(gp.ODGPSSM(dim_y=1, dim_u=1), model_file)
    with pytest.raises(ValueError, match="not a 'default_fit_checkpoint' file"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, checkpoint=model_file, resume=True, plan=PLAN, progress=False)


def test_the_fitted_model_resumes_its_finished_checkpoint(tmp_path, uninterrupted):
    path = tmp_path / "fit.ckpt"
    model = fit(checkpoint=path)
    assert_identical(fit(model, checkpoint=path, resume=True), uninterrupted)


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_default_fit_checkpoint import fit
    fit(checkpoint={path!r})
    """)


def test_resume_after_kill_9(tmp_path, uninterrupted):
    path = str(tmp_path / "fit.ckpt")
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=os.path.dirname(__file__), path=path)],
                             env=dict(os.environ), stderr=subprocess.PIPE)
    deadline, first = time.monotonic() + 300, None
    try:
        # kill once the checkpoint has been replaced at least once (each write is a new file moved into place): past
        # the selection's first steps, where a resume that lost the random generator's state shows
        while first is None or os.stat(path).st_ino == first:
            assert child.poll() is None, child.stderr.read().decode()
            assert time.monotonic() < deadline, "no checkpoint written"
            if first is None and os.path.exists(path):
                first = os.stat(path).st_ino
            time.sleep(0.01)
        assert child.poll() is None  # killed while it runs, not after it finished
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    assert_identical(fit(checkpoint=path, resume=True), uninterrupted)
