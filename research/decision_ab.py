"""Decision AB of research/ablation_plan.md (the training objective as a candidate of the selection), on training
data only, by the held-out rule: on the 70/30 cuts of the 25 training halves, seed 0, the default fit whose selection
trains four candidates on every fold, EnVI's objective and the paper's prior objective each with the two step-size
candidates, and keeps the (candidate, step) of the lowest mean fold error as for the step sizes; the refit trains
with the chosen candidate's objective. Scored on the last 30 % under causal and simulate against the current
default's rows on this machine (:func:`decision_y.current_rows`). One JSON line per cut, appended (resumable; two
workers can share the file with disjoint ``--data``).

The variant is written here, not in the package: :class:`ObjectiveCandidates` sets each run's model to its
candidate's objective before the run is built. A row's "objective" is the returned model's (EnVI's where no GP part
was kept: the floor-only fit trains nothing).

Run: python research/decision_ab.py research/results/decision_ab.jsonl --variant AB
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import json

from gpssm_np.models import default_fit

from decision_m import NAMES, held_out_row, held_out_rule
from decision_y import current_rows
from defaults_check import decision_cli
from rows import done_keys

TENTH = {"F": 0.1, "G": 0.1, "b": 0.1}
#: The candidates' step sizes and, in the same order, their objectives.
CANDIDATES = ({}, TENTH, {}, TENTH)
OBJECTIVES = ("enkf", "enkf", "prior", "prior")


class ObjectiveCandidates(default_fit.DefaultFit):
    """The default fit with each run's model set to its candidate's objective (:data:`OBJECTIVES`): the selection
    builds its runs candidate by candidate, fold by fold; the refit takes the chosen candidate's."""

    def selection(self, floor, folds, saved=None):
        self.built, self.per_candidate = 0, max(1, len(folds))
        return super().selection(floor, folds, saved)

    def training_run(self, model, warm, ys, us, seed, scales):
        if model is self.model:  # the refit
            model.objective = OBJECTIVES[self.candidate]
        else:
            model.objective = OBJECTIVES[self.built // self.per_candidate]
            self.built += 1
        return super().training_run(model, warm, ys, us, seed, scales)


def run(out, names, variant):
    default_fit.DefaultFit = ObjectiveCandidates  # stage 3b's pipeline too (default_fit.fit builds it by name)
    done = done_keys(out, "data", "variant")
    for name in names:
        if (name, variant) not in done:
            held_out_row(out, name, variant, [("objective", lambda model: model.objective)],
                         plan={"lr_scales": CANDIDATES})


def decide(out):
    """AB's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of AB's RMSE over the default's at
    most 0.99 under causal and at most 1.00 under simulate, and no cut more than 5 % worse under causal."""
    default = current_rows()
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(out))}
    missing = [n for n in NAMES if (n, "AB") not in rows]
    held_out_rule([(n, default[n], rows[n, "AB"]) for n in NAMES if n not in missing], "AB", 0.99, 1.00, missing,
                  "EnVI's objective alone stays")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("AB",))
