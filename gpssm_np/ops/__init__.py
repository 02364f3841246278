"""Numba-compiled operations with hand-derived VJPs, registered as autograd primitives.

This sub-package is the only place that imports Numba. Each module holds one operation: its maths docstring,
an autograd.numpy reference, the jitted forward, the jitted VJP, the primitive and a small example input.
"""
