"""fit(refit=True): the final model fitted on all the training data (models/training.py, step 5). The fits name the
validation-block loop's plan (``gp.BlockPlan``; without it a linear init runs the default fit)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets import cascaded_tanks, random_linear_system, simulate_linear
from gpssm_np.models.training import refit_on_all, selected_step


def linear_data(seed=0, T=500):
    y, u, _ = simulate_linear(random_linear_system(dim_x=3, dim_y=1, dim_u=1, seed=seed), T, seed=seed)
    return y, u


SMALL = dict(num_inducing=8, seed=3)
BUDGET = dict(max_steps=20, eval_every=10, patience=2, num_samples=10, batch_size=8)


def loop(budget=BUDGET, **changes):
    """The validation-block loop's plan with ``budget`` and ``changes``."""
    return gp.BlockPlan(**dict(budget, **changes))


def test_selected_step_is_the_step_train_steps_keeps():
    record = [{"step": 0, "rmse": 1.0}, {"step": 10, "rmse": 0.9}, {"step": 20, "rmse": 0.95},
              {"step": 30, "rmse": 0.9}, {"step": 40, "rmse": 0.85}]
    assert selected_step(record, 0.0) == 40
    assert selected_step(record[:4], 0.0) == 10  # a tie is no improvement
    assert selected_step(record, 0.16) == 0  # no score 16 % below the best before it
    assert selected_step([{"step": 0, "rmse": None}, {"step": 5, "rmse": None}], 0.0) == 5  # nothing scored: the last


def test_a_refit_that_keeps_the_warm_start_is_the_warm_start_on_all_the_data():
    y, u = linear_data(seed=1)
    # min_delta = 0.9: no step can improve 90 % on the warm start, so the selected step is 0
    model = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit=True, min_delta=0.9))
    assert model.refit_ == {"steps": 0, "seed": 3} and model.history_ == []
    on_all = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).initialise(y, u)
    kept = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit=False, min_delta=0.9))
    assert kept.refit_ is None
    for name in model.params:
        np.testing.assert_array_equal(model.params[name], on_all.params[name])
    # without the refit the warm start is that of the training part: other numbers
    assert not np.allclose(kept.params["F"], on_all.params["F"])


def test_a_warm_start_refit_refits_only_a_kept_warm_start():
    y, u = linear_data(seed=1)
    kept = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(min_delta=0.9))  # the default
    on_all = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).initialise(y, u)
    assert kept.refit_ == {"steps": 0, "seed": 3}
    for name in kept.params:
        np.testing.assert_array_equal(kept.params[name], on_all.params[name])
    y, u, _ = cascaded_tanks(500, seed=3)  # a nonlinear plant where 30 steps beat the warm start
    budget = dict(BUDGET, max_steps=30, patience=3)
    plain = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(budget, refit=False, min_delta=0.0))
    trained = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(budget, refit="warm_start",
                                                                                   min_delta=0.0))
    assert selected_step(plain.validation_, 0.0) > 0  # training beat the warm start: the validated model stays
    assert trained.refit_ is None
    for name in plain.params:
        np.testing.assert_array_equal(trained.params[name], plain.params[name])


def test_a_refit_takes_the_selected_number_of_steps_from_the_selected_seed():
    y, u = linear_data(seed=2)
    model = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit=True, min_delta=0.0))
    steps = selected_step(model.validation_, 0.0)
    assert model.refit_ == {"steps": steps, "seed": 3} and len(model.history_) == steps
    again = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit=True, min_delta=0.0))
    for name in model.params:
        np.testing.assert_array_equal(model.params[name], again.params[name])
    # the refit trains all the windows of the whole series: a fixed budget of 10 steps differs from the warm start
    forced = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, **SMALL)
    forced.initialise(y, u)
    start = {k: v.copy() for k, v in forced.params.items()}
    refit_on_all(forced, [forced._y_to_model(y)], [forced._u_to_model(u)], 20,
                 gp.BlockPlan(batch_size=8, num_samples=10, max_rejections=5), 10, 3, gp.optim.Adam(lr=0.01), False,
                 None)
    assert len(forced.history_) == 10 and not np.allclose(forced.params["q_mu"], start["q_mu"])


def test_a_refit_chooses_the_state_dimension_on_all_the_data():
    y, u = linear_data(seed=3, T=700)
    refit = gp.ODGPSSM(dim_x=[2, 3], dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=gp.BlockPlan(refit=True, eval_every=1),
                                                                   max_steps=1)
    on_all = gp.ODGPSSM(dim_x=[2, 3], dim_y=1, dim_u=1, **SMALL).initialise(y, u)
    part = gp.ODGPSSM(dim_x=[2, 3], dim_y=1, dim_u=1, **SMALL).fit(y, u, max_steps=1, plan=gp.BlockPlan(eval_every=1))
    assert refit.dim_x_scores_ == on_all.dim_x_scores_ != part.dim_x_scores_


def test_refit_needs_a_validation_block_and_a_bool():
    y, u = linear_data(seed=4, T=60)  # a 12-step block is too short to hold back: nothing to refit
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit=True))
    assert model.refit_ is None and model.validation_[-1]["rmse"] is None
    with pytest.raises(ValueError, match="refit"):
        gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1).fit(y, u, max_steps=1, plan=gp.BlockPlan(refit="yes"))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, **SMALL).fit(y, u, plan=loop(refit="warm_start"))
    assert model.refit_ is None  # nothing held back
    with pytest.raises(ValueError, match="refit"):
        gp.PRSSM(dim_x=2, dim_y=1, dim_u=1).fit(y, u, max_steps=1, plan=gp.BlockPlan(refit=1))
