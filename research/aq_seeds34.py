"""Decision AQ's variant on training seeds 3 and 4 of the held-out cuts (research/ablation_plan.md, "decision AQ on
training seeds 3 and 4"; a check, deciding nothing): Adam's step on F and G at their fan-in
(``decision_aq.fan_in_steps``) on the 70/30 cuts of the 25 training halves, scored on each cut's last 30 % under
causal and simulate, against the default's rows of the same seeds (research/results/default_seeds34.jsonl), and
with decision AQ's rows of seeds 1 and 2 (against decision AM's default rows), four seeds per cut. One
JSON line per (cut, seed), variant "AQ", appended (resumable). The steam generator's two cells (about 50 minutes each
under AQ) come last in each worker's share.

Run: python research/aq_seeds34.py research/results/aq_seeds34.jsonl [--worker 0 --workers 2]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import against_default, seconds_ratio, statistics
from decision_am import cut_cells, print_changed, run_variant
from decision_aq import fan_in_steps
from decision_m import RESULTS
from rows import worker_main

SEEDS = (3, 4)
LAST = "steamgen"


def cells(worker, workers):
    """The worker's share of the (cut, seed) cells, the steam generator's last."""
    fast = [cell for cell in cut_cells(SEEDS) if cell[0] != LAST]
    slow = [cell for cell in cut_cells(SEEDS) if cell[0] == LAST]
    return fast[worker::workers] + slow[worker::workers]


def run(out, worker, workers, reverse=False):
    run_variant(out, "AQ", cells(worker, workers), fan_in_steps, reverse=reverse)


def decide(out):
    rows, default = rows_of(out, "AQ"), rows_of(os.path.join(RESULTS, "default_seeds34.jsonl"), "default")
    pairs, missing = against_default("AQ", rows, default, cut_cells(SEEDS), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    statistics("AQ over the default, seeds 3 and 4", pairs)
    print_changed(pairs, SEEDS)
    seconds_ratio("AQ", rows, default, pairs)
    if missing:
        print(f"not run yet: {missing}")
    earlier, _ = against_default("AQ", rows_of(os.path.join(RESULTS, "decision_aq.jsonl"), "AQ"),
                                 rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default"), [], (1, 2))
    both = {cut: earlier[cut] + pairs[cut] for cut in pairs if cut in earlier}
    statistics("AQ over the default, seeds 1-4", both)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
