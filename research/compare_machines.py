"""The current default's seed-0 cells of the five-seed check (docs/results.md, section 1) refitted on another machine
with the same code, against the rows the table was made from: per cell the RMSE ratio (here over there) under causal
and simulate, and whether the GP part, s* and the floor are the same. Nothing is chosen from it; it measures how far
the table's numbers move with the machine (docs/results.md, "Reproducibility and statistics").

Run: python research/compare_machines.py research/results/defaults_v9_machine2_s0_*.jsonl
This script is the research record's; nothing in the package imports it.
"""
import glob
import json
import os
import sys

import numpy as np

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
#: The files of the table's seed-0 rows, a later file's row replacing an earlier one's (as summarise_defaults.py).
TABLE = ("defaults_v9.jsonl", "stage_3b_refits.jsonl")


def rows_of(patterns, models=("odgpssm",)):
    """{(data, seed, model): row} of the five-seed check's rows of ``models`` in the files ``patterns`` match (paths,
    or glob patterns under research/results), a later file's row replacing an earlier one's (as
    summarise_defaults.py); unseen-plant rows are left out."""
    rows = {}
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(RESULTS, pattern))):
            for r in map(json.loads, open(path)):
                model = r.get("model", "odgpssm")
                if model in models and r.get("source", "five-seed") == "five-seed":
                    rows[r["data"], r.get("seed", 0), model] = r
    return rows


def seed_0(rows):
    """{data: row} of the seed-0 rows of :func:`rows_of`."""
    return {data: r for (data, seed, _), r in rows.items() if seed == 0}


if __name__ == "__main__":
    there = seed_0(rows_of(TABLE))
    here = seed_0(rows_of(os.path.abspath(path) for path in sys.argv[1:]))
    ratios = {"causal": [], "simulate": []}
    for name, r in here.items():
        t = there[name]
        for protocol in ratios:
            ratios[protocol].append(r[protocol] / t[protocol])
        same = {k: r["selection"][k] == t["selection"][k] for k in ("gp_part", "step")}
        print(f"{name:14s} causal {ratios['causal'][-1]:.4f}  simulate {ratios['simulate'][-1]:.4f}  "
              f"GP part {t['selection']['gp_part']!s:5s} -> {r['selection']['gp_part']!s:5s}  "
              f"s* {t['selection']['step']} -> {r['selection']['step']}  same: {all(same.values())}")
    geo = {p: float(np.exp(np.mean(np.log(v)))) for p, v in ratios.items()}
    print(f"{len(here)} cells: geometric mean causal {geo['causal']:.4f}, simulate {geo['simulate']:.4f}; causal range "
          f"{min(ratios['causal']):.3f}-{max(ratios['causal']):.3f}; equal to every digit under causal on "
          f"{sum(v == 1.0 for v in ratios['causal'])}")
