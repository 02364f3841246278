"""What the linear baselines share: their dimensions, the facade of ``estimator.py`` for a model fitted in closed
form (least squares, EM) rather than by gradient steps, and the calibration of their forecast intervals.

**Calibration** (``calibrate=True``, research/ablation_plan.md, decision AI): after ``fit``, where the training data
hold rolling-origin folds (``datasets/folds.py``), a model of the same orders is fitted by the same procedure to
each fold's training part and forecasts the fold's windows (from the outputs before each, 50 samples, seed the
window's index); the factors ``interval_scale_`` (d_y,) = ``metrics.widening_factors`` of the standardised errors
|y - mean| / std over all windows then multiply the predictive std of every forecast of the model (its point
forecasts are unchanged). It is the rule by which the GP models' default fit calibrates theirs (its stage 5), on
the folds that choose the linear models' orders. Assumptions: the later part of the training data says how wide a
forecast's errors will be after it (the folds' assumption); a fold whose model cannot be fitted, and a window whose
forecast fails or is not finite, add nothing; without folds (too short a series) the intervals stay the model's own.
"""
import abc
from dataclasses import dataclass

import numpy as np

from .. import _validation as check
from ..datasets.folds import ORIGINS, fold_models, rolling_origin
from ..estimator import StateSpaceModel
from ..metrics import standardised_errors, widening_factors

#: Added to the diagonals of estimated noise covariances (Q, R, P_0) and ARX residual variances.
COV_FLOOR = 1e-8


@dataclass(frozen=True)
class BaselineSpec:
    """Dimensions of a baseline: state (for the ARX: d_y, its sampled outputs), output and input."""

    dim_x: int
    dim_y: int
    dim_u: int


class LinearBaseline(StateSpaceModel):
    """A :class:`StateSpaceModel` fitted in closed form: ``fit(y, u, data_name=None)`` takes no training options
    (those of the GP models are a ValueError naming them); ``fitted`` says whether it has been fitted (or given
    parameters)."""

    #: No recognition network: q(x0) comes from the model itself.
    recognition = None

    #: Samples of each fold forecast the calibration scores (the protocols' default).
    CALIBRATION_SAMPLES = 50

    def __init__(self, dim_x, dim_y, dim_u, seed, standardize=True, calibrate=True):
        super().__init__(seed, standardize)
        dim_y = check.positive_int(dim_y, "dim_y")  # first: the ARX's dim_x is its dim_y
        self.spec = BaselineSpec(check.positive_int(dim_x, "dim_x"), dim_y, check.non_negative_int(dim_u, "dim_u"))
        self.calibrate = check.boolean(calibrate, "calibrate")
        self.fitted = False

    @abc.abstractmethod
    def _fold_model(self, ys, us):
        """A model of this one's orders, fitted by its procedure to ``ys``, ``us`` (lists, model units;
        ``standardize=False``, uncalibrated): what the calibration's folds forecast with."""

    def _calibrated(self, data, origins=ORIGINS):
        """Set ``interval_scale_`` from the rolling-origin folds of ``data`` (list of (y, u), model units) when
        ``calibrate`` (module docstring); None without folds or without it. Returns ``self``."""
        self.interval_scale_ = None
        folds = rolling_origin([y for y, _ in data], [u for _, u in data], origins) if self.calibrate else []
        z, index = [], 0
        for fold, model, fitted in fold_models(folds, self._fold_model):
            if not fitted:
                index += len(fold.windows)
                continue
            for window in fold.windows:
                with np.errstate(over="ignore", invalid="ignore"):
                    try:
                        fc = model.forecast(window.u, y_past=window.y_past, u_past=window.u_past,
                                            num_samples=self.CALIBRATION_SAMPLES, seed=index)
                        z.append(standardised_errors(window.y, fc.mean, fc.std))
                    except (ValueError, np.linalg.LinAlgError):  # a fold model whose forecast fails adds nothing
                        pass
                index += 1
        z = np.concatenate(z) if z else np.zeros((0, self.spec.dim_y))
        z = z[np.all(np.isfinite(z), axis=1)]
        if len(z):
            self.interval_scale_ = widening_factors(z)
        return self

    def _learned_arrays(self, params, names, optional=()):
        """``set_learned_params``' reading of ``params``: None for an empty dict (the model is then marked unfitted),
        else {name: float64 C-ordered copy} of a dict with the keys ``names`` (and all of ``optional`` or none);
        ValueError naming the keys expected otherwise. The shapes are the caller's to check."""
        if isinstance(params, dict) and not params:
            self.fitted = False
            return None
        if not isinstance(params, dict) or set(params) not in (set(names), set(names) | set(optional)):
            also = f" (and optionally {list(optional)})" if optional else ""
            raise ValueError(f"params: expected an empty dict or one with keys {sorted(names)}{also}")
        return {name: np.array(value, dtype=np.float64, order="C") for name, value in params.items()}

    def constrained_params(self):
        """The fitted parameters (:meth:`get_learned_params`: they are the model's own values, covariances and variances
        included); ValueError before fit."""
        self._check_fitted()
        return self.get_learned_params()

    def _check_fitted(self):
        if not self.fitted:
            raise ValueError(f"model: this {type(self).__name__} is not fitted yet; call fit(y, u) first")

