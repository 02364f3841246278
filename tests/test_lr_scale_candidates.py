"""Step 8 of models/training.py: candidates of the per-parameter step (``BlockPlan(lr_scales=[...])``), the paired
test over the validation windows that decides between them, and the per-window scores the validation record keeps. The
fits name the validation-block loop's plan (``gp.BlockPlan``; without it a linear init runs the default fit)."""
import numpy as np
import pytest

import gpssm_np as gp

from gpssm_np.models.training import ValidationScore, paired_t, selected_windows, split_validation, switches
from tests.test_warm_start import standardised_linear_data

SLOW = {"F": 1e-3, "G": 1e-3, "b": 1e-3}
KWARGS = dict(max_steps=20, eval_every=10, patience=2, num_samples=5, batch_size=8, refit=False)


def data(T):
    """Outputs z-scored over all T steps, as the fit does: validation scores are then in the model's units."""
    y, u = standardised_linear_data(seed=4, T=T)
    return (y - y.mean(axis=0)) / y.std(axis=0), u


def model():
    return gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6)


def test_paired_t_is_the_mean_difference_over_its_standard_error():
    kept, other = [0.30, 0.50, 0.40, 0.60], [0.20, 0.42, 0.33, 0.50]
    d = np.array(kept) - np.array(other)
    # the windows overlap by half: W // 2 = 2 of them count as independent
    assert paired_t(kept, other) == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(2)), rel=1e-12)
    assert paired_t(kept, other) == pytest.approx(8.2496, abs=1e-4) and switches(kept, other, 2.0)
    assert paired_t(other, kept) == -paired_t(kept, other) and not switches(other, kept, 2.0)
    noisy = [0.20, 0.55, 0.38, 0.60]  # better on average, not by two standard errors
    assert 0 < paired_t(kept, noisy) < 2 and not switches(kept, noisy, 2.0) and switches(kept, noisy, 0.3)
    assert paired_t([0.3], [0.1]) is None and not switches([0.3], [0.1], 0.0)  # one window: never a switch
    assert paired_t([0.3, 0.4], [0.3, 0.4]) == 0.0 and not switches([0.3, 0.4], [0.3, 0.4], 0.0)  # the same run
    assert paired_t([0.5, 0.75], [0.25, 0.5]) == np.inf and switches([0.5, 0.75], [0.25, 0.5], 2.0)


def test_the_validation_record_keeps_every_windows_rmse():
    y, u = data(1000)  # a 200-step validation block: windows at 0, 50, 100
    fitted = model().fit(y, u, plan=gp.BlockPlan(**KWARGS, lr_scales={}), seed=5)
    score = ValidationScore([y], [u], split_validation([y], [u], 0.2)[2], seed=5)
    for entry in fitted.validation_:
        assert len(entry["windows"]) == 3 and entry["rmse"] == pytest.approx(np.mean(entry["windows"]), rel=1e-14)
    kept = selected_windows(fitted.validation_, 0.0)
    assert score.window_scores(fitted) == pytest.approx(kept, rel=1e-12)
    assert fitted.lr_scale_ == {} and fitted.lr_scale_tests_ == [] and len(fitted.restart_scores_) == 1


def test_a_later_candidate_is_kept_only_when_it_wins_the_paired_test():
    y, u = data(1000)
    alone = {name: model().fit(y, u, plan=gp.BlockPlan(**KWARGS, lr_scales=scale), seed=5)
             for name, scale in (("plain", {}), ("slow", SLOW))}
    windows = {name: selected_windows(m.validation_, 0.0) for name, m in alone.items()}
    t = paired_t(windows["slow"], windows["plain"])
    assert t > 0  # on these data the plain step, tried second, wins: a threshold below t switches, one above not
    for switch_t in (0.5 * t, 2.0 * t):
        both = model().fit(y, u, plan=gp.BlockPlan(**KWARGS, lr_scales=[SLOW, {}], switch_t=switch_t), seed=5)
        assert both.restart_scores_ == [min(r["rmse"] for r in alone[n].validation_) for n in ("slow", "plain")]
        [test] = both.lr_scale_tests_
        assert test["t"] == pytest.approx(t, rel=1e-12)
        expected = "plain" if switch_t < t else "slow"
        assert test["kept"] == (expected == "plain") and both.lr_scale_ == ({} if expected == "plain" else SLOW)
        for name in both.params:
            np.testing.assert_array_equal(both.params[name], alone[expected].params[name])
        assert [r["windows"] for r in both.validation_] == [r["windows"] for r in alone[expected].validation_]


def test_the_threshold_is_the_plans_and_an_earlier_field_name_is_named():
    assert gp.BlockPlan().switch_t == 2.0
    y, u = standardised_linear_data(seed=4, T=300)
    with pytest.raises(ValueError, match="switch_t: expected a number >= 0"):
        model().fit(y, u, plan=gp.BlockPlan(switch_t=-1.0), max_steps=2)
    zero_mean = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, mean_function="zero")  # the loop's regime
    for fitted in (model(), zero_mean):  # the default fit's Plan, the validation-block loop's BlockPlan
        with pytest.raises(ValueError, match="plan: lr_scale is now named lr_scales"):
            fitted.fit(y, u, plan={"lr_scale": {}}, max_steps=2)


def test_the_default_trains_the_slow_candidate_only_where_two_windows_can_decide():
    assert gp.BlockPlan().lr_scales == ({}, {"F": 0.1, "G": 0.1, "b": 0.1})
    short = standardised_linear_data(seed=4, T=400)  # an 80-step block: one window
    one = model().fit(*short, plan=gp.BlockPlan(**KWARGS), seed=5)
    assert len(one.restart_scores_) == 1 and one.lr_scale_ == {} and one.lr_scale_tests_ == []
    plain = model().fit(*short, plan=gp.BlockPlan(**KWARGS, lr_scales={}), seed=5)
    for name in one.params:
        np.testing.assert_array_equal(one.params[name], plain.params[name])
    mid = standardised_linear_data(seed=4, T=750)  # a 150-step block: two windows, enough for the paired test
    assert len(model().fit(*mid, plan=gp.BlockPlan(**KWARGS), seed=5).restart_scores_) == 2
    long = standardised_linear_data(seed=4, T=1000)
    two = model().fit(*long, plan=gp.BlockPlan(**KWARGS), seed=5)
    assert len(two.restart_scores_) == 2 and two.lr_scale_tests_[0]["lr_scale"] == {"F": 0.1, "G": 0.1, "b": 0.1}
    # a model without the linear part (F, G, b) trains the plain step only
    zero = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, mean_function="zero").fit(*long, plan=KWARGS, seed=5)
    assert len(zero.restart_scores_) == 1 and zero.lr_scale_ == {}


def test_bad_candidates_are_named():
    y, u = standardised_linear_data(seed=4, T=300)
    for bad, message in [([], "lr_scales: expected a dict"), ([{}, 0.1], "lr_scales: expected a dict"),
                         ("F", "lr_scales: expected a dict"), ([{}, {"W": 0.1}], "lr_scales: unknown parameter"),
                         ([{"F": -1.0}], r"lr_scales\['F'\]")]:
        with pytest.raises(ValueError, match=message):
            model().fit(y, u, plan=gp.BlockPlan(lr_scales=bad), max_steps=2)
