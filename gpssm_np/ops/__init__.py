"""Numba-compiled operations with hand-derived VJPs, registered as autograd primitives.

This sub-package is the only place that imports Numba. Each module holds one operation: its maths docstring,
an autograd.numpy reference, the jitted forward, the jitted VJP, the primitive and a small example input.
"""
from ._compile import kernels_on_disk

__all__ = ["kernels_on_disk"]
