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
from decision_ac import against_default, meets_rule, statistics
from decision_am import print_changed, run_variant
from decision_bb import LEFT_OUT, SEEDS, cells
from decision_m import NAMES, RESULTS
from explore_natural_gradient import NaturalQ, patched
from rows import worker_main

GAMMA, REFERENCE_LENGTH = 0.001, 20
SECONDS_RATIO = 1.25
RETRIED = {"count": 0}


def baseline():
    """{(cut, seed): row} of the current default on seeds 1-4: decision BC's rows (BC is the default fit)."""
    return {cell: dict(r, variant="default") for cell, r in
            rows_of(os.path.join(RESULTS, "decision_bc.jsonl"), "BC").items()}


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


def decide(out):
    """The rule of research/ablation_plan.md, decision BD."""
    rows, default = rows_of(out, "BD"), baseline()
    every = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    pairs, missing = against_default("BD", rows, default, every, SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, means = statistics("BD over the default, seeds 1-4", pairs)
    for part in ((1, 2), (3, 4)):
        statistics(f"  seeds {part[0]} and {part[1]} alone", {n: [p[SEEDS.index(s)] for s in part]
                                                               for n, p in pairs.items()})
    print_changed(pairs, SEEDS)
    done = [c for c in every if c in rows]
    seconds = sum(rows[c]["fit_seconds"] for c in done) / sum(default[c]["fit_seconds"] for c in done)
    print(f"fit seconds over the {len(done)} fitted cells: {seconds:.3f} of the default's ({SECONDS_RATIO} at most)")
    if missing:
        print(f"{len(missing)} cells missing: nothing is decided")
        return
    adopted = meets_rule(means, bounds) and seconds <= SECONDS_RATIO
    print("BD " + ("adopted" if adopted else "not adopted"))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
