"""Dense linear-algebra building blocks shared by the jitted kernels and the NumPy code (Kalman filter, particle
filter, linear baselines)."""
import math

import numpy as np

from ._compile import jit


def symmetrise(a):
    """(A + A^T) / 2 of a square matrix A, or of every matrix of a stack (..., d, d).

    Products such as F P F^T or L^{-T} L^{-1} are symmetric in exact arithmetic but not after rounding; the next
    Cholesky factorisation or eigen-decomposition reads only one triangle, so the two must agree. The result is
    exactly symmetric, hence symmetrising twice changes nothing. Plain NumPy: kernels write the same sum,
    0.5 * (a[i, j] + a[j, i]), in their own loops.
    """
    return 0.5 * (a + np.swapaxes(a, -1, -2))


@jit
def cholesky_into(a, L):
    """Write into L (d, d) the lower Cholesky factor of sym(a) = (a + a^T) / 2 for a square matrix a (d, d) (upper
    triangle of L zero); return False, L unfinished, when sym(a) is not positive definite (a pivot <= 0 or NaN).

    The loop of LAPACK's unblocked ``potf2`` (column by column, L_jj = sqrt(a_jj - sum_k L_jk^2), then L_ij = (a_ij -
    sum_k L_ik L_jk) / L_jj), for the tiny matrices of one particle, where a LAPACK call costs more than the work.
    Reading sym(a) makes it the factor of what :func:`symmetrise` would give.
    """
    d = a.shape[0]
    for j in range(d):
        s = a[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        pivot = math.sqrt(s)
        L[j, j] = pivot
        for i in range(j):
            L[i, j] = 0.0
        for i in range(j + 1, d):
            s = 0.5 * (a[i, j] + a[j, i])
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / pivot
    return True
