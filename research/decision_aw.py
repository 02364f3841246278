"""Decision AW of research/ablation_plan.md (the stopping step by the one-standard-error rule: among the (step-size
candidate, step) pairs of the selection that beat the floor by more than ``switch_t`` standard errors and are within
``switch_t`` standard errors of the lowest fold error, the fewest steps): the 70/30 cuts of the 24 training halves
other than the steam generator, training seeds 1-4, scored on each cut's last 30 % under causal and simulate,
against the current default's rows on the same machine (``BASELINE``). One JSON line per (cut, seed), variant "AW",
appended (resumable), each naming the machine's CPU, the fit's training steps (the selection's, over its runs still
training, and the refit's, stage 3b's included) and the step the default's rule would have chosen; two workers share
the cells from both ends (``--worker 0``, and ``--worker 1 --reverse``).

Run: python research/decision_aw.py research/results/decision_aw.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

import numpy as np

from cut_seeds import rows_of
from decision_ac import BOUND, against_default, seconds_ratio, statistics
from decision_am import print_changed, run_variant
from decision_as import SEEDS, cells
from decision_m import RESULTS
from default_rows_machine import machine
from rows import worker_main

from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

#: The current default's rows on this machine (decision AU's; decision AV's if AV was adopted), and their variant.
BASELINE = (os.path.join(RESULTS, "decision_au.jsonl"), "AU")
#: The most AW's training steps may be, as a share of the default's, for it to be adopted.
STEPS_RATIO = 0.95
#: Training steps of the fits of this process since the last row, and the steps the default's rule chose (one per
#: pipeline that kept a GP part at stage 3).
COUNTS = {"selection": 0, "refit": 0, "lowest": []}
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
    one; the intervals do not move the RMSE this decision scores). Counts the training steps. Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("run", "advance", "refit", "acceptance", "calibration")}

    def run(self, ys, us):
        if set(self.kinds) == set(default_fit.FLOOR_KINDS):  # stage 3's pipeline; stage 3b's holds one kind
            STAGE_3["first"] = self
        return saved["run"](self, ys, us)

    def advance(self, n):
        COUNTS["selection"] += n * len(self.live_runs())
        return saved["advance"](self, n)

    def refit(self, floor, ys, us, steps, saved_state=None):
        COUNTS["refit"] += steps
        return saved["refit"](self, floor, ys, us, steps, saved_state)

    def acceptance(self, record):
        step, t, c = saved["acceptance"](self, record)
        self.aw_lowest = step
        if not step:
            return step, t, c
        COUNTS["lowest"].append(step)
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

    cls.run, cls.advance, cls.refit, cls.acceptance, cls.calibration = run, advance, refit, acceptance, calibration

    def undo():
        for name, value in saved.items():
            setattr(cls, name, value)
    return undo


def counted(key):
    """A row's extra item: ``COUNTS[key]`` of the fit just made (read, then reset for the next)."""
    def value(model):
        v, COUNTS[key] = COUNTS[key], ([] if key == "lowest" else 0)
        return v
    return value


def run(out, worker, workers, reverse=False):
    name = machine()
    extra = (("machine", lambda model: name),) + tuple((f"{k}_steps" if k != "lowest" else "lowest_error_steps",
                                                        counted(k)) for k in COUNTS)
    run_variant(out, "AW", cells(), aw_patch, reverse=reverse, extra=extra)


def decide(out):
    rows, default = rows_of(out, "AW"), rows_of(*BASELINE)
    pairs, missing = against_default("AW", rows, default, cells(), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, _ = statistics("AW over the default, seeds 1-4", pairs)
    print_changed(pairs, SEEDS)
    steps = {v: sum(r["selection_steps"] + r["refit_steps"] for k, r in rs.items() if k[0] in pairs)
             for v, rs in (("AW", rows), ("default", default))}
    ratio = steps["AW"] / steps["default"]
    print(f"  training steps over the complete cuts: AW {steps['AW']}, default {steps['default']} ({ratio:.3f} times)")
    moved = [(k, r["lowest_error_steps"], r["step"]) for k, r in sorted(rows.items()) if k[0] in pairs
             and r["lowest_error_steps"] and r["lowest_error_steps"][-1] != r["step"]]
    print(f"  cells whose refit step the rule moved (the lowest error's step -> AW's): {len(moved)}: {moved}")
    seconds_ratio("AW", rows, default, pairs)
    adopted = not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= STEPS_RATIO
    if missing:
        print(f"not run yet: {len(missing)} cells")
    print("AW adopted" if adopted else "AW not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
