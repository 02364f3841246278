"""Decision AH of research/ablation_plan.md (minibatches of 8 windows instead of 16), on training data only: on the
70/30 cuts of the 25 training halves, the default fit with ``Plan.batch_size = 8`` (variant "AH") on training seeds
1-4, scored on the last 30 % under causal and simulate, against the default's rows of the same cuts and seeds
(``cut_seeds.default_rows``); and a control, the default itself refitted on the gas furnace's cut with seed 1
(variant "control"), which must repeat its row to every digit. One JSON line per (cut, variant, seed), appended
(resumable; two workers can share the file with disjoint cuts).

Run: python research/decision_ah.py research/results/decision_ah.jsonl --seed 1 [--data name ...] (and seeds 2-4);
then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
from cut_seeds import against_default, default_rows, rows_of
from decision_ac import fit_seconds, run as run_plans, seeded_cli, statistics, verdict

SEEDS = (1, 2, 3, 4)
BOUND = 1.02
PLAN = {"batch_size": 8}
CONTROL = ("gas_furnace", 1)


def run(out, names, seed):
    """AH on every cut of ``names`` with training seed ``seed``; the control first where its cut and seed come up."""
    if (CONTROL[0] in names) and seed == CONTROL[1]:
        run_plans(out, [CONTROL[0]], seed, {"control": None})
    run_plans(out, names, seed, {"AH": PLAN})


def decide(out):
    """AH's rule (research/ablation_plan.md): nothing is decided unless the control repeats the default's row; then
    adopted if all 100 cells have rows and, under causal and under simulate, the upper bound of AH's geometric-mean
    ratio over the default on seeds 1-4 is at most :data:`BOUND`."""
    control = rows_of(out, "control").get(CONTROL)
    baseline = default_rows()[CONTROL]
    if control is None:
        print("the control has not run yet: nothing is decided")
        return
    same = all(control[p] == baseline[p] for p in ("causal", "simulate"))
    print(f"control ({CONTROL[0]}, seed {CONTROL[1]}): causal {control['causal']!r} against {baseline['causal']!r}, "
          f"simulate {control['simulate']!r} against {baseline['simulate']!r}: " + ("equal" if same else "NOT equal"))
    if not same:
        print("the baseline is not this machine's: nothing is decided")
        return
    pairs, missing, bounds, _ = against_default("AH", rows_of(out, "AH", SEEDS), SEEDS)
    if bounds is None:
        return
    statistics("AH over the default, seeds 3-4 alone", {n: p[2:] for n, p in pairs.items()})
    fit_seconds("AH", pairs)
    passed = all(bounds[p] <= BOUND for p in ("causal", "simulate"))
    verdict("AH", missing, passed, "the default keeps minibatches of 16")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
