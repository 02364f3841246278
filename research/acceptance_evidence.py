"""How the kept GP parts forecast the held-out part of the cuts, by the paired t their acceptance saw (stage 3 of the
default fit keeps a part at t > 1, one standard error): a check of that threshold on rows already in hand, deciding
nothing, training data only.

Rows: the default's training seeds 1-4 on the 25 held-out 70/30 cuts (``cut_seeds.default_rows``) and the linear
models' held-out scores on the same cuts (research/results/cut_targets.jsonl). For each fit: its held-out causal
RMSE over that of the linear model of its floor's kind (``ARX()`` or ``LGSSM(dim_x="auto")`` fitted to the same
cut: the floor itself), grouped by t. A fit that returned the floor sits near 1 by construction.

``--fresh FILE ...``: the same table over the default's fits to fresh records of the 16 simulated plants
(``research/fresh_records.py`` row files in order, a later file's row replacing an earlier one's: those of
docs/results.md section 1.2 for records 5-12, or of section 1.4 for records 100-104), each fit's held-out error over
that of the linear model of its floor's kind on the same record's second half, under causal and simulate: records no
choice was made on.

Run: python research/acceptance_evidence.py [--fresh FILE ...]
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

import numpy as np

from cut_seeds import RESULTS, default_rows
from fresh_records import rows_by_record

BINS = ((None, "floor returned"), (2.0, "1 < t <= 2"), (4.0, "2 < t <= 4"), (10.0, "4 < t <= 10"),
        (np.inf, "t > 10"))


def table(groups, protocol="causal"):
    """Print the Markdown table of ``groups`` ({bin label: [ratios]}, under ``protocol``)."""
    print(f"| paired t at acceptance | fits | held-out {protocol} over the floor's, geometric mean | better than the "
          "floor | more than 5 % worse |")
    print("|---|---|---|---|---|")
    for _, label in BINS:
        v = np.array(groups[label])
        if len(v):
            print(f"| {label} | {len(v)} | {np.exp(np.mean(np.log(v))):.3f} | {np.sum(v < 1)} | {np.sum(v > 1.05)} |")


def grouped(fits):
    """{bin label: [ratios]} of ``fits``: (whether a GP part was kept, its paired t, its error over its floor's)."""
    groups = {label: [] for _, label in BINS}
    for gp_part, t, ratio in fits:
        label = "floor returned" if not gp_part else next(label for top, label in BINS[1:] if t <= top)
        groups[label].append(ratio)
    return groups


def cuts():
    with open(os.path.join(RESULTS, "cut_targets.jsonl")) as f:
        linear = {(r["data"], r["model"]): r for r in map(json.loads, f)}
    table(grouped((row["gp_part"], row["t"], row["causal"] / linear[(cut, row["floor"])]["causal"])
                  for (cut, _), row in sorted(default_rows().items())))


def fresh(outs):
    records = [m for _, m in sorted(rows_by_record(outs).items()) if len(m) == 3]
    print(f"{len(records)} fresh records")
    for protocol in ("causal", "simulate"):
        print(f"\n{protocol}:")
        table(grouped((m["odgpssm"]["selection"]["gp_part"], m["odgpssm"]["selection"]["t"],
                       m["odgpssm"][protocol] / m[m["odgpssm"]["selection"]["floor"]["kind"]][protocol])
                      for m in records), protocol)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fresh", nargs="+", metavar="FILE")
    args = parser.parse_args()
    fresh(args.fresh) if args.fresh else cuts()
