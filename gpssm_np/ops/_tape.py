"""What a primitive's forward pass keeps for its reverse pass: :class:`TapeStore`."""
import contextlib
import math
import threading
import weakref

import numpy as np

from .._config import TAPE_POOL_BYTES


class TapeStore:
    """What forward passes stored for their reverse passes, and a pool of freed tapes for reuse.

    A tape is a tuple of float64 arrays. autograd hands a VJP only the primitive's output, so :meth:`attach` files
    the tape under the identity of that output and :meth:`lookup` finds it again (None when the output did not come
    from the forward pass, e.g. a copy: the VJP then recomputes it). When the output is freed its tape goes back to
    the pool, where :meth:`acquire` hands its memory out again: a training loop then works in the same (already
    mapped) memory at every step instead of page-faulting fresh buffers in. A pooled tape serves any request whose
    arrays all fit in its buffers (a smaller last minibatch reuses the tape of the full ones). The pool keeps at most
    ``max_free`` tapes and ``max_bytes`` bytes, dropping the oldest first. Thread-safe.
    """

    def __init__(self, max_bytes=TAPE_POOL_BYTES, max_free=2):
        self.max_bytes = max_bytes
        self.max_free = max_free
        self._live = {}  # id(output) -> (weakref to output, tape)
        self._free = []  # tuples of flat buffers, oldest first
        self._lock = threading.Lock()

    def acquire(self, shapes):
        """Uninitialised C-contiguous float64 arrays of the given shapes: views into the smallest pooled tape that
        holds them all, or new arrays."""
        sizes = [math.prod(shape) for shape in shapes]
        buffers = None
        with self._lock:
            fits = [i for i, bufs in enumerate(self._free)
                    if len(bufs) == len(sizes) and all(b.size >= n for b, n in zip(bufs, sizes))]
            if fits:
                best = min(fits, key=lambda i: sum(b.size for b in self._free[i]))
                buffers = self._free.pop(best)
        if buffers is None:
            buffers = tuple(np.empty(n) for n in sizes)
        return tuple(b[:n].reshape(shape) for b, n, shape in zip(buffers, sizes, shapes))

    def attach(self, output, tape):
        """Keep ``tape`` while ``output`` lives; then give it back to the pool."""
        ident = id(output)
        with self._lock:
            self._live[ident] = (weakref.ref(output), tape)
        weakref.finalize(output, self._detach, ident).atexit = False  # nothing to give back at interpreter exit

    def lookup(self, output):
        """The tape attached to ``output``, or None."""
        entry = self._live.get(id(output))
        if entry is not None and entry[0]() is output:
            return entry[1]
        return None

    @contextlib.contextmanager
    def reverse_tape(self, output, recompute):
        """For a reverse pass: the tape attached to ``output``, or else (the output did not come from the forward
        pass, e.g. a copy) ``recompute()``'s, held for the body only."""
        tape = self.lookup(output)
        if tape is not None:
            yield tape
            return
        tape = recompute()
        try:
            yield tape
        finally:
            self.release(tape)

    def release(self, tape):
        """Return ``tape`` (from :meth:`acquire`) to the pool; it must no longer be used by anyone."""
        buffers = tuple(a if a.base is None else a.base for a in tape)
        if sum(b.nbytes for b in buffers) > self.max_bytes:
            return
        with self._lock:
            self._free.append(buffers)
            while len(self._free) > self.max_free or sum(b.nbytes for t in self._free for b in t) > self.max_bytes:
                self._free.pop(0)

    def pooled_bytes(self):
        """Bytes held by the pool."""
        with self._lock:
            return sum(b.nbytes for t in self._free for b in t)

    def clear(self):
        """Forget every attached and pooled tape (VJPs of live outputs then recompute theirs)."""
        with self._lock:
            self._live.clear()
            self._free.clear()

    def _detach(self, ident):
        with self._lock:
            entry = self._live.pop(ident, None)
        if entry is not None:
            self.release(entry[1])
