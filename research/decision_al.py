"""Decision AL of research/ablation_plan.md (the GP part kept wherever the folds' lowest error is not the floor's:
``Plan.switch_t = 0``), on training data only: the 70/30 cuts of the 25 training halves, training seeds 1-6, AL
fitted on the cells where the default's stage 3 kept no part (the only ones where it can act), scored on each cut's
last 30 % under causal and simulate, against the default's rows (seeds 1-4: ``cut_seeds.default_rows``; 5-6:
research/results/cut_seeds_56.jsonl), or against the default fitted again here where a cell's selection differs
from its stored row (variant "default"). One JSON line per (cut, variant, seed), appended (resumable; two workers
can share the file with disjoint cells).

Run: python research/decision_al.py research/results/decision_al.jsonl [--worker 0 --workers 2] [--defaults];
then --decide. ``--defaults`` fits the default on the cells whose AL row is not comparable. This script is the
research record's; nothing in the package imports it.
"""
import argparse
import os

import numpy as np

from cut_seeds import default_rows, rows_of
from decision_ac import meets_rule, statistics
from decision_m import NAMES, RESULTS, held_out_row
from rows import done_keys

SEEDS = (1, 2, 3, 4, 5, 6)
PLAN = {"switch_t": 0.0}


def stored():
    """{(cut, seed): the default's row} on seeds 1-6."""
    return {**default_rows(), **rows_of(os.path.join(RESULTS, "cut_seeds_56.jsonl"), "default", (5, 6))}


def acting_cells():
    """The cells where the default's first stage kept no part, in a fixed order: stage 3b ran, or no GP part and no
    guard result (a part the guards dropped was kept by stage 3 and takes the same path under AL)."""
    rows = stored()
    return [(n, s) for s in SEEDS for n in NAMES if rows[n, s]["other_floor"] is not None
            or (not rows[n, s]["gp_part"] and rows[n, s]["free_run"] is None)]


def same_t(a, b):
    if a is None or b is None or not (np.isfinite(a) and np.isfinite(b)):
        return a == b
    return bool(np.isclose(a, b, rtol=1e-6, atol=1e-9))


def comparable(al, default):
    """Whether AL's row repeats the stored default's selections on this machine: the same first-stage paired t and,
    where stage 3b ran under both, the same kind and a step that only AL's own acceptance can have moved (equal, or
    0 in the default where AL kept a part at 0 < t <= 1), with the same t over the first floor where both kept the
    same step. Where AL's first stage kept a part, stage 3b did not run under AL: the first-stage t decides."""
    if not same_t(al["t"], default["t"]):
        return False
    a, d = al["other_floor"], default["other_floor"]
    if a is None or d is None:
        return a is None  # 3b ran under the default only where AL's first stage kept a part; never the reverse
    if a["kind"] != d["kind"] or not (a["step"] == d["step"] or (d["step"] == 0 and a["step"] > 0)):
        return False
    return a["step"] != d["step"] or a["t"] is None or d["t"] is None or same_t(a["t"], d["t"])


def run(out, worker, workers, defaults):
    cells = acting_cells()[worker::workers]
    done = done_keys(out, "data", "variant", "seed")
    if defaults:
        mine = rows_of(out, "AL")
        base = stored()
        for name, seed in cells:
            if (name, seed) in mine and not comparable(mine[name, seed], base[name, seed]) \
                    and (name, "default", seed) not in done:
                held_out_row(out, name, "default", seed=seed)
        return
    for name, seed in cells:
        if (name, "AL", seed) not in done:
            held_out_row(out, name, "AL", plan=PLAN, seed=seed)


def decide(out):
    al, base, here = rows_of(out, "AL"), stored(), rows_of(out, "default")
    cells = acting_cells()
    missing = [c for c in cells if c not in al]
    pairs, kept, redo = {}, [], []
    for n in NAMES:
        pairs[n] = []
        for s in SEEDS:
            d = base[n, s]
            if (n, s) not in cells:
                pairs[n].append((d, d))
                continue
            if (n, s) not in al:
                continue
            a = al[n, s]
            if not comparable(a, d):
                if (n, s) not in here:
                    redo.append((n, s))
                    continue
                d = here[n, s]
            pairs[n].append((a, d))
            if a["gp_part"] or (a["other_floor"] or {}).get("kept"):
                kept.append((n, s, a["t"], a["causal"] / d["causal"], a["simulate"] / d["simulate"]))
    print(f"{len(cells)} acting cells; {len(missing)} without an AL row; not comparable and not refitted: {redo}")
    for n, s, t, c, sim in kept:
        print(f"  {n:18s} seed {s}: part kept (t {t}), causal {c:.3f}, simulate {sim:.3f}")
    if missing or redo:
        print("incomplete")
        return
    bounds, geo = statistics("AL over the default", pairs)
    adopted = meets_rule(geo, bounds)
    for n in ("reactor", "two_mass", "drive", "dryer2"):
        if n in pairs:
            print(f"  {n}: causal {np.exp(np.mean([np.log(a['causal'] / d['causal']) for a, d in pairs[n]])):.3f}")
    print("AL adopted" if adopted else "AL not adopted")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--defaults", action="store_true")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        decide(args.out)
    else:
        run(args.out, args.worker, args.workers, args.defaults)
