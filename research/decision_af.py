"""Decision AF of research/ablation_plan.md (decision AC's single step-size candidate, F, G, b at a tenth of Adam's
step, on training seeds 1-4), on training data only: on the 70/30 cuts of the 25 training halves, the default fit
with ``Plan.lr_scales`` the tenth alone (variant "AF") on seeds 3 and 4, scored on the last 30 % under causal and
simulate; seeds 1 and 2 are decision AC's rows of the same plan. Against the default's rows of the same cuts and
seeds (``cut_seeds.default_rows``). One JSON line per (cut, seed), appended (resumable; two workers can share the
file with disjoint seeds).

Run: python research/decision_af.py research/results/decision_af.jsonl --seed 3
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import os

from cut_seeds import against_default, rows_of
from decision_ac import PLANS, fit_seconds, run as run_plans, seeded_cli, statistics, verdict
from decision_m import RESULTS

SEEDS = (1, 2, 3, 4)
NEW_SEEDS = (3, 4)  # fitted by this script; seeds 1 and 2 are decision AC's rows
BOUND = 1.02
TENTH = {"F": 0.1, "G": 0.1, "b": 0.1}


def run(out, names, seed):
    """AF on every cut of ``names`` with training seed ``seed`` (3 or 4)."""
    if seed not in NEW_SEEDS:
        raise SystemExit(f"--seed: AF fits seeds {NEW_SEEDS}; seeds 1 and 2 are decision AC's rows")
    run_plans(out, names, seed, {"AF": PLANS["AC"]})


def af_rows(out):
    """{(cut, seed): row} of AF: this script's rows (seeds 3, 4) and decision AC's "AC" rows (seeds 1, 2)."""
    return {**rows_of(os.path.join(RESULTS, "decision_ac.jsonl"), "AC"), **rows_of(out, seeds=NEW_SEEDS)}


def decide(out):
    """AF's rule (research/ablation_plan.md): adopted if all 100 cells have rows and, under causal and under
    simulate, the upper bound of AF's geometric-mean ratio over the default on seeds 1-4 is at most :data:`BOUND`
    and its geometric mean on seeds 3-4 alone at most 1; beside it, the check that the new rows equal the default's
    where the default kept the tenth's part from its own floor."""
    pairs, missing, bounds, _ = against_default("AF", af_rows(out), SEEDS)
    if bounds is None:
        return
    _, fresh = statistics("AF over the default, seeds 3-4 alone", {n: p[2:] for n, p in pairs.items()})
    same = [(af, d) for p in pairs.values() for af, d in p[2:] if d["lr_scale"] == TENTH and d["other_floor"] is None]
    unequal = [af["data"] for af, d in same if any(af[p] != d[p] for p in ("causal", "simulate"))]
    print(f"new rows where the default kept the tenth's part: {len(same)}, equal to the default's to every digit on "
          f"{len(same) - len(unequal)}" + (f" (not: {unequal})" if unequal else ""))
    fit_seconds("AF", pairs)
    passed = all(bounds[p] <= BOUND and fresh[p] <= 1.0 for p in ("causal", "simulate"))
    verdict("AF", missing, passed, "the default keeps both candidates")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
