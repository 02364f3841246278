"""Decision BE of research/ablation_plan.md (the natural step on q(u) as a third step-size candidate): the 70/30 cuts
of the 24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 % under
causal and simulate, against this machine's rows of the current default (decision BC's, research/results/
decision_bc.jsonl: BC is the default). One JSON line per (cut, seed), variant "BE", appended (resumable), each naming
the machine's CPU and the fit's training steps; two workers share the cells (``--worker k --workers 2``).

The candidate is carried in the plan's ``lr_scales`` as the key ``"_natural"`` (as decision AN carried its third
candidate, the key kept apart from the plan's check by ``decision_an.check_keeping``): :func:`natural_candidate`
makes the training run of such a candidate (its fold runs, stage 3b's, and the refit where it is chosen) step q_mu
and q_sqrt by decision BD's :class:`explore_natural_gradient.NaturalQ` and gives Adam the step factors without that
key; the other candidates' runs are the default's.

Run: python research/decision_be.py research/results/decision_be.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import decision_av
from decision_am import run_variant
from decision_an import TENTH, check_keeping
from decision_bb import cells
from decision_bd import GAMMA, REFERENCE_LENGTH, baseline, decide_accuracy_change
from explore_natural_gradient import patched
from rows import worker_main

from gpssm_np.models import default_fit, gpssm

PLAN = {"lr_scales": ({}, TENTH, dict(TENTH, _natural=1))}
SECONDS_RATIO = 1.35


def natural_candidate():
    """Patch the package for BE's third candidate (module docstring), the training steps counted
    (``decision_av.counting``); returns the undo."""
    adam = default_fit.Adam
    undo_step = patched(GAMMA, REFERENCE_LENGTH, psd=True)  # NaturalQ's factory, and the training step telling it
    natural, default_fit.Adam = default_fit.Adam, adam     # the windows; the optimiser is chosen per run below
    undo_counting = decision_av.counting()
    training_run, check = default_fit.DefaultFit.training_run, gpssm.GPSSM._check_lr_scale

    def run(self, model, warm, ys, us, seed, scales, *args, **kwargs):
        scales = dict(scales)
        default_fit.Adam = natural if scales.pop("_natural", None) else adam
        try:
            return training_run(self, model, warm, ys, us, seed, scales, *args, **kwargs)
        finally:
            default_fit.Adam = adam

    default_fit.DefaultFit.training_run = run
    gpssm.GPSSM._check_lr_scale = check_keeping(check, "_natural")

    def undo():
        default_fit.DefaultFit.training_run = training_run
        gpssm.GPSSM._check_lr_scale = check
        undo_counting()
        undo_step()
    return undo


def run(out, worker, workers, reverse=False):
    run_variant(out, "BE", cells(baseline())[worker::workers], natural_candidate, plan=PLAN, reverse=reverse,
                extra=decision_av.step_extra())


def decide(out):
    """The rule of research/ablation_plan.md, decision BE."""
    def third_candidate(rows):
        third = sorted(cell for cell, r in rows.items() if r["gp_part"] and "_natural" in (r["lr_scale"] or {}))
        print(f"  the third candidate's part kept on {len(third)} of {len(rows)} cells: {third}")

    decide_accuracy_change(out, "BE", SECONDS_RATIO, third_candidate)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
