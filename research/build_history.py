"""Rebuild the summaries of the research record's sweeps (research/results/history/*.md) from their JSON files and
copy them into research/results_history.md, as docs/build_results.py does for docs/results.md (no sweep is re-run).

Run: python research/build_history.py. This script is the research record's; nothing in the package imports it.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "docs"))
sys.path.insert(0, ROOT)
import build_results  # docs/build_results.py  # noqa: E402

import ablation  # research/ablation.py  # noqa: E402
from gpssm_np.experiments import runs  # noqa: E402

FOLDER = os.path.join(HERE, "results", "history")
#: The record's summaries rebuilt from their JSON: file stem -> which module's ``markdown`` renders it.
SWEEP_FILES = {stem: "table1" for stem in (
    "table1_default", "mimo", "table1_enkf", "table1_prior_objective", "qstudy_mimo", "mimo5", "mimo_auto",
    "table1_auto", "mimo_widen", "table1_widen", "mimo_ws", "mimo_linear", "table1_linear", "qstudy_steamgen_linear",
    "mimo_ema", "table1_ema", "mimo_a21", "qstudy_steamgen_a21", "qstudy_winding_a21")}


def rebuild_held_out_comparison(folder=FOLDER):
    """``ablation_linear.md``: the GP ablation's held-out scores beside the linear baselines' (``ablation.jsonl``,
    ``ablation_linear.jsonl``); returns 1, or 0 when a file is missing."""
    rows = {stem: runs.read_jsonl(os.path.join(folder, f"{stem}.jsonl")) for stem in ("ablation", "ablation_linear")}
    if not all(rows.values()):
        return 0
    with open(os.path.join(folder, "ablation_linear.md"), "w") as fh:
        fh.write(ablation.held_out_comparison(rows["ablation"], rows["ablation_linear"]))
    return 1


if __name__ == "__main__":
    count = build_results.rebuild_summaries(FOLDER, SWEEP_FILES) + rebuild_held_out_comparison()
    print(f"rebuilt {count} summaries from their JSON")
    print(f"filled {build_results.build(os.path.join(HERE, 'results_history.md'))} include blocks")
