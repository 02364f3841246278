"""Decision O of research/ablation_plan.md (F kept stable during training), on training data only, by decision
M's held-out rule: the default fit (seed 0) of the package's code at 1fdd77a, whose ``Plan.max_spectral_radius``
was 0.999 (removed after the decision; run from a checkout of that commit to reproduce the rows), on the first
70 % of each of the 25 training halves, scored on the last 30 % under causal and simulate,
against the default before O: decision N's rows (research/results/decision_n.jsonl). One JSON line per set,
appended (resumable).

Run: python research/decision_o.py research/results/decision_o.jsonl [--data name ...]; add --decide to apply the
rule. This script is the research record's; nothing in the package imports it.
"""
import json
import os

import decision_m


def before_o():
    """The default's held-out scores before O: decision N's rows, {name: {"causal", "simulate", "gp_part"}}."""
    with open(os.path.join(decision_m.RESULTS, "decision_n.jsonl")) as f:
        return {r["data"]: {k: r[k] for k in ("causal", "simulate", "gp_part")} for r in map(json.loads, f)}


if __name__ == "__main__":
    decision_m.cli("O", "O adopted (F kept stable)", "not adopted (F stays unconstrained)", base=before_o())
