"""Numba policy for ``gpssm_np.ops`` and the glue between Numba kernels and autograd.

* :func:`jit` is the only way kernels are compiled: nopython mode, float64, GIL released, on-disk cache unless
  ``GPSSM_NP_NUMBA_CACHE=0``; ``fastmath`` off unless a kernel asks for the flags of ``_config`` (FASTMATH:
  contraction only; FASTMATH_SUMS: also reassociation, for kernels that sum over particles).
* Numba's cache checks only the timestamp of the file a function is defined in, not of the files it calls into
  (numba docs, "Caching notes"). Kernels here call helpers in sibling files, so :func:`_drop_stale_cache` keys the
  whole cache on a hash of every source file in this folder.
* :func:`to_c_f64` is applied to every array before it enters jitted code: float32, Fortran-ordered or strided
  inputs all reach the kernels as C-contiguous float64, so each kernel compiles once.
* :func:`vjp_all_argnums` adapts a VJP that returns gradients for every argument at once to
  ``autograd.extend.defvjp_argnums`` (the pattern of autograd's ``argnums_unpack``).
* :class:`TapeStore` keeps what a primitive's forward pass stored for its reverse pass, keyed by the identity of the
  primitive's output, and pools freed tapes so a training loop reuses the same (already mapped) memory.
* Building blocks of the hot loops: :func:`exp_fast` (an ``exp`` that vectorises; LLVM has no vector ``exp``
  without Intel's SVML) and :func:`gemm` (BLAS ``dgemm`` on row-major blocks of larger arrays, with leading
  dimensions and accumulation, called from jitted code).
* Threads: :func:`kernel_threads` is the number of threads the fused kernels use (``GPSSM_NP_THREADS``, one per
  core by default); :func:`run_blocks` hands their fixed blocks of work to a pool of Python threads (the kernels
  release the GIL), and :func:`blas_single_threaded` keeps BLAS at one thread while they run, so the kernels' and
  BLAS's threads never compete.
"""
import contextlib
import glob
import hashlib
import math
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from .._config import CPU_COUNT, FASTMATH, NUM_THREADS, NUMBA_CACHE, TAPE_POOL_BYTES


def _drop_stale_cache():
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(here, "*.py"))):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    stamp = digest.hexdigest()
    cache_dir = os.path.join(here, "__pycache__")
    stamp_path = os.path.join(cache_dir, "gpssm_np_ops.stamp")
    try:
        with open(stamp_path) as fh:
            if fh.read() == stamp:
                return
    except OSError:
        pass
    try:
        os.makedirs(cache_dir, exist_ok=True)
        for path in glob.glob(os.path.join(cache_dir, "*.nb[ic]")):
            os.remove(path)
        with open(stamp_path, "w") as fh:
            fh.write(stamp)
    except OSError:  # read-only install: numba falls back to its user-wide cache location
        pass


if NUMBA_CACHE:
    _drop_stale_cache()


def jit(fn=None, *, fastmath=(), inline=False):
    """Compile ``fn`` with the package's Numba options; ``fastmath`` is a set of LLVM fast-math flags (one of
    ``_config.FASTMATH`` and ``_config.FASTMATH_SUMS``); ``inline=True`` inlines a small scalar helper into its
    callers before LLVM sees them (LLVM's own inliner gives up on helpers of a few dozen instructions, and a loop
    that calls a function does not vectorise)."""

    def compile_(f):
        return numba.njit(cache=NUMBA_CACHE, fastmath=set(fastmath) or False, error_model="numpy", nogil=True,
                          inline="always" if inline else "never")(f)

    return compile_ if fn is None else compile_(fn)


def to_c_f64(x):
    """Return ``x`` as a C-contiguous float64 ndarray (copying only when needed)."""
    return np.ascontiguousarray(x, dtype=np.float64)


def vjp_all_argnums(make_vjp_all):
    """Adapt ``make_vjp_all(ans, *args, **kwargs) -> (g -> tuple of gradients, one per positional argument)``
    to the signature that ``autograd.extend.defvjp_argnums`` expects."""

    def vjp_argnums(argnums, ans, args, kwargs):
        vjp_all = make_vjp_all(ans, *args, **kwargs)

        def vjp(g):
            grads = vjp_all(g)
            return tuple(grads[i] for i in argnums)

        return vjp

    return vjp_argnums


# ---------------------------------------------------------------------------------------------------------------
# Tapes
# ---------------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------------------------------------------
_threads_override = None


def kernel_threads():
    """Threads for the fused kernels: ``_config.NUM_THREADS`` (GPSSM_NP_THREADS) or the value set by
    :func:`use_threads`, at most the number of cores."""
    wanted = NUM_THREADS if _threads_override is None else _threads_override
    return max(1, min(wanted, CPU_COUNT))


@contextlib.contextmanager
def use_threads(n):
    """Run the body with the fused kernels on ``n`` threads (process-wide; for benchmarks, tests and warm-up)."""
    global _threads_override
    previous = _threads_override
    _threads_override = max(1, int(n))
    try:
        yield
    finally:
        _threads_override = previous


_controller = None
_controller_lock = threading.Lock()


def _blas_controller():
    global _controller
    with _controller_lock:
        if _controller is None:
            try:
                import scipy.linalg.cython_blas  # noqa: F401  (the BLAS that jitted code calls: load it first)
                from threadpoolctl import ThreadpoolController
            except ImportError:  # optional: without it BLAS keeps its own thread setting
                _controller = False
            else:
                _controller = ThreadpoolController()
    return _controller


_blas_limit_depth = 0  # how many blas_single_threaded bodies are running (the limit is process-wide)


@contextlib.contextmanager
def blas_single_threaded():
    """Run the body with every loaded BLAS limited to one thread (needs threadpoolctl; a no-op without it).

    The kernels call BLAS on small blocks from inside their own loops (and threads): a multi-threaded BLAS would
    only add synchronisation there, and on a busy machine its spinning threads cost far more than they save.
    Nested uses (a kernel inside ``fit``) do nothing: setting the limit costs ~0.1 ms, eight times per training
    step otherwise."""
    global _blas_limit_depth
    controller = _blas_controller()
    with _controller_lock:
        outermost = _blas_limit_depth == 0
        _blas_limit_depth += 1
    try:
        if controller and outermost:
            with controller.limit(limits=1, user_api="blas"):
                yield
        else:
            yield
    finally:
        with _controller_lock:
            _blas_limit_depth -= 1


# ---------------------------------------------------------------------------------------------------------------
# Vectorisable exp
# ---------------------------------------------------------------------------------------------------------------
@intrinsic
def _f64_from_bits(typingctx, bits):
    """The float64 whose IEEE-754 bit pattern is the int64 ``bits``."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.bitcast(value, ir.DoubleType())

    return types.float64(bits), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125  # 16 significant bits: k * _LN2_HI is exact for |k| < 2^37
_LN2_LO = 1.42860682030941723212e-6  # ln 2 - _LN2_HI
_EXP_MIN = -708.0  # exp below this is returned as 0 (the true value is subnormal: below 2.5e-308)
_EXP_MAX = 709.0
_C = [1.0 / math.factorial(i) for i in range(14)]
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C[2:]


@jit(fastmath=FASTMATH, inline=True)
def exp_fast(x):
    """exp(x) within 1.01 ulp (measured against libm over [-708, 0]), written so that loops calling it vectorise.

    exp(x) = 2^k exp(r) with k = round(x / ln 2), r = x - k ln 2 (|r| <= ln 2 / 2, Cody-Waite two-part ln 2) and
    exp(r) by its degree-13 Taylor polynomial (truncation below 1e-17); 2^k is built from its bit pattern. Below
    -708 the result is 0 (flushing the subnormal range), above 709 it overflows to inf; NaN stays NaN."""
    xc = x if x > _EXP_MIN else _EXP_MIN
    xc = xc if xc < _EXP_MAX else _EXP_MAX
    k = math.floor(xc * _LOG2E + 0.5)
    r = (xc - k * _LN2_HI) - k * _LN2_LO
    p = _C13
    p = p * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    p = p * r + 1.0
    e = p * _f64_from_bits((np.int64(k) + 1023) << 52)
    if x >= _EXP_MIN:
        return e if x <= _EXP_MAX else math.inf
    return 0.0 if x < _EXP_MIN else x  # the last case is NaN


TANH_SERIES = 0.125  # below this |z|, tanh by its Taylor series (the exp formula would lose relative accuracy)


@jit(fastmath=FASTMATH, inline=True)
def sigmoid_fast(z):
    """1 / (1 + e^-z) with :func:`exp_fast`: accurate for every z (e^-z = inf gives 0); vectorises."""
    return 1.0 / (1.0 + exp_fast(-z))


@jit(fastmath=FASTMATH, inline=True)
def tanh_fast(z):
    """tanh within a few ulp: (1 - e) / (1 + e), e = exp(-2|z|), and the series to z^15 near 0; vectorises."""
    az = abs(z)
    e = exp_fast(-2.0 * az)
    big = (1.0 - e) / (1.0 + e)
    z2 = z * z
    p = -929569.0 / 638512875.0
    p = p * z2 + 21844.0 / 6081075.0
    p = p * z2 - 1382.0 / 155925.0
    p = p * z2 + 62.0 / 2835.0
    p = p * z2 - 17.0 / 315.0
    p = p * z2 + 2.0 / 15.0
    p = p * z2 - 1.0 / 3.0
    small = z + z * z2 * p
    return small if az < TANH_SERIES else math.copysign(big, z)


# ---------------------------------------------------------------------------------------------------------------
# BLAS from jitted code
# ---------------------------------------------------------------------------------------------------------------
@intrinsic
def _dgemm(typingctx, transa, transb, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc):
    """Fortran (column-major) dgemm, c = alpha op(a) op(b) + beta c, with a, b, c the float64 arrays' data from
    flat element offsets ia, ib, ic. Goes through Numba's own BLAS entry point (the one np.dot uses: SciPy's
    cython_blas), so no symbol is resolved by hand and cached code stays valid."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float64 for x in (a, b, c)):
        return None
    sig = types.void(transa, transb, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc)

    def codegen(context, builder, signature, args):
        from numba.np.linalg import ensure_blas

        ensure_blas()
        tys = signature.args
        char = ir.IntType(8)
        intp = context.get_value_type(types.intp)
        void_p = char.as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [char, char, char, intp, intp, intp, void_p, void_p, intp, void_p,
                                                intp, void_p, void_p, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")

        def arg(i, ty):
            return context.cast(builder, args[i], tys[i], ty)

        def data(i, offset):
            base = make_array(tys[i])(context, builder, args[i]).data
            return builder.bitcast(builder.gep(base, [arg(offset, types.intp)]), void_p)

        def scalar(i):
            return builder.bitcast(cgutils.alloca_once_value(builder, arg(i, types.float64)), void_p)

        def flag(i):
            return builder.trunc(arg(i, types.int64), char)

        builder.call(fn, (ir.Constant(char, ord("d")), flag(0), flag(1), arg(2, types.intp), arg(3, types.intp),
                          arg(4, types.intp), scalar(5), data(6, 7), arg(8, types.intp), data(9, 10),
                          arg(11, types.intp), scalar(12), data(13, 14), arg(15, types.intp)))
        return context.get_dummy_value()

    return sig, codegen


_NO_TRANS = ord("n")
_TRANS = ord("t")


@jit
def gemm(trans_a, trans_b, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc):
    """C = alpha op(A) op(B) + beta C on row-major blocks: C is m x n starting at c.flat[ic] with row stride ldc,
    A (m x k, or k x m when ``trans_a``) at a.flat[ia] with row stride lda, B likewise. Arrays must be C-contiguous
    float64; nothing is allocated. Empty products only scale C (BLAS semantics)."""
    if m == 0 or n == 0:
        return
    # row-major C = op(A) op(B)  <=>  column-major C^T = op(B)^T op(A)^T, with the same leading dimensions
    _dgemm(_TRANS if trans_b else _NO_TRANS, _TRANS if trans_a else _NO_TRANS, n, m, k, alpha, b, ib, max(ldb, 1),
           a, ia, max(lda, 1), beta, c, ic, max(ldc, 1))


_blas_resolved = False


def resolve_blas():
    """Make Numba look up BLAS's dgemm now, in this thread, before kernel threads call it."""
    global _blas_resolved
    if not _blas_resolved:
        one = np.ones(1)
        gemm(False, False, 1, 1, 1, 1.0, one, 0, 1, one, 0, 1, 0.0, np.zeros(1), 0, 1)
        _blas_resolved = True


_pools = {}  # thread count -> ThreadPoolExecutor
_pools_lock = threading.Lock()


def thread_pool(threads):
    """A process-wide pool of ``threads`` Python threads (created on first use). The kernels release the GIL
    (``nogil=True``), so blocks of work handed to these threads run in parallel."""
    with _pools_lock:
        if threads not in _pools:
            _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="gpssm_np")
        return _pools[threads]


def run_blocks(driver, num_blocks, *args):
    """Run ``driver(first, last, *args)``, a loop over blocks first..last-1 of independent work that releases the
    GIL (a ``nogil`` kernel, or NumPy's random generators filling arrays), over all
    ``num_blocks`` blocks: in the calling thread, or with more than one kernel thread (``kernel_threads()``) on the
    calling thread and ``threads - 1`` threads of :func:`thread_pool`, each taking the next block until none is
    left (a thread slowed by other work holds up no one). BLAS is held at one thread meanwhile. Each block writes
    its own results, so the bits do not depend on the thread count.

    Python threads rather than ``numba.prange``: a ``parallel=True`` driver compiles its own copy of every block
    function (doubling the cold-cache compile time), and OpenMP's spinning workers slowed the code that ran between
    the kernels."""
    threads = min(kernel_threads(), num_blocks)
    with blas_single_threaded():
        if threads == 1:
            driver(0, num_blocks, *args)
            return
        resolve_blas()
        blocks = iter(range(num_blocks))
        lock = threading.Lock()

        def work():
            while True:
                with lock:
                    k = next(blocks, None)
                if k is None:
                    return
                driver(k, k + 1, *args)

        helpers = [thread_pool(threads - 1).submit(work) for _ in range(threads - 1)]
        work()
        for helper in helpers:
            helper.result()


def sum_blocks(per_block):
    """Sum over the leading (block) axis in block order, so the result does not depend on how :func:`run_blocks`
    ran the blocks."""
    total = per_block[0].copy()
    for b in range(1, per_block.shape[0]):
        total += per_block[b]
    return total
