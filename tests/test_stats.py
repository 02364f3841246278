"""The paired bootstrap of experiments/stats.py."""
import numpy as np
import pytest

from gpssm_np.experiments.stats import paired_bootstrap, paired_scores


def test_mean_is_the_mean_per_seed_difference_and_inside_the_interval():
    a, b = [0.50, 0.42, 0.61, 0.47, 0.55], [0.48, 0.45, 0.52, 0.47, 0.50]
    r = paired_bootstrap(a, b)
    assert r["n"] == 5 and r["mean"] == pytest.approx(np.mean(np.subtract(a, b)))
    assert min(np.subtract(a, b)) <= r["low"] <= r["mean"] <= r["high"] <= max(np.subtract(a, b))
    assert paired_bootstrap(a, b) == r  # deterministic for the same seed


def test_interval_matches_the_normal_approximation_for_many_pairs():
    rng = np.random.default_rng(0)
    a = rng.normal(1.0, 1.0, size=400)
    b = a - rng.normal(0.3, 0.5, size=400)
    r = paired_bootstrap(a, b, num_resamples=4000)
    d = a - b
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    assert r["low"] == pytest.approx(d.mean() - half, abs=0.01) and r["high"] == pytest.approx(d.mean() + half,
                                                                                              abs=0.01)
    r = paired_bootstrap(a, b, num_resamples=4000, level=0.5)  # the quartiles: z = 0.674, not 1.96
    half = 0.6745 * d.std(ddof=1) / np.sqrt(len(d))
    assert r["low"] == pytest.approx(d.mean() - half, abs=0.005) and r["high"] == pytest.approx(d.mean() + half,
                                                                                               abs=0.005)


def test_pairing_matters_constant_differences_give_a_point():
    a = np.array([1.0, 5.0, 2.0, 9.0])
    r = paired_bootstrap(a + 0.25, a)  # large spread of the scores, none of the differences
    assert r["low"] == r["high"] == pytest.approx(0.25)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="^a, b:"):
        paired_bootstrap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="^a, b:"):
        paired_bootstrap([], [])
    with pytest.raises(ValueError, match="^level:"):
        paired_bootstrap([1.0], [2.0], level=1.5)
    with pytest.raises(ValueError, match="^level:"):  # a string was a TypeError from the comparison
        paired_bootstrap([1.0], [2.0], level="0.9")
    with pytest.raises(ValueError, match="^num_resamples:"):
        paired_bootstrap([1.0], [2.0], num_resamples=0)
    assert paired_bootstrap([1.0, 3.0], [2.0, 2.0], num_resamples=1)["n"] == 2  # one resample is a resample
    for a, b in (([np.nan, 1.0], [1.0, 1.0]), ([1.0, 1.0], [1.0, np.inf])):  # either side not finite
        with pytest.raises(ValueError, match="^a, b: expected finite scores"):
            paired_bootstrap(a, b)


def test_paired_scores_pairs_by_seed():
    rows = [{"dataset": "d", "protocol": "p", "model": m, "seed": s, "rmse": 10 * (m == "a") + s}
            for m in ("a", "b") for s in (2, 0, 1)] + [{"dataset": "d", "protocol": "p", "model": "a", "seed": 7,
                                                        "rmse": 0.0}]
    seeds, a, b = paired_scores(rows, "a", "b", "d", "p")
    assert seeds == [0, 1, 2] and a == [10, 11, 12] and b == [0, 1, 2]
    rows[0]["rmse"], rows[4]["rmse"] = float("nan"), None  # a diverged run (seed 2 of a), a missing score (0 of b)
    seeds, a, b = paired_scores(rows, "a", "b", "d", "p")
    assert seeds == [1] and a == [11] and b == [1]


def test_the_defaults_are_the_ones_the_tables_were_computed_with():
    # 10 000 resamples drawn with seed 0 (docs/results.md's intervals); another seed or count moves the bounds
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=40), rng.normal(size=40)  # enough pairs for the bounds to move with the draws
    default = paired_bootstrap(a, b)
    assert default == paired_bootstrap(a, b, num_resamples=10_000, level=0.95, seed=0)
    assert default != paired_bootstrap(a, b, seed=1)
    assert default != paired_bootstrap(a, b, num_resamples=10_001)
