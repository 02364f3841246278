"""The current default on the 70/30 cuts of the 25 training halves (decision M's held-out cuts) with further
training seeds: the baseline a decision with several seeds per cut compares with, and the training seed's spread on
the cuts (research/ablation_plan.md, decision AC, which ran seeds 1 and 2 in research/results/decision_ac.jsonl).
One JSON line per (cut, seed), variant "default", appended (resumable; two workers can share the file with
disjoint seeds). No choice is made from it.

Run: python research/cut_seeds.py research/results/cut_seeds.jsonl --seed 3 [--data ...]. Seeds 3 and 4 are in
research/results/cut_seeds.jsonl (:func:`default_rows`' baseline); seeds 5 and 6, run for decisions that need more
seeds per cut (research/ablation_plan.md, after decision AH), in research/results/cut_seeds_56.jsonl.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

from decision_ac import print_cuts, run, statistics
from decision_m import NAMES, RESULTS


def rows_of(path, variant=None, seeds=None):
    """{(cut, seed): row} of the row file ``path`` (keys data, seed): only ``variant``'s rows and those of ``seeds``
    where given."""
    with open(path) as f:
        return {(r["data"], r["seed"]): r for r in map(json.loads, f)
                if (variant is None or r.get("variant") == variant) and (seeds is None or r["seed"] in seeds)}


def score_difference(*pairs):
    """The largest relative difference of the causal and simulate scores over the (row, other row) ``pairs``: 0 where
    two fits gave the same forecasts to every digit."""
    return max(abs(a[p] / b[p] - 1) for a, b in pairs for p in ("causal", "simulate"))


def default_rows():
    """{(cut, seed): row} of the default on seeds 1-4: decision AC's "default" rows (seeds 1, 2) and this script's
    (seeds 3, 4), the baseline of decisions with several seeds per cut."""
    return {**rows_of(os.path.join(RESULTS, "decision_ac.jsonl"), "default", (1, 2)),
            **rows_of(os.path.join(RESULTS, "cut_seeds.jsonl"), "default", (3, 4))}


def against_default(variant, rows, seeds=(1, 2, 3, 4)):
    """A variant's ``rows`` ({(cut, seed): row}, :func:`rows_of`) beside the default's (:func:`default_rows`) on
    ``seeds``: prints each complete cut's line and the statistics of the variant over the default, on all the
    seeds and on the first two alone (``decision_ac.print_cuts``, ``statistics``). Returns (pairs, missing, bounds,
    geo): {cut: [(variant's row, default's row) per seed]} of the complete cuts, the (cut, seed) without a row, and
    the upper bounds and geometric means by protocol (None while no cut is complete)."""
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
