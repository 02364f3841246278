"""Stage 4 of the default fit (models/default_fit.py): the refit makes as many passes over all the training data as
the selection's fold runs made over their shorter pasts, its windows growing at steps scaled alike."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets import cascaded_tanks
from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.models import default_fit
from gpssm_np.models.default_fit import passes_ratio


def test_r_is_the_data_over_the_mean_of_the_folds_training_steps():
    y, u = np.zeros((400, 1)), np.zeros((400, 1))
    folds = rolling_origin([y], [u], 5)[-2:]  # H = 100: origins 200, 225, 250, 275, 300; the two latest
    assert [len(f.ys[0]) for f in folds] == [275, 300]
    assert passes_ratio([y], folds) == pytest.approx(400 / 287.5)
    short = np.zeros((30, 1))  # below the folds' shortest sequence: in every fold whole
    folds = rolling_origin([y, short], [u, short], 5)[-2:]
    assert passes_ratio([y, short], folds) == pytest.approx(430 / 317.5)
    assert passes_ratio([y], []) == 1.0


def test_the_refit_takes_r_times_the_selections_steps_on_a_schedule_scaled_alike(monkeypatch):
    y, u, _ = cascaded_tanks(200, seed=4)
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    schedules, growing = [], default_fit.GrowingRun

    def recorded(model, cut, stages, *args):
        schedules.append(stages)
        return growing(model, cut, stages, *args)

    monkeypatch.setattr(default_fit, "GrowingRun", recorded)
    # stage 3 keeps the part at the best step (six Adam steps do not beat the exact floor): the refit is what is tested
    monkeypatch.setattr(default_fit, "paired_t", lambda floor, part: np.inf)
    plan = dict(max_steps=6, eval_every=3, patience=2, num_samples=4, batch_size=4)  # refit: 3 + 3 + 2 steps
    model = gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, plan=plan, progress=False)
    r = passes_ratio([y], rolling_origin([y], [u], 5)[-2:])  # 200 / 144
    assert model.selection_["step"] == 6 and model.selection_["gp_part"]
    assert [r["step"] for r in model.selection_["record"]] == [0, 3, 6]  # evaluated once at max_steps, not again
    assert model.selection_["refit_steps"] == round(r * 6) == 8 and len(model.history_) == 8
    # the training record says the same, in the validation-block loop's terms
    assert model.refit_["steps"] == 8 and model.lr_scale_ == (model.selection_["lr_scale"] or {})
    assert schedules[0] == [(0, 20), (2, 40), (4, 80)]  # the fold runs': 6 steps over three lengths
    assert schedules[-1] == [(0, 20), (2, 40), (5, 80)]  # the refit's: round(r 6) = 8 steps over the same three
