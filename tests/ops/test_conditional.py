import numpy as np
import pytest
from autograd import grad

from gpssm_np._config import JITTER, VAR_FLOOR
from gpssm_np.ops.conditional import (
    conditional,
    conditional_moments,
    conditional_moments_example,
    conditional_moments_reference,
    conditional_precompute,
    conditional_precompute_example,
    conditional_precompute_reference,
)
from gpssm_np.ops.kernels import kernel_matrix, kernel_matrix_reference
from tests.gradcheck import (
    _project,
    check_vjp_against_reference,
    check_vjp_finite_differences,
    lower_part,
    random_weights,
    rel_err,
    symmetric_part,
)

WHITEN = [True, False]


def conditional_reference(Kxz, kxx, Kzz, q_mu, q_sqrt, whiten=True):
    alpha, B = conditional_precompute_reference(Kzz, q_mu, q_sqrt, whiten)
    return conditional_moments_reference(Kxz, kxx, alpha, B)


def conditional_example(rng):
    Kzz, q_mu, q_sqrt = conditional_precompute_example(rng)
    Kxz, kxx, _, _ = conditional_moments_example(rng)
    # enough prior variance that no point is clamped for either parametrisation
    return Kxz, kxx + 10.0 * np.sum(Kxz**2, axis=-1), Kzz, q_mu, q_sqrt


def gradients(fn, args, weights, **kwargs):
    return [grad(lambda *a: _project(fn(*a, **kwargs), weights), i)(*args) for i in range(len(args))]


# ---------------------------------------------------------------------------------------------------------------
# conditional_precompute
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("whiten", WHITEN)
def test_precompute_forward_matches_reference(whiten, rng):
    args = conditional_precompute_example(rng)
    alpha, B = conditional_precompute(*args, whiten=whiten)
    alpha_ref, B_ref = conditional_precompute_reference(*args, whiten=whiten)
    assert rel_err(alpha, alpha_ref) < 1e-13
    assert rel_err(B, B_ref) < 1e-13
    np.testing.assert_array_equal(B, np.swapaxes(B, 1, 2))


@pytest.mark.parametrize("whiten", WHITEN)
def test_precompute_forward_matches_definition(whiten, rng):
    Kzz, q_mu, q_sqrt = conditional_precompute_example(rng)
    alpha, B = conditional_precompute(Kzz, q_mu, q_sqrt, whiten)
    for q in range(Kzz.shape[0]):
        S = np.tril(q_sqrt[q]) @ np.tril(q_sqrt[q]).T
        Kinv = np.linalg.inv(Kzz[q])
        if whiten:
            Linv = np.linalg.inv(np.linalg.cholesky(Kzz[q]))
            expected = Linv.T @ q_mu[q], Linv.T @ (np.eye(len(S)) - S) @ Linv
        else:
            expected = Kinv @ q_mu[q], Kinv - Kinv @ S @ Kinv
        np.testing.assert_allclose(alpha[q], expected[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(B[q], expected[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("whiten", WHITEN)
def test_precompute_vjp_matches_autograd_reference(whiten, rng):
    args = conditional_precompute_example(rng)
    check_vjp_against_reference(
        conditional_precompute, conditional_precompute_reference, args, range(3), rng, rtol=1e-10, whiten=whiten
    )
    check_vjp_finite_differences(
        conditional_precompute, args, range(3), rng, directions={0: symmetric_part, 2: lower_part}, whiten=whiten
    )


@pytest.mark.parametrize("whiten", WHITEN)
def test_precompute_gradient_conventions(whiten, rng):
    # dKzz is symmetric (autograd's cholesky convention); dq_sqrt vanishes strictly above the diagonal.
    args = conditional_precompute_example(rng)
    weights = random_weights(conditional_precompute(*args, whiten=whiten), rng)
    gK, _, gR = gradients(conditional_precompute, args, weights, whiten=whiten)
    np.testing.assert_allclose(gK, np.swapaxes(gK, 1, 2), rtol=0, atol=1e-14)
    assert np.all(np.triu(gR, 1) == 0.0)
    rows, cols = np.tril_indices(gR.shape[1])
    assert np.all(gR[:, rows, cols] != 0.0)


@pytest.mark.parametrize("whiten", WHITEN)
def test_precompute_ignores_upper_triangles(whiten, rng):
    Kzz, q_mu, q_sqrt = conditional_precompute_example(rng)
    out = conditional_precompute(Kzz, q_mu, q_sqrt, whiten)
    garbage = np.triu(rng.normal(size=Kzz.shape), 1)
    out2 = conditional_precompute(Kzz + 5.0 * garbage, q_mu, q_sqrt + garbage, whiten)
    for a, b in zip(out, out2):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("whiten", WHITEN)
def test_total_derivative_through_gram_matrix(whiten, kind, rng):
    # Kzz = K(Z, Z) + jitter: the symmetric convention gives the right gradient w.r.t. Z and the hyperparameters.
    _, q_mu, q_sqrt = conditional_precompute_example(rng)
    Q, M = q_mu.shape
    Z = rng.normal(size=(Q, M, 2))
    ell, s2 = rng.uniform(0.5, 2.0, size=(Q, 2)), rng.uniform(0.5, 2.0, size=Q)

    def make(kmat, precompute):
        def fn(Z, ell, s2, q_mu, q_sqrt):
            return precompute(kmat(Z, Z, ell, s2, kind) + 1e-3 * np.eye(M), q_mu, q_sqrt, whiten)

        return fn

    args = (Z, ell, s2, q_mu, q_sqrt)
    fn = make(kernel_matrix, conditional_precompute)
    check_vjp_against_reference(fn, make(kernel_matrix_reference, conditional_precompute_reference), args, range(5),
                                rng, rtol=1e-9)
    check_vjp_finite_differences(fn, args, range(5), rng)


def test_precompute_not_positive_definite_is_a_linalg_error(rng):
    Kzz, q_mu, q_sqrt = conditional_precompute_example(rng)
    bad = Kzz.copy()
    bad[1] -= 10.0 * np.eye(Kzz.shape[1])
    with pytest.raises(np.linalg.LinAlgError, match=r"Kzz\[1\] is not positive definite.*jitter"):
        conditional_precompute(bad, q_mu, q_sqrt)
    bad = Kzz.copy()
    bad[0, 1, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="NaN"):
        conditional_precompute(bad, q_mu, q_sqrt)


def test_precompute_shape_errors_name_the_argument(rng):
    Kzz, q_mu, q_sqrt = conditional_precompute_example(rng)
    with pytest.raises(ValueError, match="Kzz"):
        conditional_precompute(Kzz[:, :-1], q_mu, q_sqrt)
    with pytest.raises(ValueError, match="q_sqrt"):
        conditional_precompute(Kzz, q_mu, q_sqrt[:1])
    with pytest.raises(ValueError, match="q_mu"):
        conditional_precompute(Kzz, q_mu[0], q_sqrt)


# ---------------------------------------------------------------------------------------------------------------
# conditional_moments
# ---------------------------------------------------------------------------------------------------------------
def test_moments_forward_matches_naive_and_reference(rng):
    Kxz, kxx, alpha, B = conditional_moments_example(rng)
    mean, var = conditional_moments(Kxz, kxx, alpha, B)
    for q in range(Kxz.shape[0]):
        for n in range(Kxz.shape[1]):
            k = Kxz[q, n]
            assert abs(mean[q, n] - k @ alpha[q]) < 1e-13
            assert abs(var[q, n] - (kxx[q, n] - k @ B[q] @ k)) < 1e-13
    for a, b in zip((mean, var), conditional_moments_reference(Kxz, kxx, alpha, B)):
        assert rel_err(a, b) < 1e-14


def test_moments_vjp_matches_autograd_reference(rng):
    args = conditional_moments_example(rng)
    check_vjp_against_reference(conditional_moments, conditional_moments_reference, args, range(4), rng, rtol=1e-12)
    check_vjp_finite_differences(conditional_moments, args, range(4), rng)


def test_variance_floor(rng):
    Kxz, kxx, alpha, B = conditional_moments_example(rng)
    quad = np.einsum("qnm,qmj,qnj->qn", Kxz, B, Kxz)
    clamped = np.zeros(kxx.shape, dtype=bool)
    clamped[0, 1] = clamped[1, 3] = True
    kxx = np.where(clamped, quad - 0.5, kxx)
    args = (Kxz, kxx, alpha, B)
    mean, var = conditional_moments(*args)
    assert np.all(var[clamped] == VAR_FLOOR)
    assert np.all(var[~clamped] > 0.1)
    # gradients through var vanish at clamped points, and agree with anp.maximum in the reference
    w_mean, w_var = np.zeros_like(mean), rng.normal(size=var.shape)
    gKxz, gkxx, galpha, gB = gradients(conditional_moments, args, (w_mean, w_var))
    assert np.all(gkxx[clamped] == 0.0) and np.all(gkxx[~clamped] == w_var[~clamped])
    assert np.all(gKxz[clamped] == 0.0)
    check_vjp_against_reference(conditional_moments, conditional_moments_reference, args, range(4), rng, rtol=1e-12)
    check_vjp_finite_differences(conditional_moments, args, range(4), rng)


def test_moments_shape_errors_name_the_argument(rng):
    Kxz, kxx, alpha, B = conditional_moments_example(rng)
    for i, name in enumerate(["Kxz", "kxx", "alpha", "B"]):
        args = [Kxz, kxx, alpha, B]
        args[i] = args[i][0] if i == 0 else args[i][..., :-1]  # Kxz sets (Q, N, M); the others must agree
        with pytest.raises(ValueError, match=name):
            conditional_moments(*args)


# ---------------------------------------------------------------------------------------------------------------
# conditional = precompute + moments
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("whiten", WHITEN)
def test_conditional_vjp_matches_reference(whiten, rng):
    args = conditional_example(rng)
    check_vjp_against_reference(conditional, conditional_reference, args, range(5), rng, rtol=1e-10, whiten=whiten)
    check_vjp_finite_differences(
        conditional, args, range(5), rng, directions={2: symmetric_part, 4: lower_part}, whiten=whiten
    )


@pytest.mark.parametrize("whiten", WHITEN)
def test_layout_and_dtype_invariance(whiten, rng):
    args = conditional_example(rng)
    expected = conditional(*args, whiten=whiten)
    Kxz, kxx, Kzz, q_mu, q_sqrt = args
    odd = (
        np.asfortranarray(Kxz),
        np.repeat(kxx, 2, axis=-1)[:, ::2],  # strided view with the same values
        np.swapaxes(np.asfortranarray(np.swapaxes(Kzz, 1, 2)), 1, 2),
        q_mu[:, ::-1][:, ::-1],
        np.asfortranarray(q_sqrt),
    )
    for a, b in zip(conditional(*odd, whiten=whiten), expected):
        np.testing.assert_array_equal(a, b)
    check_vjp_against_reference(conditional, conditional_reference, odd, range(5), rng, rtol=1e-10, whiten=whiten)
    # float32 inputs are computed exactly as their float64 values
    as32 = [a.astype(np.float32) for a in args]
    out32 = conditional(*as32, whiten=whiten)
    for a, b in zip(out32, conditional(*[a.astype(np.float64) for a in as32], whiten=whiten)):
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, b)
    for a, b in zip(out32, expected):
        assert rel_err(a, b) < 1e-5


@pytest.mark.parametrize("whiten", WHITEN)
@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_inducing_points_at_data_give_the_exact_gp(whiten, kind, rng):
    # Z = X and q(u) = exact posterior of f(X) given y: the conditional is the exact GP predictive of the latent f
    # (Rasmussen & Williams 2006, Eqs. 2.25-2.26).
    Q, N, D, noise = 2, 8, 2, 0.1
    X = rng.uniform(-3.0, 3.0, size=(N, D))
    Xs = rng.uniform(-3.5, 3.5, size=(6, D))
    y = np.sin(X[:, 0]) + 0.5 * np.cos(X[:, 1])
    ell, s2 = np.array([[0.7, 1.0], [1.3, 0.9]]), np.array([1.0, 2.0])
    Z = np.repeat(X[None], Q, axis=0)
    K = kernel_matrix(X, Z, ell, s2, kind)
    Ks = kernel_matrix(Xs, Z, ell, s2, kind)  # (Q, 6, N)
    kss = np.repeat(s2[:, None], len(Xs), axis=1)
    q_mu, q_sqrt, mean_exact, var_exact = [], [], [], []
    for q in range(Q):
        Ky = K[q] + noise * np.eye(N)
        m = K[q] @ np.linalg.solve(Ky, y)
        S = K[q] - K[q] @ np.linalg.solve(Ky, K[q])
        if whiten:
            Linv = np.linalg.inv(np.linalg.cholesky(K[q]))
            m, S = Linv @ m, Linv @ S @ Linv.T
        q_mu.append(m)
        q_sqrt.append(np.linalg.cholesky(0.5 * (S + S.T)))
        mean_exact.append(Ks[q] @ np.linalg.solve(Ky, y))
        var_exact.append(s2[q] - np.einsum("nm,mn->n", Ks[q], np.linalg.solve(Ky, Ks[q].T)))
    mean, var = conditional(Ks, kss, K, np.array(q_mu), np.array(q_sqrt), whiten)
    np.testing.assert_allclose(mean, mean_exact, rtol=0, atol=1e-8)
    np.testing.assert_allclose(var, var_exact, rtol=0, atol=1e-8)
    # at the training inputs, the conditional returns q(u) itself
    mean, var = conditional(K, np.repeat(s2[:, None], N, axis=1), K, np.array(q_mu), np.array(q_sqrt), whiten)
    for q in range(Q):
        Ky = K[q] + noise * np.eye(N)
        np.testing.assert_allclose(mean[q], K[q] @ np.linalg.solve(Ky, y), rtol=0, atol=1e-8)
        np.testing.assert_allclose(var[q], np.diag(K[q] - K[q] @ np.linalg.solve(Ky, K[q])), rtol=0, atol=1e-8)


def test_prior_q_u_gives_the_prior(rng):
    # whitened q(v) = p(v) = N(0, I): B = 0, so the conditional is the prior; unwhitened q(u) = p(u) likewise.
    Q, M, D = 2, 5, 2
    Z = rng.normal(size=(Q, M, D))
    ell, s2 = np.ones((Q, D)), np.array([1.0, 1.5])
    Kzz = kernel_matrix(Z, Z, ell, s2) + JITTER * np.eye(M)
    Kxz = kernel_matrix(Z[0], Z, ell, s2)
    kxx = np.repeat(s2[:, None], M, axis=1)
    mean, var = conditional(Kxz, kxx, Kzz, np.zeros((Q, M)), np.repeat(np.eye(M)[None], Q, axis=0), True)
    np.testing.assert_array_equal(mean, 0.0)
    np.testing.assert_allclose(var, kxx, rtol=1e-12)
    mean, var = conditional(Kxz, kxx, Kzz, np.zeros((Q, M)), np.linalg.cholesky(Kzz), False)
    np.testing.assert_allclose(var, kxx, rtol=1e-6)
