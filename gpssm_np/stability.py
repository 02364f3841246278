r"""The stability of a linear transition x_t = F x_{t-1} + ...: its spectral radius, and F brought inside a circle.

A free run of a linear transition decays from any start when the spectral radius rho(F) = max_i |lambda_i| is below
1, and grows as rho(F)^t when it is above. :func:`clip_spectral_radius` scales every eigenvalue of F whose modulus
exceeds ``max_radius`` back onto that circle and keeps the others and the eigenvectors::

    F = V diag(lambda) V^{-1}   ->   V diag(lambda_i min(1, max_radius / |lambda_i|)) V^{-1}

(real for a real F: complex eigenvalues come in conjugate pairs, and both are scaled alike). It is not the
Euclidean projection onto the stable matrices (which has no closed form) but keeps F where it is stable and moves
only its unstable modes. Used by the LGSSM after each M-step (``baselines/lgssm.py``) and by the GP models' default
fit after each Adam step on the linear part of the transition's mean (``models/default_fit.py``, decision O of
research/ablation_plan.md).

Assumption: F is diagonalisable (true for almost every F); for a defective F the eigenvector matrix is
ill-conditioned and the result is only as accurate as its inverse.
"""
import numpy as np


def spectral_radius(F):
    """max_i |lambda_i(F)| of a square matrix F."""
    return float(np.max(np.abs(np.linalg.eigvals(F)))) if len(F) else 0.0


def clip_spectral_radius(F, max_radius):
    """F itself when its spectral radius is at most ``max_radius`` (or that is None); otherwise F with every
    eigenvalue of larger modulus scaled back onto that circle (module docstring)."""
    if max_radius is None:
        return F
    values, vectors = np.linalg.eig(F)
    if np.max(np.abs(values), initial=0.0) <= max_radius:
        return F
    scale = np.minimum(1.0, max_radius / np.abs(values))
    return np.real(vectors @ np.diag(values * scale) @ np.linalg.inv(vectors))
