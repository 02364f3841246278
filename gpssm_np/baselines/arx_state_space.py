r"""The ARX as a linear Gaussian state-space model in observer form: the GP models' ARX-shaped warm start.

An ARX of order n (na = nb = n, no intercept; ``arx.py``'s notation)::

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

Fitting (:func:`fit_arx_lgssm`): least squares of y_t on [y_{t-1}, ..., y_{t-n}, u_t, ..., u_{t-n+1}] over every
step with a full regressor (``arx.arx_regressors`` without its intercept column: the data are standardised, so the
intercept is near 0, and the LGSSM has none); sigma^2 the residual variance per output. Noise: the state-space
model needs measurement noise for a particle filter to weight its particles (with R = 0 a particle whose first
block misses y_t by any amount gets weight 0), so a share :data:`OBS_SHARE` of sigma^2 becomes R and the rest
the process noise of the first block: the one-step predictive variance of y_t stays sigma^2 and the forecast means
nearly those of the ARX (the filter weights the new output by 1 - OBS_SHARE against the prediction; assumption:
a tenth keeps the two close while leaving the particles' weights spread). The other blocks get no process noise.
m_0, P_0: mean and covariance of the smoothed states of the training data, as the LGSSM's after EM.

An order whose AR part is unstable (spectral radius of F, that of the ARX's companion matrix, >= 1) is rejected with a
ValueError, as the ARX's order selection rejects it: its free runs diverge. Where a model is needed anyway (the
warm start of an order chosen on other data, e.g. a refit on more data), ``stabilise=True`` scales the outlying
eigenvalues of F back inside the unit circle as the LGSSM does (``LGSSM.stabilise``); F is then no longer in
observer form, H = [I, 0] and the noise stay.
"""
import numpy as np

from ._base import COV_FLOOR
from .arx import arx_blocks, arx_is_stable, arx_regressors
from .lgssm import LGSSM

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


def arx_least_squares(ys, us, order):
    """Theta (n d_y + n d_u, d_y), the rows [A_1 .. A_n, B_0 .. B_{n-1}]^T of ``arx.py``'s Theta (no intercept
    row), and the residual variances (d_y,) of the ARX of ``order`` = n on the sequences ``ys`` (list of
    (T_i, d_y)), ``us`` (list of (T_i, d_u)); ``arx.arx_blocks`` splits Theta into the coefficients."""
    pairs = [(y, u) for y, u in zip(ys, us) if len(y) > order]
    if not pairs:
        raise ValueError(f"y: every sequence is shorter than the ARX order {order} plus one")
    rows = np.concatenate([arx_regressors(y, u, order, order, order)[:, :-1] for y, u in pairs])
    targets = np.concatenate([y[order:] for y, _ in pairs])
    if len(rows) <= rows.shape[1]:
        raise ValueError(f"y: {len(rows)} steps cannot fit the {rows.shape[1]} coefficients of an ARX of order "
                         f"{order}")
    theta = np.linalg.lstsq(rows, targets, rcond=None)[0]  # (n d_y + n d_u, d_y)
    noise_var = np.sum((targets - rows @ theta) ** 2, axis=0) / (len(rows) - rows.shape[1])
    return theta, noise_var


def fit_arx_lgssm(ys, us, order, obs_share=OBS_SHARE, stabilise=False):
    """An :class:`LGSSM` (``standardize=False``: the units of ``ys``, ``us``) holding the observer form of the ARX of
    ``order`` fitted to the lists ``ys``, ``us`` (module docstring); an unstable fit raises ValueError, or with
    ``stabilise`` has its F stabilised."""
    theta, noise_var = arx_least_squares(ys, us, order)
    F, G, H, Q, R = observer_form(*arx_blocks(theta, order, order, us[0].shape[1]),
                                  np.maximum(noise_var, COV_FLOOR), obs_share, undriven_var=COV_FLOOR)
    dx, dy, du = F.shape[0], H.shape[0], G.shape[1]
    model = LGSSM(dim_x=dx, dim_y=dy, dim_u=du, standardize=False)
    if not arx_is_stable(theta, order):  # F's eigenvalues are those of the ARX's companion matrix
        if not stabilise:
            raise ValueError(f"order: the ARX of order {order} fitted to these data is unstable")
        F = model.stabilise(F)
    model.set_learned_params({"F": F, "G": G, "H": H, "Q": Q, "R": R, "m0": np.zeros(dx), "P0": np.eye(dx)})
    model.set_stationary_prior(list(zip(ys, us)))
    return model
