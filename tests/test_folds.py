"""Rolling-origin folds (datasets/folds.py): each fold trains on the past only and forecasts what follows it."""
import dataclasses
import warnings

import numpy as np
import pytest

from gpssm_np.datasets.folds import MIN_LENGTH, MIN_PIECE, fold_errors, horizon_of, origins_of, rolling_origin


def test_each_fold_trains_on_its_past_and_forecasts_after_its_origin():
    T = 600
    y = np.arange(T, dtype=float)[:, None]  # each value names its step
    u = -y
    folds = rolling_origin([y], [u])
    assert horizon_of(T) == 100 and origins_of(T) == [300, 350, 400, 450, 500]
    assert len(folds) == 5
    for k, fold in enumerate(folds):
        origin = fold.origins[0]
        assert origin == origins_of(T)[k]
        np.testing.assert_array_equal(fold.ys[0][:, 0], np.arange(origin))  # exactly the past
        starts = [w.start for w in fold.windows]
        assert starts[0] == origin and all(s < (origins_of(T) + [T])[k + 1] for s in starts)
        for w in fold.windows:
            assert w.y[0, 0] == w.start and len(w.y) == 100 and w.y[-1, 0] < T
            assert w.y_past[-1, 0] == w.start - 1 and len(w.y_past) == 100  # the past ends where it starts
            np.testing.assert_array_equal(w.u, -w.y)


def test_windows_start_every_half_horizon_from_each_origin_to_the_next():
    T = 1000
    y = np.arange(T, dtype=float)[:, None]
    folds = rolling_origin([y], [y])
    origins, H = origins_of(T), horizon_of(T)
    assert origins == [500, 600, 700, 800, 900] and H == 100
    for k, fold in enumerate(folds):
        end = origins[k + 1] if k + 1 < len(origins) else origins[k] + 1  # the last fold: one window
        assert [w.start for w in fold.windows] == list(range(origins[k], end, H // 2))


def test_short_and_several_sequences():
    long, short = np.arange(300.0)[:, None], np.arange(MIN_LENGTH - 1.0)[:, None]
    folds = rolling_origin([long, short], [long, short], origins=3)
    assert len(folds) == 3
    for fold in folds:
        assert len(fold.ys) == 2 and len(fold.ys[1]) == MIN_LENGTH - 1  # a short sequence trains every fold whole
        assert all(w.sequence == 0 for w in fold.windows)
    assert rolling_origin([short], [short]) == []
    with pytest.raises(ValueError, match="first"):
        rolling_origin([long], [long], first=1.0)


def test_fold_errors_are_per_window_and_inf_where_a_fit_fails():
    y = np.sin(np.arange(400.0) / 7)[:, None]
    folds = rolling_origin([y], [y])
    perfect = fold_errors(folds, lambda ys, us: None, lambda model, w: w.y)
    assert len(perfect) == sum(len(f.windows) for f in folds) and max(perfect) == 0.0
    calls = []

    def fit(ys, us):
        calls.append(len(ys[0]))
        if len(calls) == 2:
            raise ValueError("too short")
        return 1.0

    errors = fold_errors(folds, fit, lambda offset, w: w.y + offset)
    assert calls == [f.ys[0].shape[0] for f in folds]
    assert np.isinf(errors[len(folds[0].windows)]) and errors[0] == pytest.approx(1.0)
    diverged = fold_errors(folds, lambda ys, us: None, lambda model, w: np.full_like(w.y, np.nan))
    assert diverged == [np.inf] * len(perfect)  # a NaN forecast scores inf, which compares as worse


def test_the_shortest_sequence_with_windows_and_the_shortest_training_piece():
    """A sequence of 40 steps (MIN_LENGTH, as docs/guide.md says) holds windows, its first fold training on exactly
    MIN_PIECE = 20 steps (origin round(first T)); the horizon of any length is at least one step; folds cannot be
    changed in place (every candidate of a choice is scored on the same ones)."""
    y = np.arange(40.0)[:, None]
    folds = rolling_origin([y], [y])
    assert len(folds[0].ys[0]) == MIN_PIECE == 20 and folds[0].windows[0].start == 20
    assert horizon_of(40) == 10 and horizon_of(2) == 1
    assert rolling_origin([y[:39]], [y[:39]]) == []
    # origins 19, 22, ... of 42 steps at first = 0.45: the 19-step piece is dropped, and with it its fold
    longer = np.arange(42.0)[:, None]
    assert rolling_origin([longer], [longer], first=0.45)[0].origins == (22,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        folds[0].ys = []
    with pytest.raises(dataclasses.FrozenInstanceError):
        folds[0].windows[0].start = 0


def test_a_forecast_of_another_shape_than_its_window_is_refused():
    """A (H, 1, 1) forecast of (H, 1) outputs broadcast to (H, H, 1) and was scored; a (H,) one too."""
    y = np.sin(np.arange(200.0) / 7)[:, None]
    folds = rolling_origin([y], [y])
    for wrong in (lambda model, w: w.y[:, :, None], lambda model, w: w.y[:, 0]):
        with pytest.raises(ValueError, match="forecast_mean: expected a forecast of the window's shape"):
            fold_errors(folds, lambda ys, us: None, wrong)


def test_a_sequence_with_fewer_distinct_origins_repeats_its_last_fold():
    long, short = np.arange(1000.0)[:, None], np.arange(60.0)[:, None]
    distinct = origins_of(60, origins=20)
    assert len(distinct) < len(origins_of(1000, origins=20)) == 20  # rounding merges some of the short one's
    folds = rolling_origin([long, short], [long, short], origins=20)
    assert len(folds) == 20
    for k, fold in enumerate(folds):
        mine = distinct[min(k, len(distinct) - 1)]
        assert fold.origins[1] == mine and len(fold.ys[1]) == mine


def test_a_window_nearer_the_start_than_the_burn_in_reads_all_its_past():
    y = np.arange(100.0)[:, None]  # origins from step 50, each window's past shorter than the 100-step burn-in
    for fold in rolling_origin([y], [y]):
        for w in fold.windows:
            np.testing.assert_array_equal(w.y_past[:, 0], np.arange(w.start))


def test_a_forecast_that_overflows_while_it_is_computed_scores_inf_without_a_warning():
    y = np.sin(np.arange(200.0) / 7)[:, None]
    folds = rolling_origin([y], [y])

    def diverging(model, w):  # as an unstable model's free run does
        return np.full_like(w.y, 1e200) * 1e200

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        errors = fold_errors(folds, lambda ys, us: None, diverging)
    assert errors == [np.inf] * sum(len(f.windows) for f in folds)
