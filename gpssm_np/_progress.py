"""A one-line training progress report: rewritten in place on a terminal, and logged at INFO level every epoch."""
import logging
import sys
import time

logger = logging.getLogger("gpssm_np.fit")


class Progress:
    """``update(done, loss)`` after each epoch (or each scored block of steps: ``unit="step"``); ``close()`` at the
    end. Silent when ``enabled`` is False; the in-place line is written only when ``stream`` (default stderr) is a
    terminal."""

    def __init__(self, epochs, enabled=True, stream=None, unit="epoch"):
        self.epochs = epochs
        self.unit = unit
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, epoch, loss):
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        line = f"{self.unit} {epoch}/{self.epochs}  loss {loss:.4f}  {elapsed:.1f} s"
        logger.info(line)
        if self.tty:
            self.stream.write("\rfit: " + line)
            self.stream.flush()

    def close(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
