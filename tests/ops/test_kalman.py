"""The Kalman filter and RTS smoother kernels against their plain NumPy references on random stable systems, with
and without missing outputs, and the wiring of ``kalman.kalman_filter``, ``kalman_step`` and ``rts_smoother``."""
import numpy as np
import pytest

from gpssm_np.kalman import KalmanResult, kalman_filter, kalman_step, rts_smoother
from gpssm_np.ops.kalman import (kalman_example, kalman_forward, kalman_forward_reference, rts_backward,
                                 rts_backward_reference)

SIZES = [(1, 1, 0), (2, 1, 1), (3, 2, 0), (4, 2, 2), (6, 1, 1), (3, 4, 1)]  # (d_x, d_y, d_u)


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10 * np.max(np.abs(expected)))


def filtered_and_prior(example, means, covs):
    m0, P0 = example[6], example[7]
    return np.concatenate([m0[None], means]), np.concatenate([P0[None], covs])


@pytest.mark.parametrize("missing", [0.0, 0.3])
@pytest.mark.parametrize("dx, dy, du", SIZES)
def test_filter_and_smoother_are_their_references(rng, dx, dy, du, missing):
    example = kalman_example(rng, T=40, dx=dx, dy=dy, du=du, missing=missing)
    y = example[5]
    if missing:
        y[3] = np.nan  # a step with nothing observed
        assert np.isnan(y).any() and not np.isnan(y).all()
    *moments, log_lik, failed = kalman_forward(*example)
    expected = kalman_forward_reference(*example)
    assert failed == -1
    for actual, exp in zip(moments, expected[:4]):
        close(actual, exp)
    assert log_lik == pytest.approx(expected[4], rel=1e-10)
    np.testing.assert_array_equal(moments[1], np.swapaxes(moments[1], 1, 2))
    np.testing.assert_array_equal(moments[3], np.swapaxes(moments[3], 1, 2))
    if missing:  # nothing observed at step 3: no update, no log-likelihood term
        np.testing.assert_array_equal(moments[0][3], moments[2][3])
        np.testing.assert_array_equal(moments[1][3], moments[3][3])
    F, (means, covs, pred_means, pred_covs) = example[0], moments
    smoother_args = (F, *filtered_and_prior(example, means, covs), pred_means, pred_covs)
    *smoothed, failed = rts_backward(*smoother_args)
    assert failed == -1
    for actual, exp in zip(smoothed, rts_backward_reference(*smoother_args)):
        close(actual, exp)
    np.testing.assert_array_equal(smoothed[1], np.swapaxes(smoothed[1], 1, 2))


@pytest.mark.parametrize("du", [0, 2])
def test_the_filter_step_and_smoother_of_kalman_are_the_kernels(rng, du):
    F, H, Q, R, _, y, m0, P0 = kalman_example(rng, T=30, dx=3, dy=2, du=du, missing=0.2)
    G, u = rng.normal(size=(3, du)), rng.normal(size=(30, du))
    params = dict(F=F, G=G, H=H, Q=Q, R=R)
    result = kalman_filter(params, y, u, m0, P0)
    assert isinstance(result, KalmanResult) and isinstance(result.log_likelihood, float)
    expected = kalman_forward_reference(F, H, Q, R, u @ G.T, y, m0, P0)
    for field, exp in zip(("means", "covs", "pred_means", "pred_covs"), expected):
        close(getattr(result, field), exp)
    assert result.log_likelihood == pytest.approx(expected[4], rel=1e-10)
    m, P, log_lik = m0, P0, 0.0
    for t in range(len(y)):  # one step at a time: the same numbers
        pred_m, pred_P, m, P, log_g = kalman_step(params, m, P, (u @ G.T)[t], y[t])
        np.testing.assert_array_equal(pred_m, result.pred_means[t])
        np.testing.assert_array_equal(P, result.covs[t])
        log_lik += log_g
    assert log_lik == result.log_likelihood
    means, covs, cross = rts_smoother(params, result, m0, P0)
    expected = rts_backward_reference(F, *filtered_and_prior((None,) * 6 + (m0, P0), result.means, result.covs),
                                      result.pred_means, result.pred_covs)
    for actual, exp in zip((means, covs, cross), expected):
        close(actual, exp)


def test_failures_are_reported_and_raised(rng):
    F, H, Q, R, drive, y, m0, P0 = kalman_example(rng, T=10)
    R_bad = -10.0 * np.eye(len(R))
    assert kalman_forward(F, H, Q, R_bad, drive, y, m0, P0)[5] == 0
    with pytest.raises(ValueError, match="transition"):
        kalman_filter(dict(F=F, G=np.zeros((3, 0)), H=H, Q=Q, R=R_bad), y, np.zeros((10, 0)), m0, P0)
    means, covs, pred_means, pred_covs, _, _ = kalman_forward(F, H, Q, R, drive, y, m0, P0)
    pred_covs[6] = 0.0
    assert rts_backward(F, np.concatenate([m0[None], means]), np.concatenate([P0[None], covs]), pred_means,
                        pred_covs)[3] == 6
    with pytest.raises(np.linalg.LinAlgError):
        rts_smoother(dict(F=F), KalmanResult(means, covs, pred_means, pred_covs, 0.0), m0, P0)
    pred_covs[6], pred_covs[0] = pred_covs[5], 0.0  # at the first step too (failed = 0)
    with pytest.raises(np.linalg.LinAlgError):
        rts_smoother(dict(F=F), KalmanResult(means, covs, pred_means, pred_covs, 0.0), m0, P0)


def test_smoothed_draws_have_the_smoothers_last_marginal_and_lag_one_covariance(rng):
    """Forward filtering, backward sampling: the last draw comes from the filter's last moments (here with the last
    output missing, so that they differ from the step before), and each earlier one given the draw after it."""
    from gpssm_np.kalman import sample_smoothed

    F, H, Q, R = np.array([[0.9, 0.2], [-0.1, 0.8]]), np.array([[1.0, 0.0]]), 0.3 * np.eye(2), np.array([[0.2]])
    T, n = 12, 20000
    y = rng.normal(size=(T, 1))
    y[-1] = np.nan
    params = dict(F=F, G=np.zeros((2, 0)), H=H, Q=Q, R=R)
    m0, P0 = np.zeros(2), np.eye(2)
    result = kalman_filter(params, y, np.zeros((T, 0)), m0, P0)
    means, covs, cross = rts_smoother(params, result, m0, P0)
    draws = sample_smoothed(params, result, n, np.random.default_rng(0))  # x_1..x_T
    assert not np.allclose(covs[-1], covs[-2], rtol=0.2)  # the missing output makes the last step stand out
    for t in (T - 1, T - 2, 0):
        sd = np.sqrt(np.diag(covs[t + 1]))
        assert np.all(np.abs(draws[:, t].mean(axis=0) - means[t + 1]) <= 5 * sd / np.sqrt(n))
        np.testing.assert_allclose(np.cov(draws[:, t].T), covs[t + 1], rtol=0, atol=5 * np.sqrt(2 / n) * sd.max() ** 2)
    lag = np.cov(draws[:, T - 1].T, draws[:, T - 2].T)[:2, 2:]  # Cov(x_T, x_{T-1} | y)
    scale = np.sqrt(covs[-1].max() * covs[-2].max())
    np.testing.assert_allclose(lag, cross[T - 1], rtol=0, atol=5 * np.sqrt(2 / n) * scale)
