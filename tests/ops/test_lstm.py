import numpy as np
import pytest

from gpssm_np.ops.lstm import lstm, lstm_example, lstm_num_params, lstm_pack, lstm_reference, lstm_unpack
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


@pytest.mark.parametrize("steps", [None, 1])  # the example's sequences, and one step from the zero state
@pytest.mark.parametrize("num_layers", LAYERS)
def test_vjp_matches_autograd_and_finite_differences(num_layers, steps, rng):
    X, w, H, L = lstm_example(rng, num_layers)
    args = (X[:, :steps], w, H, L)
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


def test_activations_are_accurate_everywhere():
    # the jitted gates use exp_fast: sigmoid = 1 / (1 + e^-z), tanh by (1 - e) / (1 + e) with e = e^-2|z| and by
    # its Taylor series below |z| = 1/8, where the former would lose relative accuracy
    from gpssm_np.ops._fastmath import TANH_SERIES as _TANH_SERIES, sigmoid_fast as _sigmoid, tanh_fast as _tanh

    z = np.concatenate([np.logspace(-300, 3, 3001), [_TANH_SERIES * (1 - 1e-15), _TANH_SERIES, 0.3, 19.0, 800.0]])
    z = np.concatenate([z, -z, [0.0]])
    tanh = np.array([_tanh(v) for v in z])
    sigmoid = np.array([_sigmoid(v) for v in z])
    eps = np.finfo(float).eps
    assert np.max(np.abs(tanh - np.tanh(z)) / np.maximum(np.abs(np.tanh(z)), 1e-300)) <= 4 * eps
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-z))
    assert np.max(np.abs(sigmoid - want) / np.maximum(want, 1e-300)) <= 4 * eps
    assert _tanh(np.inf) == 1.0 and _tanh(-np.inf) == -1.0 and _sigmoid(-np.inf) == 0.0 and _sigmoid(np.inf) == 1.0


def test_matches_reference_to_1e10_at_the_recognition_size(rng):
    # the authors' recognition network: 2 layers of 32 units reading [y, u] windows
    from autograd import grad

    from tests.gradcheck import rel_err

    B, T, F, H, L = 16, 50, 2, 32, 2
    X = rng.normal(size=(B, T, F))
    w = rng.uniform(-1, 1, size=lstm_num_params(F, H, L)) / np.sqrt(H)
    G = rng.normal(size=(B, H))
    np.testing.assert_allclose(lstm(X, w, H, L), lstm_reference(X, w, H, L), rtol=1e-10, atol=1e-13)
    for i in (0, 1):
        g = grad(lambda *a: (lstm(*a, H, L) * G).sum(), i)(X, w)
        g_ref = grad(lambda *a: (lstm_reference(*a, H, L) * G).sum(), i)(X, w)
        assert rel_err(g, g_ref) <= 1e-10


def test_tape_memory_is_reused_across_calls(rng):
    from autograd import grad

    from gpssm_np.ops import lstm as module

    X, w, H, L = lstm_example(rng)
    module._TAPES.clear()
    loss = grad(lambda w_: (lstm(X, w_, H, L) ** 2).sum())
    loss(w)
    pooled = module._TAPES.pooled_bytes()
    assert pooled > 0  # the first call's tape went back to the pool once its output was freed
    loss(w)
    assert module._TAPES.pooled_bytes() == pooled


def test_blocks_of_sequences_give_the_same_bits_on_any_number_of_threads(rng):
    from autograd import grad

    from gpssm_np.ops.threads import use_threads
    from gpssm_np.ops.lstm import SEQUENCE_BLOCK, sequence_blocks

    B, T, F, H, L = 2 * SEQUENCE_BLOCK + 3, 7, 2, 5, 2  # three blocks, the last one shorter
    assert sequence_blocks(B)[0] == 3
    inputs, weights = rng.normal(size=(B, T, F)), rng.uniform(-1, 1, size=lstm_num_params(F, H, L))
    out_w = rng.normal(size=(B, H))
    results = []
    for threads in (1, 2, 3):
        with use_threads(threads):
            value = lstm(inputs, weights, H, L)
            gx, gw = grad(lambda x, w: np.sum(lstm(x, w, H, L) * out_w), (0, 1))(inputs, weights)
            results.append((value, gx, gw))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][0], lstm_reference(inputs, weights, H, L), rtol=1e-12, atol=1e-14)
