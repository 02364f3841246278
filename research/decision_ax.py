"""Decision AX of research/ablation_plan.md (the refit trained for as many passes over its data as the fold runs:
round(r s*) steps, its windows' growth scaled alike, r = the training data's steps over the mean of the GP folds'
training steps): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored
on each cut's last 30 % under causal and simulate, against the current default's rows on the same machine
(``decision_av.BASELINE``). One JSON line per (cut, seed), variant "AX", appended (resumable), each naming the
machine's CPU, the fit's training steps (the selection's, over its runs still training, and the refit's, stage 3b's
included) and r of every refit that trained a GP part; two workers share the cells from both ends (``--worker 0``,
and ``--worker 1 --reverse``).

Run: python research/decision_ax.py research/results/decision_ax.jsonl [--reverse]; then --decide. The patch is of
the code before the package adopted AX (ed42873, in a git worktree on PYTHONPATH): from 1b50826 on the package's own
refit takes the r s* steps (``default_fit.passes_ratio``, the twin of :func:`passes_ratio` here), and the patch
refuses to scale them a second time.
This script is the research record's; nothing in the package imports it.
"""
from dataclasses import replace

import numpy as np

from decision_av import counted, counting, decide_on_steps, step_extra
from decision_as import cells
from decision_am import run_variant
from rows import worker_main

from gpssm_np.datasets.folds import rolling_origin
from gpssm_np.models import default_fit

#: The most AX's training steps may be, as a share of the default's, and the most its geometric means may be, for it
#: to be adopted (its baseline is ``decision_av.BASELINE``: decision AU's rows).
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
#: r of every refit of the fit under way that trained a GP part.
RATIOS = {"ratios": []}


def passes_ratio(ys, us, plan):
    """r: the steps of ``ys`` (summed over its sequences) over the mean of the ``plan.gp_folds`` latest folds'
    training steps (the folds the selection trained on), at least 1."""
    folds = rolling_origin(ys, us, plan.origins)[-plan.gp_folds:]
    if not folds:
        return 1.0
    fold_steps = np.mean([sum(len(y) for y in fold.ys) for fold in folds])
    return max(1.0, sum(len(y) for y in ys) / fold_steps)


def ax_patch():
    """AX's patch of ``default_fit.DefaultFit``: a refit that trains a GP part takes round(r s*) steps with the
    windows' schedule of ``max_steps`` scaled by r (``DefaultFit.training_run`` reads the plan's); the training steps
    are counted (``decision_av.counting``, which sees the scaled steps). Returns the undo."""
    if hasattr(default_fit, "passes_ratio"):  # the package already refits for r s* steps (1b50826 on)
        raise RuntimeError("decision_ax: this gpssm_np already scales the refit by r; run the patch on ed42873's code")
    cls = default_fit.DefaultFit
    undo_counting = counting()
    saved = cls.refit

    def refit(self, floor, ys, us, steps, saved_state=None):
        if not steps:
            return saved(self, floor, ys, us, steps, saved_state)
        r = passes_ratio(ys, us, self.plan)
        RATIOS["ratios"].append(r)
        plan = self.plan
        self.plan = replace(plan, max_steps=int(round(r * plan.max_steps)))
        try:
            return saved(self, floor, ys, us, int(round(r * steps)), saved_state)
        finally:
            self.plan = plan

    cls.refit = refit

    def undo():
        cls.refit = saved
        undo_counting()
    return undo


def run(out, worker, workers, reverse=False):
    run_variant(out, "AX", cells(), ax_patch, reverse=reverse,
                extra=step_extra() + (("refit_ratios", counted(RATIOS, "ratios")),))


def print_ratios(rows, pairs):
    """Print the distribution of r over the refits that trained a GP part, and the cuts more than 5 % better."""
    r = [x for k, row in rows.items() if k[0] in pairs for x in row["refit_ratios"]]
    if r:
        print(f"  r over {len(r)} refits that trained a GP part: min {min(r):.3f}, median {np.median(r):.3f}, "
              f"max {max(r):.3f}")
    for protocol in ("causal", "simulate"):
        better = {c: np.exp(np.mean([np.log(a[protocol] / b[protocol]) for a, b in p])) for c, p in pairs.items()}
        print(f"  more than 5 % better under {protocol}: "
              + ", ".join(f"{c} {v:.3f}" for c, v in sorted(better.items(), key=lambda cv: cv[1]) if v < 0.95))


def decide(out):
    decide_on_steps(out, "AX", STEPS_RATIO, print_ratios, MEANS_AT_MOST)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
