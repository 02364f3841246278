"""Numba policy for ``gpssm_np.ops`` and the glue between Numba kernels and autograd.

* :func:`jit` is the only way kernels are compiled: nopython mode, float64, ``fastmath`` off, on-disk cache unless
  ``GPSSM_NP_NUMBA_CACHE=0``.
* Numba's cache checks only the timestamp of the file a function is defined in, not of the files it calls into
  (numba docs, "Caching notes"). Kernels here call helpers in sibling files, so :func:`_drop_stale_cache` keys the
  whole cache on a hash of every source file in this folder.
* :func:`to_c_f64` is applied to every array before it enters jitted code: float32, Fortran-ordered or strided
  inputs all reach the kernels as C-contiguous float64, so each kernel compiles once.
* :func:`vjp_all_argnums` adapts a VJP that returns gradients for every argument at once to
  ``autograd.extend.defvjp_argnums`` (the pattern of autograd's ``argnums_unpack``).
"""
import glob
import hashlib
import os

import numba
import numpy as np

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


def jit(fn):
    """Compile ``fn`` with the package's Numba options."""
    return numba.njit(cache=NUMBA_CACHE, fastmath=False, error_model="numpy")(fn)


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
