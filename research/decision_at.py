"""Decision AT of research/ablation_plan.md (decision AO, the default fit's training runs with ensembles of 25
members per window, on four training seeds per cut): the 70/30 cuts of the 24 training halves other than the steam
generator, training seeds 1-4, scored on each cut's last 30 % under causal and simulate, against the default's rows
of the same machine (research/results/default_rows_amd.jsonl). One JSON line per (cut, seed), variant "AT",
appended (resumable), each naming the machine's CPU; two workers share the cells from both ends (``--worker 0``,
and ``--worker 1 --reverse``; ``--workers`` is not used).

Run: python research/decision_at.py research/results/decision_at.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import BOUND, against_default, seconds_ratio, statistics
from decision_am import print_changed, run_variant
from decision_ao import smaller_ensembles
from decision_as import SEEDS, cells
from decision_m import RESULTS
from default_rows_machine import machine
from rows import worker_main


def default_rows():
    """{(cut, seed): row} of the default fitted on this machine, seeds 1-4."""
    return rows_of(os.path.join(RESULTS, "default_rows_amd.jsonl"), "default")


def run(out, worker, workers, reverse=False):
    name = machine()
    run_variant(out, "AT", cells(), smaller_ensembles, reverse=reverse, extra=(("machine", lambda model: name),))


def decide(out):
    rows, default = rows_of(out, "AT"), default_rows()
    pairs, missing = against_default("AT", rows, default, cells(), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    print(f"machines: AT {sorted({r.get('machine', '?') for r in rows.values()})}, default "
          f"{sorted({r.get('machine', '?') for r in default.values()})}")
    bounds, _ = statistics("AT over the default, seeds 1-4", pairs)
    print_changed(pairs, SEEDS)
    for s in ((1, 2), (3, 4)):
        statistics(f"AT over the default, seeds {s}", {n: [p[k] for k in range(4) if SEEDS[k] in s]
                                                       for n, p in pairs.items()})
    ratio = seconds_ratio("AT", rows, default, pairs)
    adopted = not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= 0.75
    if missing:
        print(f"not run yet: {len(missing)} cells")
    print("AT adopted" if adopted else "AT not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
