"""Which fits of docs/results.md, section 1 (the current default on the nine data sets and nine simulators, seeds 0-4)
decision BC's halving could change, read off their selection records (the per-evaluation mean fold error of each
step-size candidate that the rows keep; no fit, no test score). A fit is the default's exactly where at most one
candidate still trains at the halving step (500 of 1500) or where the candidate leading there is the one the
default chose; it could change where the other leads there; stage 3b's selection, whose record the rows do not keep,
is counted apart where it ran. Reading training-data evidence only, this decides nothing.

Run: python research/halving_on_defaults.py [rows ...] (default: the four files of the current default).
This script is the research record's; nothing in the package imports it.
"""
import json
import os
import sys

from gpssm_np.models.default_fit import DefaultFit, Plan, live_candidates

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
FILES = ("defaults_ax_s0.jsonl", "defaults_ax_s12.jsonl", "defaults_ax_s34.jsonl", "defaults_ax_steamgen.jsonl")


def verdict(fold_rmse, patience=Plan.patience, halve_at=Plan.max_steps // len(Plan.seq_lens)):
    """'same (not halved)', 'same (halved)' or 'could change' for one selection record ([step, lowest, [mean of each
    candidate]] per evaluation): the candidate the package's halving keeps (``live_candidates`` at the halving
    evaluation) against the one the record's lowest error chose (``DefaultFit.best_of``)."""
    record = [{"step": s, "candidates": c} for s, _, c in fold_rmse]
    upto = [r for r in record if r["step"] <= halve_at]
    candidates = len(record[0]["candidates"])
    if record[-1]["step"] < halve_at or sum(live_candidates(upto, candidates, patience)) < 2:
        return "same (not halved)"
    leader = live_candidates(upto, candidates, patience, halve_at).index(True)
    return "same (halved)" if leader == DefaultFit.best_of(record)[1] else "could change"


def main(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            for r in map(json.loads, f):
                rows[r["data"], r["seed"]] = r
    counts = {}
    for (name, seed), r in sorted(rows.items()):
        v = verdict(r["fold_rmse"])
        third = r["selection"].get("other_floor")
        if third is not None:
            v += "; stage 3b ran (its record not kept)"
        counts[v] = counts.get(v, 0) + 1
        if not v.startswith("same (not halved)") or "3b" in v:
            print(f"{name:14s} seed {seed}: {v}")
    print(counts)


if __name__ == "__main__":
    main(sys.argv[1:] or [os.path.join(RESULTS, f) for f in FILES])
