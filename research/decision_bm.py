"""Decision BM of research/ablation_plan.md (the refit continues the latest fold's model at s* instead of starting
from the floor): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored
on each cut's last 30 % under causal and simulate, against decision BK's rows (the current default). BM cannot act
where a BK row refits no GP part (refit_steps 0); those cells take their BK rows, and ``--check`` fits the shortest of
them with BM, which must equal its BK row. One JSON line per (cut, seed), variant "BM", appended (resumable), with the
machine's CPU, the training steps and "continued" (the refits that started from a fold's model); two workers share the
72 other cells, the default's longest fits first.

Run: python research/decision_bm.py research/results/decision_bm.jsonl --check (and --control: that cell with the
current default, the plan's first amendment); then with --worker 0 --workers 2 and --worker 1 --workers 2; then, the
plan's second amendment, the same with --untouched (BM where BK refits no GP part) and with --defaults (the current
default where BM refits one, variant "default-here"); then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os
from dataclasses import replace

import decision_av
from cut_seeds import rows_of, score_difference
from decision_am import run_variant
from decision_bb import cells, compare
from decision_bd import as_default
from decision_m import RESULTS
from rows import worker_main

from gpssm_np.models import default_fit

VARIANT, CONTROL, HERE = "BM", "default-control", "default-here"
STEPS_RATIO = 0.90
CONTINUED = {"continued": 0}


def baseline():
    """{(cut, seed): row} of the current default on seeds 1-4: decision BK's rows."""
    return as_default(rows_of(os.path.join(RESULTS, "decision_bk.jsonl"), "BK"))


def untouched(default):
    """The cells of ``default`` whose fits refit no GP part (BM cannot act there), shortest first."""
    return sorted((c for c, r in default.items() if r["refit_steps"] == 0), key=lambda c: default[c]["fit_seconds"])


def shifted(stages, offset):
    """The window ``stages`` ((start, length), ...) of a run that starts at step ``offset`` of their schedule: the
    length in force there from step 0, the later changes ``offset`` steps earlier."""
    first = [n for start, n in stages if start <= offset][-1]
    return ((0, first),) + tuple((start - offset, n) for start, n in stages if start > offset)


def patch():
    """BM's patch of ``default_fit.DefaultFit``: ``refit_steps`` round(r s*) - s* where s* > 0, and ``refit`` with s* >
    0 continuing the latest fold's run of the chosen candidate at s* (its kept parameters and jitter; the windows
    started from that fold's floor's filtered states on all the data) for those steps, on the default refit's window
    schedule from its step s* on; counted in CONTINUED. The training steps counted (``decision_av.counting``, applied
    after, so that it counts BM's steps). Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("refit", "refit_steps")}

    def refit_steps(self, step):
        return saved["refit_steps"](self, step) - step if step else 0

    def refit(self, floor, ys, us, step, saved_state=None):
        if not step or saved_state is not None:
            return saved["refit"](self, floor, ys, us, step, saved_state)
        model, plan = self.model, self.plan
        model.clear_training_record()
        latest = len(self.folds) - 1
        index = self.candidate * (len(self.runs) // len(plan.lr_scales)) + latest
        warm = model.start_from_floor(self.fold_floors[latest], ys, us, self.seed)
        model.spec = replace(model.spec, jitter=self.runs[index][0].spec.jitter)
        model.set_learned_params(self.kept[step][index])
        CONTINUED["continued"] += 1
        steps = self.refit_steps(step)
        if not steps:
            return
        with default_fit.blas_single_threaded():
            run = self.training_run(model, warm, ys, us, self.seed, plan.lr_scales[self.candidate], self.passes)
            run.stages = shifted(run.stages, step)
            run.Y, run.U, run.x0 = run.cut(run.stages[0][1])
            self.ahead.wait()
            while run.steps < steps:
                run.advance(min(plan.eval_every, steps - run.steps))
        model.set_learned_params(run.params())

    cls.refit, cls.refit_steps = refit, refit_steps
    undo_counting = decision_av.counting()

    def undo():
        undo_counting()
        for name, value in saved.items():
            setattr(cls, name, value)
    return undo


def run(out, worker, workers, reverse=False, check=False, control=False, defaults=False, touch=False):
    default = baseline()
    if control:  # the check cell with the current default (the plan's first amendment)
        run_variant(out, CONTROL, untouched(default)[:1], decision_av.counting, extra=decision_av.step_extra())
        return
    if defaults:  # the current default where BM refits a GP part (the second amendment)
        chosen = [c for c in cells(default) if c in refitted(out, default)][worker::workers]
        run_variant(out, HERE, chosen, decision_av.counting, reverse=reverse, extra=decision_av.step_extra())
        return
    spare = untouched(default)  # BM where BK refits no GP part: the shortest (the check), or all (second amendment)
    if check:
        chosen = spare[:1]
    else:
        chosen = [c for c in cells(default) if (c in spare) == touch][worker::workers]
    extra = decision_av.step_extra() + (("continued", decision_av.counted(CONTINUED, "continued")),)
    run_variant(out, VARIANT, chosen, patch, reverse=reverse, extra=extra)


def refitted(out, default):
    """The cells where BM refits a GP part: those whose BK rows refit one, and those of the others whose BM row here
    continued a refit."""
    mine = rows_of(out, VARIANT)
    return {c for c in default if default[c]["refit_steps"] > 0 or (c in mine and mine[c]["continued"] > 0)}


def add_arguments(parser):
    parser.add_argument("--check", action="store_true", help="the shortest cell BM cannot act on")
    parser.add_argument("--control", action="store_true", help="that cell with the current default")
    parser.add_argument("--defaults", action="store_true", help="the current default where BM refits a GP part")
    parser.add_argument("--untouched", dest="touch", action="store_true", help="BM where BK refits no GP part")


def decide(out, check=False, control=False, defaults=False, touch=False):
    """The rule of the plan: the check cell against its BK row (and against the current default's fit of it, the
    plan's first amendment); BM over BK's rows, deciding nothing; then BM over the default refitted here (the second
    amendment), where BM continued no refit its own row standing for both."""
    default, rows = baseline(), rows_of(out, VARIANT)
    for cell, r in rows_of(out, CONTROL).items():
        for label, other in (("its BK row", default[cell]), ("its BM row", rows.get(cell))):
            if other is not None:
                print(f"control {cell} (the current default): largest relative difference from {label} "
                      f"{score_difference((r, other)):.2e}")
    print("-- against BK's rows (deciding nothing; untouched cells not yet fitted here take their BK rows)")
    compare(VARIANT, {**{c: dict(default[c], variant=VARIANT) for c in untouched(default)}, **rows}, default)
    print("-- against the default refitted here (the rule)")
    here = as_default(rows_of(out, HERE))
    for cell, r in rows.items():
        if r["continued"] == 0 and cell not in here:
            here[cell] = dict(r, variant="default")
    compared = compare(VARIANT, rows, here)
    if compared is None:
        return
    pairs, missing, bounds, means = compared
    ratio = decision_av.training_steps_ratio(VARIANT, rows, here, pairs)
    changed = sorted(c for c in rows if c in here and rows[c]["gp_part"] != here[c]["gp_part"])
    print(f"  GP part kept or dropped otherwise than the default's (the guards): {changed}")
    decision_av.steps_verdict(VARIANT, missing, bounds, means, ratio, STEPS_RATIO)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
