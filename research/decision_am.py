"""Decision AM of research/ablation_plan.md (each training output counted once against KL(q(u) || p(u)): the
"unbiased" data weight divided by the window length), on training data only: the 70/30 cuts of the 25 training
halves, training seeds 1 and 2, AM and the default both fitted on this machine, scored on each cut's last 30 % under
causal and simulate. One JSON line per (cut, variant, seed), appended (resumable; two workers share the file with
disjoint cells).

Run: python research/decision_am.py research/results/decision_am.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import against_default, meets_rule, print_targets, seconds_ratio, statistics
from decision_m import NAMES, RESULTS, held_out_row
from diagnose_fold_fit import kl_once
from rows import pending, worker_main

SEEDS = (1, 2)
VARIANTS = ("AM", "default")
SLOW = ("steamgen", "wiener", "deadzone_backlash", "three_tanks")  # the longest fits first, split between workers


def cut_cells(seeds):
    """(cut, seed) of every cut and each of ``seeds``, the longest fits (:data:`SLOW`) first."""
    return [(n, s) for n in list(SLOW) + [n for n in NAMES if n not in SLOW] for s in seeds]


def cells():
    return [(n, v, s) for n, s in cut_cells(SEEDS) for v in VARIANTS]


def run_variant(out, variant, cells, patch=None, plan=None, reverse=False, extra=()):
    """Fit ``variant`` (the package patched by ``patch()``, which returns the undo, where given; ``plan``: changes
    to the default plan) on the (cut, seed) ``cells`` whose row ``out`` lacks, in order or last first with
    ``reverse``; ``extra``: what each row records besides (:func:`decision_m.held_out_row`)."""
    undo = patch() if patch is not None else (lambda: None)
    try:
        for name, seed in pending(out, cells, lambda cell: (cell[0], variant, cell[1]), reverse):
            held_out_row(out, name, variant, extra=extra, plan=plan, seed=seed)
    finally:
        undo()


def run(out, worker, workers, reverse=False):
    for name, variant, seed in pending(out, cells()[worker::workers], reverse=reverse):
        undo = kl_once() if variant == "AM" else None
        try:
            held_out_row(out, name, variant, seed=seed)
        finally:
            if undo is not None:
                undo()


def decide_variant(out, variant, seeds, rule, extra=None):
    """The verdict of a decision whose rows (``out``, ``variant``, training ``seeds``) are compared with this
    decision's "default" rows: the cuts (:func:`decision_ac.against_default`), the statistics, ``extra(rows,
    pairs)`` (what the decision prints beside them), the fit seconds, and adopted when no cell is missing and
    ``rule(geometric means, upper bounds, fit-seconds ratio)`` holds."""
    rows, default = rows_of(out, variant), rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default")
    pairs, missing = against_default(variant, rows, default, cut_cells(seeds), seeds)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, geo = statistics(f"{variant} over the default", pairs)
    if extra is not None:
        extra(rows, pairs)
    ratio = seconds_ratio(variant, rows, default, pairs)
    adopted = not missing and rule(geo, bounds, ratio)
    if missing:
        print(f"not run yet: {missing}")
    print(f"{variant} adopted" if adopted else f"{variant} not adopted")


def print_changed(pairs, seeds):
    """Print the cells of ``pairs`` (:func:`decision_ac.against_default`) where the GP part was kept by one of the
    variant and the default only, and the target sets' ratios."""
    changed = sorted((n, s) for n, p in pairs.items() for s, (a, d) in zip(seeds, p) if a["gp_part"] != d["gp_part"])
    print(f"  GP part kept or not changed on {len(changed)} cells: {changed}")
    print_targets(pairs)


def decide(out):
    am, default = rows_of(out, "AM"), rows_of(out, "default")
    missing = [(n, v, s) for n, v, s in cells() if (n, s) not in (am if v == "AM" else default)]
    pairs, _ = against_default("AM", am, default, cut_cells(SEEDS), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, geo = statistics("AM over the default", pairs)
    print_targets(pairs)
    for variant, rows in (("AM", am), ("default", default)):
        print(f"  {variant}: fit seconds {sum(r['fit_seconds'] for r in rows.values()):.0f} over {len(rows)} fits")
    adopted = not missing and meets_rule(geo, bounds)
    if missing:
        print(f"not run yet: {missing}")
    print("AM adopted" if adopted else "AM not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
