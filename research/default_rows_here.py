"""The default fit on the 70/30 cuts of the 25 training halves with training seeds 3 and 4 (``--seeds`` others), on
this machine (a baseline for decisions with four seeds per cut, research/ablation_plan.md "the default on training
seeds 3 and 4 of the held-out cuts on this machine"), scored on each cut's last 30 % under causal and simulate. One
JSON line per (cut, seed), variant "default", appended (resumable; two workers share the file with disjoint cells).
``--after FILE`` fits the cells that have a row in the row file FILE last (another run's rows of this machine's
default: the cells without come first), and the steam generator's, the longest fits, after all.

Run: python research/default_rows_here.py research/results/default_seeds34.jsonl [--worker 0 --workers 2]
[--reverse] [--seeds 1 2] [--after FILE]; ``--decide`` lists the cells without a row yet, deciding nothing. This
script is the research record's; nothing in the package imports it.
"""
from cut_seeds import rows_of
from decision_am import cut_cells, run_variant
from rows import done_keys, worker_main


def cells(seeds, after=None):
    """The (cut, seed) cells of ``seeds``; with the row file ``after``, those with a row there last, and the steam
    generator's after all."""
    every = cut_cells(seeds)
    if after is None:
        return every
    seen = done_keys(after, "data", "seed")
    return sorted(every, key=lambda cell: (cell[0] == "steamgen", cell in seen))


def run(out, worker, workers, reverse, seeds, after):
    run_variant(out, "default", cells(seeds, after)[worker::workers], reverse=reverse)


def decide(out, seeds, after):
    mine = cells(seeds, after)
    rows = rows_of(out, "default")
    missing = [cell for cell in mine if cell not in rows]
    print(f"{len(rows)} of {len(mine)} cells have rows; not run yet: {missing}")


def add_arguments(parser):
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--after")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
