"""Thread settings of the fused kernels, public for the models, the experiments and the benchmarks.

* :func:`kernel_threads` is the number of threads the fused kernels use (``GPSSM_NP_THREADS``, one per core by
  default); :func:`use_threads` overrides it for a block of code.
* :func:`run_blocks` hands the kernels' fixed blocks of work to a pool of Python threads (:func:`thread_pool`; the
  kernels release the GIL), and :func:`sum_blocks` adds per-block results in block order, so the bits do not depend
  on the thread count.
* :func:`run_tasks` runs independent pieces of work (the lockstep fold runs of the default fit) side by side, one
  per kernel thread, each with its kernels on its own thread alone.
* :func:`blas_single_threaded` keeps BLAS at one thread while the kernels run, so the kernels' and BLAS's threads
  never compete.
"""
import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from .._config import CPU_COUNT, NUM_THREADS
from ._blas import resolve_blas


_threads_override = None
_task = threading.local()  # .threads: the kernel threads of the task this thread runs (run_tasks), else unset


def kernel_threads():
    """Threads for the fused kernels: one inside a task of :func:`run_tasks`, else ``_config.NUM_THREADS``
    (GPSSM_NP_THREADS) or the value set by :func:`use_threads`, at most the number of cores."""
    wanted = getattr(_task, "threads", None)
    if wanted is None:
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
    step otherwise. Nor does a use while every BLAS already runs one thread (asking costs ~2 us; a step of the
    online filter takes well under a millisecond)."""
    global _blas_limit_depth
    controller = _blas_controller()
    with _controller_lock:
        outermost = _blas_limit_depth == 0
        _blas_limit_depth += 1
    try:
        if controller and outermost and any(lib.user_api == "blas" and lib.get_num_threads() != 1
                                            for lib in controller.lib_controllers):
            with controller.limit(limits=1, user_api="blas"):
                yield
        else:
            yield
    finally:
        with _controller_lock:
            _blas_limit_depth -= 1


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
    GIL (a ``nogil`` kernel, or NumPy's random generators filling arrays), over all ``num_blocks`` blocks: in the
    calling thread, or with more than one kernel thread (``kernel_threads()``) on the calling thread and
    ``threads - 1`` threads of :func:`thread_pool`, each taking the next block until none is left
    (:func:`_hand_out`). BLAS is held at one thread meanwhile. Each block writes its own results, so the bits do not
    depend on the thread count.

    Python threads rather than ``numba.prange``: a ``parallel=True`` driver compiles its own copy of every block
    function (doubling the cold-cache compile time), and OpenMP's spinning workers slowed the code that ran between
    the kernels."""
    threads = min(kernel_threads(), num_blocks)
    with blas_single_threaded():
        if threads == 1:
            driver(0, num_blocks, *args)
            return
        _hand_out(num_blocks, threads, lambda k: driver(k, k + 1, *args))


def run_tasks(tasks):
    """``[task() for task in tasks]``, computed side by side: with more than one kernel thread, on the calling thread
    and ``threads - 1`` threads of :func:`thread_pool`, each taking the next task until none is left, and running
    that task's kernels on its own thread alone (:func:`kernel_threads` is 1 there). Each task must touch only its
    own state (its own model, optimiser and random generator, as one fold run of the default fit does).

    Why: a training step runs Python and autograd code between its kernels, which holds the GIL and keeps one core
    busy while the other waits, and the last block of a kernel can leave a thread idle; two independent runs, one
    per core, fill those gaps. The kernels' blocks give the same bits on one thread as on several, so the results
    do not depend on the thread count or on which thread ran which task. The first exception raised by a task (in
    task order) is raised here once every task has finished; a KeyboardInterrupt in the calling thread is raised
    once the other threads have finished the tasks they hold (they take no more)."""
    tasks = list(tasks)
    threads = min(kernel_threads(), len(tasks))
    if threads <= 1:
        return [task() for task in tasks]
    results, errors = [None] * len(tasks), [None] * len(tasks)

    def do(k):
        previous, _task.threads = getattr(_task, "threads", None), 1
        try:
            results[k] = tasks[k]()
        except Exception as error:  # raised in the calling thread below, in task order
            errors[k] = error
        finally:
            _task.threads = previous

    with blas_single_threaded():
        _hand_out(len(tasks), threads, do)
    for error in errors:
        if error is not None:
            raise error
    return results


def _hand_out(count, threads, do):
    """``do(k)`` for k = 0..count-1 on the calling thread and ``threads - 1`` threads of :func:`thread_pool`, each
    taking the next k until none is left (a thread slowed by other work holds up no one). Where ``do`` raises in the
    calling thread (or it is interrupted), no thread takes another k, and the exception goes on once the others
    have finished the one they hold. BLAS's symbols are looked up first (``_blas.resolve_blas``), before any thread
    calls them."""
    resolve_blas()
    ks = iter(range(count))
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                k = next(ks, None)
            if k is None:
                return
            do(k)

    helpers = [thread_pool(threads - 1).submit(work) for _ in range(threads - 1)]
    try:
        work()
    except BaseException:
        with lock:
            for _ in ks:  # nothing left to take
                pass
        for helper in helpers:
            helper.exception()  # wait, without raising a helper's error over this one
        raise
    for helper in helpers:
        helper.result()


def sum_blocks(per_block):
    """Sum over the leading (block) axis in block order, so the result does not depend on how :func:`run_blocks`
    ran the blocks."""
    total = per_block[0].copy()
    for b in range(1, per_block.shape[0]):
        total += per_block[b]
    return total
