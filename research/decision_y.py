"""Decision Y of research/ablation_plan.md (the ARX floor's state in a whitened basis), on training data only, by the
held-out rule: on the 70/30 cuts of the 25 training halves, seed 0, the default fit of the package code under test
(run it with that code first on the path), scored on the last 30 % under causal and simulate, against the default's
rows on this machine in research/results/decision_v.jsonl. Y acts only where an ARX floor with more than one block
is chosen or is stage 3b's other floor; the other cuts take the default's rows. One JSON line per cut, appended
(resumable; two workers can share the file with disjoint ``--data``).

Run: PYTHONPATH=<Y's code>:. python research/decision_y.py research/results/decision_y.jsonl --variant Y
[--data name ...]; then python research/decision_y.py research/results/decision_y.jsonl --decide. This script is
the research record's; nothing in the package imports it.
"""
import json
import os

from decision_m import NAMES, held_out_row, held_out_rule
from decision_v import RESULTS, default_rows
from defaults_check import decision_cli
from rows import done_keys


def arx_involved(row):
    """Whether the default's fit on a cut met an ARX floor: chosen, or stage 3b's other floor (where stage 3b's
    model was returned, ``floor`` is its kind and the first choice is ``other_floor["chosen"]``)."""
    other = row["other_floor"] if isinstance(row["other_floor"], dict) else {}
    return "arx" in (row["floor"], other.get("kind"), other.get("chosen", {}).get("kind"))


def run(out, names, variant):
    done = done_keys(out, "data")
    default = default_rows()
    for name in names:
        if name not in done and arx_involved(default[name]):
            held_out_row(out, name, variant)


def y_rows(out):
    """{cut: row} of Y's rows in ``out``."""
    return {r["data"]: r for r in map(json.loads, open(out))}


def current_rows(out=os.path.join(RESULTS, "decision_y.jsonl")):
    """{cut: row} of the default since Y on this machine, the baseline of decision Z: Y's rows in ``out`` where it
    acted, the default's before it elsewhere (:func:`decision_v.default_rows`)."""
    return {**default_rows(), **y_rows(out)}


def decide(out):
    """Y's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of Y's RMSE over the default's at
    most 0.99 under causal and at most 1.00 under simulate, and no cut more than 5 % worse under causal. A cut where
    Y acts and that has no row in ``out`` is missing (the rule then adopts nothing)."""
    default, ys = default_rows(), y_rows(out)
    missing = [n for n in NAMES if arx_involved(default[n]) and n not in ys]
    rows = {**default, **ys}
    held_out_rule([(n, default[n], rows[n]) for n in NAMES if n not in missing], "Y", 0.99, 1.00, missing,
                  "the observer form's basis stays")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("Y",))
