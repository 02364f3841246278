"""How much the default's test-half scores move with the training seed alone: the five-seed check's ODGPSSM rows
(the files of docs/results.md, section 1, a later file's row replacing an earlier one's), each seed k = 1-4 against
seed 0, and two seeds against two others (each set's two ratios averaged in log): the number of sets that change,
the geometric mean of the ratios, the worst set and how many are more than 5 % worse. ``--cuts``: the same on the
25 held-out cuts of the decisions (seed 0: ``decision_y.current_rows()``; seeds 1 and 2: decision AC's "default"
rows; seeds 3 and 4: research/results/cut_seeds.jsonl), over the seeds present. The background of decision AC in
research/ablation_plan.md; nothing is chosen from it.

Run: python research/seed_spread.py [--protocol causal] [--cuts]. This script is the research record's; nothing in
the package imports it.
"""
import argparse
import json
import math
import os

from defaults_check import DATA, SIMULATORS

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
FILES = ("defaults_v9.jsonl", "defaults_v9_s1.jsonl", "defaults_v9_s234.jsonl", "stage_3b_refits.jsonl",
         "defaults_y_s0.jsonl", "defaults_y_s1234.jsonl", "defaults_y_steamgen.jsonl", "defaults_ax_s0.jsonl",
         "defaults_ax_s12.jsonl", "defaults_ax_s34.jsonl", "defaults_ax_steamgen.jsonl")
PAIRINGS = (((1, 2), (3, 4)), ((1, 3), (2, 4)), ((1, 4), (2, 3)), ((0, 1), (2, 3)), ((0, 2), (1, 3)),
            ((0, 3), (1, 4)))


def scores(protocol):
    """{(data, seed): RMSE} of the default ODGPSSM under ``protocol`` on the 18 sets of the five-seed check."""
    by = {}
    for name in FILES:
        for r in map(json.loads, open(os.path.join(RESULTS, name))):
            if r["model"] == "odgpssm" and r["data"] in DATA + SIMULATORS:
                by[(r["data"], r["seed"])] = r[protocol]
    return by


def cut_scores(protocol):
    """{(cut, seed): RMSE} of the default on the held-out cuts under ``protocol`` (module docstring, ``--cuts``)."""
    from cut_seeds import default_rows
    from decision_y import current_rows
    by = {(name, 0): row[protocol] for name, row in current_rows().items()}
    by.update({key: row[protocol] for key, row in default_rows().items()})
    return by


def line(label, ratios, noun="sets"):
    geo = math.exp(sum(math.log(x) for x in ratios.values()) / len(ratios))
    worst = max(ratios, key=ratios.get)
    changed = sum(abs(x - 1.0) > 1e-9 for x in ratios.values())
    print(f"{label}: {len(ratios)} {noun}, {changed} changed, geometric mean {geo:.3f}, worst {worst} "
          f"{ratios[worst]:.3f}, more than 5 % worse on {sum(x > 1.05 for x in ratios.values())}")


def main(protocol, cuts=False):
    by, noun = (cut_scores(protocol), "cuts") if cuts else (scores(protocol), "sets")
    sets = sorted({d for d, _ in by})
    for k in (1, 2, 3, 4):
        ratios = {d: by[d, k] / by[d, 0] for d in sets if (d, k) in by and (d, 0) in by}
        if ratios:
            line(f"seed {k} over seed 0", ratios, noun)
    for (a, b), (c, d) in PAIRINGS:
        ratios = {s: math.sqrt(by[s, a] / by[s, c] * by[s, b] / by[s, d]) for s in sets
                  if all((s, k) in by for k in (a, b, c, d))}
        if ratios:
            line(f"seeds {a}, {b} over seeds {c}, {d}", ratios, noun)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="causal", choices=("causal", "simulate"))
    parser.add_argument("--cuts", action="store_true")
    args = parser.parse_args()
    main(args.protocol, args.cuts)
