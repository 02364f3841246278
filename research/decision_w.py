"""Decision W of research/ablation_plan.md (the other step-size candidate where stage 4's guards drop the chosen
one), on training data only, by the held-out rule: on the 70/30 cuts where a GP part was selected in a pipeline
(decision V's rows), seed 0, the default fit with W (:func:`guards_w`), scored on the last 30 % under causal and
simulate, against the default's rows on this machine in research/results/decision_v.jsonl. One JSON line per cut,
appended (resumable; two workers can share the file with disjoint ``--data``).

Run: python research/decision_w.py research/results/decision_w.jsonl --variant W [--data name ...]; then
python research/decision_w.py research/results/decision_w.jsonl --decide. This script is the research record's;
nothing in the package imports it.
"""
import json
import os

from gpssm_np.models.default_fit import DefaultFit
from gpssm_np.models.training import paired_t

from decision_m import NAMES, RESULTS, held_out_row, held_out_rule
from decision_v import acted, default_rows
from defaults_check import decision_cli
from rows import done_keys

PACKAGE_GUARDS = DefaultFit.guards
#: How many other candidates :func:`guards_w` refitted in the current fit (either pipeline).
W_TRIES = [0]


def guards_w(self, floor, ys, us):
    """W's stage 4 guards: the package's; where they fail, each other step-size candidate whose windows at s* beat
    step 0 by more than ``switch_t`` standard errors is refitted for s* steps and guarded in turn, the first that
    passes kept (``self.candidate`` then names it, for the calibration and ``lr_scale``)."""
    result = PACKAGE_GUARDS(self, floor, ys, us)
    if result["passed"]:
        return result
    at = next(r for r in self.record if r["step"] == self.accepted)
    for c in range(len(self.plan.lr_scales)):
        t = paired_t(self.record[0]["windows"][c], at["windows"][c])
        if c == self.candidate or t is None or t <= self.plan.switch_t:
            continue
        W_TRIES[0] += 1
        self.candidate = c
        self.refit(floor, ys, us, self.accepted)
        result = PACKAGE_GUARDS(self, floor, ys, us)
        if result["passed"]:
            return result
    return result


def acted_cuts():
    """The cuts where a GP part was selected in a pipeline (decision V's rows), the only ones where guards run."""
    return [r["data"] for r in map(json.loads, open(os.path.join(RESULTS, "decision_v.jsonl")))
            if r["variant"] == "V" and acted(r)]


def run(out, names, variant):
    done = done_keys(out, "data")
    DefaultFit.guards = guards_w
    acting = set(acted_cuts())
    for name in names:
        if name in done or name not in acting:
            continue
        W_TRIES[0] = 0
        held_out_row(out, name, variant, [("w_tries", lambda model: W_TRIES[0])])


def decide(out):
    """W's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of W's RMSE over the default's at
    most 0.99 under causal and at most 1.00 under simulate, and no cut more than 5 % worse under causal."""
    rows = {r["data"]: r for r in map(json.loads, open(out))}
    acting = set(acted_cuts())
    missing = [n for n in NAMES if n in acting and n not in rows]
    default = default_rows()
    # where no GP part was selected no guard runs: W's row is the default's
    pairs = [(n, default[n], rows[n] if n in acting else default[n]) for n in NAMES if n not in missing]
    held_out_rule(pairs, "W", 0.99, 1.00, missing, "the floor where the guards fail")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("W",))
