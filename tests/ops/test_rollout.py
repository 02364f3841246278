import autograd.numpy as anp
import numpy as np
import pytest

from gpssm_np.ops.rollout import rollout, rollout_example, rollout_reference
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

DIFFERENTIABLE = (0, 2, 3, 4, 5, 6, 7, 8)


def symmetric_B(fn):
    """Feed B through (B + B^T)/2 so gradient checks perturb only symmetric directions."""

    def wrapped(x0, U, Z, ell, s2, alpha, B, *rest, **kwargs):
        return fn(x0, U, Z, ell, s2, alpha, 0.5 * (B + anp.swapaxes(B, 1, 2)), *rest, **kwargs)

    return wrapped


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("residual", [False, True])
def test_forward_matches_reference(kind, residual, rng):
    args = rollout_example(rng)
    np.testing.assert_allclose(
        rollout(*args, kind=kind, residual=residual),
        rollout_reference(*args, kind=kind, residual=residual),
        rtol=1e-12, atol=1e-12,
    )


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("residual", [False, True])
def test_vjp_matches_autograd_and_finite_differences(kind, residual, rng):
    args = rollout_example(rng)
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, kind=kind, residual=residual)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng, kind=kind, residual=residual)


def test_variance_floor_blocks_gradient(rng):
    # B = K(Z,Z)^{-1}-like values large enough to drive var below the floor: the sample is then the mean.
    args = list(rollout_example(rng))
    args[6] = 100.0 * np.eye(args[6].shape[1])[None].repeat(args[6].shape[0], axis=0)
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    np.testing.assert_allclose(fn(*args), ref(*args), rtol=1e-12, atol=1e-12)
    check_vjp_against_reference(fn, ref, tuple(args), DIFFERENTIABLE, rng)


def test_no_inputs_and_layout_invariance(rng):
    args = list(rollout_example(rng))
    args[1] = np.zeros((args[1].shape[0], args[1].shape[1], 0))
    args[2] = args[2][:, :, :3]
    args[3] = args[3][:, :3]  # strided slices, and d_u = 0
    out = rollout(*args)
    np.testing.assert_allclose(out, rollout_reference(*args), rtol=1e-12, atol=1e-12)
    f32 = [a.astype(np.float32) for a in args]
    np.testing.assert_allclose(rollout(*f32), rollout_reference(*[a.astype(np.float64) for a in f32]), rtol=1e-12)


def test_vjp_recomputes_when_tape_is_missing(rng):
    from gpssm_np.ops import rollout as module

    args = rollout_example(rng)
    X = rollout(*args)
    module._TAPES.clear()
    G = rng.normal(size=X.shape)
    vjp = module._rollout_make_vjp(X, *args)
    grads = vjp(G)
    X2 = rollout(*args)
    grads2 = module._rollout_make_vjp(X2, *args)(G)
    for a, b in zip(grads, grads2):
        if a is not None:
            np.testing.assert_array_equal(a, b)
