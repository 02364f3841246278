"""What the linear baselines share: their dimensions, and the facade of ``estimator.py`` for a model fitted in
closed form (least squares, EM) rather than by gradient steps."""
from dataclasses import dataclass

import numpy as np

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

    #: Steps at the end of the training data that a forecast without past data starts from (as the GP models do).
    DATA_TAIL = 200

    def __init__(self, dim_x, dim_y, dim_u, seed, standardize=True):
        super().__init__(seed, standardize)
        dim_y = check.positive_int(dim_y, "dim_y")  # first: the ARX's dim_x is its dim_y
        self.spec = BaselineSpec(check.positive_int(dim_x, "dim_x"), dim_y, check.non_negative_int(dim_u, "dim_u"))
        self.fitted = False
        self.data_tail_ = None  # (y, u) of the last DATA_TAIL steps fitted on (model units), set by fit

    def _remember_tail(self, data):
        """Keep the last :data:`DATA_TAIL` steps of the last training sequence (``data``: list of (y, u), model
        units): ``forecast`` without ``y_past`` continues from them."""
        y, u = data[-1]
        self.data_tail_ = (np.array(y[-self.DATA_TAIL:]), np.array(u[-self.DATA_TAIL:]))

    def _past_or_tail(self, y_past, u_past):
        """(y_past, u_past, origin) of a forecast: the past data given, else the end of the training data (after
        fit, or from a model file that keeps it), else (None, None, None): the model's own start."""
        if y_past is not None:
            return y_past, u_past, "y_past"
        if self.data_tail_ is not None:
            return (*self.data_tail_, "end of the training data")
        return None, None, None

    def extra_state(self):
        """The state of ``StateSpaceModel.extra_state`` and the end of the training data (``data_tail_``)."""
        state = super().extra_state()
        if self.data_tail_ is not None:
            state["tail_y"], state["tail_u"] = self.data_tail_
        return state

    def set_extra_state(self, state):
        """Restore :meth:`extra_state`'s dict (files without the training data's end load without it)."""
        state = dict(state)
        tail_y, tail_u = state.pop("tail_y", None), state.pop("tail_u", None)
        super().set_extra_state(state)
        if tail_y is not None:
            tail_u = np.zeros((len(tail_y), 0)) if tail_u is None else tail_u
            self.data_tail_ = (np.asarray(tail_y, dtype=np.float64).reshape(len(tail_y), self.spec.dim_y),
                               np.asarray(tail_u, dtype=np.float64).reshape(len(tail_y), self.spec.dim_u))

    def constrained_params(self):
        """The fitted parameters (:meth:`get_learned_params`: they are the model's own values, covariances and variances
        included); ValueError before fit."""
        self._check_fitted()
        return self.get_learned_params()

    def _check_fitted(self):
        if not self.fitted:
            raise ValueError(f"model: this {type(self).__name__} is not fitted yet; call fit(y, u) first")
