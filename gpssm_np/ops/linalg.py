"""Dense linear-algebra building blocks shared by the jitted kernels and the NumPy code (Kalman filter, particle
filter, linear baselines)."""
import numpy as np

from ._compile import jit


@jit
def symmetrise(a):
    """(A + A^T) / 2 of a square matrix A, or of every matrix of a stack (..., d, d).

    Products such as F P F^T or L^{-T} L^{-1} are symmetric in exact arithmetic but not after rounding; the next
    Cholesky factorisation or eigen-decomposition reads only one triangle, so the two must agree. The result is
    exactly symmetric, hence symmetrising twice changes nothing. Jitted, so kernels call it too.
    """
    return 0.5 * (a + np.swapaxes(a, -1, -2))
