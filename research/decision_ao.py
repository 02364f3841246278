"""Decision AO of research/ablation_plan.md (the default fit's training runs with ensembles of 25 members per window
instead of 50; the selection's scoring unchanged), on training data only: the 70/30 cuts of the 25 training halves,
training seeds 1 and 2, scored on each cut's last 30 % under causal and simulate. The default's rows are decision
AM's "default" rows (research/results/decision_am.jsonl, fitted on this machine by the same default code). One JSON
line per (cut, seed), variant "AO", appended (resumable; two workers share the file with disjoint cells).

Run: python research/decision_ao.py research/results/decision_ao.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import print_cuts, statistics, BOUND
from decision_am import SLOW
from decision_m import NAMES, RESULTS, held_out_row
from rows import pending, worker_arguments

from gpssm_np.models import default_fit

SEEDS = (1, 2)
MEMBERS = 25  # ensemble members per training window (the default's Plan.num_samples is 50)
TARGETS = ("reactor", "two_mass", "drive", "dryer2", "ballbeam")


def smaller_ensembles():
    """Patch the default fit's training runs (its ``GrowingRun``s) to MEMBERS members per window; returns the undo.
    The selection's scoring reads ``Plan.num_samples`` elsewhere and is unchanged."""
    growing_run = default_fit.GrowingRun

    def run(model, cut, stages, rng, optimizer, frozen, batch_size, num_samples, *rest):
        return growing_run(model, cut, stages, rng, optimizer, frozen, batch_size, MEMBERS, *rest)

    default_fit.GrowingRun = run

    def undo():
        default_fit.GrowingRun = growing_run
    return undo


def cells():
    names = list(SLOW) + [n for n in NAMES if n not in SLOW]
    return [(n, s) for n in names for s in SEEDS]


def run(out, worker, workers, reverse=False):
    undo = smaller_ensembles()
    try:
        for name, seed in pending(out, cells()[worker::workers], lambda cell: (cell[0], "AO", cell[1]), reverse):
            held_out_row(out, name, "AO", seed=seed)
    finally:
        undo()


def decide(out):
    ao, default = rows_of(out, "AO"), rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default")
    missing = [(n, s) for n, s in cells() if (n, s) not in ao]
    names = [n for n in NAMES if all((n, s) in ao and (n, s) in default for s in SEEDS)]
    pairs = {n: [(ao[n, s], default[n, s]) for s in SEEDS] for n in names}
    print_cuts("AO", pairs, SEEDS)
    if not names:
        print("no complete cut yet")
        return
    bounds, _ = statistics("AO over the default", pairs)
    changed = sorted((n, s) for n in names for s, (a, d) in zip(SEEDS, pairs[n]) if a["gp_part"] != d["gp_part"])
    print(f"  GP part kept or not changed on {len(changed)} cells: {changed}")
    for n in TARGETS:
        if n in pairs:
            print(f"  {n}: causal " + ", ".join(f"{a['causal'] / d['causal']:.3f}" for a, d in pairs[n]))
    seconds = {v: sum(r["fit_seconds"] for k, r in rows.items() if k[0] in names)
               for v, rows in (("AO", ao), ("default", default))}
    print(f"  fit seconds over the complete cuts: AO {seconds['AO']:.0f}, default {seconds['default']:.0f} "
          f"({seconds['AO'] / seconds['default']:.2f} times)")
    adopted = (not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND
               and seconds["AO"] <= 0.75 * seconds["default"])
    if missing:
        print(f"not run yet: {missing}")
    print("AO adopted" if adopted else "AO not adopted")


if __name__ == "__main__":
    args = worker_arguments(__doc__.splitlines()[0])
    if args.decide:
        decide(args.out)
    else:
        run(args.out, args.worker, args.workers, args.reverse)
