import numpy as np
import pytest

from gpssm_np.ops.lmc import (
    lmc_cov,
    lmc_cov_example,
    lmc_cov_reference,
    lmc_mean,
    lmc_mean_example,
    lmc_mean_reference,
)
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences, rel_err


def identity_args(rng, d_x=3):
    """(h, s_h, q_diag) for the independent case Q = d_x."""
    N = 4
    return rng.normal(size=(N, d_x)), rng.uniform(0.1, 2.0, size=(N, d_x)), rng.uniform(0.01, 0.5, size=d_x)


def test_mean_forward_matches_naive_and_reference(rng):
    h, A = lmc_mean_example(rng)
    mean = lmc_mean(h, A)
    np.testing.assert_allclose(mean, np.array([A @ hn for hn in h]), rtol=1e-14)
    np.testing.assert_allclose(mean, lmc_mean_reference(h, A), rtol=1e-14)


def test_cov_forward_is_the_sum_over_latent_gps(rng):
    s_h, A, q_diag = lmc_cov_example(rng)
    cov = lmc_cov(s_h, A, q_diag)
    explicit = np.array(
        [sum(s_h[n, q] * np.outer(A[:, q], A[:, q]) for q in range(A.shape[1])) + np.diag(q_diag)
         for n in range(len(s_h))]
    )
    np.testing.assert_allclose(cov, explicit, rtol=1e-14)
    np.testing.assert_allclose(cov, lmc_cov_reference(s_h, A, q_diag), rtol=1e-14)


def test_cov_is_symmetric_positive_definite(rng):
    s_h, A, q_diag = lmc_cov_example(rng)
    cov = lmc_cov(s_h, A, q_diag)
    np.testing.assert_array_equal(cov, np.swapaxes(cov, 1, 2))
    assert np.linalg.eigvalsh(cov).min() >= q_diag.min() * (1 - 1e-12)
    # PSD with q = 0 and some latent variances 0
    s_h[0] = 0.0
    cov = lmc_cov(s_h, A, np.zeros_like(q_diag))
    assert np.linalg.eigvalsh(cov).min() > -1e-12
    np.testing.assert_array_equal(cov[0], 0.0)


def test_mean_vjp_matches_autograd_reference(rng):
    args = lmc_mean_example(rng)
    check_vjp_against_reference(lmc_mean, lmc_mean_reference, args, range(2), rng, rtol=1e-13)
    check_vjp_finite_differences(lmc_mean, args, range(2), rng)


def test_cov_vjp_matches_autograd_reference(rng):
    args = lmc_cov_example(rng)
    check_vjp_against_reference(lmc_cov, lmc_cov_reference, args, range(3), rng, rtol=1e-13)
    check_vjp_finite_differences(lmc_cov, args, range(3), rng)


def test_identity_case(rng):
    h, s_h, q_diag = identity_args(rng)
    eye = np.eye(len(q_diag))
    assert lmc_mean(h, None) is h
    np.testing.assert_array_equal(lmc_mean(h, eye), h)
    cov = lmc_cov(s_h, None, q_diag)
    np.testing.assert_array_equal(cov, np.array([np.diag(s + q_diag) for s in s_h]))
    np.testing.assert_array_equal(cov, lmc_cov(s_h, eye, q_diag))

    def mean_eye(h, _):
        return lmc_mean(h, eye)

    def cov_eye(s_h, _, q_diag):
        return lmc_cov(s_h, eye, q_diag)

    check_vjp_against_reference(lmc_mean, mean_eye, (h, None), [0], rng, rtol=1e-15)
    check_vjp_against_reference(lmc_cov, cov_eye, (s_h, None, q_diag), [0, 2], rng, rtol=1e-15)
    check_vjp_against_reference(lmc_cov, lmc_cov_reference, (s_h, None, q_diag), [0, 2], rng, rtol=1e-15)
    check_vjp_finite_differences(lmc_cov, (s_h, None, q_diag), [0, 2], rng)


def test_layout_and_dtype_invariance(rng):
    s_h, A, q_diag = lmc_cov_example(rng)
    h = rng.normal(size=s_h.shape)
    odd_h, odd_s, odd_A = np.asfortranarray(h), np.repeat(s_h, 2, axis=0)[::2], np.asfortranarray(A)
    odd_q = np.repeat(q_diag, 2)[::2]
    np.testing.assert_array_equal(lmc_mean(odd_h, odd_A), lmc_mean(h, A))
    np.testing.assert_array_equal(lmc_cov(odd_s, odd_A, odd_q), lmc_cov(s_h, A, q_diag))
    check_vjp_against_reference(lmc_cov, lmc_cov_reference, (odd_s, odd_A, odd_q), range(3), rng, rtol=1e-13)
    check_vjp_against_reference(lmc_mean, lmc_mean_reference, (odd_h, odd_A), range(2), rng, rtol=1e-13)
    as32 = [a.astype(np.float32) for a in (s_h, A, q_diag)]
    cov32 = lmc_cov(*as32)
    assert cov32.dtype == np.float64
    np.testing.assert_array_equal(cov32, lmc_cov(*[a.astype(np.float64) for a in as32]))
    assert rel_err(cov32, lmc_cov(s_h, A, q_diag)) < 1e-6
    mean32 = lmc_mean(h.astype(np.float32), A.astype(np.float32))
    assert mean32.dtype == np.float64 and rel_err(mean32, lmc_mean(h, A)) < 1e-6


def test_shape_errors_name_the_argument(rng):
    s_h, A, q_diag = lmc_cov_example(rng)
    with pytest.raises(ValueError, match="^A:"):
        lmc_mean(s_h, A[:, :1])
    with pytest.raises(ValueError, match="^h:"):
        lmc_mean(s_h[0], A)
    with pytest.raises(ValueError, match="^s_h:"):
        lmc_cov(s_h[None], A, q_diag)
    with pytest.raises(ValueError, match="^A:"):
        lmc_cov(s_h, A.T, q_diag)
    with pytest.raises(ValueError, match="^q_diag:"):
        lmc_cov(s_h, A, q_diag[:-1])
    with pytest.raises(ValueError, match="^q_diag:.*A=None"):
        lmc_cov(s_h, None, q_diag)  # Q = 2 latent GPs but d_x = 3 noise variances
