"""What the linear baselines share: their dimensions, and the facade of ``estimator.py`` for a model fitted in
closed form (least squares, EM) rather than by gradient steps."""
from dataclasses import dataclass

from .. import _validation as check
from ..estimator import StateSpaceModel

#: Added to the diagonals of estimated noise covariances (Q, R, P_0) and ARX residual variances.
COV_FLOOR = 1e-8


@dataclass(frozen=True)
class BaselineSpec:
    """Dimensions of a baseline: state (for the ARX: d_y, its sampled outputs), output and input."""

    dim_x: int
    dim_y: int
    dim_u: int


class LinearBaseline(StateSpaceModel):
    """A :class:`StateSpaceModel` fitted in closed form: ``fit`` accepts the GP training options and ignores them
    (``estimator.check_training_options``); ``fitted`` says whether it has been fitted (or given parameters)."""

    #: No recognition network: q(x0) comes from the model itself.
    recognition = None

    def __init__(self, dim_x, dim_y, dim_u, seed, standardize=True):
        super().__init__(seed, standardize)
        self.spec = BaselineSpec(check.positive_int(dim_x, "dim_x"), check.positive_int(dim_y, "dim_y"),
                                 check.non_negative_int(dim_u, "dim_u"))
        self.fitted = False

    def constrained_params(self):
        """The fitted parameters (:meth:`get_params`: they are the model's own values, covariances and variances
        included); ValueError before fit."""
        self._check_fitted()
        return self.get_params()

    def _check_fitted(self):
        if not self.fitted:
            raise ValueError(f"model: this {type(self).__name__} is not fitted yet; call fit(y, u) first")
