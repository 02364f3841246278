"""Training progress: a line per epoch (or per scored block of steps), rewritten in place on a terminal, written as
plain lines elsewhere (a notebook, a log file), and logged at INFO level."""
import logging
import sys
import time

logger = logging.getLogger("gpssm_np.fit")


#: Said once per process, before the first fit whose kernels are not in Numba's on-disk cache.
COMPILE_NOTE = "compiling the Numba kernels (about a minute the first time; cached on disk afterwards)"
_compile_noted = []


def note_compilation(report, cached):
    """Tell ``report`` (a :class:`Progress`) once per process that kernels are being compiled, unless ``cached``."""
    if not cached and not _compile_noted:
        _compile_noted.append(True)
        report.note(COMPILE_NOTE)


class Progress:
    """``update(done, loss, score=None)`` after each epoch (or each scored block of steps: ``unit="step"``);
    ``close()`` at the end. Silent when ``enabled`` is False. On a terminal (``stream``, default stderr) the line is
    rewritten in place; on any other stream each update is a new line. A line gives the count done, the loss, the
    validation score when there is one, the time so far and the time left at the budget's pace (an upper bound when
    a stopping rule may end training early)."""

    def __init__(self, epochs, enabled=True, stream=None, unit="epoch"):
        self.epochs = epochs
        self.unit = unit
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, epoch, loss, score=None):
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / epoch * (self.epochs - epoch) if epoch else 0.0
        scored = "" if score is None else f"  validation {score:.4f}"
        line = f"{self.unit} {epoch}/{self.epochs}  loss {loss:.4f}{scored}  {elapsed:.1f} s, at most {left:.0f} s left"
        logger.info(line)
        self.stream.write(("\rfit: " if self.tty else "fit: ") + line + ("" if self.tty else "\n"))
        self.stream.flush()

    def note(self, text):
        """A line of its own (e.g. that kernels are being compiled), when enabled; always logged."""
        logger.info(text)
        if self.enabled:
            self.stream.write(("\n" if self.tty else "") + "fit: " + text + "\n")
            self.stream.flush()

    def close(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
