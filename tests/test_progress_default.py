"""fit(progress=None), the default: silent for a fit that ends within a few seconds, lines on stderr once it runs
longer; True always, False never (gpssm_np/_progress.py)."""
import io

import pytest

from gpssm_np import _progress
from gpssm_np._progress import Progress, check_progress, fit_started


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
