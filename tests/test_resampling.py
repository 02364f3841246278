"""Systematic resampling is unbiased: each particle's expected number of offspring is N times its weight.

A fixed offset instead of the one uniform draw (e.g. positions (i + 0.5) / N, which is a deterministic rounding
scheme) keeps every count at floor or ceil of N w_i, so checks of the count range pass; only the mean over many
draws sees the bias."""
import numpy as np
import pytest

from gpssm_np.filtering import systematic_resample


def offspring_means(weights, draws, seed=0):
    rng = np.random.default_rng(seed)
    log_w = np.log(weights)
    N = len(weights)
    total = np.zeros(N)
    for _ in range(draws):
        ancestors = systematic_resample(log_w, rng)
        assert ancestors.shape == (N,)
        total += np.bincount(ancestors, minlength=N)
    return total / draws


@pytest.mark.parametrize("seed", [0, 1])
def test_mean_offspring_count_is_n_times_the_weight(seed):
    rng = np.random.default_rng(100 + seed)
    N = 7
    weights = rng.dirichlet(np.full(N, 0.7))
    weights[2] = 1e-6  # a particle that should almost never survive
    weights /= weights.sum()
    draws = 8_000
    means = offspring_means(weights, draws, seed)
    # each count is floor(N w) or ceil(N w): variance <= 1/4, standard error of the mean <= 0.5 / sqrt(draws)
    tolerance = 5 * 0.5 / np.sqrt(draws)
    np.testing.assert_allclose(means, N * weights, rtol=0, atol=tolerance)


def test_counts_are_floor_or_ceil_and_sum_to_n():
    rng = np.random.default_rng(3)
    weights = rng.dirichlet(np.ones(9))
    log_w = np.log(weights) + 12.3  # unnormalised log-weights are accepted
    for _ in range(200):
        counts = np.bincount(systematic_resample(log_w, rng), minlength=9)
        assert counts.sum() == 9
        assert np.all(counts >= np.floor(9 * weights) - 1e-9) and np.all(counts <= np.ceil(9 * weights) + 1e-9)


def test_uniform_weights_keep_every_particle_once():
    rng = np.random.default_rng(0)
    for _ in range(50):
        np.testing.assert_array_equal(np.sort(systematic_resample(np.full(5, -np.log(5)), rng)), np.arange(5))
