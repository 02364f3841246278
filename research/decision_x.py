"""Decision X of research/ablation_plan.md (the GP part trained and scored on the three latest origins), on training
data only, by the held-out rule: on the 70/30 cuts of the 25 training halves, seed 0, the default fit with
``plan={"gp_folds": 3}``, scored on the last 30 % under causal and simulate, against the default's rows on this
machine in research/results/decision_v.jsonl. One JSON line per cut, appended (resumable; two workers can share the
file with disjoint ``--data``).

Run: python research/decision_x.py research/results/decision_x.jsonl --variant X [--data name ...]; then
python research/decision_x.py research/results/decision_x.jsonl --decide. This script is the research record's;
nothing in the package imports it.
"""
import json

from decision_m import NAMES, held_out_row, held_out_rule
from decision_v import default_rows
from defaults_check import decision_cli
from rows import done_keys


def run(out, names, variant):
    done = done_keys(out, "data")
    for name in names:
        if name not in done:
            held_out_row(out, name, variant, plan={"gp_folds": 3})


def decide(out):
    """X's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of X's RMSE over the default's at
    most 0.99 under causal and at most 1.00 under simulate, and no cut more than 5 % worse under causal."""
    rows = {r["data"]: r for r in map(json.loads, open(out))}
    missing = [n for n in NAMES if n not in rows]
    default = default_rows()
    held_out_rule([(n, default[n], rows[n]) for n in NAMES if n not in missing], "X", 0.99, 1.00, missing,
                  "two origins stay")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("X",))
