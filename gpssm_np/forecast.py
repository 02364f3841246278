r"""Free-running forecasts with a trained GPSSM, and the :class:`Forecast` they return.

A forecast of T steps with known inputs u_{1:T} starts from S particles x_0^(s) (from q(x0), from a particle filter
over past data, or given) and samples x_t^(s) ~ q(x_t | x_{t-1}^(s)) = N(mu + A m_h, A S_h A^T + Q) (paper Eq.
(12); ``transition.Transition.rollout``), no observation being assimilated. The point forecast is the particle mean of
the noise-free output C x_t (the authors' evaluation, docs/design.md s8); the predictive distribution of y_t is
summarised by a Gaussian with the particle mean and variance of C x_t plus the observation noise R. A model without a
GP residual forecasts exactly instead (``GPSSM.linear_gaussian``), as the linear models do: its samples are re-centred
on the exact predictive mean, and it gives the exact variance of C x_t (``Forecast.output_var``), so that neither the
point forecast nor the intervals carry Monte-Carlo error.
"""
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from . import _validation as check
from .metrics import gaussian_interval


@dataclass(frozen=True)
class Forecast:
    """Samples of a forecast and their Gaussian summary.

    Attributes
    ----------
    samples : ndarray (S, T, d_y)
        Particle samples of the noise-free output C x_t.
    states : ndarray (S, T, d_x)
        The latent state samples x_t.
    obs_var : ndarray (d_y,)
        Observation noise variances R, added to the predictive variance.
    y_mean, y_std : ndarray (d_y,) or None
        For a forecast in the model's standardised units (``model.forecast(..., units="model")``) the
        standardisation y_model = (y - y_mean) / y_std that :meth:`in_original_units` undoes; None for a forecast in
        original units (the default of ``model.forecast``).
    std_scale : ndarray (d_y,) or None
        A factor on each output's predictive standard deviation, the calibration a model's fit estimated on its
        folds or validation block (the plans' ``calibrate``, ``models/training.py``; the ARX's and the LGSSM's
        ``calibrate``); None: 1. The samples stay the model's.
    output_var : ndarray (T, d_y) or None
        The exact predictive variance of C x_t where the model computes it (the linear Gaussian models: ``LGSSM``,
        ``ARX``, a GP model without a residual); None: the particle variance of :attr:`samples` stands in for it.
    origin : str or None
        Where the forecast starts: "x0" (given), "y_past" (filtered from the past data given), "end of the training
        data" (filtered from the last steps the model was fitted on), "online filter" (the current state of a
        ``model.online_filter()``), "q(x0)" (the model's initial-state distribution) or "p(x0)" (the prior
        N(0, I), where a model's q(x0) is a recognition network that has no data to read); None for models that do
        not say.
    """

    samples: np.ndarray
    states: np.ndarray
    obs_var: np.ndarray
    y_mean: Optional[np.ndarray] = None
    y_std: Optional[np.ndarray] = None
    origin: Optional[str] = None
    std_scale: Optional[np.ndarray] = None
    output_var: Optional[np.ndarray] = None

    @property
    def mean(self):
        """Point forecast (T, d_y): the particle mean of C x_t."""
        return self.samples.mean(axis=0)

    @property
    def std(self):
        """Predictive standard deviation of y_t (T, d_y): sqrt(variance of C x_t + R), times :attr:`std_scale` when
        there is one; the variance of C x_t is :attr:`output_var` where the model gave it, else the particles'."""
        var = self.samples.var(axis=0) if self.output_var is None else self.output_var
        std = np.sqrt(var + self.obs_var)
        return std if self.std_scale is None else std * self.std_scale

    def interval(self, level=None, alpha=None):
        """Central predictive interval (lower, upper), each (T, d_y), of the Gaussian N(mean, std^2).

        Give its coverage as ``level`` (0.95: the 95 % interval) or, as statsmodels does, as ``alpha`` = 1 - level
        (0.05: the 95 % interval); at most one of them; neither gives the 95 % interval."""
        return gaussian_interval(self.mean, self.std, coverage_level(level, alpha))

    def summary_frame(self, level=None, alpha=None):
        """The forecast as a table in the long format, one row per output and step, with statsmodels' column names
        (``get_forecast(...).summary_frame()``): "mean" (the point forecast), "mean_se" (the predictive standard
        deviation :attr:`std` of y_t, observation noise included), "mean_ci_lower" and "mean_ci_upper" (the
        :meth:`interval` of coverage ``level``, or 1 - ``alpha``; default 95 %).

        Returns a pandas DataFrame indexed by ("output", "step") (output 0..d_y-1, step 0..T-1, output-major) when
        pandas can be imported, else a dict of 1-D arrays with the same columns plus "output" and "step"
        (``pandas.DataFrame(d).set_index(["output", "step"])`` turns it into the frame)."""
        lower, upper = self.interval(level, alpha)
        T, d_y = self.mean.shape
        columns = {"output": np.repeat(np.arange(d_y), T), "step": np.tile(np.arange(T), d_y)}
        for name, value in (("mean", self.mean), ("mean_se", self.std), ("mean_ci_lower", lower),
                            ("mean_ci_upper", upper)):
            columns[name] = value.T.reshape(-1)  # output-major, as the index
        try:
            import pandas
        except ImportError:  # pandas is optional
            return columns
        return pandas.DataFrame(columns).set_index(["output", "step"])

    def in_original_units(self):
        """The same forecast with outputs mapped back through y = y_std * y_model + y_mean (the latent states stay
        the model's); the forecast itself when it is in original units already (y_mean None)."""
        if self.y_mean is None or self.y_std is None:
            return self
        output_var = None if self.output_var is None else self.output_var * self.y_std**2
        return replace(self, samples=self.samples * self.y_std + self.y_mean, obs_var=self.obs_var * self.y_std**2,
                       output_var=output_var, y_mean=None, y_std=None)

    def outputs_in_order(self, idx):
        """The same forecast with its output columns taken in the order ``idx`` (the latent states unchanged)."""
        names = ("samples", "obs_var", "y_mean", "y_std", "std_scale", "output_var")
        changes = {name: getattr(self, name)[..., idx] for name in names if getattr(self, name) is not None}
        return replace(self, **changes)


def coverage_level(level=None, alpha=None):
    """The coverage of an interval given as ``level`` or as statsmodels' ``alpha`` = 1 - level (at most one of
    them; neither: 0.95); ValueError for both, or for a value outside (0, 1)."""
    if level is not None and alpha is not None:
        raise ValueError(f"level, alpha: give the coverage as level (e.g. 0.95) or as alpha = 1 - level (e.g. 0.05), "
                         f"not both; got level={level!r} and alpha={alpha!r}")
    if alpha is None:
        return 0.95 if level is None else check.fraction(level, "level")
    return 1.0 - check.fraction(alpha, "alpha")


def free_run(transition, x0, u, rng):
    """Sample x_{1:T} for each row of x0 (S, d_x) with inputs u (T, d_u) through ``transition``
    (:class:`gpssm_np.transition.Transition`); returns states (S, T, d_x)."""
    S, T = x0.shape[0], u.shape[0]
    eps_h = rng.standard_normal((T, S, transition.spec.num_latent))
    eps_x = rng.standard_normal((T, S, transition.spec.dim_x))
    X = transition.rollout(x0, u[None], eps_h, eps_x)  # (T, S, d_x)
    return np.ascontiguousarray(np.transpose(X, (1, 0, 2)))
