"""The stability of F (gpssm_np/stability.py): the clipping of its spectral radius, and the default fit's training
runs keeping the linear part of the transition's mean inside it after every Adam step (models/default_fit.py,
``Plan.max_spectral_radius``; decision O of research/ablation_plan.md)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.stability import clip_spectral_radius, spectral_radius


def test_a_stable_matrix_is_returned_as_it_is():
    F = np.array([[0.5, 0.3], [-0.2, 0.7]])
    assert clip_spectral_radius(F, 0.999) is F
    assert clip_spectral_radius(5.0 * F, None) is not None


def test_only_the_outlying_eigenvalues_move_onto_the_circle():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((4, 4))
    values = np.array([1.5, -0.3, 0.2 + 1.2j, 0.2 - 1.2j])
    # a real matrix with a real unstable mode, a stable one and an unstable complex pair
    W = np.column_stack([V[:, 0], V[:, 1], V[:, 2] + 1j * V[:, 3], V[:, 2] - 1j * V[:, 3]])
    F = np.real(W @ np.diag(values) @ np.linalg.inv(W))
    G = clip_spectral_radius(F, 0.9)
    assert G.dtype == np.float64
    got = np.sort_complex(np.linalg.eigvals(G))
    expected = np.sort_complex(np.array([0.9, -0.3, 0.9 * (0.2 + 1.2j) / abs(0.2 + 1.2j),
                                         0.9 * (0.2 - 1.2j) / abs(0.2 - 1.2j)]))
    np.testing.assert_allclose(got, expected, atol=1e-10)
    assert spectral_radius(G) == pytest.approx(0.9, abs=1e-10)
    # the eigenvectors stay: G V = V diag(clipped)
    np.testing.assert_allclose(G @ W[:, 1], -0.3 * W[:, 1], atol=1e-10)


def test_the_lgssm_stabilises_by_the_same_function():
    F = np.array([[1.2, 0.1], [0.0, 0.4]])
    model = gp.LGSSM(dim_x=2)
    np.testing.assert_array_equal(model.stabilise(F), clip_spectral_radius(F, 0.999))


def data(T=240):
    y, u, _ = gp.datasets.cascaded_tanks(T, seed=1)
    return [(y - y.mean(0)) / y.std(0)], [(u - u.mean(0)) / u.std(0)]


def run_with(max_spectral_radius, steps=30):
    """A default fit's training run on the tanks with a step size large enough to carry F out of the unit disc."""
    ys, us = data()
    plan = Plan(max_steps=steps, seq_lens=(10,), batch_size=4, num_samples=4, lr=0.3,
                max_spectral_radius=max_spectral_radius)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
    fit = DefaultFit(model, plan)
    warm = fit.start(model, fit.floor(ys, us).model, ys, us, 0)
    start = spectral_radius(model.params["F"])
    run = fit.training_run(model, warm, ys, us, 0, {})
    radii = []
    for _ in range(steps):
        run.step()
        radii.append((spectral_radius(model.params["F"]), spectral_radius(run.params()["F"])))
    return start, np.array(radii)


def test_the_training_run_keeps_f_inside_the_bound_after_every_step():
    start, free = run_with(None)
    assert start < 0.999
    assert free.max() > 1.0  # without the constraint this step size carries F out of the unit disc
    _, kept = run_with(0.999)
    assert kept.max() <= 0.999 + 1e-9  # the iterate and the average of the iterates


def test_the_bound_is_never_below_the_floors_own_radius():
    _, kept = run_with(0.05, steps=3)  # a bound below the floor's radius: the floor's radius is the bound
    start, _ = run_with(None, steps=1)
    assert kept.max() <= start + 1e-9
    assert kept.max() > 0.1
