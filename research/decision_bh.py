"""Decision BH of research/ablation_plan.md (both floors' pipelines on every fit): the 70/30 cuts of the 24 training
halves other than the steam generator, training seeds 1-4, against decision BC's rows (``decision_bd.baseline``).
The 39 cells whose BC row shows that stage 3b ran are the same computation under BH (the plan says why): their rows
are BC's, copied with variant "BH" and "copied" true (``--copy``); the two shortest of them are also fitted
(variant "BH-control"). The other 57 cells are fitted with ``default_fit.fit`` replaced by :func:`both_fit`. One JSON
line per (cut, seed), appended (resumable), with the machine's CPU, both pipelines' training steps and "touched" (1
where BH returned the other pipeline's model and the default would not have); two workers share the cells.

Run: python research/decision_bh.py research/results/decision_bh.jsonl --worker 0 --workers 2; once, --copy; then
--decide. This script is the research record's; nothing in the package imports it.
"""
import copy
import json
import os

import decision_av
from decision_bb import cells, decide_on_baseline
from decision_bd import baseline
from decision_m import held_out_row
from gpssm_np.models import default_fit
from gpssm_np.models.floor import FLOOR_KINDS
from gpssm_np.models.training import paired_t
from rows import pending, worker_main

VARIANT, CONTROL = "BH", "BH-control"
STEPS_RATIO = 1.75
MEANS_AT_MOST = {"causal": 0.98, "simulate": 1.00}
TOUCHED = {"touched": 0}


def returned_at(fit):
    """(record row, step-size candidate) of the model the pipeline ``fit`` (a finished ``DefaultFit``) returns: its
    s* and candidate where its GP part was kept and passed stage 4's guards, else its step 0 (the floor)."""
    if fit.accepted and fit.free_run is not None and fit.free_run["passed"]:
        return next(r for r in fit.record if r["step"] == fit.accepted), fit.candidate
    return fit.record[0], 0


def returned_error(fit):
    """The mean fold error of the model the finished pipeline ``fit`` returns (:func:`returned_at`)."""
    row, c = returned_at(fit)
    return row["candidates"][c]


class Second(default_fit.DefaultFit):
    """The other kind's pipeline under BH: its stage 3 keeps the GP part only where it also beats the first
    pipeline's step 0 by more than ``switch_t`` standard errors and the first pipeline's returned model in mean fold
    error (conditions (1)-(3) of the plan), so that its refit runs only then."""
    first = None

    def acceptance(self, record):
        step, t, c = super().acceptance(record)
        if not step:
            return step, t, c
        at = next(r for r in record if r["step"] == step)
        over_floor = paired_t(self.first.record[0]["windows"][0], at["windows"][c])
        if over_floor is None or over_floor <= self.plan.switch_t or at["candidates"][c] >= returned_error(self.first):
            return 0, t, 0
        return step, t, c


def other_kind(fit):
    """The kind BH's second pipeline trains from: the kind ``fit`` did not choose, where it has folds, both kinds
    were allowed and the other had a finite fold score (``DefaultFit.other_kind`` without "kept no GP part")."""
    if len(fit.record) < 2 or set(fit.kinds) != set(FLOOR_KINDS):
        return None
    other = next(kind for kind in fit.kinds if kind != fit.floor_choice["kind"])
    return other if fit.floor_scores.get(other, float("inf")) < float("inf") else None


def both_fit(model, ys, us, plan=default_fit.Plan(), progress=False, seed=0, checkpoint=None, resume=False,
             kinds=FLOOR_KINDS, dim_x=None):
    """``default_fit.fit`` under BH (the plan's rule); checkpoints are not used by the decision's fits."""
    pristine = copy.deepcopy(model)
    first = default_fit.DefaultFit(model, plan, progress, seed, checkpoint, resume, kinds, dim_x)
    selection = first.run(ys, us)
    other = other_kind(first)
    TOUCHED["touched"] = 0
    if other is None:
        return dict(selection, other_floor=None)
    fitted = None if first.fitted is None else {other: first.fitted[other]}
    second = Second(pristine, plan, progress, seed, None, False, (other,), dim_x, fitted)
    second.first = first
    theirs = second.run(ys, us)
    t = second.t_over(first)
    record = {"kind": other, "step": theirs["step"], "t": t, "kept": bool(theirs["step"])}
    if not record["kept"]:
        return dict(selection, other_floor=record)
    TOUCHED["touched"] = int(bool(first.accepted))  # the default ran no stage 3b after a kept (or dropped) part
    for name in ("spec", "params", "history_", "training_log_", "interval_scale_"):
        setattr(model, name, getattr(pristine, name))
    return dict(theirs, other_floor=dict(record, chosen=selection["floor"]))


def patch():
    """Replace ``default_fit.fit`` by :func:`both_fit` and count the training steps; returns the undo."""
    saved = default_fit.fit
    default_fit.fit = both_fit
    undo_counting = decision_av.counting()

    def undo():
        undo_counting()
        default_fit.fit = saved
    return undo


def split(copied_if):
    """(fitted, copied, controls): the cells a decision fits (longest first), those whose BC row ``copied_if(row)``
    says it would compute as the default does (their rows copied), and the two shortest copied cells, fitted as the
    control."""
    base = baseline()
    every = cells(base)
    copied = [c for c in every if copied_if(base[c])]
    return [c for c in every if c not in copied], copied, copied[-2:]


def ran_stage_3b(row):
    """Whether a BC row's fit ran stage 3b (its first pipeline kept no GP part): BH computes the default there."""
    return row["other_floor"] is not None


def run_split(out, worker, workers, reverse, copy_rows, copied_if, variant, control, patch, touched):
    """A decision's run over :func:`split`'s cells: with ``copy_rows`` the copied cells' BC rows appended as
    ``variant`` ("copied" true, "touched" 0); otherwise this worker's share of the fitted cells (``variant``) and the
    controls (``control``), fitted with the package patched by ``patch()`` (which returns the undo), each row with the
    machine, the training steps (``decision_av.step_extra``) and ``touched["touched"]``, the decision's count."""
    fitted, copied, controls = split(copied_if)
    if copy_rows:
        base = baseline()
        for cell in pending(out, copied, lambda c: (c[0], variant, c[1])):
            with open(out, "a") as f:
                f.write(json.dumps(dict(base[cell], variant=variant, copied=True, touched=0)) + "\n")
        return
    extra = decision_av.step_extra() + (("touched", decision_av.counted(touched, "touched")),)
    undo = patch()
    try:
        todo = [(c, variant) for c in fitted] + [(c, control) for c in controls]
        for (name, seed), v in pending(out, todo[worker::workers], lambda c: (c[0][0], c[1], c[0][1]), reverse):
            held_out_row(out, name, v, extra=extra, seed=seed)
    finally:
        undo()


def decide_split(out, variant, control, untouched_label, steps_ratio, means_at_most):
    """A decision's verdict against BC's rows (``decision_bb.decide_on_baseline``), after each ``control`` row's
    relative differences from the BC row of the same cell."""
    base = baseline()
    if os.path.exists(out):
        with open(out) as f:
            for r in map(json.loads, f):
                if r["variant"] == control:
                    d = base[r["data"], r["seed"]]
                    print(f"control {r['data']} seed {r['seed']}: relative difference from the BC row causal "
                          f"{r['causal'] / d['causal'] - 1:.2e}, simulate {r['simulate'] / d['simulate'] - 1:.2e}")
    decide_on_baseline(out, variant, "touched", untouched_label, steps_ratio, means_at_most, default=base)


def run(out, worker, workers, reverse=False, copy_rows=False):
    run_split(out, worker, workers, reverse, copy_rows, ran_stage_3b, VARIANT, CONTROL, patch, TOUCHED)


def decide(out, copy_rows=False):
    """The rule of research/ablation_plan.md, decision BH, after the control's differences from the BC rows."""
    decide_split(out, VARIANT, CONTROL, "returned the model the default returns", STEPS_RATIO, MEANS_AT_MOST)


def add_arguments(parser):
    parser.add_argument("--copy", dest="copy_rows", action="store_true", help="append the copied cells' rows")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
