"""Decision AM of research/ablation_plan.md (each training output counted once against KL(q(u) || p(u)): the
"unbiased" data weight divided by the window length), on training data only: the 70/30 cuts of the 25 training
halves, training seeds 1 and 2, AM and the default both fitted on this machine, scored on each cut's last 30 % under
causal and simulate. One JSON line per (cut, variant, seed), appended (resumable; two workers share the file with
disjoint cells).

Run: python research/decision_am.py research/results/decision_am.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
from cut_seeds import rows_of
from decision_ac import meets_rule, print_cuts, print_targets, statistics
from decision_m import NAMES, held_out_row
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


def run_variant(out, variant, cells, patch, plan=None, reverse=False):
    """Fit ``variant`` (the package patched by ``patch()``, which returns the undo; ``plan``: changes to the default
    plan) on the (cut, seed) ``cells`` whose row ``out`` lacks, in order or last first with ``reverse``."""
    undo = patch()
    try:
        for name, seed in pending(out, cells, lambda cell: (cell[0], variant, cell[1]), reverse):
            held_out_row(out, name, variant, plan=plan, seed=seed)
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


def decide(out):
    am, default = rows_of(out, "AM"), rows_of(out, "default")
    missing = [(n, v, s) for n, v, s in cells() if (n, s) not in (am if v == "AM" else default)]
    names = [n for n in NAMES if all((n, s) in am and (n, s) in default for s in SEEDS)]
    pairs = {n: [(am[n, s], default[n, s]) for s in SEEDS] for n in names}
    print_cuts("AM", pairs, SEEDS)
    if not names:
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
