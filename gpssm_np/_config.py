"""Numerical constants and environment switches shared by the whole package.

Everything is float64. The constants are documented here once; modules import them by name.
"""
import os

#: Jitter added to the diagonal of K(Z, Z) before its Cholesky factorisation.
JITTER = 1e-6

#: Floor on the conditional variance of a latent GP, var_q(x) = k(x, x) - k^T B k >= VAR_FLOOR.
#: Rounding can push the difference slightly below zero when x sits on an inducing input.
VAR_FLOOR = 1e-10

#: Floor added to every positive parameter: value = softplus(raw) + POSITIVE_FLOOR.
POSITIVE_FLOOR = 1e-6

#: Set GPSSM_NP_NUMBA_CACHE=0 to compile every kernel afresh in each process.
NUMBA_CACHE = os.environ.get("GPSSM_NP_NUMBA_CACHE", "1").strip().lower() not in ("0", "false", "no")
