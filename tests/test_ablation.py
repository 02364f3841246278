"""The ablation's cells (experiments/ablation.py): one tiny cell per kind of state-dimension configuration."""
import os

import pytest

from gpssm_np.baselines import ARX
from gpssm_np.experiments import ablation

DATA = os.environ.get("GPSSM_NP_DATA") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
TINY = {"max_steps": 1, "eval_every": 1, "patience": 1, "seq_len": 10}


def test_cells_record_the_state_dimension_of_each_configuration():
    fixed = ablation.run_cell("gas_furnace", "enkf", 0, TINY, DATA)
    assert fixed["dim_x"] == 4 and fixed["steps"] == 1 and fixed["selected"] <= fixed["initial"]
    # amendment 3's candidates start at d_y = 1 (today the LGSSM's, 1..10 for one output; research/ablation_plan.md)
    assert ablation.run_cell("gas_furnace", "auto_dx", 0, TINY, DATA)["dim_x"] in range(1, 11)
    assert ablation.run_cell("gas_furnace", "auto_dx_floor", 0, TINY, DATA)["dim_x"] in (4, 5)  # from the floor 4


def test_a_held_out_block_is_scored_but_never_fitted():
    budget = dict(TINY, held_out=0.2)
    row = ablation.run_cell("gas_furnace", "val_all", 0, budget, DATA)
    assert row["budget"] == budget and row["held_out"] > 0
    four = ablation.run_cell("gas_furnace", "auto_dx_floor", 0, budget, DATA)
    assert four["dim_x"] == row["dim_x"] and four["held_out"] > 0
    assert "held_out" not in ablation.run_cell("gas_furnace", "enkf", 0, TINY, DATA)


def test_calibrated_cells_score_the_same_forecasts_with_and_without_their_factors():
    budget = dict(TINY, held_out=0.2)
    plain = ablation.run_cell("gas_furnace", "val_all", 0, dict(budget, calibrate=False), DATA)  # the same fit
    both = ablation.run_cell("gas_furnace", "calibrated", 0, budget, DATA)
    assert both["held_out"] == plain["held_out"]  # the factors change no point forecast
    assert both["held_out_coverage_uncalibrated"] == plain["held_out_coverage"]
    assert both["held_out_nlpd_uncalibrated"] == plain["held_out_nlpd"]
    assert "held_out_coverage_uncalibrated" not in plain and 0 <= both["held_out_coverage"] <= 1


def test_linear_cells_fit_the_part_before_the_held_out_block_and_score_the_block():
    row = ablation.linear_cell("gas_furnace", "arx", 0.2, DATA)
    y, u = ablation.training_half("gas_furnace", DATA)
    cut = len(y) - int(round(0.2 * len(y)))
    model = ARX(dim_y=1, dim_u=1).fit(y[:cut], u[:cut])
    assert row["held_out"] == ablation.held_out_metrics(model, y, u, cut)["held_out"]
    assert row["order"] == {"na": len(model.get_params()["a"]), "nb": len(model.get_params()["b"])}
    assert ablation.linear_cell("gas_furnace", "lgssm", 0.2, DATA)["order"]["dim_x"] >= 1
    with pytest.raises(ValueError, match="model_name"):
        ablation.linear_cell("gas_furnace", "dssm")


def test_the_held_out_comparison_divides_by_the_better_linear_model():
    gp_rows = [{"dataset": "dryer", "config": "ema", "seed": s, "held_out": v, "held_out_coverage": 0.9}
               for s, v in ((0, 0.1), (1, 0.3))]
    linear_rows = [{"dataset": "dryer", "model": "arx", "held_out": 0.25, "held_out_coverage": 0.8,
                    "order": {"na": 2, "nb": 3}},
                   {"dataset": "dryer", "model": "lgssm", "held_out": 0.4, "held_out_coverage": 0.7,
                    "order": {"dim_x": 4}}]
    table = ablation.held_out_comparison(gp_rows + [dict(gp_rows[0], config="enkf", held_out=9.0)], linear_rows)
    assert table.splitlines()[2] == "| dryer | 0.2000 (2) | 0.90 | 0.2500 (2, 3) | 0.4000 (4) | 0.80, 0.70 | 0.800 |"
    assert len(table.splitlines()) == 3  # sets without both linear rows are left out
