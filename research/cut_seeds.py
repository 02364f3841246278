"""The current default on the 70/30 cuts of the 25 training halves (decision M's held-out cuts) with further
training seeds: the baseline a decision with several seeds per cut compares with, and the training seed's spread on
the cuts (research/ablation_plan.md, decision AC, which ran seeds 1 and 2 in research/results/decision_ac.jsonl).
One JSON line per (cut, seed), variant "default", appended (resumable; two workers can share the file with
disjoint seeds). No choice is made from it.

Run: PYTHONPATH=/work/main:. python research/cut_seeds.py research/results/cut_seeds.jsonl --seed 3 [--data ...].
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

from decision_ac import run
from decision_m import NAMES, RESULTS


def default_rows():
    """{(cut, seed): row} of the default on seeds 1-4: decision AC's "default" rows (seeds 1, 2) and this script's
    (seeds 3, 4), the baseline of decisions with several seeds per cut."""
    rows = {}
    for name, seeds in (("decision_ac.jsonl", (1, 2)), ("cut_seeds.jsonl", (3, 4))):
        rows.update({(r["data"], r["seed"]): r for r in map(json.loads, open(os.path.join(RESULTS, name)))
                     if r["variant"] == "default" and r["seed"] in seeds})
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--data", nargs="+", default=NAMES)
    args = parser.parse_args()
    run(args.out, args.data, args.seed, {"default": None})
