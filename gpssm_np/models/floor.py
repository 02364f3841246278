r"""The linear floor of the GP models: the better of the package's own ARX and LGSSM, each at its own best order.

The default fit of a GP model (``models/default_fit.py``) starts from, and never returns anything worse on its
evidence than, the better of the two linear models a user would fit as a baseline:

* ``ARX()`` with its orders (na, nb) chosen by its rolling-origin cross-validation (``baselines/arx.py``);
* ``LGSSM(dim_x="auto")`` with its state dimension chosen on the same folds (``baselines/lgssm_order.py``).

Both score a candidate the same way, by the RMSE of its forecast mean over the same windows of the same rolling-origin
folds (``datasets/folds.py``), so their best scores compare directly: the floor is the one with the lower score (ties to
the ARX, the simpler model to fit). Either is a state-space model whose transition mean the GP model holds exactly, and
its noise as far as the GP model's form allows (variances at least 2e-6, diagonal process noise, an ARX's residual
variances, not their correlations, split a tenth to measurement noise: ``arx_state_space.OBS_SHARE``;
``warm_start.floor_warm_start``): the ARX in observer form with d_x = n d_y states, n = max(na, nb), in the basis whose
lag states are white on the training data (``warm_start.whitened_basis``), the LGSSM after the change of basis that
makes its emission [I, 0]. With the GP residual at zero mean the GP model's transition mean is then the floor's, so
before any gradient step its forecasts are the floor's (up to the Monte-Carlo error of its particles;
``tests/test_floor.py`` checks the transition mean to 1e-10). With A = 0 (no GP part kept) the GP model is the floor in
its form, a linear Gaussian model, and forecasts exactly, through the Kalman filter (``GPSSM.linear_gaussian``,
``tests/test_linear_forecast.py``).

A GP model with a fixed ``dim_x`` takes the floor at that state dimension (``choose_floor(..., dim_x=d)``): the
LGSSM with d states and the ARX of d / d_y lags of outputs and inputs (na = nb = d / d_y, where d_y divides d), each
scored as its own order selection scores a candidate (``lgssm_order.cross_validation_errors``, ``arx.order_errors``).
A list of candidate d_x (``choose_floor(..., dim_x=[d1, d2, ...])``) takes the lowest of those scores over every
candidate and kind: the floor's order selection confined to the list.

Assumption: the data are in model units (standardised by the caller, as the GP model's fit does); the two linear
models are fitted with ``standardize=False`` on them, which is what ``ARX()`` and ``LGSSM(dim_x="auto")`` do
internally after their own standardisation of the same data, and without the calibration of their intervals
(``calibrate=False``: it moves no point forecast, and the GP model's default fit calibrates its own intervals).
"""
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..baselines.arx import ARX, order_errors
from ..baselines.lgssm import LGSSM, UnscoredOrderWarning
from ..baselines.lgssm_order import cross_validation_errors
from ..datasets.folds import mean_error
from .warm_start import check_outputs

#: The linear models a floor can be.
FLOOR_KINDS = ("arx", "lgssm")
#: How the floor's linear models are built: in the model units they are given, their intervals uncalibrated (the GP
#: model's default fit calibrates its own, stage 5).
AS_FLOOR = {"standardize": False, "calibrate": False}


@dataclass(frozen=True)
class Floor:
    """The chosen floor.

    Attributes
    ----------
    kind : "arx" or "lgssm"
    dim_x : int           the state dimension the GP model needs to hold it
    orders : tuple        (na, nb) for the ARX, (d_x,) for the LGSSM
    scores : dict         kind -> its best mean fold error (inf when it could not be scored)
    errors : list         the floor's RMSE in every window of the folds (None when nothing could be scored)
    model : ARX or LGSSM  the floor fitted to all of the data it was chosen on
    dim_x_scores : dict   for a list of candidate d_x: d_x -> kind -> its mean fold error there (None otherwise)
    fitted : dict         kind -> (model, its window errors or None) for every kind fitted, so that a later choice
                          on the same data among fewer kinds needs no refit (``choose_floor``'s ``fitted``; None
                          for a list of candidate d_x)
    """

    kind: str
    dim_x: int
    orders: tuple
    scores: dict
    errors: list = field(repr=False)
    model: object = field(repr=False)
    dim_x_scores: dict = None
    fitted: dict = field(default=None, repr=False)

    def refit(self, ys, us):
        """The floor's kind and orders fitted again to ``ys``, ``us`` (lists of (T_i, d) in model units; e.g. a
        fold's training part): an ARX or LGSSM with ``standardize=False``."""
        d_y, d_u = ys[0].shape[1], us[0].shape[1]
        if self.kind == "arx":
            return ARX(na=self.orders[0], nb=self.orders[1], dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)
        return LGSSM(dim_x=self.dim_x, dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)

    def summary(self):
        """The choice as plain JSON types."""
        summary = {"kind": self.kind, "dim_x": self.dim_x, "orders": list(self.orders),
                   "scores": {k: float(v) for k, v in self.scores.items()}}
        if self.dim_x_scores is not None:
            summary["dim_x_scores"] = {int(d): {k: float(v) for k, v in by_kind.items()}
                                       for d, by_kind in self.dim_x_scores.items()}
        return summary


def fit_kind(kind, ys, us, dim_x=None):
    """(model, its per-window fold errors or None): ``ARX()`` or ``LGSSM(dim_x="auto")`` (``standardize=False``)
    fitted with its own order selection to ``ys``, ``us`` (an ARX on data too short to choose orders gets one lag of
    each); with a given ``dim_x``, the LGSSM of that d_x or the ARX of n = dim_x / d_y lags of outputs and inputs
    (na = nb = n), scored on the same folds with its own score."""
    d_y, d_u = ys[0].shape[1], us[0].shape[1]
    data = list(zip(ys, us))
    if kind == "lgssm" and dim_x is not None:
        model = LGSSM(dim_x=dim_x, dim_y=d_y, dim_u=d_u, **AS_FLOOR)
        errors = cross_validation_errors(data, model.fit_for_selection, [dim_x])[dim_x]
        return model.fit(ys, us), errors or None
    if kind == "lgssm":
        try:
            with warnings.catch_warnings():  # the GP model's fit says it of its floor (DefaultFit.floor)
                warnings.simplefilter("ignore", UnscoredOrderWarning)
                model = LGSSM(dim_x="auto", dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)
        except ValueError as err:  # the user asked for a GP model: say which floor refused the data, and the way out
            raise ValueError(f"{err} (the LGSSM floor of the GP model's linear init; init='arx' keeps the floor to "
                             "the ARX)") from None
        return model, model.fold_errors_
    if dim_x is not None:
        n = dim_x // d_y
        model = ARX(na=n, nb=n if d_u else 0, dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)
        return model, order_errors(data, model.na_, model.nb_, model.origins)
    try:
        model = ARX(dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)
    except ValueError:  # too short to choose orders: one lag of each
        model = ARX(na=1, nb=min(1, d_u), dim_y=d_y, dim_u=d_u, **AS_FLOOR).fit(ys, us)
    return model, model.fold_errors_


def floor_of(kind, model, scores, errors, fitted=None):
    """The :class:`Floor` of a fitted ``model`` of ``kind`` with the kinds' ``scores``, its window ``errors`` and
    every kind ``fitted``."""
    d_y = model.spec.dim_y
    if kind == "arx":
        orders, d = (model.na_, model.nb_), max(model.na_, model.nb_, 1) * d_y
    else:
        orders, d = (model.spec.dim_x,), model.spec.dim_x
    return Floor(kind=kind, dim_x=d, orders=orders, scores=scores, errors=errors, model=model, fitted=fitted)


def choose_floor(ys, us, kinds=FLOOR_KINDS, dim_x=None, fitted=None):
    """The :class:`Floor` of the training sequences ``ys``, ``us`` (lists of (T_i, d), model units): ``ARX()`` and
    ``LGSSM(dim_x="auto")`` fitted with their own order selection, the lower mean fold error kept (module
    docstring). ``kinds``: the kinds allowed. ``dim_x``: a state dimension the floor must have (a GP model's fixed
    ``dim_x``): the LGSSM of that d_x and the ARX of dim_x / d_y lags (where d_y divides it) instead of their own
    orders, scored the same way. When neither can be scored (series too short for a held-out window) the LGSSM at
    its fallback d_x = max(4, d_y) (or the given d_x; without the LGSSM, the ARX of order 1 or of the given d_x).
    ``dim_x`` a list of candidates: :func:`best_of_candidates`. ``fitted``: a :class:`Floor`'s ``fitted`` from
    the same ``ys``, ``us`` and ``dim_x``, whose kinds are taken as they are instead of fitted again (the fits are
    deterministic, so the floor is the same)."""
    check_outputs(ys)
    if isinstance(dim_x, (list, tuple)):
        return best_of_candidates(ys, us, kinds, dim_x)
    if dim_x is not None and dim_x % ys[0].shape[1]:  # no ARX in observer form has this d_x
        kinds = [kind for kind in kinds if kind != "arx"]
    given = fitted or {}
    fitted = {kind: given[kind] if kind in given else fit_kind(kind, ys, us, dim_x)
              for kind in FLOOR_KINDS if kind in kinds}
    errors = {kind: fold_errors for kind, (_, fold_errors) in fitted.items()}
    models = {kind: model for kind, (model, _) in fitted.items()}
    scores = {kind: mean_error(errors[kind] or []) for kind in models}
    # ties (and nothing scored) go to the first kind listed that was fitted; the LGSSM when nothing was scored
    ranked = sorted(models, key=lambda k: (scores[k], FLOOR_KINDS.index(k)))
    kind = ranked[0] if np.isfinite(scores[ranked[0]]) or "lgssm" not in models else "lgssm"
    return floor_of(kind, models[kind], scores, errors[kind], fitted)


def best_of_candidates(ys, us, kinds, candidates):
    """The :class:`Floor` of a list of candidate state dimensions: :func:`choose_floor` at each d_x of
    ``candidates`` (the ARX only where d_y divides d_x), the lowest mean fold error over every candidate and kind
    kept (ties to the ARX, then to the earlier candidate); ``scores`` is each kind's best over the list and
    ``dim_x_scores`` every candidate's scores. ValueError (naming dim_x) when no candidate suits the kinds allowed
    (the ARX alone and no multiple of d_y)."""
    d_y = ys[0].shape[1]
    floors = [choose_floor(ys, us, kinds, int(d)) for d in candidates if "lgssm" in kinds or d % d_y == 0]
    if not floors:
        raise ValueError(f"dim_x: an ARX floor needs a multiple of dim_y = {d_y} among {list(candidates)}")
    rank = [(floor.scores[floor.kind], FLOOR_KINDS.index(floor.kind), k) for k, floor in enumerate(floors)]
    best = floors[min(rank)[2]]
    scores = {kind: min(floor.scores.get(kind, np.inf) for floor in floors) for kind in FLOOR_KINDS
              if any(kind in floor.scores for floor in floors)}
    return replace(best, scores=scores, dim_x_scores={floor.dim_x: dict(floor.scores) for floor in floors},
                   fitted=None)
