"""The cells of the five-seed check (docs/results.md, section 1) and of the seven unseen plants (section 1.1) whose
default fit kept no GP part in the selection (s* = 0), fitted again with stage 3b (decision S of
research/ablation_plan.md): the only cells stage 3b can change. Each is scored as its source scored it
(research/defaults_check.py: causal, simulate and envi with the fit's seed; research/unseen_plants.py: causal and
simulate), beside its earlier row, so that a cell where stage 3b keeps nothing repeats it to every digit. One JSON
line per cell, appended (resumable); ``--reverse`` takes the cells from the slowest, so that two workers can share
the file (each skips the cells done).

Run: python research/refit_stage_3b.py research/results/stage_3b_refits.jsonl [--reverse];
``--summary`` prints the Markdown table of the rows in ``out``. The five-seed rows are defaults_check.py's (with "model"), so
``summarise_defaults.py ... --gp research/results/defaults_v9*.jsonl research/results/stage_3b_refits.jsonl``
gives the check's table with the cells refitted so far replaced. This script is the research record's; nothing in the package imports
it.
"""
import argparse
import json
import os
import time

import numpy as np

import gpssm_np as gp

from decision_m import RESULTS
from defaults_check import PROTOCOLS, dataset, selection_row
from rows import done_keys, head_commit
from unseen_plants import SYSTEMS

#: The current default's rows: the five-seed check's, then the unseen plants'.
SOURCES = {"five-seed": ("defaults_v9.jsonl", "defaults_v9_s1.jsonl", "defaults_v9_s234.jsonl"),
           "unseen": ("unseen_plants_n.jsonl",)}


def cells():
    """(source, the earlier row) of every cell (module docstring), from the quickest earlier fit to the slowest."""
    found = []
    for source, names in SOURCES.items():
        for name in names:
            for row in map(json.loads, open(os.path.join(RESULTS, name))):
                sel = row.get("selection") or {}
                if row["model"] == "odgpssm" and not sel.get("gp_part") and sel.get("free_run") is None:
                    found.append((source, row))
    return sorted(found, key=lambda cell: cell[1]["fit_seconds"])


def run(out, reverse=False):
    commit = head_commit()
    for source, before in (reversed if reverse else iter)(cells()):
        name, seed = before["data"], before["seed"]
        if (name, seed) in done_keys(out, "data", "seed"):
            continue
        if source == "unseen":
            y, u = SYSTEMS[name](np.random.default_rng(2026))
            ds, protocols, kwargs = gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name), PROTOCOLS[:2], {}
        else:
            ds, protocols, kwargs = dataset(name), PROTOCOLS, {"seed": seed}
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
        start = time.perf_counter()
        model.fit(ds.y_train, ds.u_train, progress=False)
        row = {"data": name, "seed": seed, "model": "odgpssm", "source": source, "commit": commit,
               "fit_seconds": time.perf_counter() - start, "selection": selection_row(model.selection_),
               "before": {p: before[p] for p in protocols}, "before_fit_seconds": before["fit_seconds"]}
        for p in protocols:
            try:
                row[p] = gp.evaluate(model, ds, p, **kwargs)["rmse"]
            except Exception as err:  # a diverging model is a result too
                row[p], row[p + "_error"] = float("nan"), repr(err)
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in ("data", "seed", "causal", "simulate", "before", "fit_seconds")}),
              flush=True)


def summary(out):
    rows = sorted(map(json.loads, open(out)), key=lambda r: (r["source"], r["data"], r["seed"]))
    lines = ["Standardised RMSE on the test half; stage 3b's fit beside the earlier default's (no GP part kept).", "",
             "| source | data | seed | stage 3b | other floor: kind, t | causal | before | simulate | before "
             "| fit s | before s |", "|---" * 11 + "|"]
    for r in rows:
        other = r["selection"].get("other_floor") or {}
        t = "" if other.get("t") is None else f", t {other['t']:.2f}"
        kept = "kept" if other.get("kept") else "ran" if other else "did not run"
        lines.append(f"| {r['source']} | {r['data']} | {r['seed']} | {kept} | {other.get('kind', '')}{t} | "
                     f"{r['causal']:.4f} | {r['before']['causal']:.4f} | {r['simulate']:.4f} | "
                     f"{r['before']['simulate']:.4f} | {r['fit_seconds']:.0f} | {r['before_fit_seconds']:.0f} |")
    lines.append("")
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        same = sum(all(r[p] == r["before"][p] for p in r["before"]) for r in mine)
        returned = sum(bool((r["selection"].get("other_floor") or {}).get("kept")) for r in mine)
        ratio = {p: np.array([r[p] / r["before"][p] for r in mine]) for p in ("causal", "simulate")}
        finite = all(np.isfinite(r[p]) for r in mine for p in r["before"])
        lines.append(f"{source}: {len(mine)} cells, {same} repeat the earlier row to every digit, stage 3b's model "
                     f"returned on {returned}; stage 3b over before, geometric mean (range): "
                     + ", ".join(f"{p} {np.exp(np.log(x).mean()):.3f} ({x.min():.3f}-{x.max():.3f})"
                                 for p, x in ratio.items())
                     + f"; every score finite: {'yes' if finite else 'no'}.")
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args.out) if args.summary else run(args.out, args.reverse)
