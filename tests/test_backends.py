"""The three backends compute the same ELBO and gradient; seeds make the ELBO a deterministic function."""
import numpy as np
import pytest

import gpssm_np as gp
from tests.gradcheck import rel_err


def data(rng, B=2, T=6, dy=1, du=1):
    return rng.normal(size=(B, T, dy)), rng.normal(size=(B, T, du))


def perturbed(model, rng, scale=0.3):
    """Move every parameter away from its symmetric initial value so that no gradient is trivially zero."""
    params = model.get_learned_params()
    for name, value in params.items():
        params[name] = value + scale * rng.normal(size=value.shape)
    model.set_learned_params(params)
    return model


CONFIGS = [
    dict(cls="ODGPSSM", kernel="matern52", whiten=True, mean_function="zero", shared_inducing=True),
    dict(cls="ODGPSSM", kernel="se", whiten=False, mean_function="identity", shared_inducing=False),
    dict(cls="ODGPSSM", kernel="matern52", whiten=False, mean_function="zero", shared_inducing=True, num_latent=2),
    dict(cls="PRSSM", kernel="se", whiten=True, mean_function="identity", shared_inducing=True),
    dict(cls="ODGPSSM", kernel="matern52", whiten=True, mean_function="zero", shared_inducing=True,
         recognition="lstm", recognition_options={"hidden": 5}),
    dict(cls="PRSSM", kernel="matern52", whiten=True, mean_function="zero", shared_inducing=True,
         recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4}),
    dict(cls="ODGPSSM", kernel="se", whiten=False, mean_function="linear", shared_inducing=False),
    dict(cls="PRSSM", kernel="matern52", whiten=True, mean_function="linear", shared_inducing=True,
         recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4}),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
@pytest.mark.parametrize("kl_weighting, objective", [("unbiased", "enkf"), ("paper", "enkf"), ("unbiased", "prior")])
def test_backends_agree_on_value_and_gradient(config, kl_weighting, objective, rng):
    # "enkf" (EnVI's, the default) composes ops.enkf; "prior" (the paper's) ops.rollout and ops.likelihood
    config = dict(config)
    cls = getattr(gp, config.pop("cls"))
    model = perturbed(cls(dim_x=3, dim_y=1, dim_u=1, num_inducing=5, seed=1, kl_weighting=kl_weighting,
                          objective=objective, **config), rng)
    y, u = data(rng)
    results = {b: model.elbo_and_grad(y, u, num_samples=4, seed=3, backend=b) for b in ("fused", "ops", "reference")}
    v_ref, g_ref = results["reference"]
    for backend in ("fused", "ops"):
        v, g = results[backend]
        assert abs(v - v_ref) <= 1e-8 * abs(v_ref), backend
        for name in g_ref:
            assert rel_err(g[name], g_ref[name]) <= 1e-8, (backend, name, rel_err(g[name], g_ref[name]))


@pytest.mark.parametrize("objective, whiten, shared, kernel", [("enkf", True, True, "matern52"),
                                                                ("prior", True, True, "matern52"),
                                                                ("prior", False, False, "se")])
def test_gradient_matches_finite_differences(objective, whiten, shared, kernel, rng):
    model = perturbed(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=0, objective=objective, whiten=whiten,
                                 shared_inducing=shared, kernel=kernel), rng)
    y, u = data(rng, T=5)
    _, g = model.elbo_and_grad(y, u, num_samples=3, seed=7)
    base = model.get_learned_params()
    step = 1e-6
    for name, value in base.items():
        direction = rng.normal(size=value.shape)
        if name == "q_sqrt":
            direction = np.tril(direction)
        values = []
        for sign in (1, -1):
            params = {k: v.copy() for k, v in base.items()}
            params[name] = value + sign * step * direction
            model.set_learned_params(params)
            values.append(model.elbo(y, u, num_samples=3, seed=7))
        model.set_learned_params(base)
        fd = (values[0] - values[1]) / (2 * step)
        analytic = np.sum(g[name] * direction)
        assert abs(fd - analytic) <= 1e-6 * max(1.0, abs(analytic)), (name, fd, analytic)


def test_same_seed_same_elbo_bitwise(rng):
    model = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=6, seed=0)
    y, u = data(rng)
    first = model.elbo_and_grad(y, u, num_samples=5, seed=11)
    second = model.elbo_and_grad(y, u, num_samples=5, seed=11)
    assert first[0] == second[0]
    for name in first[1]:
        np.testing.assert_array_equal(first[1][name], second[1][name])
    assert model.elbo(y, u, num_samples=5, seed=12) != first[0]


def test_same_model_seed_same_parameters():
    a = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, seed=5).get_learned_params()
    b = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, seed=5).get_learned_params()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    other = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, seed=6).get_learned_params()
    for name in ("Z", "q_mu", "A"):  # the randomly initialised arrays follow the seed
        assert not np.array_equal(a[name], other[name])


def test_the_noise_of_a_seed_is_the_stream_the_results_were_drawn_with():
    """Every committed fit and score drew its training noise by this stream (docs/results.md: four seeded SFC64
    streams per step): a change of the chunks, their seeding or the generator would move every number there, so the
    first and last draw of each array are pinned (the last eps0, eps_h, eps_x value is the last chunk's)."""
    from gpssm_np.inference import draw_noise

    noise = draw_noise(np.random.default_rng(7), 3, 5, 6, 4, 2, dim_y=2)
    pinned = {"eps0": (-1.1433553304184223, 2.0238027802715357), "eps_h": (0.1441571398062797, -0.6646316428400211),
              "eps_x": (-0.18019367586199692, 0.11343096847035977),
              "eps_y": (0.18680671845701244, 0.04099753016269324)}
    for name, (first, last) in pinned.items():
        values = getattr(noise, name).ravel()
        assert (values[0], values[-1]) == (first, last), name


def test_noise_depends_on_the_seed_only_not_on_threads():
    from gpssm_np.inference import draw_noise
    from gpssm_np.ops.threads import use_threads

    draws = []
    for threads in (1, 2, 3):
        with use_threads(threads):
            draws.append(draw_noise(np.random.default_rng(7), 3, 5, 6, 4, 2))
    for noise in draws[1:]:
        for name in ("eps0", "eps_h", "eps_x"):
            np.testing.assert_array_equal(getattr(noise, name), getattr(draws[0], name))
    noise = draws[0]
    assert noise.eps0.shape == (15, 4) and noise.eps_h.shape == (6, 15, 2) and noise.eps_x.shape == (6, 15, 4)
    other = draw_noise(np.random.default_rng(8), 3, 5, 6, 4, 2)
    assert not np.array_equal(other.eps_x, noise.eps_x)
    # standard normal: the three arrays together are 15*4 + 6*15*(2+4) = 600 draws
    allvals = np.concatenate([noise.eps0.ravel(), noise.eps_h.ravel(), noise.eps_x.ravel()])
    assert abs(allvals.mean()) < 0.15 and abs(allvals.std() - 1) < 0.1
