"""The input checks of ``gpssm_np._validation`` on their own: each fault alone (a bool, a value of another type, a value
just beyond a bound, NaN and inf), the values at the bounds taken, and the message naming the argument."""
import argparse

import numpy as np
import pytest

from gpssm_np import _validation as check

# (check, values refused, values taken at or near the bounds, the message after "name: ")
SCALAR_CHECKS = [
    (check.positive_int, [True, 1.0, "1", 0, -1], [1, np.int64(2)], "expected a positive integer"),
    (check.non_negative_int, [False, 0.0, "0", -1], [0, np.int32(3)], "expected a non-negative integer"),
    (check.unit_interval, [True, "0.5", -1e-12, 1.0 + 1e-12, np.nan], [0.0, 1.0, np.int64(1)],
     r"expected a number in \[0, 1\]"),
    (check.positive_float, [True, "1", 0.0, -1.0, np.nan, np.inf], [1e-300, np.float32(2.0)],
     "expected a positive finite number"),
    (check.non_negative_float, [True, "1", -1e-300, np.nan, np.inf], [0.0, 3.0],
     "expected a non-negative finite number"),
    (check.fraction, [True, "0.5", 0.0, 1.0, np.nan], [1e-12, 1.0 - 1e-12], r"expected a number in \(0, 1\)"),
    (check.boolean, [1, 0, "True", None], [True, False, np.True_], "expected True or False"),
]


@pytest.mark.parametrize("function, refused, taken, message", SCALAR_CHECKS, ids=lambda v: getattr(v, "__name__", ""))
def test_each_scalar_check_refuses_each_fault_alone_and_takes_its_bounds(function, refused, taken, message):
    for value in refused:
        with pytest.raises(ValueError, match=f"^arg: {message}, got "):
            function(value, "arg")
    for value in taken:
        result = function(value, "arg")
        assert result == value and type(result) in (int, float, bool)


def test_a_count_of_at_least_a_minimum_says_what_is_counted():
    assert check.int_at_least(3, "folds", 3, "folds (one per origin)") == 3
    for value in (2, True, 3.0):
        with pytest.raises(ValueError, match=r"^folds: expected at least 3 folds \(one per origin\), got "):
            check.int_at_least(value, "folds", 3, "folds (one per origin)")


def test_a_command_line_count_is_an_argparse_type():
    assert check.positive_count("4") == 4
    for text in ("0", "-2", "two", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
            check.positive_count(text)


def test_the_options_an_exact_filter_ignores_are_checked_all_the_same():
    check.unused_particle_options(None, 0)
    check.unused_particle_options(5, 3)
    with pytest.raises(ValueError, match="^num_particles: "):
        check.unused_particle_options(0, 0)
    with pytest.raises(ValueError, match="^seed: "):
        check.unused_particle_options(None, -1)


def test_one_steps_values_refuse_each_fault_alone():
    np.testing.assert_array_equal(check.step_values([1.0, np.nan], "y_t", 2, "output", allow_nan=True), [1.0, np.nan])
    for x, allow_nan in ((["a", "b"], False), ([1.0], False), ([1.0, np.inf], True)):
        with pytest.raises(ValueError, match="^y_t: expected 2 "):
            check.step_values(x, "y_t", 2, "output", allow_nan=allow_nan)
    with pytest.raises(ValueError, match=r"^y_t: expected 2 finite number\(s\), one per output"):  # NaN: when asked
        check.step_values([1.0, np.nan], "y_t", 2, "output")
    assert check.step_values(1e150, "u_t", 1, "input")[0] == 1e150
    with pytest.raises(ValueError, match="^u_t: values up to 2e\\+150 in magnitude"):
        check.step_values([-2e150], "u_t", 1, "input")


def test_an_initial_state_is_a_mean_and_a_variance_or_a_covariance():
    mean, var = check.x0(([0.0, 1.0], [0.0, 2.0]), 2)  # a variance of 0: a known state
    assert mean.dtype == var.dtype == np.float64
    for bad, message in ((([0.0, 1.0],), "expected a pair"), ((np.zeros(2), np.zeros(3)), "expected \\(mean"),
                         ((np.zeros(3), np.zeros(2)), "expected \\(mean"),
                         ((np.zeros(2), [1.0, -1e-3]), "non-negative"),
                         ((np.zeros(2), [[1.0, 0.5], [0.4, 1.0]]), "symmetric positive semi-definite"),
                         ((np.zeros(2), [[1.0, 2.0], [2.0, 1.0]]), "symmetric positive semi-definite")):
        with pytest.raises(ValueError, match=f"^x0: .*{message}"):
            check.x0(bad, 2)
    # round-off of the order of 1e-10 times the largest entry is taken (covariances computed in float64 carry it)
    nearly = np.array([[1e6, 0.5], [0.5 + 1e-5, 1.0]])
    assert check.x0((np.zeros(2), nearly), 2)[1] is not None
    with pytest.raises(ValueError, match="symmetric"):
        check.x0((np.zeros(2), nearly + np.array([[0.0, 0.0], [1e-3, 0.0]])), 2)


def test_one_channel_may_come_as_a_vector_and_several_may_not():
    assert check.columns(None, 1, "u") is None
    assert check.columns(np.zeros((5, 2)), 2, "y").shape == (5, 2)
    assert check.columns(np.arange(5.0), 1, "y").shape == (5, 1)
    with pytest.raises(ValueError, match=r"^y: a one-dimensional array is one channel, but the model has 2"):
        check.columns(np.arange(5.0), 2, "y")


def test_sequences_name_a_batch_beside_one_input_sequence_and_swapped_arguments():
    y, u = np.zeros((2, 5, 1)), np.zeros((10, 1))
    with pytest.raises(ValueError, match=r"^y: shape \(2, 5, 1\) reads as 2 sequences of 5 step\(s\), but u"):
        check.sequences(y, u, 1, 1)
    ys, us = check.sequences(np.zeros((1, 5, 1)), np.zeros((5, 1)), 1, 1)  # one sequence with its batch axis
    assert ys.shape == (1, 5, 1) and us.shape == (1, 5, 1)
    with pytest.raises(ValueError, match=r"^y, u: y has shape \(5, 1\) and u \(5, 2\).*look swapped"):
        check.sequences(np.zeros((5, 1)), np.zeros((5, 2)), 2, 1)
    with pytest.raises(ValueError, match=r"^y: expected dim_y = 2 columns"):  # one column, inputs of two: not swapped
        check.sequences(np.zeros((5, 1)), np.zeros((5, 1)), 2, 1)
    with pytest.raises(ValueError, match="^y: contains NaN or inf"):  # NaN only where a filter asks for it
        check.sequences(np.full((5, 1), np.nan), np.zeros((5, 1)), 1, 1)


def test_one_sequence_refuses_a_list_of_sequences_and_a_batch():
    y, u = np.zeros((5, 1)), np.zeros((5, 1))
    with pytest.raises(ValueError, match="^y: expected one sequence .* got a list of 2 sequences"):
        check.one_sequence([y, y], u, 1, 1)
    with pytest.raises(ValueError, match=r"^y: expected one sequence .* got 2 of them"):
        check.one_sequence(np.zeros((2, 5, 1)), u, 1, 1)
    one, _ = check.one_sequence([[0.0], [1.0]], [[0.0], [0.0]], 1, 1)  # rows as lists: one sequence
    assert one.shape == (2, 1)
    assert check.one_sequence([y], [u], 1, 1)[0].shape == (5, 1)  # a list of one sequence is that sequence
    with pytest.raises(ValueError, match="^y: contains NaN or inf"):
        check.one_sequence(np.full((5, 1), np.nan), u, 1, 1)


def test_inputs_of_zero_width_are_no_inputs():
    assert check.inputs(np.zeros((5, 0)), (1, 5), 0).shape == (1, 5, 0)
    assert check.inputs(np.zeros((1, 5, 0)), (1, 5), 0).shape == (1, 5, 0)
    with pytest.raises(ValueError, match=r"^u: the model has dim_u = 1 inputs, got u=None"):
        check.inputs(None, (1, 5), 1)
    with pytest.raises(ValueError, match=r"^u: expected shape \(5, 1\) to match y and dim_u = 1, got \(4, 1\)"):
        check.inputs(np.zeros((4, 1)), (1, 5), 1)
