import numpy as np
import pytest

from gpssm_np.ops.lstm import (lstm, lstm_example, lstm_num_params, lstm_pack, lstm_reference, lstm_unpack)
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

LAYERS = [1, 2, 3]


@pytest.mark.parametrize("num_layers", LAYERS)
def test_forward_matches_reference(num_layers, rng):
    args = lstm_example(rng, num_layers)
    out = lstm(*args)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(out, lstm_reference(*args), rtol=1e-12, atol=1e-14)


def test_one_step_follows_the_gate_equations(rng):
    # T = 1 and zero initial state: h = o * tanh(i * g), gate rows in the order i, f, g, o.
    X, w, H, _ = lstm_example(rng, 1)
    X = X[:, :1]
    [(W_ih, _, b)] = lstm_unpack(w, X.shape[2], H, 1)
    z = X[:, 0] @ W_ih.T + b
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    expected = sig(z[:, 3 * H:]) * np.tanh(sig(z[:, :H]) * np.tanh(z[:, 2 * H:3 * H]))
    np.testing.assert_allclose(lstm(X, w, H, 1), expected, rtol=1e-12)


@pytest.mark.parametrize("num_layers", LAYERS)
def test_vjp_matches_autograd_and_finite_differences(num_layers, rng):
    args = lstm_example(rng, num_layers)
    check_vjp_against_reference(lstm, lstm_reference, args, (0, 1), rng)
    check_vjp_finite_differences(lstm, args, (0, 1), rng)


def test_pack_unpack_round_trip(rng):
    F, H, L = 3, 5, 3
    w = rng.normal(size=lstm_num_params(F, H, L))
    layers = lstm_unpack(w, F, H, L)
    assert [tuple(a.shape for a in layer) for layer in layers] == [
        ((20, 3), (20, 5), (20,)), ((20, 5), (20, 5), (20,)), ((20, 5), (20, 5), (20,))]
    np.testing.assert_array_equal(lstm_pack(layers), w)


def test_layout_invariance_and_single_step(rng):
    X, w, H, L = lstm_example(rng)
    wide = np.zeros((X.shape[0], X.shape[1], 2 * X.shape[2]))
    wide[:, :, ::2] = X
    strided = wide[:, ::-1, ::2]  # negative and non-unit strides
    np.testing.assert_allclose(lstm(strided, w, H, L), lstm_reference(X[:, ::-1], w, H, L), rtol=1e-12)
    X32, w32 = X.astype(np.float32), w.astype(np.float32)
    np.testing.assert_allclose(lstm(X32, w32, H, L), lstm_reference(X32.astype(float), w32.astype(float), H, L),
                               rtol=1e-12)
    np.testing.assert_allclose(lstm(X[:, :1], w, H, L), lstm_reference(X[:, :1], w, H, L), rtol=1e-12)


def test_vjp_recomputes_when_tape_is_missing(rng):
    from gpssm_np.ops import lstm as module

    args = lstm_example(rng)
    out = lstm(*args)
    module._TAPES.clear()
    G = rng.normal(size=out.shape)
    grads = module._lstm_make_vjp(out, *args)(G)
    out2 = lstm(*args)
    grads2 = module._lstm_make_vjp(out2, *args)(G)
    for a, b in zip(grads, grads2):
        np.testing.assert_array_equal(a, b)


def test_bad_arguments_raise(rng):
    X, w, H, L = lstm_example(rng)
    with pytest.raises(ValueError, match="weights"):
        lstm(X, w[:-1], H, L)
    with pytest.raises(ValueError, match="inputs"):
        lstm(X[0], w, H, L)
    with pytest.raises(ValueError, match="num_layers"):
        lstm(X, w, H, 0)


def test_saturated_gates_stay_finite(rng):
    X, w, H, L = lstm_example(rng)
    w = 1e3 * w  # pre-activations of order 1e3: e^-z overflows to inf in the sigmoid
    out = lstm(X, w, H, L)
    np.testing.assert_allclose(out, lstm_reference(X, w, H, L), rtol=1e-12, atol=1e-14)
    with np.errstate(over="ignore"):  # autograd's tanh VJP divides by cosh(x)^2 = inf, correctly giving 0
        check_vjp_against_reference(lstm, lstm_reference, (X, w, H, L), (0, 1), rng)
