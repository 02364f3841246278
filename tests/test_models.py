"""Model-level equivalences, KL closed forms, parameter handling and input validation."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.gp import kl_diag_standard_normal, kl_inducing


def gaussian_kl(m0, S0, m1, S1):
    """KL(N(m0, S0) || N(m1, S1)) from the textbook formula with dense matrices."""
    k = len(m0)
    S1inv = np.linalg.inv(S1)
    d = m1 - m0
    return 0.5 * (np.trace(S1inv @ S0) + d @ S1inv @ d - k + np.linalg.slogdet(S1)[1] - np.linalg.slogdet(S0)[1])


def test_odgpssm_with_identity_mixing_equals_prssm(rng):
    y, u = rng.normal(size=(2, 7, 1)), rng.normal(size=(2, 7, 1))
    prssm = gp.PRSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=5, seed=0)
    params = {k: v + 0.2 * rng.normal(size=v.shape) for k, v in prssm.get_learned_params().items()}
    prssm.set_learned_params(params)
    od = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_latent=3, num_inducing=5, seed=0)
    od.set_learned_params(dict(params, A=np.eye(3)))
    v_p, g_p = prssm.elbo_and_grad(y, u, num_samples=6, seed=2)
    v_o, g_o = od.elbo_and_grad(y, u, num_samples=6, seed=2)
    assert v_o == pytest.approx(v_p, rel=1e-12)
    for name in g_p:
        np.testing.assert_allclose(g_o[name], g_p[name], rtol=1e-10, atol=1e-12)


def test_kl_inducing_matches_dense_formula(rng):
    Q, M = 3, 4
    q_mu = rng.normal(size=(Q, M))
    q_sqrt = np.tril(rng.normal(size=(Q, M, M))) + 3 * np.eye(M)
    W = rng.normal(size=(Q, M, M))
    Kzz = W @ np.swapaxes(W, 1, 2) + M * np.eye(M)
    whitened = sum(gaussian_kl(q_mu[q], q_sqrt[q] @ q_sqrt[q].T, np.zeros(M), np.eye(M)) for q in range(Q))
    unwhitened = sum(gaussian_kl(q_mu[q], q_sqrt[q] @ q_sqrt[q].T, np.zeros(M), Kzz[q]) for q in range(Q))
    assert kl_inducing(q_mu, q_sqrt) == pytest.approx(whitened, rel=1e-12)
    assert kl_inducing(q_mu, q_sqrt, Kzz) == pytest.approx(unwhitened, rel=1e-12)
    # whitening is a change of variables u = L v: the KL is unchanged
    L = np.linalg.cholesky(Kzz)
    assert kl_inducing(np.einsum("qij,qj->qi", L, q_mu), L @ q_sqrt, Kzz) == pytest.approx(whitened, rel=1e-10)


def test_kl_x0_matches_dense_formula(rng):
    m, v = rng.normal(size=4), rng.uniform(0.1, 3, size=4)
    assert kl_diag_standard_normal(m, v) == pytest.approx(gaussian_kl(m, np.diag(v), np.zeros(4), np.eye(4)))


def test_kl_weightings(rng):
    """The two weightings differ exactly as documented: unbiased = sum_b(...) - KL_u, paper = mean_b(...) - KL_u/T."""
    y, u = rng.normal(size=(3, 5, 1)), rng.normal(size=(3, 5, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=0)
    params = model.get_learned_params()
    params["q_mu"] = params["q_mu"] + rng.normal(size=params["q_mu"].shape)  # KL_u > 0
    model.set_learned_params(params)
    unbiased = model.elbo(y, u, num_samples=3, seed=0, kl_weighting="unbiased")
    paper = model.elbo(y, u, num_samples=3, seed=0, kl_weighting="paper")
    doubled = model.elbo(y, u, num_samples=3, seed=0, kl_weighting="unbiased", num_windows=6)
    p = model.constrained_params()
    kl_u = kl_inducing(p["q_mu"], p["q_sqrt"])
    data_minus_kl_x0 = unbiased + kl_u  # sum over the 3 sequences
    assert paper == pytest.approx(data_minus_kl_x0 / 3 - kl_u / 5, rel=1e-12)
    assert doubled == pytest.approx(2 * data_minus_kl_x0 - kl_u, rel=1e-12)


def test_get_set_learned_params_round_trip_and_copies():
    model = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=2, num_inducing=6, seed=0)
    params = model.get_learned_params()
    assert params["A"].shape == (4, 2) and params["Z"].shape == (6, 5) and params["q_sqrt"].shape == (2, 6, 6)
    params["A"][:] = 0.0
    assert not np.all(model.get_learned_params()["A"] == 0.0)  # get_learned_params returned copies
    model.set_learned_params(params)
    np.testing.assert_array_equal(model.get_learned_params()["A"], 0.0)
    per_gp = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=2, num_inducing=6, shared_inducing=False)
    assert per_gp.get_learned_params()["Z"].shape == (2, 6, 5)
    assert "A" not in gp.PRSSM(dim_x=4, dim_y=1, dim_u=1).get_learned_params()


def test_authors_initialisation():
    p = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, seed=0).constrained_params()
    np.testing.assert_allclose(p["lengthscale"], np.log(2), rtol=1e-12)
    np.testing.assert_allclose(p["obs_var"], 1 + np.log(2), rtol=1e-12)
    assert np.all(np.abs(p["Z"]) <= 2)
    np.testing.assert_array_equal(p["q_sqrt"][0], np.eye(20))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dim_x=0, dim_y=1), "dim_x"),
        (dict(dim_x=2, dim_y=3), "dim_y"),
        (dict(dim_x=2, dim_y=1, num_inducing=-1), "num_inducing"),
        (dict(dim_x=2, dim_y=1, kernel="rbf"), "kernel"),
        (dict(dim_x=2, dim_y=1, backend="gpu"), "backend"),
        (dict(dim_x=2, dim_y=1, kl_weighting="none"), "kl_weighting"),
        (dict(dim_x=2, dim_y=1, mean_function="quadratic"), "mean_function"),
        (dict(dim_x=2, dim_y=1, seed=-1), "seed"),
        (dict(dim_y=True), "dim_y: expected a positive integer"),  # a bool is an int to Python, not a dimension
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gp.ODGPSSM(**kwargs)


@pytest.mark.parametrize(
    "y, u, match",
    [
        (np.zeros((5, 2)), np.zeros((5, 1)), "dim_y"),
        (np.zeros((5, 1)), np.zeros((4, 1)), "u: expected shape"),
        (np.zeros((5, 1)), None, "u: the model has dim_u"),
        (np.full((5, 1), np.nan), np.zeros((5, 1)), "NaN"),
        (np.zeros((5, 1)), np.full((5, 1), np.inf), "NaN or inf"),
        (np.zeros((0, 1)), np.zeros((0, 1)), "non-empty"),
        (np.zeros((1, 1, 5, 1)), np.zeros((5, 1)), "dimensions"),  # a 1-D y is one output (dim_y = 1)
        ("abc", np.zeros((5, 1)), "numeric"),
        ([[0.0], [1.0, 2.0]] * 3, np.zeros((6, 1)), r"y: expected an array of shape \(T, d\) \(rows of equal"),
    ],
)
def test_bad_data_is_a_value_error(y, u, match):
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    with pytest.raises(ValueError, match=match):
        model.elbo(y, u, num_samples=2)


def test_bad_sizes_and_params():
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    y, u = np.zeros((5, 1)), np.zeros((5, 1))
    with pytest.raises(ValueError, match="num_samples"):
        model.elbo(y, u, num_samples=0)
    params = model.get_learned_params()
    with pytest.raises(ValueError, match="keys"):
        model.set_learned_params({k: v for k, v in params.items() if k != "A"})
    with pytest.raises(ValueError, match=r"params\['A'\]: expected shape"):
        model.set_learned_params(dict(params, A=np.zeros((3, 3))))
    with pytest.raises(ValueError, match="NaN"):
        model.set_learned_params(dict(params, A=np.full((2, 2), np.nan)))


def test_autonomous_model_without_inputs(rng):
    model = gp.ODGPSSM(dim_x=2, dim_y=2, dim_u=0, num_inducing=4)
    value, grad = model.elbo_and_grad(rng.normal(size=(6, 2)), num_samples=3)
    assert np.isfinite(value) and grad["Z"].shape == (4, 2)
    with pytest.raises(ValueError, match="u: expected shape"):
        model.elbo(rng.normal(size=(6, 2)), rng.normal(size=(6, 1)))


@pytest.mark.parametrize("objective", ["prior", "enkf"])
def test_fit_increases_the_elbo_on_a_toy_system(objective, rng):
    # from the random initialisation, so that the ELBO before and after compare Adam's work only (the default
    # warm start changes the starting point itself)
    T = 60
    u = np.sin(np.arange(T) / 4.0)[:, None]
    x = np.zeros(T)
    for t in range(1, T):
        x[t] = 0.8 * x[t - 1] + 0.5 * u[t, 0]
    y = x[:, None] + 0.05 * rng.normal(size=(T, 1))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=8, seed=0, process_noise=0.01, obs_noise=0.1,
                       init="random", objective=objective)
    before = model.elbo(y, u, num_samples=10, seed=0)
    model.fit(y, u, epochs=4, plan=dict(seq_len=20, stride=2, batch_size=8, lr=0.02, num_samples=10))
    after = model.elbo(y, u, num_samples=10, seed=0)
    assert len(model.history_) == 4 * 3  # 21 windows of 20 at stride 2 -> 3 batches of 8 per epoch
    assert after > before
    assert all(np.all(np.isfinite(v)) for v in model.get_learned_params().values())


def test_unknown_filter_options_are_named():
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    with pytest.raises(ValueError, match="bogus: unknown keyword argument of ODGPSSM.filter; expected one of y, u, "
                                         "num_particles, seed, init_window, proposal"):
        model.filter(np.zeros((5, 1)), np.zeros((5, 1)), bogus=1)
    with pytest.raises(ValueError, match=r"y: contains inf \(NaN marks a missing value here"):
        model.filter(np.array([[0.0], [np.inf], [np.nan]]), np.zeros((3, 1)))


def test_the_jitter_rises_tenfold_up_to_max_jitter():
    """``increase_jitter``: K(Z, Z)'s jitter times 10 while the result is at most ``MAX_JITTER``; False beyond it."""
    from gpssm_np._config import MAX_JITTER
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, jitter=MAX_JITTER / 10, settings="authors")
    assert model.increase_jitter() is True and model.spec.jitter == MAX_JITTER  # reaching it is allowed
    assert model.increase_jitter() is False and model.spec.jitter == MAX_JITTER


def test_pretraining_the_transition_moves_only_its_parameters_and_raises_its_regression_bound(rng):
    """``pretrain_transition`` (paper Section 4.1): Adam on ``inference.transition_regression_elbo`` of the state
    pairs; the observation and q(x0) parameters stay; pairs of the wrong width or of unequal shapes
    are a ValueError naming both arrays."""
    from gpssm_np.inference import transition_regression_elbo
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors", seed=0)
    x_prev, u = rng.normal(size=(20, 2)), rng.normal(size=(20, 1))
    x_next = 0.8 * x_prev + 0.3 * u
    before = {name: value.copy() for name, value in model.params.items()}
    bound = transition_regression_elbo(model.params, model.spec, x_prev, u, x_next)
    assert model.pretrain_transition(x_prev, x_next, u, iterations=30, lr=0.05) is model
    assert transition_regression_elbo(model.params, model.spec, x_prev, u, x_next) > bound
    for name, value in model.params.items():
        moved = not np.array_equal(value, before[name])
        assert moved is not name.startswith(("obs_", "x0_")), name  # the transition's all move
    for bad_prev, bad_next in ((x_prev[:, :1], x_next[:, :1]), (x_prev, x_next[:19])):
        with pytest.raises(ValueError, match=r"^x_prev, x_next: expected two arrays of shape \(P, 2\)"):
            model.pretrain_transition(bad_prev, bad_next, u[:len(bad_prev)], iterations=1)
