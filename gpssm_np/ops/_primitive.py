"""Glue between the jitted kernels and autograd primitives.

* :func:`to_c_f64` is applied to every array before it enters jitted code: float32, Fortran-ordered or strided
  inputs all reach the kernels as C-contiguous float64, so each kernel compiles once.
* :func:`vjp_all_argnums` adapts a VJP that returns gradients for every argument at once to
  ``autograd.extend.defvjp_argnums`` (the pattern of autograd's ``argnums_unpack``).
"""
import numpy as np


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
