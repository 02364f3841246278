"""Training progress: a line per epoch (or per scored block of steps), rewritten in place on a terminal, written as
plain lines elsewhere (a notebook, a log file), and logged at INFO level.

``fit(progress=None)``, the default, shows it only once the fit has run for :data:`AUTO_AFTER` seconds (a fit that
ends sooner stays silent; every line is logged either way), ``progress=True`` always, ``progress=False`` never.
That kernels are being compiled is said at once unless ``progress=False``."""
import logging
import sys
import time

from ._config import NUMBA_CACHE

logger = logging.getLogger("gpssm_np.fit")


#: Said once per process, before the first fit whose kernels are not in Numba's on-disk cache (the second form with
#: the cache turned off, GPSSM_NP_NUMBA_CACHE=0).
COMPILE_NOTE = "compiling the Numba kernels (20 s or so the first time; cached on disk afterwards)"
COMPILE_NOTE_UNCACHED = "compiling the Numba kernels (20 s or so in every process: GPSSM_NP_NUMBA_CACHE is off)"
_compile_noted = []
#: Seconds into a fit after which ``progress=None`` starts to show its lines.
AUTO_AFTER = 3.0
_fit_started = [time.perf_counter()]


def fit_started():
    """Mark the start of a fit: ``progress=None`` counts :data:`AUTO_AFTER` from here."""
    _fit_started[0] = time.perf_counter()


def check_progress(progress):
    """``fit``'s ``progress``: None (shown after :data:`AUTO_AFTER` seconds), True or False; ValueError otherwise."""
    if progress is None or isinstance(progress, bool):
        return progress
    raise ValueError(f"progress: expected None (shown once a fit takes more than {AUTO_AFTER:g} s), True or False, "
                     f"got {progress!r}")


def note_compilation(report, cached):
    """Tell ``report`` (a :class:`Progress`) once per process that kernels are being compiled, unless ``cached``."""
    if not cached and not _compile_noted:
        _compile_noted.append(True)
        report.note(COMPILE_NOTE if NUMBA_CACHE else COMPILE_NOTE_UNCACHED, now=True)


class Progress:
    """``update(done, loss, score=None)`` after each epoch (or each scored block of steps: ``unit="step"``);
    ``close()`` at the end. Silent when ``enabled`` is False; with None, silent until the fit has run for
    :data:`AUTO_AFTER` seconds (module docstring). On a terminal (``stream``, default stderr) the line is
    rewritten in place; on any other stream each update is a new line. A line gives the count done, the loss, the
    validation score when there is one, the time so far and the time left at the budget's pace (an upper bound when
    a stopping rule may end training early)."""

    def __init__(self, epochs, enabled=True, stream=None, unit="epoch"):
        self.epochs = epochs
        self.unit = unit
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = enabled is not False and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self.shown = False

    def _shows(self, now=False):
        """Whether a line is written now (module docstring)."""
        if self.enabled is None:
            self.shown = self.shown or now or time.perf_counter() - _fit_started[0] >= AUTO_AFTER
            return self.shown
        self.shown = bool(self.enabled)
        return self.shown

    def update(self, epoch, loss, score=None):
        if not self._shows():
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / epoch * (self.epochs - epoch) if epoch else 0.0
        scored = "" if score is None else f"  validation {score:.4f}"
        line = f"{self.unit} {epoch}/{self.epochs}  loss {loss:.4f}{scored}  {elapsed:.1f} s, at most {left:.0f} s left"
        logger.info(line)
        self.stream.write(("\rfit: " if self.tty else "fit: ") + line + ("" if self.tty else "\n"))
        self.stream.flush()

    def note(self, text, now=False):
        """A line of its own (e.g. that kernels are being compiled), when shown (``now``: at once, also for
        ``enabled=None``); always logged."""
        logger.info(text)
        if self._shows(now):
            self.stream.write(("\n" if self.tty else "") + "fit: " + text + "\n")
            self.stream.flush()

    def close(self):
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()
