import autograd.scipy.linalg as aslinalg
import numpy as np
import pytest

from gpssm_np.ops.triangular import solve_lower, solve_lower_example
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences, lower_part


@pytest.mark.parametrize("trans", ["N", "T"])
@pytest.mark.parametrize("vector", [False, True])
def test_solve_and_vjp_match_autograd_scipy_and_finite_differences(rng, trans, vector):
    L, b = solve_lower_example(rng)
    if vector:
        b = b[:, 0]
    x = solve_lower(L, b, trans)
    np.testing.assert_allclose((L if trans == "N" else L.T) @ x, b, atol=1e-12)

    def reference(L, b, trans):
        return aslinalg.solve_triangular(L, b, lower=True, trans=trans)

    check_vjp_against_reference(solve_lower, reference, (L, b), (0, 1), rng, rtol=1e-12, trans=trans)
    check_vjp_finite_differences(solve_lower, (L, b), (0, 1), rng, directions={0: lower_part}, trans=trans)


def test_bad_arguments_name_themselves(rng):
    L, b = solve_lower_example(rng)
    with pytest.raises(ValueError, match="^trans:"):
        solve_lower(L, b, "C")
    with pytest.raises(ValueError, match="^L:"):
        solve_lower(L[:, :2], b)
    with pytest.raises(ValueError, match="^b:"):
        solve_lower(L, b[:2])
