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
from decision_ac import meets_rule
from decision_am import cut_cells, decide_variant, print_changed, run_variant
from decision_ao import training_particles
from rows import worker_main

SEEDS = (1, 2)
BATCH, MEMBERS = 8, 100  # the default's 16 windows of 50 members: the same 800 particles per step


def run(out, worker, workers, reverse=False):
    run_variant(out, "AP", cut_cells(SEEDS)[worker::workers], lambda: training_particles(BATCH, MEMBERS),
                reverse=reverse)


def decide(out):
    decide_variant(out, "AP", SEEDS, lambda geo, bounds, ratio: meets_rule(geo, bounds) and ratio <= 1.25,
                   lambda rows, pairs: print_changed(pairs, SEEDS))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
