"""The current default on the 70/30 cuts of the 25 training halves (decision M's held-out cuts) with further
training seeds: the baseline a decision with several seeds per cut compares with, and the training seed's spread on
the cuts (research/ablation_plan.md, decision AC, which ran seeds 1 and 2 in research/results/decision_ac.jsonl).
One JSON line per (cut, seed), variant "default", appended (resumable; two workers can share the file with
disjoint seeds). No choice is made from it.

Run: python research/cut_seeds.py research/results/cut_seeds.jsonl --seed 3 [--data ...].
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

from decision_ac import print_cuts, run, statistics
from decision_m import NAMES, RESULTS


def default_rows():
    """{(cut, seed): row} of the default on seeds 1-4: decision AC's "default" rows (seeds 1, 2) and this script's
    (seeds 3, 4), the baseline of decisions with several seeds per cut."""
    rows = {}
    for name, seeds in (("decision_ac.jsonl", (1, 2)), ("cut_seeds.jsonl", (3, 4))):
        rows.update({(r["data"], r["seed"]): r for r in map(json.loads, open(os.path.join(RESULTS, name)))
                     if r["variant"] == "default" and r["seed"] in seeds})
    return rows


def against_default(variant, out, seeds=(1, 2, 3, 4)):
    """The rows of ``variant`` in ``out`` (keys data, seed) beside the default's (:func:`default_rows`) on
    ``seeds``: prints each complete cut's line and the statistics of the variant over the default, on all the
    seeds and on the first two alone (``decision_ac.print_cuts``, ``statistics``). Returns (pairs, missing, bounds,
    geo): {cut: [(variant's row, default's row) per seed]} of the complete cuts, the (cut, seed) without a row, and
    the upper bounds and geometric means by protocol (None while no cut is complete)."""
    rows = {(r["data"], r["seed"]): r for r in map(json.loads, open(out))}
    default = default_rows()
    names = [n for n in NAMES if all((n, s) in rows for s in seeds)]
    missing = [(n, s) for n in NAMES for s in seeds if (n, s) not in rows]
    pairs = {n: [(rows[n, s], default[n, s]) for s in seeds] for n in names}
    print_cuts(variant, pairs, seeds)
    if not names:
        print("no complete cut yet")
        return pairs, missing, None, None
    bounds, geo = statistics(f"{variant} over the default", pairs)
    statistics(f"{variant} over the default, seeds {seeds[0]}-{seeds[1]} alone", {n: p[:2] for n, p in pairs.items()})
    return pairs, missing, bounds, geo


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--data", nargs="+", default=NAMES)
    args = parser.parse_args()
    run(args.out, args.data, args.seed, {"default": None})
