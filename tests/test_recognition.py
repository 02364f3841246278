import json

import numpy as np
import pytest

from gpssm_np.ops.lstm import lstm_reference
from gpssm_np.recognition import NETWORKS, VAR_OFFSET, LSTMRecognition, MLPRecognition
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

B, T, DX, DY, DU = 3, 7, 4, 2, 1


def networks():
    return [LSTMRecognition(DX, DY, DU, hidden=5, num_layers=2), MLPRecognition(DX, DY, DU, num_steps=4, hidden=6)]


def data(rng, dim_u=DU, steps=T):
    return rng.normal(size=(B, steps, DY)), rng.normal(size=(B, steps, dim_u))


def as_function(net, params, y, u, backend="fused"):
    """(f(*arrays) -> (mean, var), arrays) over the parameters in a fixed order."""
    names = sorted(params)

    def f(*arrays):
        return net.q_x0(dict(zip(names, arrays)), y, u, backend=backend)

    return f, tuple(params[n] for n in names)


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_shapes_and_positive_variance(net, rng):
    params = net.init_params(rng)
    assert {k: v.shape for k, v in params.items()} == net.param_shapes()
    assert all(name.startswith("rec_") for name in params)
    mean, var = net.q_x0(params, *data(rng))
    assert mean.shape == var.shape == (B, DX)
    assert np.all(var > VAR_OFFSET)


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_initial_variance_with_zero_head_weights(net, rng):
    params = net.init_params(rng)
    params["rec_var_W"] = np.zeros_like(params["rec_var_W"])
    _, var = net.q_x0(params, *data(rng))
    np.testing.assert_allclose(var, np.log1p(np.e) + 1e-4, rtol=1e-14)


def test_lstm_reads_the_window_backwards(rng):
    net = networks()[0]
    params = net.init_params(rng)
    y, u = data(rng)
    mean, _ = net.q_x0(params, y, u)
    features = np.concatenate([y, u], axis=2)[:, ::-1]
    h = lstm_reference(features, params["rec_lstm"], net.hidden, net.num_layers)
    np.testing.assert_allclose(mean, h @ params["rec_mean_W"].T + params["rec_mean_b"], rtol=1e-12)
    mean_flipped, _ = net.q_x0(params, y[:, ::-1], u[:, ::-1])
    assert np.max(np.abs(mean_flipped - mean)) > 1e-3
    # the last step of the window is read first, so it matters less than the first one, but it does matter
    y2 = y.copy()
    y2[:, -1] += 1.0
    assert np.max(np.abs(net.q_x0(params, y2, u)[0] - mean)) > 1e-8


def test_mlp_reads_only_the_first_steps(rng):
    net = networks()[1]
    params = net.init_params(rng)
    y, u = data(rng)
    mean, var = net.q_x0(params, y, u)
    y2, u2 = y.copy(), u.copy()
    y2[:, net.num_steps:] += 1.0
    u2[:, net.num_steps:] -= 1.0
    np.testing.assert_array_equal(net.q_x0(params, y2, u2)[0], mean)
    flat = np.concatenate([y, u], axis=2)[:, :net.num_steps].reshape(B, -1)
    e = np.tanh(flat @ params["rec_hidden_W"].T + params["rec_hidden_b"])
    np.testing.assert_allclose(mean, e @ params["rec_mean_W"].T + params["rec_mean_b"], rtol=1e-12)


def test_lstm_backends_agree_in_value_and_gradient(rng):
    net = networks()[0]
    params = net.init_params(rng)
    y, u = data(rng)
    fused, args = as_function(net, params, y, u, "fused")
    reference, _ = as_function(net, params, y, u, "reference")
    for a, b in zip(fused(*args), reference(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    check_vjp_against_reference(fused, reference, args, range(len(args)), rng, rtol=1e-8)


def rebuilt(config):
    """The network a ``get_config()`` dict describes."""
    return NETWORKS[config["kind"]](**{k: v for k, v in config.items() if k != "kind"})


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_gradients_match_finite_differences(net, rng):
    params = net.init_params(rng)
    fn, args = as_function(net, params, *data(rng))
    check_vjp_finite_differences(fn, args, range(len(args)), rng)


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_no_inputs_and_single_sequence(net, rng):
    net = rebuilt(dict(net.get_config(), dim_u=0))
    params = net.init_params(rng)
    y, _ = data(rng)
    mean, var = net.q_x0(params, y, None)
    mean0, var0 = net.q_x0(params, y[0])
    np.testing.assert_allclose(mean0, mean[:1], rtol=1e-12)
    np.testing.assert_allclose(var0, var[:1], rtol=1e-12)


def test_mlp_rejects_short_windows(rng):
    net = networks()[1]
    params = net.init_params(rng)
    with pytest.raises(ValueError, match="num_steps"):
        net.q_x0(params, *data(rng, steps=net.num_steps - 1))


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_each_network_reads_a_window_of_its_minimum_length(net, rng):
    """The LSTM reads any window (one step too), the MLP one of exactly its num_steps; a training plan's seq_len is
    held to that minimum (``min_steps``)."""
    assert net.min_steps == (1 if net.kind == "lstm" else net.num_steps)
    mean, var = net.q_x0(net.init_params(rng), *data(rng, steps=net.min_steps))
    assert mean.shape == var.shape == (B, DX) and np.all(np.isfinite(mean))


def test_the_mlps_first_layer_starts_within_its_fan_in_bound(rng):
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = num_steps (d_y + d_u), the inputs the layer reads."""
    net = MLPRecognition(DX, DY, DU, num_steps=4, hidden=200)
    weights = net.init_params(rng)["rec_hidden_W"]
    bound = 1.0 / np.sqrt(4 * (DY + DU))
    assert weights.shape == (200, 12) and 0.98 * bound < np.abs(weights).max() <= bound


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_the_repr_names_the_options(net):
    expected = {"lstm": "LSTMRecognition(dim_x=4, dim_y=2, dim_u=1, hidden=5, num_layers=2)",
                "mlp": "MLPRecognition(dim_x=4, dim_y=2, dim_u=1, hidden=6, num_steps=4)"}[net.kind]
    assert repr(net) == expected


def test_bad_arguments_raise(rng):
    net = networks()[0]
    params = net.init_params(rng)
    with pytest.raises(ValueError, match="backend"):
        net.q_x0(params, *data(rng), backend="torch")
    with pytest.raises(ValueError, match="u"):
        net.q_x0(params, *data(rng, dim_u=2))
    with pytest.raises(ValueError, match="num_layers"):
        LSTMRecognition(DX, DY, DU, num_layers=0)
    with pytest.raises(ValueError, match="dim_u"):
        MLPRecognition(DX, DY, -1)


@pytest.mark.parametrize("net", networks(), ids=lambda n: n.kind)
def test_config_round_trip(net, rng):
    config = net.get_config()
    assert config["kind"] == net.kind
    again = rebuilt(json.loads(json.dumps(config)))
    assert type(again) is type(net) and again.get_config() == config
    params = net.init_params(rng)
    y, u = data(rng)
    for a, b in zip(net.q_x0(params, y, u), again.q_x0(params, y, u)):
        np.testing.assert_array_equal(a, b)


def test_recognition_options_are_checked_by_name():
    """An option the network does not take, options that are no dict, and options without a network are
    ValueErrors naming recognition_options (a TypeError from the network's constructor, or dropped, before)."""
    import gpssm_np as gp

    with pytest.raises(ValueError, match="num_steps: unknown keyword argument of recognition_options of "
                                         "recognition='lstm'; expected one of hidden, num_layers"):
        gp.ODGPSSM(dim_x=2, init="random", recognition="lstm", recognition_options={"num_steps": 3})
    with pytest.raises(ValueError, match="recognition_options: expected a dict"):
        gp.ODGPSSM(dim_x=2, init="random", recognition="mlp", recognition_options=[1])
    with pytest.raises(ValueError, match=r"recognition_options: \['hidden'\] given without a recognition network"):
        gp.ODGPSSM(dim_x=2, recognition_options={"hidden": 3})
    assert gp.ODGPSSM(dim_x=2, init="random", recognition="mlp",
                      recognition_options={"num_steps": 3, "hidden": 4}).get_config()["recognition_options"] == \
        {"num_steps": 3, "hidden": 4}


def test_plan_errors_name_the_plans_own_field():
    import gpssm_np as gp

    with pytest.raises(ValueError, match="^lr_scales: expected a dict"):
        gp.ODGPSSM().training_plan({"lr_scales": []})
    with pytest.raises(ValueError, match="^lr_scales: unknown parameter names"):
        gp.ODGPSSM().training_plan({"lr_scales": ({"nope": 1.0},)})
    with pytest.raises(ValueError, match="^gp_folds: expected at most the plan's origins \\(5\\)"):
        gp.ODGPSSM().training_plan({"gp_folds": 6})
    assert gp.ODGPSSM().training_plan({"gp_folds": 5, "origins": 5}).gp_folds == 5


def test_epochs_in_a_plan_dict_selects_the_epoch_loop_as_the_argument_does():
    import gpssm_np as gp

    for model in (gp.ODGPSSM(), gp.PRSSM(settings="authors")):
        from_dict = model.training_plan({"epochs": 3, "batch_size": 4})
        assert isinstance(from_dict, gp.EpochPlan) and from_dict == model.training_plan({"batch_size": 4}, epochs=3)
        assert from_dict.epochs == 3
