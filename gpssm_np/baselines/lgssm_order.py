r"""The state dimension of a linear Gaussian state-space model, chosen by rolling-origin cross-validation.

``dim_x="auto"`` of :class:`gpssm_np.baselines.LGSSM` comes from here, on the training data only, on the same
rolling-origin folds and with the same score as the ARX's orders (``arx.py``), so that the two compare directly and
the GP models' linear floor (``models/floor.py``) is the better of the two:

* **Candidates**: d_x = d_y, d_y + 1, ..., max(:data:`MAX_SINGLE`, 3 d_y) (:func:`dim_x_candidates`). C = [I, 0]
  needs d_x >= d_y; the upper end matches what the ARX can hold (its default ``max_order`` of 10 lags of one
  output is a state of dimension 10) and lets a multi-output plant have up to three states per output.
* **Folds** (``datasets/folds.py``): each candidate is fitted (the caller's LGSSM: subspace identification, then
  :data:`SELECTION_ITERS` EM iterations) on the training data before each origin, and scored on the windows after
  it: a Kalman filter over the (at most) 100 outputs before each window, then the exact predictive mean over it.
  The candidates run side by side on the cores (``ops.threads.run_tasks``; the same bits as one after the other:
  the steam generator's ``LGSSM(dim_x="auto")`` fit took 25 s against 37 s on the 2-core machine).
* **Score**: the RMSE of the forecast mean averaged over all windows of all folds; the lowest wins, ties to the
  smaller d_x. A candidate that cannot be fitted on some fold scores inf there.

Assumptions: the data are in the units the model will be fitted in (standardised by the caller). When nothing can
be scored (sequences shorter than ``datasets.folds.MIN_LENGTH``, or no candidate that fits every fold) the caller's
fallback is used. The EM budget of the selection (:data:`SELECTION_ITERS`) is below the final fit's (50), on the
assumption that the ranking of the candidates, not the last digits of their scores, is what matters. It does not
always hold: on cuts of ballbeam's training half the chosen candidate's fold error is 0.25-0.31 at 20 iterations and
0.37-0.57 at 50; the final fit's budget in the folds as well was tried and not adopted (it changed the state dimension
on a third of the records it was tried on, both ways; research/ablation_plan.md, decision AG).
"""
from functools import partial

import numpy as np

from ..datasets.folds import fold_errors, mean_error, rolling_origin
from ..ops.threads import run_tasks

#: EM iterations of the fits that score a candidate (the final fit uses the model's own).
SELECTION_ITERS = 20
#: Largest candidate d_x for few outputs (module docstring).
MAX_SINGLE = 10


def dim_x_candidates(dim_y):
    """The state dimensions tried for ``dim_y`` outputs: d_y .. max(MAX_SINGLE, 3 d_y)."""
    return list(range(dim_y, max(MAX_SINGLE, 3 * dim_y) + 1))


def kalman_forecast_mean(model, window):
    """The exact predictive mean (H, d_y) of an LGSSM (model units) over ``window`` after filtering its past."""
    state = model.kalman(window.y_past, window.u_past)
    return model.predict_moments(window.u, state.means[-1], state.covs[-1])[2]


def cross_validation_errors(data, fit, candidates):
    """{d_x: per-window RMSEs} over the rolling-origin folds of ``data`` (a list of (y, u) in model units) for every
    d_x of ``candidates``; ``fit(d_x, ys, us)`` returns an LGSSM with ``standardize=False`` fitted to the lists. Empty
    lists when nothing can be scored."""
    folds = rolling_origin([y for y, _ in data], [u for _, u in data])
    # the candidates side by side on the cores (ops.threads.run_tasks): each is its own EM runs, whose Kalman kernels
    # hold one core, so one after the other leaves the second idle; the same bits either way
    tasks = [partial(fold_errors, folds, partial(fit, d_x), kalman_forecast_mean) for d_x in candidates]
    return dict(zip(candidates, run_tasks(tasks)))


def select_dim_x(data, fit, candidates, fallback):
    """(chosen d_x, {d_x: score}, chosen d_x's per-window errors or None) by :func:`cross_validation_errors`;
    ``fallback`` when no candidate can be scored (the scores are then all inf)."""
    errors = cross_validation_errors(data, fit, candidates)
    scores = {d: mean_error(e) for d, e in errors.items()}
    finite = [d for d, s in scores.items() if np.isfinite(s)]
    if not finite:
        return fallback, scores, None
    chosen = min(finite, key=lambda d: (scores[d], d))
    return chosen, scores, errors[chosen]
