import numpy as np
import pytest
from autograd import grad

from gpssm_np.ops.threads import use_threads
from gpssm_np.ops.dmm import (LAYERS, dmm_loop, dmm_loop_example, dmm_loop_reference, dmm_num_params, dmm_pack,
                              dmm_unpack)
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

DIFFERENTIABLE = (0, 3, 4, 5)  # x0, Hs, theta, obs_var


def test_forward_matches_reference(rng):
    args = dmm_loop_example(rng)
    np.testing.assert_allclose(dmm_loop(*args), dmm_loop_reference(*args), rtol=1e-13)


def test_vjp_matches_autograd_reference_and_finite_differences(rng):
    args = dmm_loop_example(rng)
    check_vjp_against_reference(dmm_loop, dmm_loop_reference, args, DIFFERENTIABLE, rng, rtol=1e-11)
    check_vjp_finite_differences(dmm_loop, args, DIFFERENTIABLE, rng)


def test_without_inputs_and_with_all_outputs_observed(rng):
    args = dmm_loop_example(rng, dim_u=0, dim_y=3)
    np.testing.assert_allclose(dmm_loop(*args), dmm_loop_reference(*args), rtol=1e-13)
    check_vjp_against_reference(dmm_loop, dmm_loop_reference, args, DIFFERENTIABLE, rng, rtol=1e-11)
    check_vjp_finite_differences(dmm_loop, args, DIFFERENTIABLE, rng)


def test_vjp_over_several_particle_blocks_matches_the_reference_and_finite_differences(rng, monkeypatch):
    """Blocks of 4 particles over 15 (4, 4, 4, 3): each block's reverse pass must index its own particles' sequences
    (the thread test below compares the blocks with themselves only)."""
    from gpssm_np.ops import rollout as rollout_module

    monkeypatch.setattr(rollout_module, "PARTICLE_BLOCK", 4)  # the DMM's particle blocks are the rollout's
    args = dmm_loop_example(rng, B=3, S=5, T=4)
    assert rollout_module.particle_blocks(15) == (4, 4)
    np.testing.assert_allclose(dmm_loop(*args), dmm_loop_reference(*args), rtol=1e-13)
    check_vjp_against_reference(dmm_loop, dmm_loop_reference, args, DIFFERENTIABLE, rng, rtol=1e-11)
    check_vjp_finite_differences(dmm_loop, args, DIFFERENTIABLE, rng)


def test_blocks_give_the_same_bits_on_any_number_of_threads(rng):
    args = list(dmm_loop_example(rng, B=3, S=301, T=3))  # N = 903: three blocks of particles
    results = []
    for threads in (1, 2, 3):
        with use_threads(threads):
            value = dmm_loop(*args)
            grads = grad(lambda *a: dmm_loop(*a), list(DIFFERENTIABLE))(*args)
            results.append([value] + list(grads))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][0], dmm_loop_reference(*args), rtol=1e-11)


def test_pack_unpack_round_trip(rng):
    dims = (3, 1, 5, 4)
    theta = rng.normal(size=dmm_num_params(*dims))
    params = dmm_unpack(theta, *dims)
    assert set(params) == {f"{name}_{part}" for name in LAYERS for part in ("W", "b")}
    np.testing.assert_array_equal(dmm_pack(params), theta)


@pytest.mark.parametrize("name, index, bad", [("x0", 0, np.zeros((5, 3))), ("Y", 2, np.zeros((2, 4, 4))),
                                              ("Hs", 3, np.zeros((4, 2, 7))), ("theta", 4, np.zeros(3)),
                                              ("obs_var", 5, np.ones(3)), ("eps_x", 6, np.zeros((4, 6, 2)))])
def test_shape_errors_name_the_argument(rng, name, index, bad):
    args = list(dmm_loop_example(rng))
    args[index] = bad
    with pytest.raises(ValueError, match=f"^{name}:"):
        dmm_loop(*args)
