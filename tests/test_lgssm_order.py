"""dim_x="auto": the LGSSM's state dimension by rolling-origin cross-validation (baselines/lgssm_order.py), and the
GP models that take it from their warm start."""
import numpy as np
import pytest

from gpssm_np import ODGPSSM, PRSSM, datasets, io
from gpssm_np.baselines import LGSSM, lgssm_order
from gpssm_np.baselines.lgssm_order import dim_x_candidates, select_dim_x
from gpssm_np.models.default_fit import num_latent_for


def test_candidates():
    assert dim_x_candidates(1) == list(range(1, 11))  # as many states as the ARX's 10 lags of one output
    assert dim_x_candidates(2) == list(range(2, 11))
    assert dim_x_candidates(4) == list(range(4, 13))


@pytest.mark.parametrize("true_dim", [2, 3])
def test_auto_finds_the_order_of_a_linear_system(true_dim):
    system = datasets.random_linear_system(dim_x=true_dim, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 800, seed=0)
    model = LGSSM(dim_x="auto", dim_y=1, dim_u=1)
    assert model.get_config()["dim_x"] == "auto"
    model.fit(y, u)
    assert model.spec.dim_x == true_dim
    assert model.params_["F"].shape == (true_dim, true_dim)
    assert model.dim_x_scores_[1] > 1.5 * model.dim_x_scores_[true_dim]
    assert set(model.dim_x_scores_) == set(dim_x_candidates(1))
    assert model.get_config()["dim_x"] == true_dim
    chosen, scores = LGSSM(dim_x="auto", dim_y=1, dim_u=1).select_dim_x(y, u)
    assert chosen == true_dim and scores == model.dim_x_scores_


def test_auto_lgssm_model_file(tmp_path):
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 400, seed=0)
    model = LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u)
    loaded = io.load(io.save(model, str(tmp_path / "m.npz")))
    assert loaded.spec.dim_x == model.spec.dim_x
    np.testing.assert_array_equal(loaded.predict(u[:50], y_past=y[:100], u_past=u[:100]),
                                  model.predict(u[:50], y_past=y[:100], u_past=u[:100]))


def test_too_short_data_falls_back_to_four_states():
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 120, seed=0)
    model = LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y[:35], u[:35])  # too short to hold out a window
    assert model.spec.dim_x == 4 and all(np.isinf(v) for v in model.dim_x_scores_.values())
    with pytest.warns(UserWarning, match="too few for the rolling-origin folds") as caught:  # the default dim_x
        gp_model = ODGPSSM(dim_y=1, dim_u=1).fit(y[:35], u[:35], max_steps=2, plan=dict(eval_every=1))
    assert [w.filename for w in caught] == [__file__]
    assert gp_model.spec.dim_x == 4 and gp_model.get_config()["dim_x"] == 4
    assert gp_model.selection_["floor"]["kind"] == "lgssm" and not gp_model.selection_["gp_part"]
    assert np.all(np.isfinite(gp_model.predict(u[35:], y_past=y[:35], u_past=u[:35])))
    scored = ODGPSSM(dim_y=1, dim_u=1).initialise(y, u)  # 120 steps: windows after the origins can be scored
    assert all(np.isfinite(v) for v in scored.dim_x_scores_.values())


@pytest.mark.parametrize("cls", [ODGPSSM, PRSSM])
def test_gp_models_take_dim_x_from_the_warm_start(cls):
    """``init="lgssm"`` with ``dim_x="auto"``: the default fit's floor held to the LGSSM, so d_x is
    ``LGSSM(dim_x="auto")``'s on the same (standardised) data, fit's and initialise's alike."""
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 800, seed=0)
    model = cls(dim_x="auto", dim_y=1, dim_u=1, init="lgssm")
    assert model.get_config()["dim_x"] == "auto"
    model.initialise(y, u)
    lgssm = LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u)
    assert model.spec.dim_x == lgssm.spec.dim_x == 2  # the true order
    assert model.dim_x_scores_ == {2: lgssm.dim_x_scores_[2]} and model.selection_["floor"]["kind"] == "lgssm"
    assert model.spec.num_latent == (2 if cls is PRSSM else num_latent_for(2, 1))
    assert model.constrained_params()["F"].shape == (2, 2)
    assert model.get_config()["dim_x"] == 2
    fitted = cls(dim_x="auto", dim_y=1, dim_u=1, init="lgssm").fit(y, u, max_steps=2, plan=dict(eval_every=1))
    assert fitted.spec.dim_x == 2 and fitted.selection_["floor"] == model.selection_["floor"]
    rebuilt = cls(**fitted.get_config())
    assert rebuilt.spec.dim_x == fitted.spec.dim_x and rebuilt.dim_x_choice is None


def test_a_given_num_latent_is_kept():
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 800, seed=0)
    model = ODGPSSM(dim_x=[2, 3], dim_y=1, dim_u=1, num_latent=3, init="lgssm").initialise(y, u)
    assert model.spec.dim_x == 2  # the true order
    assert model.spec.num_latent == 3 and model.constrained_params()["A"].shape == (2, 3)


def test_the_default_dim_x():
    assert ODGPSSM(dim_y=2).get_config()["dim_x"] == "auto" and PRSSM().get_config()["dim_x"] == "auto"
    assert ODGPSSM(dim_y=2, settings="authors").spec.dim_x == 4  # no warm start: the authors' 4
    assert ODGPSSM(dim_y=5, settings="authors").spec.dim_x == 5  # C = [I, 0] needs d_x >= d_y


def test_auto_needs_the_warm_start():
    with pytest.raises(ValueError, match="dim_x"):
        ODGPSSM(dim_x="auto", dim_y=1, init="random", mean_function="linear")
    with pytest.raises(ValueError, match="dim_x"):
        ODGPSSM(dim_x="auto", dim_y=1, settings="authors")
    with pytest.raises(ValueError, match="dim_y"):
        ODGPSSM(dim_x="auto", dim_y=0)


def test_a_list_of_candidates():
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 800, seed=0)
    model = ODGPSSM(dim_x=[4, 3], dim_y=1, dim_u=1)
    assert model.get_config()["dim_x"] == [3, 4] and model.spec.dim_x == 3
    model.initialise(y, u)
    assert set(model.dim_x_scores_) == {3, 4} and model.spec.dim_x in (3, 4)
    for bad in ([], [0, 2], "four", [2.5]):
        with pytest.raises(ValueError, match="dim_x"):
            ODGPSSM(dim_x=bad, dim_y=1)
    with pytest.raises(ValueError, match="dim_x"):
        ODGPSSM(dim_x=[1, 2], dim_y=2).initialise(np.zeros((300, 2)), np.zeros((300, 1)))


def test_a_tie_between_state_dimensions_goes_to_the_smaller(monkeypatch):
    errors = {2: [0.3, 0.2], 3: [0.2, 0.3], 4: [0.1, 0.5], 5: [0.3, 0.4]}
    monkeypatch.setattr(lgssm_order, "cross_validation_errors", lambda data, fit, candidates: errors)
    chosen, scores, chosen_errors = select_dim_x([], None, list(errors), fallback=9)
    assert chosen == 2 and chosen_errors == [0.3, 0.2] and scores[4] == pytest.approx(0.3)


@pytest.mark.parametrize("num_iters, budget", [(50, 20), (5, 5)])
def test_the_candidates_are_fitted_with_the_selection_budget_or_the_models_own_if_smaller(num_iters, budget):
    # the budget of the module docstring: 20 EM iterations, below the final fit's 50
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    y, u, _ = datasets.simulate_linear(system, 200, seed=0)
    model = LGSSM(dim_x=2, dim_y=1, dim_u=1, num_iters=num_iters)
    candidate = model.fit_for_selection(3, [y], [u])
    assert candidate.spec.dim_x == 3 and candidate.get_config()["num_iters"] == budget
    assert not candidate.standardize and model.get_config()["num_iters"] == num_iters
