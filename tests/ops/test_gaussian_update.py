"""The particle filters' small-Gaussian kernels: conditioning on a linear-Gaussian observation (Joseph form) and
sampling by Cholesky factor, against plain NumPy; their failure index for a matrix that is not positive definite."""
import numpy as np
import pytest

from gpssm_np.kalman import condition
from gpssm_np.ops.gaussian_condition import condition_gaussians, condition_gaussians_example
from gpssm_np.ops.gaussian_sample import sample_gaussians, sample_gaussians_example


@pytest.mark.parametrize("d, k", [(3, 2), (4, 1), (1, 1), (2, 3)])
def test_condition_is_the_kalman_update(rng, d, k):
    mean, cov, C, R, y = condition_gaussians_example(rng, 6, d, k)
    post_mean, post_cov, log_lik, failed = condition_gaussians(mean, cov, C, R, y)
    assert failed == -1
    np.testing.assert_array_equal(post_cov, np.swapaxes(post_cov, 1, 2))
    for n in range(len(mean)):
        Sy = C @ cov[n] @ C.T + R
        gain = np.linalg.solve(Sy, C @ cov[n]).T
        resid = y - C @ mean[n]
        np.testing.assert_allclose(post_mean[n], mean[n] + gain @ resid, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(post_cov[n], cov[n] - gain @ C @ cov[n], rtol=1e-10, atol=1e-12)
        expected = -0.5 * (k * np.log(2 * np.pi) + np.linalg.slogdet(Sy)[1] + resid @ np.linalg.solve(Sy, resid))
        assert log_lik[n] == pytest.approx(expected, rel=1e-12)


def test_condition_reports_the_first_predictive_covariance_that_is_not_positive_definite(rng):
    mean, cov, C, R, y = condition_gaussians_example(rng)
    cov[3] = -10.0 * np.eye(3)
    assert condition_gaussians(mean, cov, C, R, y)[3] == 3


@pytest.mark.parametrize("n", [0, 3])
def test_kalman_condition_names_the_transition_for_any_failing_gaussian(rng, n):
    """``kalman.condition`` (the particle filter's unfused proposal) raises where the kernel reports a failure, at the
    first Gaussian (index 0) too."""
    mean, cov, C, R, y = condition_gaussians_example(rng)
    condition(mean, cov, C, R, y)
    cov[n] = -10.0 * np.eye(3)
    with pytest.raises(ValueError, match="^transition: expected symmetric positive-definite"):
        condition(mean, cov, C, R, y)


def test_sample_is_mean_plus_cholesky_factor_times_eps(rng):
    mean, cov, index, eps = sample_gaussians_example(rng)
    cov[:, 0, 1] += 1e-3  # not symmetric: the factor is that of (cov + cov^T) / 2
    x, failed = sample_gaussians(mean, cov, index, eps)
    assert failed == -1
    chol = np.linalg.cholesky(0.5 * (cov + np.swapaxes(cov, 1, 2)))
    np.testing.assert_allclose(x, mean[index] + np.einsum("nij,nj->ni", chol[index], eps), rtol=1e-13, atol=1e-14)


def test_sample_checks_the_index_and_reports_a_covariance_that_is_not_positive_definite(rng):
    mean, cov, index, eps = sample_gaussians_example(rng)
    cov[index[2]] = -np.eye(3)
    assert sample_gaussians(mean, cov, index, eps)[1] == list(index).index(index[2])
    with pytest.raises(ValueError, match="index"):
        sample_gaussians(mean, cov, np.full(len(eps), len(mean)), eps)
