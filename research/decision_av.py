"""Decision AV of research/ablation_plan.md (Adam's step on every parameter but the linear part's doubled: the
default plan's ``lr`` 0.02, the step-size candidates' factors on F, G, b halved, so that those keep their steps of
0.01 and 0.001): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored
on each cut's last 30 % under causal and simulate, against the current default's rows on the same machine
(``BASELINE``, decision AU's). One JSON line per (cut, seed), variant "AV", appended (resumable), each naming the
machine's CPU and the fit's training steps (the selection's, over its runs still training, and the refit's, stage
3b's included); two workers share the cells from both ends (``--worker 0``, and ``--worker 1 --reverse``).

Run: python research/decision_av.py research/results/decision_av.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import rows_of
from decision_ac import BOUND, against_default, seconds_ratio, statistics
from decision_am import print_changed, run_variant
from decision_as import SEEDS, cells
from decision_m import RESULTS
from default_rows_machine import machine
from rows import worker_main

from gpssm_np.models import default_fit

#: The current default's rows on this machine (decision AU's, which counted the same steps), and their variant.
BASELINE = (os.path.join(RESULTS, "decision_au.jsonl"), "AU")
#: AV's changes to the default plan: the base step doubled, the linear part's factors halved.
LINEAR = ("F", "G", "b")
PLAN = {"lr": 2 * default_fit.Plan.lr,
        "lr_scales": tuple({p: scales.get(p, 1.0) / 2 for p in LINEAR} for scales in default_fit.Plan.lr_scales)}
#: The most AV's training steps may be, as a share of the default's, for it to be adopted.
STEPS_RATIO = 0.90
#: Training steps of the fits of this process since the last row: the selection's (over its runs still training)
#: and the refit's.
COUNTS = {"selection": 0, "refit": 0}


def counting():
    """Count the training steps of ``default_fit.DefaultFit`` (nothing else changes): the selection's, and each
    refit's round(r s*) (``DefaultFit.refit_steps`` of the s* it is given; before decision AX the refit took s* steps
    and took them as its argument, which this counted, so rows written then by that code are counts of s*); returns
    the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("advance", "refit")}

    def advance(self, n):
        COUNTS["selection"] += n * len(self.live_runs())
        return saved["advance"](self, n)

    def refit(self, floor, ys, us, step, saved_state=None):
        COUNTS["refit"] += self.refit_steps(step)
        return saved["refit"](self, floor, ys, us, step, saved_state)

    cls.advance, cls.refit = advance, refit

    def undo():
        for name, value in saved.items():
            setattr(cls, name, value)
    return undo


def counted(counts, key):
    """A row's extra item: ``counts[key]`` of the fit just made (read, then reset for the next)."""
    def value(model):
        v = counts[key]
        counts[key] = type(v)()
        return v
    return value


def step_extra():
    """The row items of a decision ruled on training steps: the machine's CPU, and the steps :func:`counting`
    counted."""
    name = machine()
    return (("machine", lambda model: name),) + tuple((f"{k}_steps", counted(COUNTS, k)) for k in COUNTS)


def run(out, worker, workers, reverse=False):
    run_variant(out, "AV", cells(), counting, plan=PLAN, reverse=reverse, extra=step_extra())


def training_steps_ratio(variant, rows, default, cuts, seeds=None, label="training steps over the complete cuts"):
    """Print and return the training steps (selection and refit) of ``variant``'s ``rows`` over the ``default``'s
    ({(cut, seed): row}), summed over the ``cuts`` (any container of cut names) and, where given, ``seeds``."""
    steps = {v: sum(r["selection_steps"] + r["refit_steps"] for (n, s), r in rs.items()
                    if n in cuts and (seeds is None or s in seeds))
             for v, rs in ((variant, rows), ("default", default))}
    ratio = steps[variant] / steps["default"]
    print(f"  {label}: {variant} {steps[variant]}, default {steps['default']} ({ratio:.3f} times)")
    return ratio


def steps_verdict(variant, missing, bounds, means, ratio, steps_ratio, means_at_most=None):
    """Print the verdict of a decision ruled on training steps: adopted when no cell is ``missing``, both upper
    ``bounds`` are at most ``decision_ac.BOUND``, the steps' ``ratio`` is at most ``steps_ratio`` and the geometric
    ``means`` at most ``means_at_most`` ({protocol: most}, where given)."""
    adopted = not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= steps_ratio
    adopted = adopted and all(means[p] <= most for p, most in (means_at_most or {}).items())
    if missing:
        print(f"not run yet: {len(missing)} cells")
    print(f"{variant} adopted" if adopted else f"{variant} not adopted")


def decide_on_steps(out, variant, steps_ratio, extra=None, means_at_most=None):
    """The verdict of a decision ruled as AV is (module docstring) on ``variant``'s rows of ``out`` against
    :data:`BASELINE`'s: adopted when no cell is missing, both upper bounds are at most ``decision_ac.BOUND`` and
    the training steps at most ``steps_ratio`` times the default's (and, for an accuracy change, the geometric means
    at most ``means_at_most``, {protocol: most}); ``extra(rows, pairs)`` prints what the decision reports besides."""
    rows, default = rows_of(out, variant), rows_of(*BASELINE)
    pairs, missing = against_default(variant, rows, default, cells(), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, means = statistics(f"{variant} over the default, seeds 1-4", pairs)
    print_changed(pairs, SEEDS)
    ratio = training_steps_ratio(variant, rows, default, pairs)
    if extra is not None:
        extra(rows, pairs)
    seconds_ratio(variant, rows, default, pairs)
    steps_verdict(variant, missing, bounds, means, ratio, steps_ratio, means_at_most)


def decide(out):
    decide_on_steps(out, "AV", STEPS_RATIO)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
