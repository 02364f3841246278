"""Decision BD of research/ablation_plan.md (natural-gradient steps on q(u), the target precision projected): the 70/30
cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 %
under causal and simulate, against this machine's rows of the current default (decision BC's, research/results/
decision_bc.jsonl: BC is the default). One JSON line per (cut, seed), variant "BD", appended (resumable), each naming
the machine's CPU, the fit's training steps and how many natural-gradient steps were retried at half the step; two
workers share the cells (``--worker k --workers 2``).

Run: python research/decision_bd.py research/results/decision_bd.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

import decision_av
from cut_seeds import rows_of
from decision_ac import meets_rule, seconds_ratio, verdict
from decision_am import run_variant
from decision_bb import cells, compare
from decision_m import RESULTS
from explore_natural_gradient import NaturalQ, patched
from rows import worker_main

GAMMA, REFERENCE_LENGTH = 0.001, 20
SECONDS_RATIO = 1.25
RETRIED = {"count": 0}


def as_default(rows):
    """``rows`` ({(cut, seed): row}) with each row's variant "default": a baseline's rows as decisions compare them."""
    return {cell: dict(r, variant="default") for cell, r in rows.items()}


def baseline():
    """{(cut, seed): row} of the current default on seeds 1-4: decision BC's rows (BC is the default fit)."""
    return as_default(rows_of(os.path.join(RESULTS, "decision_bc.jsonl"), "BC"))


def natural_patch():
    """BD's patch: every training run of the default fit (the selection's fold runs, stage 3b's, the refit) steps
    q(u) by :class:`explore_natural_gradient.NaturalQ` (gamma 0.001 x 20 / the windows' length, the target precision
    projected) and the rest by the candidate's Adam; the training steps counted (``decision_av.counting``) and the
    steps retried at half gamma. Returns the undo."""
    undo_patch = patched(GAMMA, REFERENCE_LENGTH, psd=True)
    undo_counting = decision_av.counting()
    saved = NaturalQ.step

    def step(self, params, grads):
        before = self.halvings
        new = saved(self, params, grads)
        RETRIED["count"] += self.halvings > before
        return new

    NaturalQ.step = step

    def undo():
        NaturalQ.step = saved
        undo_counting()
        undo_patch()
    return undo


def run(out, worker, workers, reverse=False):
    extra = decision_av.step_extra() + (("retried", decision_av.counted(RETRIED, "count")),)
    run_variant(out, "BD", cells(baseline())[worker::workers], natural_patch, reverse=reverse, extra=extra)


def decide_accuracy_change(out, variant, seconds_bound, extra=None):
    """The rule of an accuracy change against decision BC's rows (decisions BD, BE of research/ablation_plan.md):
    ``variant``'s rows of ``out`` over the default's, every cell in, causal <= 0.99, simulate <= 1.00, both upper
    bounds <= 1.02 and the fit seconds at most ``seconds_bound`` times; ``extra(rows)`` prints what the decision
    reports beside."""
    rows, default = rows_of(out, variant), baseline()
    compared = compare(variant, rows, default)
    if compared is None:
        return
    pairs, missing, bounds, means = compared
    if extra is not None:
        extra(rows)
    seconds = seconds_ratio(variant, rows, default, pairs)
    verdict(variant, missing, meets_rule(means, bounds) and seconds <= seconds_bound,
            f"causal {means['causal']:.4f}, simulate {means['simulate']:.4f} (0.99 and 1.00 asked), upper bounds "
            f"{bounds['causal']:.4f} and {bounds['simulate']:.4f} (1.02 asked), fit seconds {seconds:.2f} times "
            f"({seconds_bound} asked)")


def decide(out):
    """The rule of research/ablation_plan.md, decision BD."""
    decide_accuracy_change(out, "BD", SECONDS_RATIO)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
