"""Compiling kernels in child processes while this one works on: :func:`start` and :func:`compile_group`.

Numba compiles on one thread, and a first default fit spends most of its first half minute compiling. Its kernels
fall into three parts of similar compile time that it needs one after the other: the floor's Kalman filter and
the free run, then the particle filter's fused step of the folds' scores (``ops.adapted_step``, group "filter"),
then the ensemble Kalman objective's forward and reverse kernels for training (``ops.enkf``, group "enkf"). On a
cold cache :func:`start` compiles a group in a child process (``python -c`` calling :func:`compile_group`) that
writes it to Numba's on-disk cache, while this process compiles the first part; :meth:`Ahead.wait`, before the
group's first use, waits for the child, and the kernels are then loaded from the cache instead of compiled. On two
cores the compile time is about half the sum rather than the sum. Nothing changes in the numbers: a kernel loaded
from the cache is the code this process would have compiled.

Assumptions: the child finds the same package and the same cache folder (it inherits the environment, with this
package's parent folder put first on ``PYTHONPATH`` unless it is a site-packages folder); a child that fails, or
takes longer than :data:`WAIT_SECONDS`, costs nothing but its time, because this process then compiles what it
misses itself. Without the on-disk cache (``GPSSM_NP_NUMBA_CACHE=0``) there is nothing to share, and without a
Python interpreter to start (an embedded interpreter with no ``sys.executable``, a frozen application) no child:
:func:`start` then starts nothing.
"""
import os
import site
import subprocess
import sys

import autograd.numpy as anp
import numpy as np
from autograd import grad

from ._compile import NUMBA_CACHE, kernels_on_disk
from .adapted_step import adapted_step_example, draw, gp_arrays, propagate
from .enkf import enkf_example, enkf_loglik
from .kernels import KERNELS

#: Seconds :meth:`Ahead.wait` waits for the child at most (each group takes about 15 s on an idle two-core machine).
WAIT_SECONDS = 300.0
#: The arguments of ``enkf_loglik`` that a model's objective differentiates (everything but the outputs, the inputs
#: and the ensemble's output noise).
ENKF_ARGNUMS = (0, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15)


def forward_and_back(fn, args, argnums, **kwargs):
    """The value and the gradient of a fixed random projection of ``fn(*args)``: one forward and one VJP of each
    primitive inside, on arguments of the types real calls use, so that their kernels are compiled (or loaded)."""
    rng = np.random.default_rng(0)
    weights = []

    def scalar(*a):
        out = fn(*a, **kwargs)
        outs = out if isinstance(out, tuple) or type(out).__name__ == "SequenceBox" else (out,)
        if not weights:
            weights.extend(rng.normal(size=np.shape(o)) for o in outs)
        return sum(anp.sum(o * w) for o, w in zip(outs, weights))

    return grad(scalar, list(argnums))(*args)


def _enkf():
    """The ensemble Kalman objective's forward and reverse kernels, for both covariance functions."""
    rng = np.random.default_rng(0)
    for kind in KERNELS:
        forward_and_back(enkf_loglik, enkf_example(rng), ENKF_ARGNUMS, kind=kind)


def _filter_step():
    """The particle filter's fused fully adapted step: ``propagate`` and ``draw`` (the covariance function is an
    argument of the kernel, not a compile-time choice)."""
    x, log_w, u_t, Z, ell, s2, alpha, B, A, F, G, b, q, C, r, y, resample, uniform, eps = adapted_step_example(
        np.random.default_rng(0))
    mean, chol, log_w = propagate(x, log_w, u_t, gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, q), C, r, y)[:3]
    draw(mean, chol, log_w, resample, uniform, eps, C)


#: group name -> (the function that compiles it, the kernel whose cache index says the group is on disk).
GROUPS = {"enkf": (_enkf, "enkf._vjp_blocks"), "filter": (_filter_step, "adapted_step._draw_kernel")}


def _group(name):
    """(compile function, index kernel) of group ``name`` of :data:`GROUPS`; ValueError for another name."""
    if name not in GROUPS:
        raise ValueError(f"name: expected one of {sorted(GROUPS)}, got {name!r}")
    return GROUPS[name]


def compile_group(name):
    """Compile (or load) the kernels of group ``name`` of :data:`GROUPS` in this process."""
    _group(name)[0]()


class Ahead:
    """A child compiling a group (``process``), or nothing to wait for (``process`` None). The process that started
    it ends it by :meth:`wait` before the group's first use, or by :meth:`stop` when it will not use the group (a
    fit that ends before its first training step, or raises): no child outlives the fit that started it, and none
    is left to the garbage collector, which would warn that it is still running (``ResourceWarning``)."""

    def __init__(self, process=None):
        self.process = process

    def wait(self, timeout=WAIT_SECONDS):
        """Wait until the child has ended, at most ``timeout`` seconds (then it is stopped); True when it ended by
        itself with success. Later calls return at once."""
        process, self.process = self.process, None
        if process is None:
            return False
        try:
            return process.wait(timeout) == 0
        except subprocess.TimeoutExpired:
            _end(process)
            return False

    def stop(self):
        """End the child now if it still runs (its kernels are then compiled by whoever needs them next: Numba
        writes a cache file whole or not at all); later calls, and :meth:`wait`, return at once."""
        process, self.process = self.process, None
        if process is not None:
            _end(process)


def _end(process):
    """Kill ``process`` if it still runs, and reap it."""
    if process.poll() is None:
        process.kill()
    process.wait()


def _package_root():
    """The folder that holds this package, for the child's ``PYTHONPATH``; None when it is a site-packages folder,
    which the child finds anyway (put first on its path, it would come before the standard library)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        sites = site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module
        sites = []
    return None if os.path.normcase(root) in {os.path.normcase(os.path.abspath(p)) for p in sites} else root


def start(name):
    """Start compiling group ``name`` of :data:`GROUPS` in a child process, unless its kernels are already on disk
    or the on-disk cache is off (module docstring); returns an :class:`Ahead` to wait on."""
    index_kernel = _group(name)[1]
    if not NUMBA_CACHE or kernels_on_disk(index_kernel) or not sys.executable or getattr(sys, "frozen", False):
        return Ahead()  # nothing to share, or no Python interpreter to start (embedded, or a frozen application)
    path = (_package_root(), os.environ.get("PYTHONPATH"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    code = f"from gpssm_np.ops.compile_ahead import compile_group; compile_group({name!r})"
    try:
        process = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:  # no child processes here: this process compiles everything itself
        return Ahead()
    return Ahead(process)
