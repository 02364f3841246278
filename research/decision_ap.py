"""Decision AP of research/ablation_plan.md (the default fit's training runs with minibatches of 8 windows of 100
ensemble members each instead of 16 of 50: the same particles per step; the selection's scoring unchanged), on
training data only: the 70/30 cuts of the 25 training halves, training seeds 1 and 2, scored on each cut's last 30 %
under causal and simulate. The default's rows are decision AM's "default" rows (research/results/decision_am.jsonl,
fitted on this machine by the same default code). One JSON line per (cut, seed), variant "AP", appended (resumable;
two workers share the file with disjoint cells).

Run: python research/decision_ap.py research/results/decision_ap.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import against_default, meets_rule, print_targets, seconds_ratio, statistics
from decision_am import cut_cells, run_variant
from decision_ao import training_particles
from decision_m import RESULTS
from rows import worker_main

SEEDS = (1, 2)
BATCH, MEMBERS = 8, 100  # the default's 16 windows of 50 members: the same 800 particles per step


def run(out, worker, workers, reverse=False):
    run_variant(out, "AP", cut_cells(SEEDS)[worker::workers], lambda: training_particles(BATCH, MEMBERS),
                reverse=reverse)


def decide(out):
    ap, default = rows_of(out, "AP"), rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default")
    pairs, missing = against_default("AP", ap, default, cut_cells(SEEDS), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, geo = statistics("AP over the default", pairs)
    changed = sorted((n, s) for n, p in pairs.items() for s, (a, d) in zip(SEEDS, p) if a["gp_part"] != d["gp_part"])
    print(f"  GP part kept or not changed on {len(changed)} cells: {changed}")
    print_targets(pairs)
    ratio = seconds_ratio("AP", ap, default, pairs)
    adopted = not missing and meets_rule(geo, bounds) and ratio <= 1.25
    if missing:
        print(f"not run yet: {missing}")
    print("AP adopted" if adopted else "AP not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
