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
import argparse

from cut_seeds import rows_of
from decision_am import cut_cells, run_variant
from rows import done_keys


def cells(seeds, after=None):
    """The (cut, seed) cells of ``seeds``; with the row file ``after``, those with a row there last, and the steam
    generator's after all."""
    every = cut_cells(seeds)
    if after is None:
        return every
    seen = done_keys(after, "data", "seed")
    return sorted(every, key=lambda cell: (cell[0] == "steamgen", cell in seen))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--reverse", action="store_true", help="this worker's cells last first")
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--after")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    mine = cells(args.seeds, args.after)
    if args.decide:
        rows = rows_of(args.out, "default")
        missing = [cell for cell in mine if cell not in rows]
        print(f"{len(rows)} of {len(mine)} cells have rows; not run yet: {missing}")
    else:
        run_variant(args.out, "default", mine[args.worker::args.workers], reverse=args.reverse)
