"""Decision N of research/ablation_plan.md (a full q(x0): the floor's stationary prior held exactly), on training
data only, by decision M's held-out rule: the current default fit (seed 0; the package's code, which has the full
q(x0)) on the first 70 % of each of the 25 training halves, scored on the last 30 % under causal and simulate,
against the default before N (``decision_m.default_scores``). One JSON line per set, appended (resumable).

Run: python research/decision_n.py research/results/decision_n.jsonl [--data name ...]; add --decide to apply the
rule. This script is the research record's; nothing in the package imports it.
"""
import decision_m

if __name__ == "__main__":
    decision_m.cli("N", "N adopted (the full q(x0))", "not adopted (the diagonal q(x0) stays)")
