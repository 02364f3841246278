"""The default fit on the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4,
on the machine that runs it (research/ablation_plan.md, "the default on the held-out cuts on a second machine"),
scored on each cut's last 30 % under causal and simulate, each row naming the machine's CPU ("machine"). One JSON
line per (cut, seed), variant "default", appended (resumable). The cells are decision AS's, the longest fits
first; two workers share them from both ends (``--worker 0``, and ``--worker 1 --reverse``; ``--workers`` is not
used).

``--decide`` compares the rows with the default's rows of the Intel Xeon machine (decision AM's "default" rows for
seeds 1 and 2, research/results/default_seeds34.jsonl for 3 and 4), deciding nothing: how many cells repeat their
selection (floor, step, GP part kept) and their scores to every digit, and the geometric means of this machine's
scores over those, each cut's seeds averaged in log, with their upper bounds: the spread a change that does nothing
shows between two machines.

Run: python research/default_rows_machine.py research/results/default_rows_amd.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import platform

from cut_seeds import rows_of
from decision_ac import against_default, seconds_ratio, statistics
from decision_as import cells, default_rows
from decision_m import held_out_row
from rows import pending, worker_main

SELECTION = ("floor", "step", "gp_part")


def machine():
    """The CPU's model name (/proc/cpuinfo), or the platform's processor where that cannot be read."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def run(out, worker, workers, reverse=False):
    name = machine()
    for cut, seed in pending(out, cells(), lambda cell: (cell[0], "default", cell[1]), reverse):
        held_out_row(out, cut, "default", extra=(("machine", lambda model: name),), seed=seed)


def decide(out):
    rows, other = rows_of(out, "default"), default_rows()
    machines = sorted({r.get("machine", "?") for r in rows.values()})
    common = [cell for cell in cells() if cell in rows]
    same = [c for c in common if all(rows[c][k] == other[c][k] for k in SELECTION)]
    digits = [c for c in same if all(rows[c][p] == other[c][p] for p in ("causal", "simulate"))]
    print(f"{len(rows)} of {len(cells())} cells have rows ({', '.join(machines)}); the same selection as the Xeon "
          f"rows on {len(same)}, the same scores to every digit on {len(digits)}")
    changed = [(c, {k: (other[c][k], rows[c][k]) for k in SELECTION if rows[c][k] != other[c][k]})
               for c in common if c not in same]
    for cell, diff in changed:
        print(f"  {cell}: {diff}")
    pairs, _ = against_default("this machine", rows, other, cells(), (1, 2, 3, 4))
    if pairs:
        statistics("this machine over the Xeon rows", pairs)
        seconds_ratio("this machine", rows, other, pairs)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
