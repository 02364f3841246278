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
from decision_ac import BOUND, against_default, print_targets, seconds_ratio, statistics
from decision_am import cut_cells, run_variant
from decision_m import RESULTS
from rows import worker_main

from gpssm_np.models import default_fit

SEEDS = (1, 2)
MEMBERS = 25  # ensemble members per training window (the default's Plan.num_samples is 50)


def training_particles(batch_size, members):
    """Patch the default fit's training runs (its ``GrowingRun``s) to minibatches of ``batch_size`` windows of
    ``members`` ensemble members each; returns the undo. The selection's scoring reads ``Plan.num_samples``
    elsewhere and is unchanged."""
    growing_run = default_fit.GrowingRun

    def run(model, cut, stages, rng, optimizer, frozen, _batch_size, _num_samples, *rest):
        return growing_run(model, cut, stages, rng, optimizer, frozen, batch_size, members, *rest)

    default_fit.GrowingRun = run

    def undo():
        default_fit.GrowingRun = growing_run
    return undo


def smaller_ensembles():
    """AO's patch: :data:`MEMBERS` members per window, the default's 16 windows."""
    return training_particles(16, MEMBERS)


def run(out, worker, workers, reverse=False):
    run_variant(out, "AO", cut_cells(SEEDS)[worker::workers], smaller_ensembles, reverse=reverse)


def decide(out):
    ao, default = rows_of(out, "AO"), rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default")
    pairs, missing = against_default("AO", ao, default, cut_cells(SEEDS), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, _ = statistics("AO over the default", pairs)
    changed = sorted((n, s) for n, p in pairs.items() for s, (a, d) in zip(SEEDS, p) if a["gp_part"] != d["gp_part"])
    print(f"  GP part kept or not changed on {len(changed)} cells: {changed}")
    print_targets(pairs)
    ratio = seconds_ratio("AO", ao, default, pairs)
    adopted = not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= 0.75
    if missing:
        print(f"not run yet: {missing}")
    print("AO adopted" if adopted else "AO not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
