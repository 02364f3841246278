"""Decision R of research/ablation_plan.md (decision L replicated on records 11-14, its rule unchanged).

The records are decision L's plants with r = 11-14, which no choice and no run has seen; each row is decision L's
(research/decision_l.py: both rules' kinds on the training half, both linear models scored on the second half), and
``--decide`` applies L's rule to these rows alone, then prints the value pooled with decision L's records 1-4
(research/results/decision_l.jsonl), which decides nothing.

Run: python research/decision_r.py research/results/decision_r.jsonl; add --decide to apply the rule.
This script is the research record's; nothing in the package imports it.
"""
import json
import os
import tempfile

from decision_l import cli, decide, run
from decision_m import RESULTS

REPLICATES = (11, 12, 13, 14)


def decide_r(out):
    print("Records 11-14 (decide):")
    decide(out)
    rows = [line for line in open(os.path.join(RESULTS, "decision_l.jsonl")) if not json.loads(line)["cut"]]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as pooled:
        pooled.writelines(rows + list(open(out)))
        pooled.flush()
        print("\nRecords 1-4 and 11-14 pooled (decide nothing; the rule's line below is not R's):")
        decide(pooled.name)


if __name__ == "__main__":
    cli(lambda out, cuts: run(out, cuts, REPLICATES), decide_r)
