import numpy as np
import pytest

from gpssm_np.ops.kernels import kernel_matrix, kernel_matrix_example, kernel_matrix_reference
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences, rel_err

KINDS = ["matern52", "se"]


def naive_kernel(x, z, ell, s2, kind):
    r = np.sqrt(np.sum(((x - z) / ell) ** 2))
    if kind == "se":
        return s2 * np.exp(-0.5 * r**2)
    return s2 * (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r)


@pytest.mark.parametrize("kind", KINDS)
def test_forward_matches_naive_and_reference(kind, rng):
    X, Z, ell, s2 = kernel_matrix_example(rng)
    K = kernel_matrix(X, Z, ell, s2, kind)
    naive = np.array(
        [[[naive_kernel(X[n], Z[q, j], ell[q], s2[q], kind) for j in range(Z.shape[1])] for n in range(X.shape[0])]
         for q in range(Z.shape[0])]
    )
    np.testing.assert_allclose(K, naive, rtol=1e-13)
    np.testing.assert_allclose(K, kernel_matrix_reference(X, Z, ell, s2, kind), rtol=1e-13)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("per_gp_inputs", [False, True])
def test_vjp_matches_autograd_reference(kind, per_gp_inputs, rng):
    X, Z, ell, s2 = kernel_matrix_example(rng)
    if per_gp_inputs:
        X = rng.normal(size=(Z.shape[0],) + X.shape)
    args = (X, Z, ell, s2)
    check_vjp_against_reference(kernel_matrix, kernel_matrix_reference, args, range(4), rng, kind=kind)
    check_vjp_finite_differences(kernel_matrix, args, range(4), rng, kind=kind)


@pytest.mark.parametrize("kind", KINDS)
def test_gram_matrix_gradient_at_coincident_points(kind, rng):
    # K(Z, Z) has r = 0 on its diagonal, where sqrt(r2) is not differentiable; the kernel is, and so is the VJP.
    _, Z, ell, s2 = kernel_matrix_example(rng)

    def gram(Z, ell, s2, kind=kind):
        return kernel_matrix(Z, Z, ell, s2, kind)

    def gram_reference(Z, ell, s2, kind=kind):
        return kernel_matrix_reference(Z, Z, ell, s2, kind)

    check_vjp_against_reference(gram, gram_reference, (Z, ell, s2), range(3), rng)
    check_vjp_finite_differences(gram, (Z, ell, s2), range(3), rng)


@pytest.mark.parametrize("kind", KINDS)
def test_gram_matrix_is_positive_definite(kind, rng):
    _, Z, ell, s2 = kernel_matrix_example(rng)
    K = kernel_matrix(Z, Z, ell, s2, kind)
    for q in range(K.shape[0]):
        np.testing.assert_allclose(K[q], K[q].T, rtol=0, atol=0)
        assert np.linalg.eigvalsh(K[q]).min() > -1e-12
        np.testing.assert_allclose(np.diag(K[q]), s2[q], rtol=1e-15)


def test_layout_and_dtype_invariance(rng):
    X, Z, ell, s2 = kernel_matrix_example(rng)
    K = kernel_matrix(X, Z, ell, s2)
    Xf = np.asfortranarray(X)
    Zs = np.repeat(Z, 2, axis=-1)[..., ::2]  # strided view with the same values
    np.testing.assert_array_equal(kernel_matrix(Xf, Zs, ell, s2), K)
    K32 = kernel_matrix(X.astype(np.float32), Z.astype(np.float32), ell, s2)
    assert K32.dtype == np.float64
    assert rel_err(K32, K) < 1e-6
    check_vjp_against_reference(
        kernel_matrix, kernel_matrix_reference, (Xf, Zs, ell.astype(np.float32), s2), range(4), rng
    )


def test_unknown_kernel_is_a_value_error(rng):
    X, Z, ell, s2 = kernel_matrix_example(rng)
    with pytest.raises(ValueError, match="kernel"):
        kernel_matrix(X, Z, ell, s2, "rbf2")
