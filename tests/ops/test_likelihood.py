import numpy as np
import pytest

from gpssm_np.ops.likelihood import expected_log_lik, expected_log_lik_example, expected_log_lik_reference
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences


def test_forward_matches_explicit_sum_and_reference(rng):
    X, y, r = expected_log_lik_example(rng)
    B, T, d_y = y.shape
    S = X.shape[1] // B
    explicit = np.zeros(B)
    for b in range(B):
        for t in range(T):
            for d in range(d_y):
                x = X[t, b * S:(b + 1) * S, d]
                explicit[b] += np.mean(-0.5 * np.log(2 * np.pi * r[d]) - 0.5 * (y[b, t, d] - x) ** 2 / r[d])
    np.testing.assert_allclose(expected_log_lik(X, y, r), explicit, rtol=1e-13)
    np.testing.assert_allclose(expected_log_lik(X, y, r), expected_log_lik_reference(X, y, r), rtol=1e-13)


def test_vjp_matches_autograd_reference_and_finite_differences(rng):
    args = expected_log_lik_example(rng)
    check_vjp_against_reference(expected_log_lik, expected_log_lik_reference, args, (0, 2), rng, rtol=1e-13)
    check_vjp_finite_differences(expected_log_lik, args, (0, 2), rng)


def test_unobserved_state_dimensions_get_no_gradient(rng):
    from autograd import grad

    X, y, r = expected_log_lik_example(rng)
    dX = grad(lambda X: expected_log_lik(X, y, r).sum())(X)
    np.testing.assert_array_equal(dX[:, :, y.shape[2]:], 0.0)
    assert np.all(dX[:, :, :y.shape[2]] != 0.0)


def test_non_contiguous_and_float32_inputs(rng):
    X, y, r = expected_log_lik_example(rng)
    Xf = np.asfortranarray(X).astype(np.float32)
    np.testing.assert_allclose(expected_log_lik(Xf, y, r), expected_log_lik(Xf.astype(np.float64), y, r),
                               rtol=1e-14)


@pytest.mark.parametrize("bad", ["X", "y", "obs_var"])
def test_shape_errors_name_the_argument(rng, bad):
    X, y, r = expected_log_lik_example(rng)
    args = {"X": X, "y": y, "obs_var": r}
    args[bad] = {"X": X[:, :-1], "y": y[0], "obs_var": r[:1]}[bad]
    with pytest.raises(ValueError, match=f"^{bad}:"):
        expected_log_lik(**args)
