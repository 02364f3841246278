"""Decision AW of research/ablation_plan.md (the stopping step by the one-standard-error rule: among the (step-size
candidate, step) pairs of the selection that beat the floor by more than ``switch_t`` standard errors and are within
``switch_t`` standard errors of the lowest fold error, the fewest steps): the 70/30 cuts of the 24 training halves other
than the steam generator, training seeds 1-4, scored on each cut's last 30 % under causal and simulate, against the
current default's rows on the same machine (``decision_av.BASELINE``). One JSON line per (cut, seed), variant "AW",
appended (resumable), each naming the machine's CPU, the fit's training steps (the selection's, over its runs still
training, and the refit's, stage 3b's included) and the step the default's rule would have chosen; two workers share the
cells from both ends (``--worker 0``, and ``--worker 1 --reverse``).

Run: python research/decision_aw.py research/results/decision_aw.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import numpy as np

from decision_av import counted, counting, decide_on_steps, step_extra
from decision_as import cells
from decision_am import run_variant
from rows import worker_main

from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

#: The most AW's training steps may be, as a share of the default's, for it to be adopted (its baseline is decision
#: AV's, ``decision_av.BASELINE``: decision AU's rows).
STEPS_RATIO = 0.95
#: The steps the default's rule chose in the fit under way (one per pipeline that kept a GP part at stage 3).
LOWEST = {"lowest": []}
#: The stage-3 pipeline of the fit under way (stage 3b's model must beat its floor too).
STAGE_3 = {"first": None}


def one_standard_error(record, best, c, switch_t, first_floor=None):
    """(step, candidate) of AW's rule on the selection's ``record``, given the lowest fold error's row ``best`` and
    candidate ``c`` (kept by stage 3): the fewest steps among the rows after step 0 and candidates whose windows beat
    step 0's by more than ``switch_t`` standard errors and are not above the best's by more than ``switch_t``
    (``training.paired_t`` both ways, as stage 3's test); ties to the lower mean fold error. In stage 3b's pipeline
    ``first_floor`` (the first floor's step-0 windows, which stage 3b's model must beat too) joins the first
    condition; where nothing is eligible then, the best (which stage 3b will then refuse, as in the default)."""
    floor = record[0]["windows"][c]
    floors = [floor] if first_floor is None else [floor, first_floor]
    eligible = []
    for r in record[1:]:
        if r["step"] > best["step"]:
            break
        for k, windows in enumerate(r["windows"]):
            if not np.isfinite(r["candidates"][k]):  # a stopped or diverged candidate (decision AU)
                continue
            beats_floors = [paired_t(f, windows) for f in floors]
            above_best = paired_t(windows, best["windows"][c])
            if (all(t is not None and t > switch_t for t in beats_floors) and above_best is not None
                    and above_best <= switch_t):
                eligible.append((r["step"], r["candidates"][k], k))
    if not eligible:  # only in stage 3b, where the best does not beat the first floor: refused there, as by default
        return best["step"], c
    step, _, k = min(eligible)
    return step, k


def aw_patch():
    """AW's patch of ``default_fit.DefaultFit``: stage 3's acceptance as the default's (the lowest fold error must
    beat step 0 by ``switch_t`` standard errors), then the step and candidate by :func:`one_standard_error`; the
    calibration reads the selection's forecasts at the lowest fold error's step (the kept parameters hold only that
    one; the intervals do not move the RMSE this decision scores). Counts the training steps
    (``decision_av.counting``). Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("run", "acceptance", "calibration")}
    undo_counting = counting()

    def run(self, ys, us):
        if set(self.kinds) == set(default_fit.FLOOR_KINDS):  # stage 3's pipeline; stage 3b's holds one kind
            STAGE_3["first"] = self
        return saved["run"](self, ys, us)

    def acceptance(self, record):
        step, t, c = saved["acceptance"](self, record)
        self.aw_lowest = step
        if not step:
            return step, t, c
        LOWEST["lowest"].append(step)
        best = next(r for r in record if r["step"] == step)
        first = STAGE_3["first"] if STAGE_3["first"] is not self else None
        step, k = one_standard_error(record, best, c, self.plan.switch_t,
                                     None if first is None else first.record[0]["windows"][0])
        self.aw_lowest_candidate = c
        return step, paired_t(record[0]["windows"][k], next(r for r in record if r["step"] == step)["windows"][k]), k

    def calibration(self, runs, step):
        if not step:
            return saved["calibration"](self, runs, step)
        candidate, self.candidate = self.candidate, self.aw_lowest_candidate
        try:
            return saved["calibration"](self, runs, self.aw_lowest)
        finally:
            self.candidate = candidate

    cls.run, cls.acceptance, cls.calibration = run, acceptance, calibration

    def undo():
        for name, value in saved.items():
            setattr(cls, name, value)
        undo_counting()
    return undo


def run(out, worker, workers, reverse=False):
    run_variant(out, "AW", cells(), aw_patch, reverse=reverse,
                extra=step_extra() + (("lowest_error_steps", counted(LOWEST, "lowest")),))


def print_moved(rows, pairs):
    """Print the cells whose returned step is not the step of lowest fold error stage 3 found."""
    moved = [(k, r["lowest_error_steps"], r["step"]) for k, r in sorted(rows.items()) if k[0] in pairs
             and r["lowest_error_steps"] and r["lowest_error_steps"][-1] != r["step"]]
    print(f"  cells whose refit step the rule moved (the lowest error's step -> AW's): {len(moved)}: {moved}")


def decide(out):
    decide_on_steps(out, "AW", STEPS_RATIO, print_moved)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
