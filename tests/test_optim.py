import io

import numpy as np
import pytest

from gpssm_np.optim import Adam


def quadratic(params, targets, scales):
    """Loss sum_k scales_k * ||p_k - targets_k||^2 / 2 and its gradients."""
    loss = sum(0.5 * scales[k] * np.sum((params[k] - targets[k]) ** 2) for k in params)
    grads = {k: scales[k] * (params[k] - targets[k]) for k in params}
    return loss, grads


def problem(rng):
    params = {"a": rng.standard_normal((3, 2)), "b": rng.standard_normal(4), "c": np.array(0.7)}
    targets = {k: rng.standard_normal(np.shape(v)) for k, v in params.items()}
    scales = {"a": 1.0, "b": 10.0, "c": 0.1}
    return params, targets, scales


def test_minimises_quadratic(rng):
    params, targets, scales = problem(rng)
    opt = Adam(lr=0.05)
    loss0, _ = quadratic(params, targets, scales)
    for _ in range(2000):
        _, grads = quadratic(params, targets, scales)
        params = opt.step(params, grads)
    loss, _ = quadratic(params, targets, scales)
    assert opt.t == 2000
    assert loss < 1e-6 * loss0
    for k in params:
        np.testing.assert_allclose(params[k], targets[k], atol=1e-3)
        assert params[k].shape == np.shape(targets[k])


def test_first_two_steps_by_hand():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    opt = Adam(lr=lr, beta1=b1, beta2=b2, eps=eps)
    p0 = np.array([1.0, -2.0, 0.0])
    g1 = np.array([0.5, -3.0, 0.0])
    g2 = np.array([-1.0, 2.0, 4.0])
    p1 = opt.step({"p": p0}, {"p": g1})["p"]
    # step 1: m_hat = g1, v_hat = g1^2, so the update is lr * g1 / (|g1| + eps)
    np.testing.assert_allclose(p1, p0 - lr * g1 / (np.abs(g1) + eps), rtol=1e-15)
    np.testing.assert_allclose(p1, [0.9, -1.9, 0.0], rtol=1e-7)
    p2 = opt.step({"p": p1}, {"p": g2})["p"]
    m = b1 * (1 - b1) * g1 + (1 - b1) * g2
    v = b2 * (1 - b2) * g1**2 + (1 - b2) * g2**2
    expected = p1 - lr * (m / (1 - b1**2)) / (np.sqrt(v / (1 - b2**2)) + eps)
    np.testing.assert_allclose(p2, expected, rtol=1e-14)
    # e.g. third coordinate: m_hat = 0.1*4/0.19, v_hat = 0.001*16/0.001999
    np.testing.assert_allclose(p2[2], -0.1 * (0.4 / 0.19) / (np.sqrt(0.016 / 0.001999) + eps), rtol=1e-14)
    assert opt.t == 2


def test_clipping_bounds_the_step(rng):
    grads = {"a": np.array([300.0, -400.0]), "b": np.array([1200.0])}  # global norm 1300
    params = {"a": np.zeros(2), "b": np.zeros(1)}
    clip = 13.0
    # with beta1 = 0 the first moment after one step is the (clipped) gradient itself
    clipped = Adam(beta1=0.0, clip_norm=clip)
    clipped.step(params, grads)
    sd = clipped.state_dict()
    g_used = np.concatenate([sd["m:a"], sd["m:b"]])
    assert np.linalg.norm(g_used) == pytest.approx(clip, rel=1e-12)
    np.testing.assert_allclose(g_used, np.array([300.0, -400.0, 1200.0]) * clip / 1300.0, rtol=1e-12)
    # below the threshold nothing changes
    unclipped = Adam(clip_norm=1e4)
    unclipped.step(params, grads)
    np.testing.assert_allclose(unclipped.state_dict()["m:b"], 0.1 * grads["b"], rtol=1e-15)
    # over many steps with huge random gradients, the moments only ever see gradients of norm <= clip:
    # m is a (1 - beta1^t)-weighted average of them and v of their squares
    opt = Adam(lr=0.01, clip_norm=clip)
    p = {"a": np.zeros(2), "b": np.zeros(1)}
    for _ in range(50):
        p = opt.step(p, {"a": 1e6 * rng.standard_normal(2), "b": 1e6 * rng.standard_normal(1)})
        sd = opt.state_dict()
        m = np.concatenate([sd["m:a"], sd["m:b"]])
        v = np.concatenate([sd["v:a"], sd["v:b"]])
        assert np.linalg.norm(m) <= (1 - 0.9**opt.t) * clip * (1 + 1e-12)
        assert np.sum(v) <= (1 - 0.999**opt.t) * clip**2 * (1 + 1e-12)
    with pytest.raises(ValueError, match="clip_norm"):
        Adam(clip_norm=0.0)


def test_state_dict_round_trip_continues_identically(rng):
    params, targets, scales = problem(rng)
    opt = Adam(lr=0.02, clip_norm=5.0)
    for _ in range(7):
        params = opt.step(params, quadratic(params, targets, scales)[1])
    state = opt.state_dict()
    assert isinstance(state["t"], int) and state["t"] == 7
    buf = io.BytesIO()
    np.savez(buf, **state)
    buf.seek(0)
    restored = Adam(lr=0.02, clip_norm=5.0)
    restored.load_state_dict(np.load(buf))
    assert restored.t == 7
    p_a, p_b = dict(params), dict(params)
    for _ in range(5):
        p_a = opt.step(p_a, quadratic(p_a, targets, scales)[1])
        p_b = restored.step(p_b, quadratic(p_b, targets, scales)[1])
    for k in params:
        np.testing.assert_array_equal(p_a[k], p_b[k])
    # the saved state is a snapshot, not a view of the live moments
    assert state["t"] == 7 and not np.array_equal(state["m:a"], opt.state_dict()["m:a"])


def test_inputs_not_mutated(rng):
    params, targets, scales = problem(rng)
    _, grads = quadratic(params, targets, scales)
    params_copy = {k: np.copy(v) for k, v in params.items()}
    grads_copy = {k: np.copy(v) for k, v in grads.items()}
    new = Adam(lr=0.1, clip_norm=0.5).step(params, grads)
    assert set(params) == set(params_copy) and set(grads) == set(grads_copy)
    for k in params:
        np.testing.assert_array_equal(params[k], params_copy[k])
        np.testing.assert_array_equal(grads[k], grads_copy[k])
        assert new[k] is not params[k]
        assert not np.array_equal(new[k], params[k])


def test_bad_inputs():
    opt = Adam()
    p = {"x": np.zeros(2)}
    with pytest.raises(ValueError, match="grads"):
        opt.step(p, {"y": np.zeros(2)})
    with pytest.raises(ValueError, match=r"grads\['x'\]"):
        opt.step(p, {"x": np.zeros(3)})
    with pytest.raises(ValueError, match=r"grads\['x'\]"):
        opt.step(p, {"x": np.array([np.nan, 0.0])})
    assert opt.t == 0
    opt.step(p, {"x": np.ones(2)})
    with pytest.raises(ValueError, match="params"):
        opt.step({"x": np.zeros(2), "z": np.zeros(1)}, {"x": np.ones(2), "z": np.ones(1)})
    for kwargs, arg in [({"lr": 0.0}, "lr"), ({"beta1": 1.0}, "beta1"), ({"beta2": -0.1}, "beta2"),
                        ({"beta2": 1.0}, "beta2"), ({"eps": 0.0}, "eps"), ({"lr": True}, "lr"),
                        ({"beta1": -0.1}, "beta1")]:
        with pytest.raises(ValueError, match=arg):
            Adam(**kwargs)
    assert Adam(beta1=0.0, beta2=0.0).beta2 == 0.0  # the decay rates' interval [0, 1) holds 0
    with pytest.raises(ValueError, match="^beta2: expected a finite number in \\[0.0, 1.0\\), got 1.0$"):
        Adam(beta2=1.0)
    with pytest.raises(ValueError, match="state: unexpected key 'm:'"):  # a moment without a parameter's name
        Adam().load_state_dict({"t": 1, "m:": np.zeros(1), "v:": np.zeros(1)})
    with pytest.raises(ValueError, match="state"):
        Adam().load_state_dict({"m:x": np.zeros(2)})
    with pytest.raises(ValueError, match="state"):
        Adam().load_state_dict({"t": 1, "m:x": np.zeros(2)})
    with pytest.raises(ValueError, match="t"):
        Adam().load_state_dict({"t": -1})
    fresh = Adam()
    fresh.load_state_dict(Adam().state_dict())  # a state before any step (t = 0) is a state
    assert fresh.t == 0
    for params, grads in (([0.0], {"x": np.ones(2)}), ({"x": np.zeros(2)}, [1.0])):  # either not a dict
        with pytest.raises(ValueError, match="params, grads: expected dicts of arrays"):
            Adam().step(params, grads)


def test_scales_give_named_parameters_their_own_step(rng):
    params, targets, weights = problem(rng)
    plain, scaled = Adam(lr=0.05), Adam(lr=0.05, scales={"a": 0.1, "c": 2.0})
    for _ in range(3):
        _, grads = quadratic(params, targets, weights)
        before = params
        params = plain.step(before, grads)
        other = scaled.step(before, grads)
        for k, factor in (("a", 0.1), ("b", 1.0), ("c", 2.0)):  # the same moments, the step times the factor
            np.testing.assert_allclose(other[k] - before[k], factor * (params[k] - before[k]), rtol=1e-12)
    for bad, arg in [({"a": 0.0}, r"scales\['a'\]"), ([("a", 0.1)], "scales")]:
        with pytest.raises(ValueError, match=arg):
            Adam(scales=bad)
