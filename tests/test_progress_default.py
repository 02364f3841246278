"""fit(progress=None), the default: silent for a fit that ends within a few seconds, lines on stderr once it runs
longer; True always, False never (gpssm_np/_progress.py)."""
import io
import re

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np import _progress
from gpssm_np._progress import Progress, check_progress, fit_started
from gpssm_np.models import default_fit


@pytest.mark.parametrize("enabled, after, shown", [(None, 0.0, True), (None, 1e6, False), (True, 1e6, True),
                                                   (False, 0.0, False)])
def test_progress_lines_by_setting(monkeypatch, enabled, after, shown):
    monkeypatch.setattr(_progress, "AUTO_AFTER", after)
    stream = io.StringIO()
    fit_started()
    report = Progress(10, enabled=enabled, stream=stream, unit="step")
    report.update(5, -1.0, 0.5)
    report.note("floor: arx")
    assert ("step 5/10" in stream.getvalue()) == shown and ("floor: arx" in stream.getvalue()) == shown


def test_the_compile_note_is_said_at_once_unless_silenced(monkeypatch):
    monkeypatch.setattr(_progress, "AUTO_AFTER", 1e6)
    for enabled, said in ((None, True), (False, False)):
        monkeypatch.setattr(_progress, "_compile_noted", [])
        stream = io.StringIO()
        _progress.note_compilation(Progress(1, enabled=enabled, stream=stream), cached=False)
        assert ("compiling" in stream.getvalue()) == said


def test_progress_argument_is_checked():
    assert check_progress(None) is None and check_progress(False) is False
    with pytest.raises(ValueError, match="progress"):
        check_progress("yes")


def test_the_selection_reports_the_loss_of_a_run_still_training(monkeypatch, capsys):
    """Once a step-size candidate has stopped (``default_fit.live_candidates``), the selection's progress lines give
    the loss of a fold run that still trains, not the frozen last loss of the stopped one."""
    original = default_fit.live_candidates

    def last_candidate_stops(record, candidates, patience, halve_at=None):
        live = original(record, candidates, patience, halve_at)
        return live[:-1] + [False] if len(record) > 1 else live  # from the first evaluation after step 0 on

    monkeypatch.setattr(default_fit, "live_candidates", last_candidate_stops)
    rng = np.random.default_rng(0)
    u = rng.standard_normal((160, 1))
    y = np.convolve(u[:, 0], [0.0, 0.5, 0.3, 0.1])[:160, None] + 0.1 * rng.standard_normal((160, 1))
    gp.ODGPSSM(dim_y=1, dim_u=1, seed=0, init="arx").fit(
        y, u, plan={"max_steps": 40, "eval_every": 10, "patience": 10}, progress=True)
    losses = re.findall(r"step \d+/40  loss (\S+)  validation", capsys.readouterr().err)
    assert len(losses) == 4 and len(set(losses)) == 4, losses
