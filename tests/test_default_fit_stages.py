"""Pieces of the default fit's stages (models/default_fit.py) checked on their own, each against a one-line change
that the tests of whole fits let through: stage 1's check of the floor's form and the number of latent GPs, the windows
each fold run is scored on and when a step-size candidate stops (stage 2), the choice among the selection's
evaluations and the acceptance against the exact floor (stage 3), how stage 4's two guards combine and what a failed
guard returns, and the parameters stage 5 calibrates."""
import types

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.metrics import widening_factors
from gpssm_np.models import default_fit
from gpssm_np.models.default_fit import DefaultFit, Plan


def pipeline():
    return DefaultFit(model=None, plan=Plan())


def test_each_fold_run_is_scored_on_every_window_after_its_origin():
    rng = np.random.default_rng(0)
    y, u = rng.standard_normal((500, 1)), rng.standard_normal((500, 1))
    folds = rolling_origin([y], [u])[-2:]
    fit = pipeline()
    first, last = fit.window_score(folds, 0), fit.window_score(folds, 1)
    # the earlier origin's run forecasts its own windows and the later fold's too
    assert [t[3].tolist() for t in first.tasks] == [w.y.tolist() for f in folds for w in f.windows]
    assert [t[3].tolist() for t in last.tasks] == [w.y.tolist() for w in folds[1].windows]
    assert len(first.tasks) > len(last.tasks)


def test_the_selection_takes_the_lowest_mean_fold_error_ties_to_the_earlier_step_then_candidate():
    record = [{"step": 0, "candidates": [0.3, 0.3]}, {"step": 50, "candidates": [0.25, 0.2]},
              {"step": 100, "candidates": [0.2, 0.2]}, {"step": 150, "candidates": [0.2, 0.21]}]
    row, candidate = DefaultFit.best_of(record)
    assert (row["step"], candidate) == (50, 1)
    row, candidate = DefaultFit.best_of(record[2:])
    assert (row["step"], candidate) == (100, 0)


def test_stage_3_keeps_the_best_step_only_beyond_one_standard_error_of_the_exact_floor():
    floor = [0.30, 0.32, 0.28, 0.31]

    def record(best_step, windows):
        rows = [{"step": s, "candidates": [0.5, 0.5], "windows": [[0.5] * 4, [0.5] * 4]} for s in (0, 50, 100)]
        rows[best_step // 50] = {"step": best_step, "candidates": [0.5, float(np.mean(windows))],
                                 "windows": [[0.5] * 4, windows]}
        return rows

    fit = pipeline()
    better = [0.20, 0.23, 0.18, 0.22]  # every window better: t far above 1
    step, t, candidate = fit.acceptance(record(50, better), floor)
    assert (step, candidate) == (50, 1) and t == pytest.approx(gp.models.training.paired_t(floor, better))
    noisy = [0.25, 0.40, 0.20, 0.35]  # better on average, not by one standard error
    assert fit.acceptance(record(100, noisy), floor)[::2] == (0, 0)
    assert fit.acceptance(record(0, better), floor) == (0, 0.0, 0)  # the best step is the warm start: no GP part
    assert fit.acceptance(record(0, better)[:1], floor) == (0, None, 0)  # nothing evaluated after step 0


@pytest.mark.parametrize("ratios, means, refused", [((1.05, None), (0.5, None), None),
                                                     ((1.2, 1.0), (0.5, 0.4), "first"),
                                                     ((1.2, 1.3), (0.4, 0.5), None)])
def test_stage_1_takes_the_other_kind_only_where_the_chosen_ones_form_misses_by_more_than_a_tenth(
        monkeypatch, ratios, means, refused):
    """The form check (FORM_TOLERANCE = 1.1): the chosen kind's form within 1.1 times its linear model's error is
    kept; beyond it the other kind is the floor if its form forecasts the windows better, else a warning."""
    rng = np.random.default_rng(0)
    y, u = rng.standard_normal((300, 1)), rng.standard_normal((300, 1))
    calls = []

    def held(self, floor, folds):
        calls.append(floor.kind)
        k = len(calls) - 1
        return {"starts": [], "errors": [means[k]], "ratio": ratios[k]}

    monkeypatch.setattr(DefaultFit, "held", held)
    fit = DefaultFit(model=gp.ODGPSSM(dim_y=1, dim_u=1), plan=Plan())
    if ratios[1] is not None and ratios[1] > default_fit.FORM_TOLERANCE:
        with pytest.warns(UserWarning, match="forecasts the folds' windows 1.20 times worse"):
            floor = fit.floor([y], [u], folds=[])
    else:
        floor = fit.floor([y], [u], folds=[])
    assert len(calls) == (1 if ratios[1] is None else 2)
    assert fit.refused == (calls[0] if refused else None)
    assert floor.kind == (calls[1] if refused else calls[0])


def test_stage_1_checks_the_form_on_the_folds_the_selection_trains_on(monkeypatch):
    """Without folds given (``initialise``), stage 1 checks the floor's form on the plan's latest ``gp_folds``
    origins, those ``run`` gives it and the selection trains on."""
    rng = np.random.default_rng(0)
    y, u = rng.standard_normal((400, 1)), rng.standard_normal((400, 1))
    seen = []
    monkeypatch.setattr(DefaultFit, "held", lambda self, floor, folds: seen.append(folds) or
                        {"starts": [], "errors": [1.0], "ratio": 1.0})
    DefaultFit(model=gp.ODGPSSM(dim_y=1, dim_u=1), plan=Plan()).floor([y], [u])
    expected = rolling_origin([y], [u], Plan().origins)[-Plan().gp_folds:]
    assert [f.origins for f in seen[0]] == [f.origins for f in expected] and len(expected) == 2


def test_the_selection_stops_at_its_budget_between_evaluations():
    """A budget that is no multiple of ``eval_every`` ends with a shorter last stretch: evaluated at steps 0, 2 and 3
    for ``max_steps=3``, ``eval_every=2``."""
    rng = np.random.default_rng(1)
    y, u = rng.standard_normal((300, 1)), rng.standard_normal((300, 1))
    model = gp.ODGPSSM(dim_y=1, dim_u=1, num_inducing=4, seed=0).fit(
        y, u, max_steps=3, plan={"eval_every": 2, "num_samples": 4, "batch_size": 4}, progress=False)
    assert [r["step"] for r in model.selection_["record"]] == [0, 2, 3]


@pytest.mark.parametrize("free_run, far_field", [(True, True), (True, False), (False, True), (False, False)])
def test_stage_4_passes_only_where_the_free_run_and_the_far_field_guards_both_pass(monkeypatch, free_run, far_field):
    monkeypatch.setattr(default_fit, "free_run_check",
                        lambda *args: {"model": 1.0, "floor": 1.0, "passed": free_run})
    monkeypatch.setattr(default_fit, "far_field_check",
                        lambda *args: {"model": {"run": 0.9}, "floor": {"run": 0.9}, "passed": far_field})
    fit = pipeline()
    monkeypatch.setattr(fit, "floor_form", lambda *args: None)
    result = fit.guards(types.SimpleNamespace(model=None), [], [])
    assert result["passed"] == (free_run and far_field)
    assert result["far_field"] == {"model": {"run": 0.9}, "floor": {"run": 0.9}}


def test_a_gp_part_that_fails_stage_4s_guards_is_dropped_for_the_floor(monkeypatch):
    y, u, _ = gp.datasets.cascaded_tanks(200, seed=0)  # fit standardises them
    # stage 3 keeps the last evaluation's part whatever its fold error, and stage 4's guards fail it
    monkeypatch.setattr(DefaultFit, "acceptance", lambda self, record, floor_errors: (record[-1]["step"], 5.0, 0))
    monkeypatch.setattr(DefaultFit, "guards", lambda self, floor, ys, us: {"passed": False})
    m = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0, init="arx")
    m.fit(y, u, max_steps=4, plan={"eval_every": 2}, progress=False)
    assert m.selection_["free_run"] == {"passed": False}
    assert m.selection_["step"] == 0 and not m.selection_["gp_part"]
    assert m.linear_gaussian() is not None  # the floor with a zero GP residual


class _Run:
    """A stand-in fold model whose parameters are a label."""

    def __init__(self):
        self.params = "last step"

    def set_learned_params(self, params):
        self.params = params


class _Score:
    """Standardised errors of 2 where the model holds the parameters kept at s*, of 0.5 otherwise."""

    def standardised_errors(self, model):
        return np.full((20, 1), 2.0 if model.params == "kept at s*" else 0.5)


def test_stage_5_calibrates_the_fold_models_at_the_chosen_step():
    fit = pipeline()
    runs = [(_Run(), None, _Score()) for _ in range(2 * len(Plan().lr_scales))]  # two folds per candidate
    fit.kept = {0: ["step 0"] * len(runs), 100: ["kept at s*"] * len(runs)}
    factors = fit.calibration(runs, 100)
    assert factors[0] == pytest.approx(widening_factors(np.full((40, 1), 2.0))[0])
    assert factors[0] > 1.0


def test_a_candidate_stops_after_patience_evaluations_without_a_lower_error_and_the_halving_reads_its_own_step():
    def record(*columns):
        return [{"step": 50 * k, "candidates": list(row)} for k, row in enumerate(zip(*columns))]

    flat = record([1.0, 0.9, 0.9, 0.9], [1.0, 0.9, 0.8, 0.7])  # an equal error is no lower one
    assert default_fit.live_candidates(flat, 2, patience=2) == [False, True]
    assert default_fit.live_candidates(flat[:3], 2, patience=2) == [True, True]
    # halved at step 100: the evaluation at step 100 itself decides (candidate 0 leads there, candidate 1 before it)
    halved = record([1.0, 0.9, 0.5, 0.5], [1.0, 0.8, 0.85, 0.4])
    assert default_fit.live_candidates(halved, 2, patience=4, halve_at=100) == [True, False]
    assert default_fit.live_candidates(halved, 2, patience=4) == [True, True]
    # evaluated every step: halving at step 0 or 1 decides at step 1 (never at step 0, where all score the floor)
    every_step = [dict(r, step=k) for k, r in enumerate(record([1.0, 0.9, 0.5], [1.0, 0.8, 0.85]))]
    for halve_at in (0, 1):
        assert default_fit.live_candidates(every_step, 2, patience=4, halve_at=halve_at) == [False, True]
    assert default_fit.live_candidates(every_step, 2, patience=4, halve_at=2) == [True, False]


def test_the_number_of_latent_gps_is_the_state_dimension_up_to_max_5_3_dim_y():
    assert [default_fit.num_latent_for(d_x, d_y) for d_x, d_y in ((4, 1), (10, 1), (30, 2), (30, 3), (8, 4))] == [
        4, 5, 6, 9, 8]


def test_the_forms_ratio_to_its_floor():
    ratio = default_fit.form_ratio
    assert ratio([0.2, 0.4], [0.1, 0.2]) == pytest.approx(2.0) and ratio([0.5], [0.5]) == 1.0
    assert ratio([0.2], [np.inf]) == 1.0 and ratio([], []) == 1.0
    # a linear error below the form's resolution (an exact fit) counts as the resolution
    resolution = default_fit.FORM_RESOLUTION
    assert resolution == pytest.approx(np.sqrt(2e-6))
    assert ratio([0.2], [0.0]) == pytest.approx(0.2 / resolution) and ratio([1e-4], [1e-15]) < 0.1
    assert ratio([2 * resolution], [resolution]) == pytest.approx(2.0)
    assert ratio([np.inf], [0.1]) == np.inf and ratio([np.nan], [0.1]) == np.inf


def test_the_selection_stops_after_patience_evaluations_without_a_lower_mean_error(monkeypatch):
    y, u, _ = gp.datasets.cascaded_tanks(200, seed=0)
    evaluate = DefaultFit.evaluate

    def worse_after_step_0(self, step):  # the record as it is, the loop told that nothing beat step 0
        evaluate(self, step)
        return 1.0 if step == 0 else 2.0

    monkeypatch.setattr(DefaultFit, "evaluate", worse_after_step_0)
    m = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0, init="arx")
    m.fit(y, u, max_steps=20, plan={"eval_every": 2, "patience": 3}, progress=False)
    assert [r["step"] for r in m.selection_["record"]] == [0, 2, 4, 6]
