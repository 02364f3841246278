"""Decision V of research/ablation_plan.md (the latest fold's model at s* instead of stage 4's refit), on training
data only, by the held-out rule of decisions M, N and T: on the 70/30 cuts of the 25 training halves, seed 0, the
default fit with V (:func:`refit_v`) and, where V acted (:func:`acted`), the default fit on the same machine,
scored on the last 30 % under causal and simulate (research/ablation_plan.md, V's amendment: the rows of
decision_t.jsonl came from another machine). One JSON line per cut and variant, appended (resumable; two workers can
share the file with disjoint ``--data``).

Run: python research/decision_v.py research/results/decision_v.jsonl --variant V|default [--data name ...]; then
python research/decision_v.py research/results/decision_v.jsonl --decide. This script is the research record's;
nothing in the package imports it.
"""
import copy
import json
import os
from dataclasses import replace


from gpssm_np.models.default_fit import DefaultFit

from decision_m import NAMES, RESULTS, held_out_row, held_out_rule
from defaults_check import decision_cli

PACKAGE_REFIT = DefaultFit.refit
#: How many times :func:`refit_v` took a fold model in the current fit (either pipeline).
V_REFITS = [0]


def refit_v(self, floor, ys, us, steps, saved=None):
    """V's stage 4: with a GP part kept (``steps`` = s* > 0), the parameters of the latest fold's run of the chosen
    step-size candidate at s* (what the selection scored there) and that run's jitter, no training; without, the
    package's (the floor with a zero residual)."""
    if not steps:
        return PACKAGE_REFIT(self, floor, ys, us, steps, saved)
    V_REFITS[0] += 1
    per_candidate = len(self.runs) // len(self.plan.lr_scales)
    k = self.candidate * per_candidate + per_candidate - 1  # the runs of one candidate are consecutive, folds in order
    fold_model = self.runs[k][0]
    model = self.model
    model.spec = replace(model.spec, jitter=fold_model.spec.jitter)
    model.params = copy.deepcopy(fold_model.params)
    model.set_learned_params(self.kept[steps][k])
    model.history_ = list(fold_model.history_)
    model.training_log_ = copy.deepcopy(fold_model.training_log_)


def acted(row):
    """Whether V changed stage 4 of the fit of ``row`` (a V row): a GP part was refitted in either pipeline (the
    first selection's s* > 0 or stage 3b's, whatever the guards then did)."""
    return row["v_refits"] > 0


def default_rows():
    """{cut: row} of the default on this machine, the baseline of decisions W, X and Y: this decision's "default"
    rows where V acted, its V rows (the default's) elsewhere (research/results/decision_v.jsonl)."""
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(os.path.join(RESULTS, "decision_v.jsonl")))}
    return {n: rows[n, "default"] if acted(rows[n, "V"]) else rows[n, "V"] for n in NAMES}


def run(out, names, variant):
    rows = list(map(json.loads, open(out))) if os.path.exists(out) else []
    done = {(r["data"], r["variant"]) for r in rows}
    if variant == "default":  # only where V acted; elsewhere V's row is the default's
        acting = {r["data"] for r in rows if r["variant"] == "V" and acted(r)}
        names = [n for n in names if n in acting]
    DefaultFit.refit = refit_v if variant == "V" else PACKAGE_REFIT
    for name in names:
        if (name, variant) in done:
            continue
        V_REFITS[0] = 0
        held_out_row(out, name, variant, [("v_refits", lambda model: V_REFITS[0])])


def decide(out):
    """V's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of V's RMSE over the default's at
    most 1.01 under causal and under simulate, and no cut more than 5 % worse under causal."""
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(out))}
    missing = [n for n in NAMES if (n, "V") not in rows or (acted(rows[n, "V"]) and (n, "default") not in rows)]
    pairs = [(n, rows[n, "default"] if acted(rows[n, "V"]) else rows[n, "V"], rows[n, "V"]) for n in NAMES
             if n not in missing]
    held_out_rule(pairs, "V", 1.01, 1.01, missing, "stage 4 refits")

if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("V", "default"))
