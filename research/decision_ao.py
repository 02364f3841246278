"""Decision AO of research/ablation_plan.md (the default fit's training runs with ensembles of 25 members per window
instead of 50; the selection's scoring unchanged), on training data only: the 70/30 cuts of the 25 training halves,
training seeds 1 and 2, scored on each cut's last 30 % under causal and simulate. The default's rows are decision
AM's "default" rows (research/results/decision_am.jsonl, fitted on this machine by the same default code). One JSON
line per (cut, seed), variant "AO", appended (resumable; two workers share the file with disjoint cells).

Run: python research/decision_ao.py research/results/decision_ao.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
from decision_ac import BOUND
from decision_am import cut_cells, decide_variant, print_changed, run_variant
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
    def rule(geo, bounds, ratio):  # AH's bounds for a saving, and the time it must save
        return bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= 0.75

    decide_variant(out, "AO", SEEDS, rule, lambda rows, pairs: print_changed(pairs, SEEDS))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
