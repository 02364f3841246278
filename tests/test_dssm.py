"""DSSM (deep Markov model baseline): shapes, the ELBO against a per-particle reference, gradients, training,
forecasting and filtering, configuration and input checks."""
import os

import numpy as np
import pytest

from gpssm_np.datasets import load
from gpssm_np.forecast import Forecast
from gpssm_np.inference import draw_noise
from gpssm_np.models.dssm import DSSM, STD_FLOOR
from gpssm_np.protocols import evaluate
from gpssm_np.transforms import positive
from tests.data_dir import DATA_DIR

needs_data = pytest.mark.skipif(not os.path.isfile(os.path.join(DATA_DIR, "actuator", "actuator.mat")),
                                reason=f"the benchmark data are not in {DATA_DIR}")
SMALL = {"dim_x": 3, "dim_y": 1, "dim_u": 1, "hidden": 4, "rnn_hidden": 5}


def small_model(seed=0, **kwargs):
    return DSSM(**dict(SMALL, seed=seed, **kwargs))


def perturbed(model, rng, scale=0.3):
    """The model with every parameter moved randomly (so no layer sits at its special initial value)."""
    model.set_learned_params({k: v + scale * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()})
    return model


def data(rng, B=2, T=6):
    return rng.normal(size=(B, T, 1)), rng.normal(size=(B, T, 1))


def softplus(a):
    return np.logaddexp(0.0, a)


def reference_elbo(model, y, u, num_samples, seed):
    """sum_b ELBO_b written out per window and per particle, with plain loops (module docstring of dssm.py)."""
    p, dx = model.params, model.spec.dim_x
    B, T, dy = y.shape
    noise = draw_noise(np.random.default_rng(seed), B, num_samples, T, dx, 0)

    def layer(name, a):
        return p[name + "_W"] @ a + p[name + "_b"]

    def relu(a):
        return np.maximum(a, 0.0)

    r = positive(p["obs_noise"])
    total = 0.0
    for b in range(B):
        h = [None] * T
        nxt = np.zeros(model.spec.rnn_hidden)
        for t in range(T - 1, -1, -1):
            feat = np.concatenate([y[b, t], u[b, t]])
            h[t] = nxt = np.tanh(layer("rnn_in", feat) + (p["rnn_hh_W"] @ nxt if t < T - 1 else 0.0))
        m0, v0 = layer("x0_mean", h[0]), softplus(layer("x0_var", h[0])) + 1e-4
        total -= 0.5 * np.sum(v0 + m0**2 - 1.0 - np.log(v0))
        for s in range(num_samples):
            n = b * num_samples + s
            x = m0 + np.sqrt(v0) * noise.eps0[n]
            for t in range(T):
                z = np.concatenate([x, u[b, t]])
                gate = 1.0 / (1.0 + np.exp(-layer("trans_gate_2", relu(layer("trans_gate_1", z)))))
                prop = layer("trans_prop_2", relu(layer("trans_prop_1", z)))
                mp = (1 - gate) * layer("trans_lin", z) + gate * prop
                sp = softplus(layer("trans_scale", relu(prop))) + STD_FLOOR
                c = 0.5 * (np.tanh(layer("comb", x)) + h[t])
                mq, sq = layer("comb_mean", c), softplus(layer("comb_std", c)) + STD_FLOOR
                kl = np.sum(np.log(sp / sq) + (sq**2 + (mq - mp) ** 2) / (2 * sp**2) - 0.5)
                ell = np.sum(-0.5 * (np.log(2 * np.pi * r) + ((y[b, t] - mq[:dy]) ** 2 + sq[:dy] ** 2) / r))
                total += (ell - kl) / num_samples
                x = mq + sq * noise.eps_x[t, n]
    return total


def test_shapes(rng):
    m = small_model()
    assert {k: v.shape for k, v in m.get_learned_params().items()} == m.param_shapes()
    assert m.spec.dim_x == 3 and m.obs_var().shape == (1,)
    np.testing.assert_allclose(m.obs_var(), 0.1)
    y, u = data(rng)
    mean, var = m.q_x0(y[0], u[0])
    assert mean.shape == var.shape == (3,) and np.all(var > 0)
    mean_full, cov = m.q_x0(y[0], u[0], full_cov=True)  # the estimators' q_x0 surface
    np.testing.assert_array_equal(mean_full, mean)
    np.testing.assert_array_equal(cov, np.diag(var))
    x = rng.normal(size=(7, 3))
    mean, cov = m.transition_moments()(x, u[0, 0], 0)
    assert mean.shape == (7, 3) and cov.shape == (7, 3, 3)
    np.testing.assert_array_equal(cov, np.einsum("ni,ij->nij", np.diagonal(cov, axis1=1, axis2=2), np.eye(3)))
    # the linear proposal starts at the identity and the scale at init_process_std
    assert np.allclose(np.sqrt(np.diagonal(cov, axis1=1, axis2=2)), 0.1, rtol=0.5)


def test_elbo_matches_per_particle_reference(rng):
    m = perturbed(small_model(), rng)
    y, u = data(rng, B=2, T=4)
    assert m.elbo(y, u, num_samples=3, seed=5) == pytest.approx(reference_elbo(m, y, u, 3, 5), rel=1e-10)


def test_fused_and_reference_backends_agree_on_value_and_gradient(rng):
    fused = perturbed(small_model(), rng)
    reference = DSSM(**dict(fused.get_config(), backend="reference"))
    reference.set_learned_params(fused.get_learned_params())
    y, u = data(rng, B=2, T=5)
    value, grad = fused.elbo_and_grad(y, u, num_samples=3, seed=2)
    ref_value, ref_grad = reference.elbo_and_grad(y, u, num_samples=3, seed=2)
    assert value == pytest.approx(ref_value, rel=1e-12)
    for name in grad:
        np.testing.assert_allclose(grad[name], ref_grad[name], rtol=1e-9, atol=1e-12, err_msg=name)


def test_elbo_finite_deterministic_and_weighted(rng):
    m = small_model()
    y, u = data(rng, B=3)
    value = m.elbo(y, u, num_samples=4, seed=1)
    assert np.isfinite(value)
    assert m.elbo(y, u, num_samples=4, seed=1) == value
    assert m.elbo(y, u, num_samples=4, seed=2) != value
    assert m.elbo(y, u, num_samples=4, seed=1, num_windows=6) == pytest.approx(2 * value, rel=1e-12)
    paper = DSSM(**dict(m.get_config(), kl_weighting="paper"))
    assert paper.elbo(y, u, num_samples=4, seed=1) == pytest.approx(value / 3, rel=1e-12)
    # the training loss is the per-window -ELBO under either weighting
    for model in (m, paper):
        loss = model.minibatch_loss(y, u, np.random.default_rng(1), 4, 30)
        assert loss(model.params) == pytest.approx(-value / 3, rel=1e-12)


def test_gradient_matches_finite_differences(rng):
    m = perturbed(small_model(), rng)
    y, u = data(rng, B=2, T=4)
    _, grad = m.elbo_and_grad(y, u, num_samples=3, seed=0)
    assert set(grad) == set(m.params)
    base = m.get_learned_params()
    direction = {k: rng.normal(size=v.shape) for k, v in base.items()}
    step = 1e-6
    values = []
    for sign in (1, -1):
        m.set_learned_params({k: base[k] + sign * step * direction[k] for k in base})
        values.append(m.elbo(y, u, num_samples=3, seed=0))
    fd = (values[0] - values[1]) / (2 * step)
    analytic = sum(np.sum(grad[k] * direction[k]) for k in base)
    assert fd == pytest.approx(analytic, rel=1e-6)


def test_fit_decreases_loss_on_toy_sequence():
    rng = np.random.default_rng(0)
    T = 120
    u = rng.normal(size=(T, 1))
    x, ys = 0.0, []
    for t in range(T):
        x = 0.8 * np.sin(x) + 0.5 * u[t, 0]
        ys.append(x + 0.05 * rng.normal())
    y = np.array(ys)[:, None]
    m = DSSM(dim_x=2, hidden=8, rnn_hidden=8, seed=1)
    m.fit(y, u, epochs=3, plan=dict(seq_len=20, batch_size=8, num_samples=4, lr=0.02))
    assert len(m.history_) == 3 * 13
    assert np.all(np.isfinite(m.history_))
    assert np.mean(m.history_[-5:]) < 0.5 * np.mean(m.history_[:5])


def test_forecast_filter_and_smooth(rng):
    m = perturbed(small_model(), rng, scale=0.1)
    y, u = rng.normal(size=(30, 1)), rng.normal(size=(30, 1))
    for fc in (m.forecast(u[:8], x0=m.q_x0(y[:8], u[:8]), num_samples=5),
               m.forecast(u[:8], y_past=y, u_past=u, num_samples=5, num_particles=50),
               m.forecast(u[:8], num_samples=5)):
        assert isinstance(fc, Forecast)
        assert fc.samples.shape == (5, 8, 1) and fc.states.shape == (5, 8, 3)
        assert np.all(np.isfinite(fc.mean)) and np.all(fc.std > 0)
    a = m.forecast(u[:8], x0=(np.zeros(3), np.ones(3)), num_samples=5, seed=3)
    b = m.forecast(u[:8], x0=(np.zeros(3), np.ones(3)), num_samples=5, seed=3)
    np.testing.assert_array_equal(a.states, b.states)
    result = m.filter(y, u, num_particles=50)
    assert result.means.shape == (30, 3) and np.isfinite(result.log_likelihood)
    assert m.smooth(y, u, num_particles=30, num_trajectories=4).shape == (4, 30, 3)


@needs_data
def test_protocols_run_on_actuator(monkeypatch):
    monkeypatch.setenv("GPSSM_NP_DATA", DATA_DIR)
    ds = load("actuator")
    m = small_model()
    for protocol in ("paper", "causal"):
        result = evaluate(m, ds, protocol, num_samples=10, num_particles=50) if protocol == "causal" else \
            evaluate(m, ds, protocol, num_samples=10)
        assert np.isfinite(result["rmse"]) and np.isfinite(result["nlpd"])


def test_config_round_trip():
    m = small_model(seed=3, kl_weighting="paper", init_obs_var=0.5, init_process_std=0.2)
    twin = DSSM(**m.get_config())
    assert twin.get_config() == m.get_config()
    for name, value in m.get_learned_params().items():
        np.testing.assert_array_equal(twin.params[name], value)
    np.testing.assert_allclose(twin.obs_var(), 0.5)


@pytest.mark.parametrize("kwargs, match", [
    ({"dim_y": 4}, "dim_y"), ({"hidden": 0}, "hidden"), ({"rnn_hidden": 1.5}, "rnn_hidden"), ({"dim_u": -1}, "dim_u"),
    ({"kl_weighting": "mean"}, "kl_weighting"), ({"init_obs_var": -1.0}, "init_obs_var"),
    ({"init_process_std": 1e-5}, "init_process_std"), ({"seed": -2}, "seed"), ({"backend": "ops"}, "backend"),
])
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DSSM(**dict(SMALL, **kwargs))


def test_bad_call_arguments(rng):
    m = small_model()
    y, u = data(rng)
    with pytest.raises(ValueError, match="y"):
        m.q_x0()
    with pytest.raises(ValueError, match="y"):
        m.q_x0(y, u)  # two windows
    with pytest.raises(ValueError, match="full_cov"):
        m.q_x0(y[0], u[0], full_cov="yes")
    with pytest.raises(ValueError, match="y"):
        m.elbo(rng.normal(size=(2, 5, 2)), u)
    with pytest.raises(ValueError, match="u"):
        m.elbo(y, None)
    with pytest.raises(ValueError, match="num_samples"):
        m.elbo(y, u, num_samples=0)
    with pytest.raises(ValueError, match="y: values up to .* rescale them"):  # its ELBO was not finite
        m.elbo(1e200 * y, u)
    transition = m.transition_moments()
    with pytest.raises(ValueError, match="u_t"):
        transition(np.zeros((2, 3)), None)
    with pytest.raises(ValueError, match="x_prev"):
        transition(np.zeros((2, 2)), np.zeros(1))


def test_a_large_initial_process_std_does_not_overflow(tmp_path):
    """softplus^-1 of init_process_std overflowed beyond about 710 (an infinite parameter the saved model could not be
    loaded with); it is finite, and the model round-trips through a file."""
    import gpssm_np as gp

    model = gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4, init_process_std=800.0)
    assert np.all(np.isfinite(model.params["trans_scale_b"]))
    np.testing.assert_allclose(np.logaddexp(0.0, model.params["trans_scale_b"]) + 1e-4, 800.0, rtol=1e-12)  # STD_FLOOR
    gp.load(gp.save(model, tmp_path / "m.npz"))


def test_q_x0_reads_the_whole_window_as_the_elbo_does(rng):
    # q(x0) comes from h_1, the RNN state after reading the window back to its first step (the ELBO's start; the
    # reference above writes the same recursion out)
    m = perturbed(small_model(), rng)
    y, u = data(rng, B=1, T=5)
    mean, var = m._q_x0(y[0], u[0])
    p = m.params
    h = np.zeros(m.spec.rnn_hidden)
    for t in range(4, -1, -1):
        h = np.tanh(p["rnn_in_W"] @ np.concatenate([y[0, t], u[0, t]]) + p["rnn_in_b"] + (p["rnn_hh_W"] @ h if t < 4
                                                                                            else 0.0))
    np.testing.assert_allclose(mean, p["x0_mean_W"] @ h + p["x0_mean_b"], rtol=1e-12)
    np.testing.assert_allclose(var, softplus(p["x0_var_W"] @ h + p["x0_var_b"]) + 1e-4, rtol=1e-12)
    moved = y.copy()
    moved[0, 0] += 1.0  # the first step alone
    assert not np.allclose(m._q_x0(moved[0], u[0])[0], mean)


def test_one_complete_step_is_enough_for_the_filters_start(rng, recwarn):
    m = perturbed(small_model(), rng)
    y, u = data(rng, B=1, T=5)
    y = y[0].copy()
    y[1] = np.nan  # only the first step is complete before a missing output
    mean, var = m.filter_start(y, u[0])
    np.testing.assert_array_equal(mean, m._q_x0(y[:1], u[0, :1])[0])
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_the_arguments_at_their_bounds():
    assert DSSM(**dict(SMALL, dim_y=3)).spec.dim_y == 3  # dim_y = dim_x: C = I
    with pytest.raises(ValueError, match="init_process_std: expected a value > 0.0001"):
        DSSM(**dict(SMALL, init_process_std=STD_FLOOR))  # softplus^-1(0) would be -inf
    assert np.all(np.isfinite(DSSM(**dict(SMALL, init_process_std=2 * STD_FLOOR)).params["trans_scale_b"]))
