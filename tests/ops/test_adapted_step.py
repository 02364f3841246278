"""The fused step of the fully adapted particle filter (``ops.adapted_step``) against its plain NumPy reference, over
both kernels, the linear and the zero mean, observed, partly and not observed outputs, with and without resampling,
chunks of particles and groups of inducing points that do not divide evenly; and its failure reports."""
import numpy as np
import pytest

from gpssm_np._config import VAR_FLOOR
from gpssm_np.ops.adapted_step import CHUNK, adapted_step_example, adapted_step_reference, draw, gp_arrays, propagate
from gpssm_np.ops.conditional import conditional_moments_reference
from gpssm_np.ops.kernels import kernel_matrix_reference


def run(args, kind="matern52"):
    """propagate, then draw: the results in the order of :func:`adapted_step_reference`."""
    x, log_w, u_t, Z, ell, s2, alpha, B, A, F, G, b, q, C, r, y, resample, uniform, eps = args
    mean, chol, log_w, inc, ess, y_mean, y_var, failed, finite = propagate(
        x, log_w, u_t, gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, q, kind), C, r, y)
    assert failed == -1 and finite
    np.testing.assert_array_equal(chol, np.tril(chol))
    x_new, anc, log_w, m, P, Cm, CPC = draw(mean, chol, log_w, resample, uniform, eps, C)
    return x_new, anc, log_w, inc, ess, m, P, Cm, CPC, y_mean, y_var


def assert_matches_reference(args, kind="matern52"):
    got, expected = run(args, kind), adapted_step_reference(*args, kind=kind)
    names = ("x", "ancestors", "log_w", "inc", "ess", "mean", "cov", "C mean", "diag C cov C^T", "predicted mean",
             "predicted variance")
    for name, a, e in zip(names, got, expected):
        if name == "ancestors":
            np.testing.assert_array_equal(a, e, err_msg=name)
        else:
            np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("resample", [True, False])
@pytest.mark.parametrize("observed", ["first", "all", "none"])
def test_propagate_and_draw_are_the_reference(rng, kind, resample, observed):
    args = list(adapted_step_example(rng))
    y = args[15]
    args[15] = {"first": y, "all": np.array([y[0], -0.3]), "none": np.full(2, np.nan)}[observed]
    args[16] = resample
    assert len(args[0]) > CHUNK and len(args[0]) % CHUNK  # a second, partial chunk
    assert_matches_reference(tuple(args), kind)


@pytest.mark.parametrize("M", [1, 3, 4, 9])
def test_any_number_of_inducing_points_and_the_zero_mean(rng, M):
    # rows four at a time: fewer than four (repeated), a multiple of four, and a last group overlapping its predecessor
    args = list(adapted_step_example(rng, N=130, dx=2, du=1, dy=1, Q=3, M=M))
    args[9], args[10], args[11] = np.zeros((2, 2)), np.zeros((2, 1)), np.zeros(2)
    args[15] = np.array([0.4])
    assert_matches_reference(tuple(args))


def test_the_latent_variance_floor_holds_where_k_B_k_exceeds_the_kernel_variance(rng):
    # a B this large makes s2 - k^T B k negative near the inducing inputs: there the latent variance is VAR_FLOOR
    args = list(adapted_step_example(rng, N=130))
    x, u_t, Z, ell, s2 = args[0], args[2], args[3], args[4], args[5]
    args[7] = np.tile(40.0 * np.eye(Z.shape[1]), (len(s2), 1, 1))
    K = kernel_matrix_reference(np.concatenate([x, np.broadcast_to(u_t, (len(x), len(u_t)))], axis=1), Z, ell, s2)
    _, var = conditional_moments_reference(K, np.broadcast_to(s2[:, None], K.shape[:2]), args[6], args[7])
    assert 0 < np.mean(var == VAR_FLOOR) < 1  # the floor active on some particles, not on all
    assert_matches_reference(tuple(args))


def test_nothing_observed_keeps_the_weights_and_one_particle_is_one_chunk(rng):
    args = list(adapted_step_example(rng, N=1))
    args[15] = np.full(2, np.nan)
    x, anc, log_w, inc, ess = run(args)[:5]
    assert inc == 0.0 and ess == pytest.approx(1.0) and anc.tolist() == [0] and log_w.tolist() == [0.0]
    assert_matches_reference(tuple(args))


def test_failures_are_reported(rng):
    x, log_w, u_t, Z, ell, s2, alpha, B, A, F, G, b, q, C, r, y = adapted_step_example(rng)[:16]
    gp = gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, q)
    assert propagate(x, log_w, u_t, gp, C, np.array([-1e6, 0.3]), y)[7] == 0  # predictive variance of y_1 < 0
    negative_q = gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, -1e3 * q)
    assert propagate(x, log_w, u_t, negative_q, C, r, np.full(2, np.nan))[7] == 0  # S not positive definite
    x = x.copy()
    x[65, 1] = np.inf  # in the second chunk: the transition mean is not finite
    failed, finite = propagate(x, log_w, u_t, gp, C, r, y)[7:]
    assert failed == -1 and not finite
    with pytest.raises(ValueError, match="propagate"):
        propagate(x, log_w, u_t[:1], gp, C, r, y)


def test_the_first_chunk_that_fails_decides(rng):
    # each chunk records its own failure; the report is the one a pass that stops at the first failure gives
    x, log_w, u_t, Z, ell, s2, alpha, B, A, F, G, b, q, C, r, y = adapted_step_example(rng, N=3 * CHUNK + 5)[:16]
    gp = gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, q)
    x_inf = x.copy()
    x_inf[2 * CHUNK + 1, 0] = np.inf  # chunk 2 not finite
    # chunk 0 fails first: every particle's predictive variance of y_1 is below zero
    assert propagate(x_inf, log_w, u_t, gp, C, np.array([-1e6, 0.3]), y)[7:] == (0, True)
    assert propagate(x_inf, log_w, u_t, gp, C, r, y)[7:] == (-1, False)
    assert propagate(x, log_w, u_t, gp, C, r, y)[7:] == (-1, True)


def test_read_only_inputs_use_the_same_compiled_kernel(rng):
    args = adapted_step_example(rng)
    run(args)
    frozen = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for a in frozen:
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    from gpssm_np.ops import adapted_step

    before = len(adapted_step._propagate_kernel.signatures), len(adapted_step._draw_kernel.signatures)
    for a, e in zip(run(frozen), run(args)):
        np.testing.assert_array_equal(a, e)
    assert (len(adapted_step._propagate_kernel.signatures), len(adapted_step._draw_kernel.signatures)) == before
    # Fortran-ordered arrays are copied to C order, the same kernel again
    fortran = [np.asfortranarray(a) if isinstance(a, np.ndarray) and a.ndim > 1 else a for a in args]
    assert not fortran[0].flags.c_contiguous
    for a, e in zip(run(fortran), run(args)):
        np.testing.assert_array_equal(a, e)
    assert (len(adapted_step._propagate_kernel.signatures), len(adapted_step._draw_kernel.signatures)) == before


def test_propagate_leaves_the_blas_limit_alone(rng, monkeypatch):
    # its kernel calls no BLAS, and setting the limit costs about 0.1 ms, as much as its work at 500 particles
    from gpssm_np.ops import threads

    monkeypatch.setattr(threads, "blas_single_threaded", lambda: pytest.fail("propagate set the BLAS limit"))
    x, log_w, u_t, Z, ell, s2, alpha, B, A, F, G, b, q, C, r, y = adapted_step_example(rng, N=3 * CHUNK + 5)[:16]
    assert propagate(x, log_w, u_t, gp_arrays(Z, ell, s2, alpha, B, A, F, G, b, q), C, r, y)[7:] == (-1, True)
