"""Decision AU of research/ablation_plan.md (each step-size candidate of the default fit's selection stops when its
own fold error has not improved for ``patience`` evaluations; the selection as a whole stops as now): the 70/30 cuts
of the 24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 % under
causal and simulate, against the current default's rows on the same machine (``BASELINE``). One JSON line per
(cut, seed), variant "AU", appended (resumable), each naming the machine's CPU and the fit's training steps; two
workers share the cells from both ends (``--worker 0``, and ``--worker 1 --reverse``).

Run: python research/decision_au.py research/results/decision_au.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os
from functools import partial

import numpy as np

from cut_seeds import rows_of
from decision_ac import BOUND, against_default, seconds_ratio, statistics
from decision_am import print_changed, run_variant
from decision_as import SEEDS, cells
from decision_m import RESULTS
from default_rows_machine import machine
from rows import worker_main

from gpssm_np.models import default_fit
from gpssm_np.ops.threads import run_tasks

#: The current default's rows on this machine, and their variant name.
BASELINE = (os.path.join(RESULTS, "default_rows_amd.jsonl"), "default")
#: Training steps of the fits of this process since the last row: the selection's (over its runs), what the
#: selection's would have been had every candidate run until the selection stopped ("full"), and the refit's; and
#: the step at which each candidate stopped early (None: it ran until the selection stopped), per pipeline.
COUNTS = {"selection": 0, "full": 0, "refit": 0, "stopped": []}


def candidate_patience():
    """AU's patch of ``default_fit.DefaultFit``: the runs of a step-size candidate whose mean fold error has not
    fallen below its own lowest for ``plan.patience`` evaluations are neither trained nor scored again (their
    record entries are inf from then on, so stage 3 cannot choose them at a later step); everything else as the
    default. Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("advance", "evaluate", "refit")}

    def live(self):
        per = len(self.runs) // len(self.plan.lr_scales)
        return [k for k in range(len(self.runs)) if self.au["stopped"][k // per] is None]

    def advance(self, n):
        ks = live(self)
        COUNTS["selection"] += n * len(ks)
        COUNTS["full"] += n * len(self.runs)
        run_tasks([partial(self.runs[k][1].advance, n) for k in ks])

    def evaluate(self, step):
        self.filter_ahead.wait()
        candidates, plan = len(self.plan.lr_scales), self.plan
        per = len(self.runs) // candidates
        if step == 0:
            self.au = {"best": [np.inf] * candidates, "since": [0] * candidates, "stopped": [None] * candidates}
            COUNTS["stopped"].append(self.au)
        au, ks = self.au, live(self)
        au["last"] = step
        errors = dict(zip(ks, run_tasks([partial(self.runs[k][1].scored, self.runs[k][2].window_scores)
                                         for k in ks])))
        groups, means = [], []
        for c in range(candidates):
            if au["stopped"][c] is not None:
                groups.append([np.inf] * au["windows"])
                means.append(np.inf)
                continue
            g = [e for k in range(c * per, (c + 1) * per) for e in errors[k]]
            m = float(np.mean(g))
            m = m if np.isfinite(m) else np.inf
            if m < au["best"][c]:
                au["best"][c], au["since"][c] = m, 0
            else:
                au["since"][c] += 1
            if step and au["since"][c] >= plan.patience:
                au["stopped"][c] = step
            au["windows"] = len(g)
            groups.append(g)
            means.append(m)
        self.record.append({"step": step, "rmse": min(means), "candidates": means, "windows": groups})
        return self.record[-1]["rmse"]

    def refit(self, floor, ys, us, steps, saved_state=None):
        COUNTS["refit"] += steps
        return saved["refit"](self, floor, ys, us, steps, saved_state)

    cls.advance, cls.evaluate, cls.refit = advance, evaluate, refit

    def undo():
        for name, value in saved.items():
            setattr(cls, name, value)
    return undo


def counted(key):
    """A row's extra item: ``COUNTS[key]`` of the fit just made (read, then reset for the next)."""
    def value(model):
        v = COUNTS[key]
        COUNTS[key] = [] if key == "stopped" else 0
        if key == "stopped":  # a candidate that stopped at the selection's last evaluation ran to its end
            return [[x if x is not None and x < au["last"] else None for x in au["stopped"]] for au in v]
        return v
    return value


EXTRA = tuple((f"{key}_steps" if key != "stopped" else key, counted(key)) for key in ("selection", "full", "refit",
                                                                                          "stopped"))


def default_rows():
    """{(cut, seed): row} of the current default on this machine, seeds 1-4 (:data:`BASELINE`)."""
    return rows_of(*BASELINE)


def run(out, worker, workers, reverse=False):
    name = machine()
    run_variant(out, "AU", cells(), candidate_patience, reverse=reverse,
                extra=(("machine", lambda model: name),) + EXTRA)


def decide(out):
    rows, default = rows_of(out, "AU"), default_rows()
    pairs, missing = against_default("AU", rows, default, cells(), SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, _ = statistics("AU over the default, seeds 1-4", pairs)
    print_changed(pairs, SEEDS)
    done = [r for k, r in rows.items() if k[0] in pairs]
    steps = sum(r["selection_steps"] + r["refit_steps"] for r in done)
    full = sum(r["full_steps"] + r["refit_steps"] for r in done)
    ratio = steps / full
    selection = sum(r["selection_steps"] for r in done) / sum(r["full_steps"] for r in done)
    print(f"  training steps over the complete cuts: AU {steps}, every candidate to the selection's end {full} "
          f"({ratio:.3f} times; the selection's alone {selection:.3f})")
    early = {k for k, r in rows.items() if any(x is not None for p in r["stopped"] for x in p)}
    print(f"  cells where a candidate stopped early: {len(early)}")
    scores = [k for k, r in rows.items() if k in default and all(r[p] == default[k][p] for p in ("causal", "simulate"))]
    print(f"  cells whose scores repeat the default's to every digit: {len(scores)}")
    same = [k for k in scores if k not in early]  # the default's computations: the machine's drift in time
    if same:
        seconds_ratio("AU where no candidate stopped early and the scores repeat", {k: rows[k] for k in same},
                      {k: default[k] for k in same}, {k[0] for k in same})
    seconds_ratio("AU", rows, default, pairs)
    adopted = not missing and bounds["causal"] <= BOUND and bounds["simulate"] <= BOUND and ratio <= 0.95
    if missing:
        print(f"not run yet: {len(missing)} cells")
    print("AU adopted" if adopted else "AU not adopted")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
