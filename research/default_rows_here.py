"""The default fit on the 70/30 cuts of the 25 training halves with training seeds 3 and 4, on this machine (a
baseline for decisions with four seeds per cut, research/ablation_plan.md "the default on training seeds 3 and 4 of
the held-out cuts on this machine"), scored on each cut's last 30 % under causal and simulate. One JSON line per
(cut, seed), variant "default", appended (resumable; two workers share the file with disjoint cells).

Run: python research/default_rows_here.py research/results/default_seeds34.jsonl [--worker 0 --workers 2]
[--reverse]; ``--decide`` lists the cells without a row yet, deciding nothing. This script is the research
record's; nothing in the package imports it.
"""
from cut_seeds import rows_of
from decision_am import cut_cells, run_variant
from rows import worker_main

SEEDS = (3, 4)


def run(out, worker, workers, reverse=False):
    run_variant(out, "default", cut_cells(SEEDS)[worker::workers], reverse=reverse)


def decide(out):
    rows = rows_of(out, "default")
    missing = [cell for cell in cut_cells(SEEDS) if cell not in rows]
    print(f"{len(rows)} of {len(cut_cells(SEEDS))} cells have rows; not run yet: {missing}")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
