"""Decision Z of research/ablation_plan.md (one step-size candidate now that the ARX floor is whitened), on training
data only, by the held-out rule: on the 70/30 cuts of the 25 training halves, seed 0, the default fit with one
candidate (Z1: the plain step; Z2: F, G, b at a tenth), scored on the last 30 % under causal and simulate, against
the current default's rows on this machine (:func:`decision_y.current_rows`). One JSON line per (cut, variant),
appended (resumable; two workers can share the file with disjoint ``--data`` or variants).

Run: python research/decision_z.py research/results/decision_z.jsonl --variant Z1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import json

import numpy as np

from decision_m import NAMES, held_out_row, held_out_rule
from decision_y import current_rows
from defaults_check import decision_cli
from rows import done_keys

CANDIDATES = {"Z1": ({},), "Z2": ({"F": 0.1, "G": 0.1, "b": 0.1},)}


def run(out, names, variant):
    done = done_keys(out, "data", "variant")
    for name in names:
        if (name, variant) not in done:
            held_out_row(out, name, variant, plan={"lr_scales": CANDIDATES[variant]})


def decide(out):
    """Z's rule (research/ablation_plan.md): a variant passes if over the 25 cuts the geometric mean of its RMSE
    over the default's is at most 1.01 under causal and under simulate and no cut is more than 5 % worse under
    causal; of two that pass, the lower causal geometric mean is adopted. Fit seconds reported beside."""
    default = current_rows()
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(out))}
    passed = {}
    for variant in CANDIDATES:
        missing = [n for n in NAMES if (n, variant) not in rows]
        pairs = [(n, default[n], rows[n, variant]) for n in NAMES if n not in missing]
        if held_out_rule(pairs, variant, 1.01, 1.01, missing, "the default keeps both candidates"):
            passed[variant] = float(np.exp(np.mean([np.log(v["causal"] / d["causal"]) for _, d, v in pairs])))
        if pairs:
            seconds = [v["fit_seconds"] / d["fit_seconds"] for _, d, v in pairs]
            print(f"{variant}: fit seconds over the default's, geometric mean {np.exp(np.mean(np.log(seconds))):.3f} "
                  f"(range {min(seconds):.2f}-{max(seconds):.2f}; not a clean timing)")
    if passed:
        print(f"adopted: {min(passed, key=passed.get)}")
    else:
        print("neither passes: the default keeps both candidates")


if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=tuple(CANDIDATES))
