"""How every kernel of ``gpssm_np.ops`` is compiled, and when Numba's on-disk cache is thrown away.

* :func:`jit` is the only way kernels are compiled: nopython mode, float64, GIL released, on-disk cache unless
  ``GPSSM_NP_NUMBA_CACHE=0``; ``fastmath`` off unless a kernel asks for the flags of ``_config`` (FASTMATH:
  contraction only; FASTMATH_SUMS: also reassociation, for kernels that sum over particles).
* Numba's cache checks only the timestamp of the file a function is defined in, not of the files it calls into
  (numba docs, "Caching notes"). Kernels here call helpers in sibling files, so :func:`_drop_stale_cache` keys the
  whole cache on a hash of every source file in this folder, in every folder Numba may cache them in
  (:func:`cache_dirs`: under ``NUMBA_CACHE_DIR``, ``__pycache__``, Numba's user-wide folder).
"""
import glob
import hashlib
import os

import numba

from .._config import NUMBA_CACHE


def _source_stamp(folder):
    """A hash of every source file of ``folder`` (this one: the kernels and everything they inline)."""
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(folder, "*.py"))):
        digest.update(os.path.basename(path).encode() + b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


def _cache_subpath(folder):
    """The folder inside a cache root where Numba keeps the kernels of the files in ``folder`` (its
    ``get_suitable_cache_subpath``: the folder's name and a SHA-1 of its path)."""
    try:
        from numba.core.caching import _CacheLocator

        return _CacheLocator.get_suitable_cache_subpath(os.path.join(folder, "_compile.py"))
    except (ImportError, AttributeError):  # another Numba: the same rule, written out
        folder = os.path.abspath(folder)
        return "_".join([os.path.basename(folder), hashlib.sha1(folder.encode()).hexdigest()])


def _cache_folders():
    """(folder, create) for every folder where Numba may keep the compiled kernels of this folder, in the order
    Numba tries them: under ``NUMBA_CACHE_DIR`` when it is set, ``__pycache__`` beside the sources (both created
    when missing, to hold the stamp), and Numba's user-wide cache folder (checked only when it exists)."""
    here = os.path.dirname(os.path.abspath(__file__))
    folders = []
    if numba.config.CACHE_DIR:
        folders.append((os.path.join(numba.config.CACHE_DIR, _cache_subpath(here)), True))
    folders.append((os.path.join(here, "__pycache__"), True))
    try:
        from numba.misc.appdirs import AppDirs

        folders.append((os.path.join(AppDirs(appname="numba", appauthor=False).user_cache_dir,
                                     _cache_subpath(here)), False))
    except ImportError:
        pass
    return folders


def cache_dirs():
    """Every folder where Numba may keep the compiled kernels of this folder (:func:`_cache_folders`)."""
    return [folder for folder, _ in _cache_folders()]


def _drop_stale_cache():
    """Remove the compiled kernels of every cache folder (:func:`cache_dirs`) whose stamp is not the hash of the
    current sources, and stamp it: a change to any file of this folder invalidates every kernel, including those
    that inline code of another file (enkf.py and dmm.py compile rollout.py's steps into their own kernels), wherever
    the cache lives."""
    stamp = _source_stamp(os.path.dirname(os.path.abspath(__file__)))
    for cache_dir, create in _cache_folders():
        if not create and not os.path.isdir(cache_dir):
            continue
        stamp_path = os.path.join(cache_dir, "gpssm_np_ops.stamp")
        try:
            with open(stamp_path) as fh:
                if fh.read() == stamp:
                    continue
        except OSError:
            pass
        try:
            os.makedirs(cache_dir, exist_ok=True)
            for path in glob.glob(os.path.join(cache_dir, "*.nb[ic]")):
                os.remove(path)
            with open(stamp_path, "w") as fh:
                fh.write(stamp)
        except OSError:  # read-only: numba then uses the next folder, which is checked too
            pass


if NUMBA_CACHE:
    _drop_stale_cache()


def _used_cache_dir():
    """The folder Numba reads and writes this folder's kernels in: under ``NUMBA_CACHE_DIR`` when it is set, else
    ``__pycache__`` beside the sources when it is writable, else Numba's user-wide folder (the order of Numba's
    cache locators)."""
    folders = _cache_folders()
    if numba.config.CACHE_DIR or os.access(folders[0][0], os.W_OK) or len(folders) == 1:
        return folders[0][0]
    return folders[1][0]


def kernels_on_disk(kernel="rollout._fwd_blocks"):
    """Whether the cache folder Numba uses (:func:`_used_cache_dir`) holds the compiled ``kernel``
    ("module.function"; by default the rollout, whose index file says that the first call of this process loads
    the kernels, about a second, rather than compiling them, tens of seconds)."""
    return NUMBA_CACHE and bool(glob.glob(os.path.join(_used_cache_dir(), f"{kernel}-*.nbi")))


def jit(fn=None, *, fastmath=(), inline=False, from_python=True):
    """Compile ``fn`` with the package's Numba options; ``fastmath`` is a set of LLVM fast-math flags (one of
    ``_config.FASTMATH`` and ``_config.FASTMATH_SUMS``).

    ``inline=True`` inlines ``fn`` into its callers before LLVM sees them, where it takes the callers' fast-math
    flags: for a small scalar helper (LLVM's own inliner gives up on helpers of a few dozen instructions, and a loop
    that calls a function does not vectorise), and for a helper with one caller (compiled once, inside it, rather
    than on its own and then again when linked into the caller). ``from_python=False`` is for a kernel that only
    other kernels call: Numba then builds no Python entry point for it (unboxing dozens of arrays). No kernel is
    used as a first-class function, so none gets Numba's C-callable wrapper either."""

    def compile_(f):
        return numba.njit(cache=NUMBA_CACHE, fastmath=set(fastmath) or False, error_model="numpy", nogil=True,
                          inline="always" if inline else "never", no_cpython_wrapper=not from_python,
                          no_cfunc_wrapper=True)(f)

    return compile_ if fn is None else compile_(fn)
