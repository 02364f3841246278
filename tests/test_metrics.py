"""The point and interval scores of gpssm_np.metrics at values worked out by hand (nlpd against SciPy, the
calibration's factors: tests/test_calibration.py; refused shapes: tests/test_argument_checks.py)."""
import numpy as np
import pytest

from gpssm_np.metrics import coverage, gaussian_interval, rmse


def test_rmse_is_the_root_of_the_mean_square_over_every_entry():
    y = np.array([[1.0, -2.0], [3.0, 0.0]])
    assert rmse(y, np.zeros((2, 2))) == pytest.approx(np.sqrt((1 + 4 + 9 + 0) / 4), rel=1e-15)
    assert rmse(y, y + 0.5) == pytest.approx(0.5, rel=1e-15)


def test_coverage_counts_entries_on_an_interval_bound_as_inside():
    y = np.array([[0.0], [1.0], [2.0], [3.0]])
    assert coverage(y, np.full((4, 1), 1.0), np.full((4, 1), 2.0)) == 0.5  # 1 and 2 on the bounds: inside
    assert coverage(y, y, y) == 1.0


def test_gaussian_interval_is_the_central_interval_of_its_level():
    lower, upper = gaussian_interval(np.array([1.0]), np.array([2.0]), 0.95)
    np.testing.assert_allclose([lower[0], upper[0]], [1.0 - 2.0 * 1.959963984540054, 1.0 + 2.0 * 1.959963984540054],
                               rtol=1e-15)
    lower, upper = gaussian_interval(0.0, 1.0, 0.5)
    assert (lower, upper) == pytest.approx((-0.6744897501960817, 0.6744897501960817), rel=1e-15)
