"""Training progress: plain lines where the stream is not a terminal (notebooks, logs), in place on a terminal."""
import io

import numpy as np

import gpssm_np as gp
from gpssm_np._progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_off_a_terminal_with_score_and_time_left():
    stream = io.StringIO()
    report = Progress(4, stream=stream, unit="step")
    report.update(1, 2.5, 0.3)
    report.update(2, 1.5)
    report.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("fit: step 1/4  loss 2.5000  validation 0.3000")
    assert "s left" in lines[0] and "validation" not in lines[1]


def test_in_place_on_a_terminal_and_silent_when_disabled():
    stream = Terminal()
    report = Progress(2, stream=stream)
    report.update(1, 1.0)
    report.close()
    assert stream.getvalue().startswith("\rfit: epoch 1/2") and stream.getvalue().endswith("\n")
    quiet = io.StringIO()
    Progress(2, enabled=False, stream=quiet).update(1, 1.0)
    assert quiet.getvalue() == ""


def test_fit_with_progress_prints_lines(capsys):
    rng = np.random.default_rng(0)
    y, u = rng.normal(size=(120, 1)), rng.normal(size=(120, 1))
    gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4).fit(
        y, u, max_steps=4, plan=dict(eval_every=2, num_samples=3, batch_size=8), progress=True)
    err = capsys.readouterr().err
    assert "fit: step 2/4" in err and "validation" in err


def test_compilation_is_noted_once_per_process_and_only_without_a_cache(monkeypatch):
    from gpssm_np import _progress

    monkeypatch.setattr(_progress, "_compile_noted", [])
    stream = io.StringIO()
    report = Progress(2, stream=stream)
    _progress.note_compilation(report, cached=True)
    assert stream.getvalue() == ""
    _progress.note_compilation(report, cached=False)
    _progress.note_compilation(report, cached=False)
    assert stream.getvalue().count("compiling the Numba kernels") == 1
    assert "cached on disk afterwards" in stream.getvalue()
    # with the cache turned off the note does not promise one
    monkeypatch.setattr(_progress, "_compile_noted", [])
    monkeypatch.setattr(_progress, "NUMBA_CACHE", False)
    stream = io.StringIO()
    _progress.note_compilation(Progress(2, stream=stream), cached=False)
    assert "GPSSM_NP_NUMBA_CACHE is off" in stream.getvalue() and "cached on disk" not in stream.getvalue()

