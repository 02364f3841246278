"""Decision BG of research/ablation_plan.md (the squared-exponential kernel in the default fit): the 70/30 cuts of the
24 training halves other than the steam generator, training seeds 1-4, the default fit of ``ODGPSSM(kernel="se")``
scored on each cut's last 30 % under causal and simulate, against this machine's rows of the current default
(decision BC's, ``decision_bd.baseline``). One JSON line per (cut, seed), variant "BG", appended (resumable), each
with the machine's CPU and the fit's training steps; two workers share the cells (``--worker k --workers 2``).

Run: python research/decision_bg.py research/results/decision_bg.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import decision_av
from decision_bb import cells, decide_on_baseline
from decision_bd import baseline
from decision_m import held_out_row
from rows import pending, worker_main

VARIANT = "BG"
OPTIONS = {"kernel": "se"}
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}


def run(out, worker, workers, reverse=False):
    undo = decision_av.counting()
    try:
        for name, seed in pending(out, cells(baseline())[worker::workers], lambda c: (c[0], VARIANT, c[1]), reverse):
            held_out_row(out, name, VARIANT, extra=decision_av.step_extra() + (("kernel", lambda m: m.spec.kernel),),
                         options=OPTIONS, seed=seed)
    finally:
        undo()


def decide(out):
    """The rule of research/ablation_plan.md, decision BG (the row item "kernel" is "se" on every fit, none of which
    counts as untouched)."""
    decide_on_baseline(out, VARIANT, "kernel", "kept the Matern-5/2 kernel", STEPS_RATIO, MEANS_AT_MOST,
                       default=baseline())


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
