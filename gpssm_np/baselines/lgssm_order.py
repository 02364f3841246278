r"""The state dimension of a linear Gaussian state-space model, chosen by blocked cross-validation of forecasts.

``dim_x="auto"`` of :class:`gpssm_np.baselines.LGSSM` and of the GP models' warm start (``models/warm_start.py``)
comes from here, on the training data only, as the ARX's orders do (``arx.py``):

* **Candidates**: d_x = d_y, d_y + 1, ..., max(d_y + 4, 3 d_y) (:func:`dim_x_candidates`). C = [I, 0] needs
  d_x >= d_y; the upper end lets a multi-output plant have up to three states per output (a second-order model of
  each output and its coupling), a single-output one up to five.
* **Folds**: each training sequence is cut into ``folds`` contiguous blocks. For each block the candidate is
  fitted (the caller's LGSSM: subspace identification, then :data:`SELECTION_ITERS` EM iterations) on the rest
  of the data (the pieces before and after the block, as separate sequences; pieces shorter than
  :data:`MIN_PIECE` steps are dropped) and scored on the block.
* **Score**: as the GP models' validation score (``models/training.py``): causal forecasts of windows of
  H = min(100, block length) steps inside the block, starts at stride H / 2, each after a Kalman filter over the
  (at most) 100 outputs before it, which may reach back before the block; windows with fewer than
  :data:`MIN_PAST` past steps are skipped. The score of a candidate is the RMSE of the forecast mean averaged over
  all windows of all folds; the lowest wins, ties to the smaller d_x (the order of the candidates). A candidate
  that cannot be fitted on some fold scores inf.

Assumptions: the data are in the units the model will be fitted in (standardised by the caller). When nothing can
be scored (sequences too short to hold out a forecast window: under about 150 steps; or no candidate that fits
every fold), the caller's fallback is used: max(4, d_y) for the GP models and the LGSSM, the fixed d_x they had
before ``"auto"`` existed, clipped to the candidates. The EM budget of the selection (:data:`SELECTION_ITERS`) is
below the final fit's (50): the ranking, not the last digits, is what matters here, and it keeps the selection on
the steam generator (4 800 steps, 9 candidates) to a few minutes.
"""
import numpy as np

from .. import _validation as check

#: EM iterations of the fits that score a candidate (the final fit uses the model's own).
SELECTION_ITERS = 20
#: Shortest piece of a sequence kept for fitting a fold (steps).
MIN_PIECE = 30
#: Fewest past outputs a scored window needs (steps).
MIN_PAST = 10
#: Forecast horizon and burn-in of the scored windows (steps), as the GP models' validation score.
HORIZON, BURN_IN = 100, 100


def dim_x_candidates(dim_y):
    """The state dimensions tried for ``dim_y`` outputs: d_y .. max(d_y + 4, 3 d_y)."""
    return list(range(dim_y, max(dim_y + 4, 3 * dim_y) + 1))


def fold_tasks(data, folds):
    """For each fold: (training pieces [(y, u), ...], scored windows [(y_past, u_past, u_window, y_window), ...])."""
    tasks = []
    for k in range(folds):
        pieces, scored = [], []
        for y, u in data:
            edges = np.linspace(0, len(y), folds + 1).round().astype(int)
            lo, hi = edges[k], edges[k + 1]
            pieces += [(y[a:b], u[a:b]) for a, b in ((0, lo), (hi, len(y))) if b - a >= MIN_PIECE]
            horizon = min(HORIZON, hi - lo)
            for g in range(lo, hi - horizon + 1, max(1, horizon // 2)):
                past = slice(max(0, g - BURN_IN), g)
                if g - past.start >= MIN_PAST:
                    scored.append((y[past], u[past], u[g:g + horizon], y[g:g + horizon]))
        if pieces and scored:
            tasks.append((pieces, scored))
    return tasks


def cross_validation_scores(data, fit, candidates, folds=3):
    """{d_x: mean forecast RMSE over the held-out windows} for every d_x of ``candidates`` (module docstring).

    ``data``: a list of (y (T_i, d_y), u (T_i, d_u)) in model units; ``fit(d_x, ys, us)``: an LGSSM of state
    dimension d_x fitted to the lists ``ys``, ``us`` with ``standardize=False`` (its ``filter`` and
    ``predict_moments`` then work in the units of ``data``)."""
    folds = check.positive_int(folds, "folds")
    if folds < 2:
        raise ValueError(f"folds: expected at least 2 blocks, got {folds}")
    tasks = fold_tasks(data, folds)
    if not tasks:  # too short for a held-out forecast window: nothing can be scored
        return {d_x: np.inf for d_x in candidates}
    scores = {}
    for d_x in candidates:
        errors = []
        for pieces, scored in tasks:
            try:
                model = fit(d_x, [p[0] for p in pieces], [p[1] for p in pieces])
            except (ValueError, np.linalg.LinAlgError):  # too few steps for this order's subspace step
                errors = [np.inf]
                break
            for y_past, u_past, u_window, y_window in scored:
                state = model.filter(y_past, u_past)
                mean = model.predict_moments(u_window, state.means[-1], state.covs[-1])[2]
                errors.append(float(np.sqrt(np.mean((mean - y_window) ** 2))))
        score = float(np.mean(errors))
        scores[d_x] = score if np.isfinite(score) else np.inf
    return scores


def select_dim_x(data, fit, candidates, fallback, folds=3):
    """(chosen d_x, {d_x: score}) by :func:`cross_validation_scores`; ``fallback`` when no candidate can be scored
    (sequences too short for a held-out window, or no candidate fits every fold; the scores are then all inf)."""
    scores = cross_validation_scores(data, fit, candidates, folds)
    finite = [d for d, s in scores.items() if np.isfinite(s)]
    return (min(finite, key=lambda d: (scores[d], d)) if finite else fallback), scores
