r"""The ARX as a linear Gaussian state-space model in observer form: the form in which the GP models hold an ARX floor.

An ARX with n lags (``arx.py``'s notation, the lags of outputs and inputs padded to n = max(na, nb) with zeros)::

    y_t = sum_{k=1..n} A_k y_{t-k} + sum_{k=0..n-1} B_k u_{t-k} + e_t,     e_t ~ N(0, diag sigma^2)

is exactly the state-space model with d_x = n d_y states x_t = [x^(1)_t; ...; x^(n)_t] (each d_y) in observer
form (Ljung 1999, sec. 4.3)::

    x^(1)_t = A_1 x^(1)_{t-1} + x^(2)_{t-1} + B_0 u_t + e_t          (x^(1)_t = y_t)
    x^(k)_t = A_k x^(1)_{t-1} + x^(k+1)_{t-1} + B_{k-1} u_t           (k = 2..n; x^(n+1) = 0)

x^(k)_t = sum_{i>=k} A_i y_{t+k-1-i} + sum_{i>=k-1} B_i u_{t+k-1-i} is the part of y_{t+k-1} the past already
fixes, so only the first block carries noise, and the emission is H = [I, 0] (paper Eq. (4b)) with the input acting
on the step it belongs to (the package's convention, x_t = F x_{t-1} + G u_t). Unrolling the recursion gives the
ARX equation back. Unlike the LGSSM's states, these are lagged outputs and inputs: a model whose states are the
recent past, as the ARX baseline's, which the LGSSM's EM need not find (on the winding process and dryer2 the ARX
forecasts better, research/results_history.md 6.13).

Noise: the state-space model needs measurement noise for a particle filter to weight its particles (with R = 0 a
particle whose first block misses y_t by any amount gets weight 0), so a share :data:`OBS_SHARE` of sigma^2 becomes
R and the rest the process noise of the first block: the one-step predictive variance of y_t stays sigma^2 and the
forecast means nearly those of the ARX (the filter weights the new output by 1 - OBS_SHARE against the prediction;
assumption: a tenth keeps the two close while leaving the particles' weights spread). The other blocks get no
process noise (or ``undriven_var``). ``models/warm_start.floor_warm_start`` builds the GP model's start from it.
"""
import numpy as np

#: Share of the ARX residual variance that the state-space form calls measurement noise (module docstring).
OBS_SHARE = 0.1


def observer_form(a, b, noise_var, obs_share=OBS_SHARE, undriven_var=0.0):
    """F, G, H, Q, R (module docstring) of the ARX with coefficients ``a`` (n, d_y, d_y), ``b`` (n, d_y, d_u) and
    residual variances ``noise_var`` (d_y,). ``undriven_var``: a process-noise variance for the blocks after the
    first, which have none in the ARX; a small positive one keeps the Kalman filter's predicted covariance
    positive definite (those states are fixed by the past outputs, so it tends to a singular one)."""
    n, dy, du = len(a), a.shape[1], b.shape[2]
    dx = n * dy
    F, G = np.zeros((dx, dx)), np.zeros((dx, du))
    for k in range(n):
        block = slice(k * dy, (k + 1) * dy)
        F[block, :dy] = a[k]
        G[block] = b[k]
        if k + 1 < n:
            F[block, (k + 1) * dy:(k + 2) * dy] = np.eye(dy)
    H = np.eye(dy, dx)
    Q = np.zeros((dx, dx))
    Q[:dy, :dy] = np.diag((1.0 - obs_share) * noise_var)
    Q[dy:, dy:] = undriven_var * np.eye(dx - dy)
    return F, G, H, Q, np.diag(obs_share * noise_var)
