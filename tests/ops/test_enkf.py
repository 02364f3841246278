import autograd.numpy as anp
import numpy as np
import pytest

from gpssm_np.kalman import kalman_filter
from gpssm_np.ops import threads
from gpssm_np.ops.enkf import enkf_example, enkf_loglik, enkf_loglik_ops, enkf_loglik_reference, enkf_update_reference
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

# x0, Z, l, s2, alpha, B, A, sqrt_q, F, G, b, obs_var
DIFFERENTIABLE = (0, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15)


def symmetric_B(fn):
    """Feed B through (B + B^T)/2 so gradient checks perturb only symmetric directions."""

    def wrapped(x0, U, Y, Z, ell, s2, alpha, B, *rest, **kwargs):
        return fn(x0, U, Y, Z, ell, s2, alpha, 0.5 * (B + anp.swapaxes(B, 1, 2)), *rest, **kwargs)

    return wrapped


def bigger_example(rng, dy=2):
    """Several windows per block and several blocks (with PARTICLE_BLOCK monkeypatched small)."""
    return enkf_example(rng, nseq=5, S=6, T=7, dx=4, dy=dy, Q=3, M=6)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_three_backends_agree_on_the_value(kind, rng):
    args = enkf_example(rng)
    ref = enkf_loglik_reference(*args, kind=kind)
    assert ref.shape == (2,)
    np.testing.assert_allclose(enkf_loglik(*args, kind=kind), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(enkf_loglik_ops(*args, kind=kind), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_vjp_matches_autograd_and_finite_differences(kind, rng):
    args = enkf_example(rng)
    fn, ref = symmetric_B(enkf_loglik), symmetric_B(enkf_loglik_reference)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, rtol=1e-8, kind=kind)
    check_vjp_against_reference(symmetric_B(enkf_loglik_ops), ref, args, DIFFERENTIABLE, rng, rtol=1e-8, kind=kind)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng, kind=kind)


@pytest.mark.parametrize("dy", [1, 3])
def test_many_windows_and_blocks(dy, rng, monkeypatch):
    # blocks of whole windows (2 windows of 6 members per block, 3 blocks), one output or as many as states but one
    from gpssm_np.ops import enkf as module

    monkeypatch.setattr(module, "PARTICLE_BLOCK", 12)
    args = bigger_example(rng, dy=dy)
    assert module.window_blocks(5, 6) == (3, 12)
    fn, ref = symmetric_B(enkf_loglik), symmetric_B(enkf_loglik_reference)
    np.testing.assert_allclose(fn(*args), ref(*args), rtol=1e-12, atol=1e-12)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, rtol=1e-8)


def test_same_numbers_with_one_and_two_threads(rng, monkeypatch):
    from autograd import value_and_grad

    from gpssm_np.ops import enkf as module

    monkeypatch.setattr(module, "PARTICLE_BLOCK", 12)
    args = bigger_example(rng)

    def run():
        return value_and_grad(lambda a: anp.sum(enkf_loglik(*(args[:3] + (a,) + args[4:]))))(args[3])

    with threads.use_threads(1):
        v1, g1 = run()
    with threads.use_threads(2):
        v2, g2 = run()
    assert v1 == v2 and np.array_equal(g1, g2)


def test_update_is_the_kalman_update_for_a_large_ensemble(rng):
    # members drawn from N(m, P): the analysed mean and covariance approach the Kalman filter's, and the
    # log-likelihood the exact log N(y | C m, C P C^T + R)
    dx, dy, S = 3, 2, 200_000
    m = rng.normal(size=dx)
    L = rng.normal(size=(dx, dx)) * 0.5 + np.eye(dx)
    P = L @ L.T
    r = np.array([0.3, 0.5])
    y = rng.normal(size=dy)
    Xbar = m + rng.standard_normal((S, dx)) @ L.T
    X, ll = enkf_update_reference(Xbar[None], y[None], r, rng.standard_normal((1, S, dy)))
    Sy = P[:dy, :dy] + np.diag(r)
    K = P[:, :dy] @ np.linalg.inv(Sy)
    exact = -0.5 * (dy * np.log(2 * np.pi) + np.linalg.slogdet(Sy)[1] + (y - m[:dy]) @ np.linalg.solve(Sy, y - m[:dy]))
    np.testing.assert_allclose(X[0].mean(axis=0), m + K @ (y - m[:dy]), atol=0.02)
    np.testing.assert_allclose(np.cov(X[0].T), P - K @ P[:dy], atol=0.03)
    assert abs(ll[0] - exact) < 0.01


def test_linear_transition_converges_to_the_kalman_log_likelihood(rng):
    # GP switched off (A = 0) leaves x_t = F x_{t-1} + G u_t + sqrt_q eps: a linear-Gaussian model whose exact log
    # marginal likelihood the Kalman filter gives; the ensemble objective converges to it as S grows
    dx, dy, du, T, Q, M = 3, 1, 1, 30, 2, 4
    F = np.array([[0.9, 0.2, 0.0], [-0.1, 0.8, 0.1], [0.0, 0.1, 0.7]])
    G = np.array([[0.5], [0.0], [0.3]])
    q, r = np.array([0.2, 0.1, 0.15]), np.array([0.3])
    m0, v0 = np.array([0.5, -0.2, 0.1]), np.array([0.4, 0.3, 0.2])
    u = rng.normal(size=(T, du))
    x, ys = rng.normal(size=dx) * np.sqrt(v0) + m0, []
    for t in range(T):
        x = F @ x + G @ u[t] + np.sqrt(q) * rng.normal(size=dx)
        ys.append(x[:dy] + np.sqrt(r) * rng.normal(size=dy))
    y = np.array(ys)
    exact = kalman_filter(dict(F=F, G=G, H=np.eye(dy, dx), Q=np.diag(q), R=np.diag(r)), y, u, m0, np.diag(v0))
    exact = exact.log_likelihood

    def ensemble(S, seed):
        g = np.random.default_rng(seed)
        x0 = m0 + np.sqrt(v0) * g.standard_normal((S, dx))
        gp = (g.uniform(-2, 2, size=(Q, M, dx + du)), np.ones((Q, dx + du)), np.ones(Q), np.zeros((Q, M)),
              np.zeros((Q, M, M)), np.zeros((dx, Q)))
        return enkf_loglik(x0, u[None], y[None], *gp, np.sqrt(q), g.standard_normal((T, S, Q)),
                           g.standard_normal((T, S, dx)), F, G, np.zeros(dx), r, g.standard_normal((T, S, dy)))[0]

    errors = [abs(np.mean([ensemble(S, seed) for seed in range(4)]) - exact) for S in (20, 20_000)]
    assert errors[1] < 0.05, (errors, exact)  # nats
    assert errors[1] < errors[0]


def test_bad_arguments_are_refused(rng):
    args = list(enkf_example(rng))
    bad = list(args)
    bad[2] = np.where(np.arange(bad[2].size).reshape(bad[2].shape) == 3, np.nan, bad[2])
    with pytest.raises(ValueError, match="Y must be finite"):
        enkf_loglik(*bad)
    bad = list(args)
    bad[16] = bad[16][:, :, :1]
    with pytest.raises(ValueError, match="eps_y"):
        enkf_loglik(*bad)
    bad = list(args)
    bad[0] = bad[0][::4]  # one member per window
    with pytest.raises(ValueError, match="at least 2 members"):
        enkf_loglik(*bad)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("mean", ["zero", "identity"])
@pytest.mark.parametrize("du", [0, 1])
def test_vjp_with_a_zero_or_identity_mean_and_without_inputs(kind, mean, du, rng):
    """The zero mean skips the linear term in the forward and reverse steps; d_u = 0 leaves G empty."""
    args = enkf_example(rng, du=du)
    dx = args[0].shape[1]
    args = args[:12] + (np.eye(dx) if mean == "identity" else np.zeros((dx, dx)), np.zeros((dx, du)), np.zeros(dx)) \
        + args[15:]
    argnums = tuple(i for i in DIFFERENTIABLE if np.size(args[i]))
    fn, ref = symmetric_B(enkf_loglik), symmetric_B(enkf_loglik_reference)
    np.testing.assert_allclose(fn(*args, kind=kind), ref(*args, kind=kind), rtol=1e-12, atol=1e-12)
    check_vjp_against_reference(fn, ref, args, argnums, rng, rtol=1e-8, kind=kind)
    check_vjp_finite_differences(fn, args, argnums, rng, kind=kind)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_vjp_with_every_state_observed(kind, rng):
    """d_y = d_x: the update's reverse pass adds the innovation covariance's gradient to every state."""
    args = enkf_example(rng, dx=3, dy=3)
    fn, ref = symmetric_B(enkf_loglik), symmetric_B(enkf_loglik_reference)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, rtol=1e-8, kind=kind)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng, kind=kind)


def test_vjp_at_the_variance_floor(rng):
    """Members on both sides of the latent variances' floor (none within a finite-difference step of it)."""
    from gpssm_np._config import VAR_FLOOR
    from gpssm_np.ops import enkf as module
    from gpssm_np.ops.rollout import prepare_arrays

    args = enkf_example(rng)
    args = args[:7] + (100.0 * np.eye(args[7].shape[1])[None].repeat(args[7].shape[0], axis=0),) + args[8:]
    _, tape = module._forward(prepare_arrays(*args), "matern52")
    N = args[0].shape[0]
    var = (args[5][None, None, :, None] - np.einsum("btqml,btqml->btql", tape[1], tape[2]))[..., :N]  # s2 - k^T B k
    sd = tape[5][..., :N]  # negative where floored
    module._TAPES.release(tape)
    assert (sd < 0).any() and (sd > 0).any() and np.min(np.abs(var - VAR_FLOOR)) > 1e-4
    fn, ref = symmetric_B(enkf_loglik), symmetric_B(enkf_loglik_reference)
    np.testing.assert_allclose(fn(*args), ref(*args), rtol=1e-12, atol=1e-12)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, rtol=1e-8)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_a_tape_over_budget_is_recomputed_to_the_same_gradients(kind, rng, monkeypatch):
    """Past ``rollout.TAPE_BYTES`` the reverse pass recomputes k, dk/dr2 and B k per step (``rollout.tape_shapes``)."""
    from autograd import grad

    from gpssm_np.ops import enkf as module
    from gpssm_np.ops import rollout as rollout_module

    args = enkf_example(rng)
    weights = rng.normal(size=args[2].shape[0])
    gradients = lambda: grad(lambda *a: anp.sum(enkf_loglik(*a, kind=kind) * weights),  # noqa: E731
                             list(DIFFERENTIABLE))(*args)
    taped = gradients()
    T, N, Q = args[10].shape
    M, D = args[3].shape[1], args[3].shape[2]
    nb, L = module.window_blocks(args[2].shape[0], N // args[2].shape[0])
    size = 8 * nb * T * Q * M * L
    for budget, kept in ((2 * size, (T, 1)), (0, (1, 1))):
        monkeypatch.setattr(rollout_module, "TAPE_BYTES", budget)
        shapes = rollout_module.tape_shapes(nb, T, Q, M, L, D, 1)
        assert (shapes[2][1], shapes[3][1]) == kept
        module._TAPES.clear()
        for a, b in zip(gradients(), taped):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_vjp_recomputes_when_tape_is_missing(kind, rng):
    """The reverse pass of an answer without a tape (an untraced call's) recomputes it: the taped numbers exactly."""
    from gpssm_np.ops import enkf as module

    args = enkf_example(rng)
    total = module._enkf_traced(*args, kind=kind)
    assert module._TAPES.lookup(total) is not None
    G = rng.normal(size=total.shape)
    taped = module._enkf_make_vjp(total, *args, kind=kind)(G)
    untraced = enkf_loglik(*args, kind=kind)
    assert module._TAPES.lookup(untraced) is None
    for a, b in zip(taped, module._enkf_make_vjp(untraced, *args, kind=kind)(G)):
        if a is not None:
            np.testing.assert_array_equal(a, b)
