"""Decision AA of research/ablation_plan.md (the paper's prior objective in the default fit), on training data only,
by the held-out rule: on the 70/30 cuts of the 25 training halves, seed 0, the default fit of
``ODGPSSM(..., objective="prior")`` (every window's particles run free from the floor's filtered state, no output
updating them), scored on the last 30 % under causal and simulate, against the current default's rows on this
machine (:func:`decision_y.current_rows`). The variant "control" refits the default itself on two cuts, to show that
this machine repeats the baseline's rows. One JSON line per (cut, variant), appended (resumable; two workers can
share the file with disjoint ``--data``).

Run: python research/decision_aa.py research/results/decision_aa.jsonl --variant AA
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import json

from decision_m import NAMES, held_out_row, held_out_rule
from decision_y import current_rows
from defaults_check import decision_cli
from rows import done_keys

OPTIONS = {"AA": {"objective": "prior"}, "control": {}}
CONTROL = ("short", "pendulum")  # a floor-only cut of Y's rows, a GP part of the rows before Y


def run(out, names, variant):
    done = done_keys(out, "data", "variant")
    for name in names if variant == "AA" else [n for n in names if n in CONTROL]:
        if (name, variant) not in done:
            held_out_row(out, name, variant, options=OPTIONS[variant])


def decide(out):
    """AA's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of AA's RMSE over the default's at
    most 0.99 under causal and at most 1.00 under simulate, and no cut more than 5 % worse under causal; the control
    cut must repeat the default's row (else the baseline is not this machine's and nothing is decided)."""
    default = current_rows()
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(out))}
    for name in CONTROL:
        control = rows.get((name, "control"))
        same = control is not None and all(control[p] == default[name][p] for p in ("causal", "simulate"))
        print(f"control {name}: {'repeats the baseline row' if same else 'missing or different: ' + str(control)}")
        if not same:
            return
    missing = [n for n in NAMES if (n, "AA") not in rows]
    held_out_rule([(n, default[n], rows[n, "AA"]) for n in NAMES if n not in missing], "AA", 0.99, 1.00, missing,
                  "EnVI's objective stays")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=tuple(OPTIONS))
