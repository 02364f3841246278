"""Issue #28, the Hammerstein plant's selection without an early stop (research/ablation_plan.md; an exploration,
deciding nothing).

Variant P30: the default fit with ``plan={"patience": 30}``, so that no step-size candidate and no selection stops
before the budget's step 1500 (the halving at step 500 as in the default). Cells: the Hammerstein plant's records
100-104 at 4000 steps and records 100-102 at 1000 steps (``fresh_records.record``), seed 0, fitted to the first half
and scored on the second as research/fresh_records.py does. One JSON line per cell, appended (resumable).

Run: python research/explore_plateau.py research/results/explore_plateau.jsonl --worker K  (K = 0, 1)
     python research/explore_plateau.py research/results/explore_plateau.jsonl --summary
Nothing in the package imports this module.
"""
import json
import time

import gpssm_np as gp

from defaults_check import selection_row
from fresh_records import append_scored, record, rows_by_record
from rows import done_keys, head_commit, run_or_summarise

CELLS = [(r, 4000) for r in (100, 101, 102, 103, 104)] + [(r, 1000) for r in (100, 101, 102)]
DEFAULT_ROWS = {4000: ("research/results/fresh_records_long_a.jsonl", "research/results/fresh_records_long_b.jsonl"),
                1000: ("research/results/fresh_records_100_a.jsonl", "research/results/fresh_records_100_b.jsonl")}
PLAN = {"patience": 30}


def run(out, worker=0):
    done = done_keys(out, "record", "length")
    commit = head_commit()
    for r, length in CELLS[worker::2]:
        if (r, length) in done:
            continue
        ds = record("hammerstein", r, length)
        model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
        start = time.perf_counter()
        model.fit(ds.y_train, ds.u_train, plan=PLAN, progress=False)
        row = {"data": "hammerstein", "record": r, "length": length, "variant": "P30", "commit": commit,
               "fit_seconds": time.perf_counter() - start, "selection": selection_row(model.selection_)}
        append_scored(out, row, model, ds, "hammerstein", r, length)


def summary(out):
    rows = {(x["record"], x["length"]): x for x in map(json.loads, open(out))}
    lines = ["| record | length | default: s*, causal, simulate | P30: s*, causal, simulate | fit s default, P30 |",
             "|---" * 5 + "|"]
    for (r, length), p in sorted(rows.items(), key=lambda item: (-item[0][1], item[0][0])):
        m = rows_by_record(DEFAULT_ROWS[length], [r], ["hammerstein"])[("hammerstein", r)]
        best = {k: min(m["arx"][k], m["lgssm"][k]) for k in ("causal", "simulate")}
        d = m["odgpssm"]

        def cell(x):
            s, c, v = x["selection"]["step"], x["causal"] / best["causal"], x["simulate"] / best["simulate"]
            return f"{s}, {c:.3f}, {v:.3f}"

        lines.append(f"| {r} | {length} | {cell(d)} | {cell(p)} | {d['fit_seconds']:.0f}, {p['fit_seconds']:.0f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    run_or_summarise(run, summary, workers=2)
