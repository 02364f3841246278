"""How the kept GP parts forecast the held-out part of the cuts, by the paired t their acceptance saw (stage 3 of the
default fit keeps a part at t > 1, one standard error): a check of that threshold on rows already in hand, deciding
nothing, training data only.

Rows: the default's training seeds 1-4 on the 25 held-out 70/30 cuts (``cut_seeds.default_rows``) and the linear
models' held-out scores on the same cuts (research/results/cut_targets.jsonl). For each fit: its held-out causal
RMSE over that of the linear model of its floor's kind (``ARX()`` or ``LGSSM(dim_x="auto")`` fitted to the same
cut: the floor itself), grouped by t. A fit that returned the floor sits near 1 by construction.

Run: python research/acceptance_evidence.py
This script is the research record's; nothing in the package imports it.
"""
import json
import os

import numpy as np

from cut_seeds import RESULTS, default_rows

BINS = ((None, "floor returned"), (2.0, "1 < t <= 2"), (4.0, "2 < t <= 4"), (10.0, "4 < t <= 10"),
        (np.inf, "t > 10"))


def main():
    with open(os.path.join(RESULTS, "cut_targets.jsonl")) as f:
        linear = {(r["data"], r["model"]): r for r in map(json.loads, f)}
    groups = {label: [] for _, label in BINS}
    for (cut, _), row in sorted(default_rows().items()):
        ratio = row["causal"] / linear[(cut, row["floor"])]["causal"]
        if not row["gp_part"]:
            groups["floor returned"].append(ratio)
        else:
            groups[next(label for top, label in BINS[1:] if row["t"] <= top)].append(ratio)
    print("| paired t at acceptance | fits | held-out causal over the floor's, geometric mean | better than the floor "
          "| more than 5 % worse |")
    print("|---|---|---|---|---|")
    for _, label in BINS:
        v = np.array(groups[label])
        if len(v):
            print(f"| {label} | {len(v)} | {np.exp(np.mean(np.log(v))):.3f} | {np.sum(v < 1)} | {np.sum(v > 1.05)} |")


if __name__ == "__main__":
    main()
