"""Decision AQ of research/ablation_plan.md (Adam's step on the linear part at its fan-in: the step-size factors of F
divided by d_x and those of G by d_u, on top of each candidate's), on training data only: the 70/30 cuts of the 25
training halves, training seeds 1 and 2, scored on each cut's last 30 % under causal and simulate. The default's rows
are decision AM's "default" rows (research/results/decision_am.jsonl, fitted on this machine by the same default
code). One JSON line per (cut, seed), variant "AQ", appended (resumable; two workers share the file with disjoint
cells).

Run: python research/decision_aq.py research/results/decision_aq.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
from decision_ac import meets_rule
from decision_am import cut_cells, decide_variant, print_changed, run_variant
from rows import worker_main

from gpssm_np.models import default_fit

SEEDS = (1, 2)


def fan_in(scales, model):
    """``scales`` (a step-size candidate, ``optim.Adam``'s factors) with F's factor divided by d_x and G's by d_u,
    the number of inputs each row of them reads; b and every other parameter as they are."""
    fans = {"F": model.spec.dim_x, "G": model.spec.dim_u}
    scaled = dict(scales)
    for name, n in fans.items():
        if name in model.params and n > 1:
            scaled[name] = scaled.get(name, 1.0) / n
    return scaled


def fan_in_steps():
    """AQ's patch: every training run of the default fit (the selection's fold runs, stage 3b's, the refit) with
    its candidate's factors at the fan-in (:func:`fan_in`); returns the undo."""
    training_run = default_fit.DefaultFit.training_run

    def run(self, model, warm, ys, us, seed, scales):
        return training_run(self, model, warm, ys, us, seed, fan_in(scales, model))

    default_fit.DefaultFit.training_run = run

    def undo():
        default_fit.DefaultFit.training_run = training_run
    return undo


def run(out, worker, workers, reverse=False):
    run_variant(out, "AQ", cut_cells(SEEDS)[worker::workers], fan_in_steps, reverse=reverse)


def decide(out):
    decide_variant(out, "AQ", SEEDS, lambda geo, bounds, ratio: meets_rule(geo, bounds) and ratio <= 1.25,
                   lambda rows, pairs: print_changed(pairs, SEEDS))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
