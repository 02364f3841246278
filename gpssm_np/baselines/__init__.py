r"""Linear baselines with the estimator surface of the state-space models (``estimator.py``): :class:`ARX`
(``arx.py``) and :class:`LGSSM` (``lgssm.py``, on the Kalman filter and smoother of ``gpssm_np.kalman``).

Both follow the package's time convention: the input u_t acts on the step that produces y_t. Arrays are 0-based,
``y[t]`` and ``u[t]`` belonging to the same step. Both implement :class:`gpssm_np.models.StateSpaceModel`: ``spec``
(dim_x, dim_y, dim_u), ``fit(y, u, data_name=None)`` (fitted in closed form: the GP models' training options,
``epochs``, ``plan`` and the others of ``estimator.TRAINING_OPTIONS``, are a ValueError naming them), ``q_x0(y_window,
u_window)``, ``forecast(u_future, y_past=None, u_past=None, num_samples=50, seed=0, x0=None, ...)`` returning a
:class:`gpssm_np.forecast.Forecast`, ``get_config``, ``get_params``/``set_params`` (the constructor arguments),
``get_learned_params``/``set_learned_params`` (the fitted arrays, so ``gpssm_np.save`` and ``gpssm_np.load`` keep
them), the units of the data (``standardize``, ``scaling_``), ``history_`` and ``has_latent_state``.

References: L. Ljung, System Identification (1999), ch. 4 and 7 (ARX, least squares); P. Van Overschee and B. De
Moor, "N4SID", Automatica 30(1), 1994; R. H. Shumway and D. S. Stoffer, J. Time Series Anal. 3(4), 1982;
Z. Ghahramani and G. E. Hinton, "Parameter estimation for linear dynamical systems", Tech. Rep. CRG-TR-96-2, 1996.
"""
from ..kalman import KalmanResult, kalman_filter, rts_smoother
from ._base import COV_FLOOR, BaselineSpec
from .arx import ARX, arx_is_stable, arx_regressors, arx_simulate
from .lgssm import LGSSM, UnscoredOrderWarning, subspace_states

__all__ = ["ARX", "COV_FLOOR", "LGSSM", "BaselineSpec", "KalmanResult", "arx_is_stable", "arx_regressors",
           "UnscoredOrderWarning", "arx_simulate", "kalman_filter", "rts_smoother", "subspace_states"]
