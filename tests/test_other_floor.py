"""Stage 3b of the default fit (models/default_fit.py, ``fit``): where stage 3 kept no GP part from the chosen floor,
the pipeline runs again from the other kind's floor, and that model is returned only where it keeps a GP part that
beats the chosen floor (exact, as stage 3 compares) on the same windows by more than ``switch_t`` standard errors.

The pipeline's own stages are tested elsewhere (test_floor.py, test_default_fit_checkpoint.py); here
``DefaultFit.run`` is replaced by a stand-in that sets what a run leaves behind (the floor, stage 3's s*, the
record of window errors, stage 4's guard and the model's parameters), so that the composition is checked in
milliseconds, with the real ``other_kind``, ``t_over`` and ``fit``."""
import types

import numpy as np
import pytest

from gpssm_np.models import default_fit
from gpssm_np.models.default_fit import DefaultFit, Plan

FIRST_WINDOWS = [0.30, 0.32, 0.28, 0.31, 0.29, 0.33]  # the chosen floor's exact errors
OTHER_FLOOR_WINDOWS = [w + 0.3 for w in FIRST_WINDOWS]  # the other kind's floor's exact errors, far worse
STEP0_WINDOWS = [w + 0.2 for w in FIRST_WINDOWS]  # its warm start's particle forecasts, far worse (decision BK)


def stand_in(outcomes):
    """A replacement for ``DefaultFit.run``: the run whose floor kinds are ``kinds`` takes ``outcomes[kinds]``, a
    dict with the floor's kind, s*, the window errors at s*, whether the guard passed and its own floor's exact window
    errors (default: those of the chosen floor)."""
    def run(self, ys, us):
        out = outcomes[self.kinds]
        self.floor_choice = {"kind": out["kind"], "dim_x": out["dim_x"], "orders": [out["dim_x"]]}
        self.floor_scores = out["scores"]
        self.accepted, self.candidate = out["step"], out.get("candidate", 0)
        windows = [STEP0_WINDOWS, STEP0_WINDOWS]
        later = [w + 0.01 for w in STEP0_WINDOWS]  # an evaluation that did not win
        self.record = [{"step": 0, "windows": windows}, {"step": 50, "windows": [later, later]}]
        self.floor_errors = out.get("floor_errors", FIRST_WINDOWS)
        if out["step"]:
            at = [STEP0_WINDOWS, STEP0_WINDOWS]
            at[self.candidate] = out["windows"]
            self.record.append({"step": out["step"], "windows": at})
        self.free_run = {"passed": out["passed"]} if out["step"] else None
        step = out["step"] if out.get("passed", True) else 0
        self.model.params = {"from": out["kind"]}
        self.model.spec = types.SimpleNamespace(dim_x=out["dim_x"])
        self.model.history_, self.model.training_log_, self.model.interval_scale_ = [out["kind"]], {}, None
        self.runs_seen.append((self.kinds, self.checkpoint))
        return {"floor": {"kind": out["kind"], "dim_x": out["dim_x"]}, "step": step, "gp_part": step > 0}
    return run


@pytest.fixture
def runs(monkeypatch):
    seen = []
    monkeypatch.setattr(DefaultFit, "runs_seen", seen, raising=False)
    return seen


def model():
    return types.SimpleNamespace(params={}, spec=None, history_=[], training_log_={}, interval_scale_=None)


SCORES = {"arx": 0.20, "lgssm": 0.21}
FIRST = {"kind": "arx", "dim_x": 20, "scores": SCORES, "step": 0}


def test_the_other_floors_gp_part_is_returned_where_it_beats_the_chosen_floor(monkeypatch, runs):
    better = [w - 0.1 for w in FIRST_WINDOWS]
    monkeypatch.setattr(DefaultFit, "run", stand_in({
        ("arx", "lgssm"): FIRST,
        ("lgssm",): {"kind": "lgssm", "dim_x": 4, "scores": {"lgssm": 0.21}, "step": 300, "windows": better,
                     "passed": True, "candidate": 1}}))
    m = model()
    selection = default_fit.fit(m, [], [], Plan(), checkpoint="/tmp/run.npz")
    assert m.params == {"from": "lgssm"} and m.spec.dim_x == 4 and m.history_ == ["lgssm"]
    assert selection["floor"]["kind"] == "lgssm" and selection["gp_part"]
    assert selection["other_floor"]["kept"] and selection["other_floor"]["chosen"]["kind"] == "arx"
    assert selection["other_floor"]["t"] > Plan().switch_t
    # the second pipeline checkpoints beside the first, with only the other kind allowed
    assert runs == [(("arx", "lgssm"), "/tmp/run.npz"), (("lgssm",), "/tmp/run.npz.other")]


@pytest.mark.parametrize("other", [
    # kept, better than the chosen floor's step 0 but worse than that floor
    {"step": 300, "windows": [w + 0.05 for w in FIRST_WINDOWS], "passed": True},
    {"step": 300, "windows": [w - 0.1 for w in FIRST_WINDOWS], "passed": False},  # better, but stage 4 drops it
    {"step": 0}])  # no GP part kept from the other floor either
def test_the_chosen_floor_stays_where_the_other_floors_gp_part_does_not_beat_it(monkeypatch, runs, other):
    # the other floor's own exact errors are far worse, so its part beats them: it must beat the chosen floor's
    monkeypatch.setattr(DefaultFit, "run", stand_in({
        ("arx", "lgssm"): FIRST, ("lgssm",): dict(kind="lgssm", dim_x=4, scores={"lgssm": 0.21},
                                                  floor_errors=OTHER_FLOOR_WINDOWS, **other)}))
    m = model()
    selection = default_fit.fit(m, [], [], Plan())
    assert m.params == {"from": "arx"} and m.spec.dim_x == 20
    assert selection["floor"]["kind"] == "arx" and not selection["other_floor"]["kept"]
    assert len(runs) == 2


@pytest.mark.parametrize("first", [
    dict(FIRST, step=200, windows=[w - 0.1 for w in FIRST_WINDOWS], passed=True),  # a GP part kept: no stage 3b
    dict(FIRST, step=200, windows=[w - 0.1 for w in FIRST_WINDOWS], passed=False),  # kept by stage 3, dropped by 4
    dict(FIRST, scores={"arx": 0.20, "lgssm": np.inf})])  # the other kind could not be scored
def test_stage_3b_runs_only_where_stage_3_kept_nothing_and_the_other_kind_was_scored(monkeypatch, runs, first):
    monkeypatch.setattr(DefaultFit, "run", stand_in({("arx", "lgssm"): first}))
    selection = default_fit.fit(model(), [], [], Plan())
    assert selection["other_floor"] is None and len(runs) == 1
