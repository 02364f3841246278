"""Decision BB of research/ablation_plan.md (Adam's moments follow the objective's scale where the training windows
grow): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored on each
cut's last 30 % under causal and simulate, against this machine's default rows (research/results/
default_seeds12_here.jsonl for seeds 1 and 2, research/results/decision_ba.jsonl's "default" scores for seeds 3 and
4). One JSON line per (cut, seed), variant "BB", appended (resumable), each naming the machine's CPU, the fit's
training steps and how many window changes rescaled Adam's moments; two workers share the cells (``--worker k
--workers 2``).

Run: python research/decision_bb.py research/results/decision_bb.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import json
import os

import decision_av
from cut_seeds import rows_of, score_difference
from decision_ac import against_default, statistics
from decision_am import print_changed, run_variant
from decision_m import NAMES, RESULTS
from rows import worker_main

from gpssm_np import training_loop

SEEDS = (1, 2, 3, 4)
LEFT_OUT = "steamgen"
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
RESCALES = {"count": 0}


def baseline():
    """{(cut, seed): row} of this machine's default on seeds 1-4 (the module docstring's two files; a decision BA
    row's "default" scores, with the fit's GP part and steps, the refit's at round(r s*), which BA's patch did not
    change)."""
    rows = rows_of(os.path.join(RESULTS, "default_seeds12_here.jsonl"), "default", (1, 2))
    with open(os.path.join(RESULTS, "decision_ba.jsonl")) as f:
        for r in map(json.loads, f):
            if r["seed"] in (3, 4):
                # BA's refit_steps count its longer refit, extra_steps more than the default's round(r s*)
                rows[r["data"], r["seed"]] = dict(r, variant="default", refit_steps=r["refit_steps"] - r["extra_steps"],
                                                  **r["default"])
    return rows


def rescaling_patch():
    """BB's patch: where a ``GrowingRun``'s windows change from n to n' steps (their lengths as cut, at most the
    shortest sequence's), Adam's first moments are multiplied by n' / n and its second moments by (n' / n)^2, before
    the first step on the new windows; the training steps counted (``decision_av.counting``) and the rescalings that
    changed the moments too. Returns the undo."""
    saved = training_loop.GrowingRun.step
    undo_counting = decision_av.counting()

    def step(self):
        for start, seq_len in self.stages[1:]:
            if self.steps == start:
                # the windows' actual lengths: the run cuts them at the shortest sequence
                before = self.Y.shape[1]
                ratio = self.cut(seq_len)[0].shape[1] / before
                optimizer = self.optimizer
                optimizer._m = {key: m * ratio for key, m in optimizer._m.items()}
                optimizer._v = {key: v * ratio ** 2 for key, v in optimizer._v.items()}
                RESCALES["count"] += ratio != 1.0
        saved(self)

    training_loop.GrowingRun.step = step

    def undo():
        training_loop.GrowingRun.step = saved
        undo_counting()
    return undo


def cells(default=None):
    """The fitted cells, the longest fits of ``default`` ({(cut, seed): row}; None: :func:`baseline`) first."""
    default = baseline() if default is None else default
    mine = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    return sorted(mine, key=lambda cell: -default[cell]["fit_seconds"])


def run(out, worker, workers, reverse=False):
    extra = decision_av.step_extra() + (("rescalings", decision_av.counted(RESCALES, "count")),)
    run_variant(out, "BB", cells()[worker::workers], rescaling_patch, reverse=reverse, extra=extra)


def compare(variant, rows, default):
    """Print the statistics of ``variant``'s ``rows`` over ``default``'s ({(cut, seed): row}) on the 96 cells, seeds
    1-4 and each pair of seeds, and the changed cells; returns (pairs, missing, upper bounds, geometric means) as
    ``decision_ac.against_default`` and ``statistics`` give them, or None before any cut is complete."""
    every = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    pairs, missing = against_default(variant, rows, default, every, SEEDS)
    if not pairs:
        print("no complete cut yet")
        return None
    bounds, means = statistics(f"{variant} over the default, seeds 1-4", pairs)
    for part in ((1, 2), (3, 4)):
        statistics(f"  seeds {part[0]} and {part[1]} alone", {n: [p[SEEDS.index(s)] for s in part]
                                                               for n, p in pairs.items()})
    print_changed(pairs, SEEDS)
    return pairs, missing, bounds, means


def decide_on_baseline(out, variant, touched, untouched_label, steps_ratio, means_at_most=None, default=None):
    """The verdict of a decision whose rows (``out``, ``variant``) are compared with ``default`` ({(cut, seed): row};
    None: :func:`baseline`, the default before decision BC) on the 96 cells: the fits where the change did not act
    (row item ``touched`` 0), whose scores must equal the default's (``untouched_label`` says what they did not
    reach), :func:`compare`'s statistics, and the training steps on seeds 3 and 4 against ``steps_ratio``
    (``decision_av.steps_verdict``)."""
    rows, default = rows_of(out, variant), baseline() if default is None else default
    untouched = [cell for cell, r in rows.items() if r[touched] == 0]
    if untouched:
        rel = score_difference(*((rows[c], default[c]) for c in untouched))
        print(f"{len(untouched)} fits {untouched_label}; largest relative difference from the default's rows "
              f"{rel:.2e} (0 asked)")
    steps_rule(variant, rows, default, steps_ratio, means_at_most)


def steps_rule(variant, rows, default, steps_ratio, means_at_most=None):
    """:func:`compare`'s statistics of ``variant``'s ``rows`` over ``default``'s ({(cut, seed): row}) and the verdict
    on them and on the training steps on seeds 3 and 4 against ``steps_ratio`` (``decision_av.steps_verdict``)."""
    compared = compare(variant, rows, default)
    if compared is None:
        return
    pairs, missing, bounds, means = compared
    ratio = decision_av.training_steps_ratio(variant, rows, default, pairs, (3, 4),
                                             "training steps on seeds 3 and 4 over the complete cuts")
    decision_av.steps_verdict(variant, missing, bounds, means, ratio, steps_ratio, means_at_most)


def decide(out):
    decide_on_baseline(out, "BB", "rescalings", "reached no window change", STEPS_RATIO, MEANS_AT_MOST)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
