"""Decision BL of research/ablation_plan.md (the GP residual's mean started at the one-step regression of the floor's
residuals): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored on each
cut's last 30 % under causal and simulate, against decision BK's rows (the current default). One JSON line per (cut,
seed), variant "BL", appended (resumable), with the machine's CPU, the training steps and "touched" (the training runs
whose q_mu the regression set); two workers share the cells, the default's longest fits first. ``--controls``: the
two cells with the shortest BK fits fitted with the current default (variant "default-control"), which must equal
their BK rows; ``--defaults``: every cell with the current default (variant "default-here"), the plan's baseline
where the controls do not equal their rows.

Run: python research/decision_bl.py research/results/decision_bl.jsonl --controls; then with --worker 0 --workers 2
and --worker 1 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

import decision_av
from cut_seeds import rows_of, score_difference
from decision_am import run_variant
from decision_bb import cells, steps_rule
from decision_bd import as_default
from decision_m import RESULTS
from explore_regression_start import regression_start
from rows import worker_main

VARIANT, CONTROL, HERE = "BL", "default-control", "default-here"
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
TOUCHED = {"touched": 0}


def baseline():
    """{(cut, seed): row} of the current default on seeds 1-4: decision BK's rows."""
    return as_default(rows_of(os.path.join(RESULTS, "decision_bk.jsonl"), "BK"))


def patch():
    """BL's patch: every start from a floor with a GP part (A not all 0: ``GPSSM.start_from_floor`` with gp_share > 0)
    ends with q_mu at ``explore_regression_start.residual_regression``, in every training run of the default fit
    (``explore_regression_start.regression_start``, counting them in TOUCHED); the training steps counted
    (``decision_av.counting``). Returns the undo."""
    undo_start, undo_counting = regression_start(TOUCHED), decision_av.counting()

    def undo():
        undo_start()
        undo_counting()
    return undo


def controls(default):
    """The two cells of ``default`` with the shortest fits."""
    return sorted(default, key=lambda cell: default[cell]["fit_seconds"])[:2]


def run(out, worker, workers, reverse=False, control=False, defaults=False):
    default = baseline()
    extra = decision_av.step_extra()
    if control or defaults:
        chosen = controls(default) if control else cells(default)[worker::workers]
        run_variant(out, CONTROL if control else HERE, chosen, decision_av.counting, reverse=reverse, extra=extra)
        return
    extra += (("touched", decision_av.counted(TOUCHED, "touched")),)
    run_variant(out, VARIANT, cells(default)[worker::workers], patch, reverse=reverse, extra=extra)


def add_arguments(parser):
    parser.add_argument("--controls", dest="control", action="store_true", help="the baseline's two controls")
    parser.add_argument("--defaults", action="store_true", help="every cell with the current default")


def decide(out, control=False, defaults=False):
    """The rule of the plan: the controls against their BK rows, then BL against BK's rows (or, where the controls
    differ, against the default refitted here)."""
    default, checked = baseline(), rows_of(out, CONTROL)
    for cell, r in sorted(checked.items()):
        rel = score_difference((r, default[cell]))
        print(f"control {cell}: largest relative difference from its BK row {rel:.2e} (0 asked)")
    if len(checked) < 2:
        print("not decided: the controls are not in")
        return
    if any(r[p] != default[cell][p] for cell, r in checked.items() for p in ("causal", "simulate")):
        print("the controls differ from their BK rows: BL is compared with the default refitted here")
        default = as_default(rows_of(out, HERE))
    steps_rule(VARIANT, rows_of(out, VARIANT), default, STEPS_RATIO, MEANS_AT_MOST)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
