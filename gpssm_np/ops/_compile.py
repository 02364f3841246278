"""How every kernel of ``gpssm_np.ops`` is compiled, and when Numba's on-disk cache is thrown away.

* :func:`jit` is the only way kernels are compiled: nopython mode, float64, GIL released, on-disk cache unless
  ``GPSSM_NP_NUMBA_CACHE=0``; ``fastmath`` off unless a kernel asks for the flags of ``_config`` (FASTMATH:
  contraction only; FASTMATH_SUMS: also reassociation, for kernels that sum over particles).
* Numba's cache checks only the timestamp of the file a function is defined in, not of the files it calls into
  (numba docs, "Caching notes"). Kernels here call helpers in sibling files, so :func:`_drop_stale_cache` keys the
  whole cache on a hash of every source file in this folder.
"""
import glob
import hashlib
import os

import numba

from .._config import NUMBA_CACHE


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


def kernels_on_disk():
    """Whether Numba's on-disk cache of this folder holds the compiled rollout (its index file), so that the first
    call of this process loads the kernels (about a second) rather than compiling them (about a minute)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return NUMBA_CACHE and bool(glob.glob(os.path.join(here, "__pycache__", "rollout._fwd_block-*.nbi")))


def jit(fn=None, *, fastmath=(), inline=False):
    """Compile ``fn`` with the package's Numba options; ``fastmath`` is a set of LLVM fast-math flags (one of
    ``_config.FASTMATH`` and ``_config.FASTMATH_SUMS``); ``inline=True`` inlines a small scalar helper into its
    callers before LLVM sees them (LLVM's own inliner gives up on helpers of a few dozen instructions, and a loop
    that calls a function does not vectorise)."""

    def compile_(f):
        return numba.njit(cache=NUMBA_CACHE, fastmath=set(fastmath) or False, error_model="numpy", nogil=True,
                          inline="always" if inline else "never")(f)

    return compile_ if fn is None else compile_(fn)
