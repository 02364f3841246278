r"""Rolling-origin (forward-chaining) folds of training data: fit on the past, forecast what comes next.

Every choice the package makes from training data alone (the ARX's orders, the LGSSM's state dimension, the GP
models' linear floor, whether their GP part is kept and for how many gradient steps) is scored on these folds, so
that the choices are made on the same evidence and each fold's model has seen only data before the steps it
forecasts (Tashman 2000, "Out-of-sample tests of forecasting accuracy", Int. J. Forecasting 16).

For a sequence of T steps, with horizon H = min(``horizon``, floor((1 - ``first``) T / 2)):

* **Origins** o_1 < ... < o_K: ``origins`` points spread evenly (rounded, duplicates dropped) from
  round(``first`` T) to T - H.
* **Fold k** trains on y[:o_k] (with its inputs) and forecasts the windows that start in [o_k, o_{k+1}) (for the
  last fold: at o_K only), at stride max(1, H // 2), each of H steps; each window's past is the (at most)
  ``burn_in`` steps before it, which a model filters to start its forecast. A window never overlaps its fold's
  training part, so no fold is fitted on its future.
* Several sequences: each is cut at its own origins (fold k of every sequence forms fold k); a sequence shorter
  than :data:`MIN_LENGTH` steps holds no window and trains every fold whole (it lies in no fold's future).
  Training pieces shorter than :data:`MIN_PIECE` steps are dropped.

:func:`fold_errors` scores a candidate model: the RMSE of its forecast mean in every window of every fold, a list
whose order is the same for every candidate, so that two candidates can be compared window by window (paired).

Assumptions: the data are stationary enough that the later part of the training data says how a model will
forecast the data after it; ``first`` = 0.5 keeps at least half of each sequence in every fold's training part.
"""
from dataclasses import dataclass

import numpy as np

from .. import _validation as check

#: Default number of origins, first origin (share of each sequence), horizon and burn-in (steps).
ORIGINS, FIRST, HORIZON, BURN_IN = 5, 0.5, 100, 100
#: Shortest sequence that holds forecast windows, and shortest training piece kept (steps).
MIN_LENGTH, MIN_PIECE = 40, 20


@dataclass(frozen=True)
class Window:
    """One scored forecast: the past it starts from and the outputs it must forecast (each (n, d) arrays)."""

    y_past: np.ndarray
    u_past: np.ndarray
    u: np.ndarray
    y: np.ndarray
    sequence: int
    start: int


@dataclass(frozen=True)
class Fold:
    """The training part (lists of (T_i, d) arrays, one per sequence, each cut at its origin) and the windows
    forecast after it."""

    ys: list
    us: list
    windows: list
    origins: tuple


def horizon_of(length, horizon=HORIZON, first=FIRST):
    """The forecast horizon H of a sequence of ``length`` steps (module docstring)."""
    return max(1, min(horizon, int((1.0 - first) * length) // 2))


def origins_of(length, origins=ORIGINS, horizon=HORIZON, first=FIRST):
    """The origins o_1 < ... < o_K of a sequence of ``length`` steps (module docstring)."""
    H = horizon_of(length, horizon, first)
    return sorted({int(o) for o in np.linspace(round(first * length), length - H, origins).round()})


def rolling_origin(ys, us, origins=ORIGINS, horizon=HORIZON, burn_in=BURN_IN, first=FIRST):
    """The folds (a list of :class:`Fold`, earliest origin first) of the sequences ``ys`` (list of (T_i, d_y)) with
    inputs ``us`` (list of (T_i, d_u)); module docstring. Empty when no sequence is long enough to hold a window."""
    origins = check.positive_int(origins, "origins")
    horizon = check.positive_int(horizon, "horizon")
    burn_in = check.positive_int(burn_in, "burn_in")
    first = check.fraction(first, "first")
    cut = [origins_of(len(y), origins, horizon, first) if len(y) >= MIN_LENGTH else None for y in ys]
    K = max((len(c) for c in cut if c), default=0)
    folds = []
    for k in range(K):
        train_y, train_u, windows, where = [], [], [], []
        for i, (y, u, o) in enumerate(zip(ys, us, cut)):
            if o is None:
                train_y.append(y)
                train_u.append(u)
                continue
            j = min(k, len(o) - 1)  # a sequence with fewer distinct origins repeats its last fold
            origin, H = o[j], horizon_of(len(y), horizon, first)
            where.append(origin)
            if origin >= MIN_PIECE:
                train_y.append(y[:origin])
                train_u.append(u[:origin])
            end = o[j + 1] if j + 1 < len(o) else origin + 1
            for g in range(origin, end, max(1, H // 2)):
                past = slice(max(0, g - burn_in), g)
                windows.append(Window(y[past], u[past], u[g:g + H], y[g:g + H], i, g))
        if train_y and windows:
            folds.append(Fold(train_y, train_u, windows, tuple(where)))
    return folds


def fold_models(folds, fit):
    """(fold, model, fitted) for each of the ``folds``: ``fit(ys, us)`` fitted to the fold's training part, and
    whether it was; fitted is False (and model None) where that fit fails with ValueError or LinAlgError (e.g. a
    part too short for a subspace step)."""
    for fold in folds:
        try:
            model = fit(fold.ys, fold.us)
        except (ValueError, np.linalg.LinAlgError):
            yield fold, None, False
            continue
        yield fold, model, True


def fold_errors(folds, fit, forecast_mean):
    """The RMSE of the forecast mean in every window of every fold (a list of floats, fold by fold; inf for every
    window of a fold whose fit fails with ValueError or LinAlgError, and for a non-finite forecast).

    ``fit(ys, us)`` returns a model fitted to a fold's training part; ``forecast_mean(model, window)`` its point
    forecast (H, d_y) of ``window`` (a :class:`Window`); a forecast of another shape is a ValueError."""
    errors = []
    for fold, model, fitted in fold_models(folds, fit):
        if not fitted:
            errors += [np.inf] * len(fold.windows)
            continue
        for window in fold.windows:
            with np.errstate(over="ignore", invalid="ignore"):  # a diverging forecast scores inf, without a warning
                mean = np.asarray(forecast_mean(model, window))
                if mean.shape != window.y.shape:  # broadcasting would score a wrong forecast without a word
                    raise ValueError(f"forecast_mean: expected a forecast of the window's shape {window.y.shape}, "
                                     f"got {mean.shape}")
                error = float(np.sqrt(np.mean((mean - window.y) ** 2)))
            errors.append(error if np.isfinite(error) else np.inf)
    return errors


def mean_error(errors):
    """The score of a candidate: the mean of its window errors (inf when there are none, or any is inf)."""
    return float(np.mean(errors)) if len(errors) else np.inf
