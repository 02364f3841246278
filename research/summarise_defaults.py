"""Markdown tables of research/results/defaults_*.jsonl (written by defaults_check.py): the default ODGPSSM against
the better of ARX() and LGSSM(dim_x="auto") fitted to the same training half, mean over the seeds present, under
the causal and simulate protocols, and issue #28's targets counted from them.

Run: python research/summarise_defaults.py research/results/defaults_v3*.jsonl > docs/results/defaults.md
(docs/build_results.py then copies it into docs/results.md). A later file's row replaces an earlier one's for the
same (data, seed, model). ``--gp FILE ...``: the ODGPSSM rows come from these files only (the cells they hold),
the linear models' from the others (e.g. a new default fit beside the linear rows of an earlier check).
``--seeds S ...``: only the rows of these seeds. ``--steps``: instead of the tables, the gradient steps s* each
fit kept (0: no GP part), set by set, and how many of the fits that kept a GP part chose more than 500 (what a
500-step budget would have cut; issue #28's time target).
"""
import argparse
import json
import math
from collections import defaultdict

SIMULATORS = {"tanks", "hammerstein", "wiener", "pendulum", "duffing", "quad_tanks", "two_mass", "reactor",
              "three_tanks"}
SATURATING = {"tanks", "hammerstein", "wiener", "quad_tanks", "three_tanks"}  # saturation or overflow


def number(x, digits):
    """``x`` with ``digits`` decimals, or in scientific notation when it is 1000 or more (a diverged forecast)."""
    return f"{x:.{digits}f}" if abs(x) < 1000 else f"{x:.2e}"


def steps_table(cells):
    """The steps s* of every seed's fit, set by set, and the count of kept GP parts with s* > 500."""
    print("| data | s* by seed (0: the floor returned) |")
    print("|---|---|")
    kept = longer = 0
    for data in sorted(cells, key=lambda d: (d in SIMULATORS, d)):
        steps = [s["odgpssm"]["selection"]["step"] for s in cells[data]]
        print(f"| {data} | {', '.join(str(n) for n in steps)} |")
        kept += sum(n > 0 for n in steps)
        longer += sum(n > 500 for n in steps)
    print()
    print(f"{longer} of the {kept} fits that kept a GP part chose more than 500 steps.")


def main(paths, short=False, gp_paths=(), seeds=None, steps=False):
    rows = [json.loads(line) for path in paths for line in open(path)]
    by = defaultdict(dict)
    for r in rows:
        if not (gp_paths and r["model"] == "odgpssm"):
            by[(r["data"], r["seed"])][r["model"]] = r
    for r in (json.loads(line) for path in gp_paths for line in open(path)):
        by[(r["data"], r["seed"])][r["model"]] = r
    by = {key: models for key, models in by.items() if seeds is None or key[1] in seeds}
    cells = defaultdict(list)  # data -> complete seeds
    for (data, seed), models in by.items():
        if {"arx", "lgssm", "odgpssm"} <= set(models):
            cells[data].append(models)
    if steps:
        return steps_table(cells)
    if short:
        print("| data | causal: ODGPSSM / better linear | simulate: ODGPSSM / better linear | GP part kept |")
        print("|---|---|---|---|")
    else:
        print("Standardised RMSE, mean over the seeds run; ratio: ODGPSSM over the better of ARX and LGSSM (below 1: "
              "ODGPSSM better). Data sets first, then simulators.")
        print()
        print("| data | seeds | causal: ODGPSSM | ARX | LGSSM | ratio | simulate: ODGPSSM | ARX | LGSSM | ratio | "
              "GP part kept | floor (seed 0) | fit s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    counts = defaultdict(int)
    for data in sorted(cells, key=lambda d: (d in SIMULATORS, d)):
        seeds = cells[data]
        mean = {(m, p): sum(s[m][p] for s in seeds) / len(seeds) for m in ("odgpssm", "arx", "lgssm")
                for p in ("causal", "simulate")}
        ratio = {p: mean[("odgpssm", p)] / min(mean[("arx", p)], mean[("lgssm", p)]) for p in ("causal", "simulate")}
        kept = sum(s["odgpssm"]["selection"]["gp_part"] for s in seeds)
        floor = seeds[0]["odgpssm"]["selection"]["floor"]
        fit = sum(s["odgpssm"]["fit_seconds"] for s in seeds) / len(seeds)
        if short:
            print(f"| {data} | {number(ratio['causal'], 2)} | {number(ratio['simulate'], 2)} | {kept} of {len(seeds)} |")
        else:
            print(f"| {data} | {len(seeds)} | " + " | ".join(
                f"{number(mean[('odgpssm', p)], 4)} | {number(mean[('arx', p)], 4)} | {number(mean[('lgssm', p)], 4)} | "
                f"**{number(ratio[p], 3)}**"
                for p in ("causal", "simulate")) + f" | {kept}/{len(seeds)} | {floor['kind']} "
                f"{tuple(floor['orders'])} | {fit:.0f} |")
        counts["sets"] += 1
        counts["causal <= 1.02"] += ratio["causal"] <= 1.02
        counts["causal >= 10 % better"] += ratio["causal"] <= 0.90
        counts["simulate <= 1.00"] += ratio["simulate"] <= 1.0
        if data in SATURATING:
            counts["saturating sims"] += 1
            counts["saturating: simulate >= 30 % better"] += ratio["simulate"] <= 0.70
        envi = [s["odgpssm"].get("envi") for s in seeds]
        counts["envi and simulate finite"] += all(e is not None and math.isfinite(e) for e in envi) and all(
            math.isfinite(s["odgpssm"]["simulate"]) for s in seeds)
    print()
    print("| target | sets meeting it |")
    print("|---|---|")
    for key, value in counts.items():
        if key not in ("sets", "saturating sims"):
            total = counts["saturating sims"] if key.startswith("saturating") else counts["sets"]
            print(f"| {key} | {value} of {total} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--gp", nargs="+", default=[])
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--steps", action="store_true")
    args = parser.parse_args()
    main(args.paths, short=args.short, gp_paths=args.gp, seeds=args.seeds, steps=args.steps)
