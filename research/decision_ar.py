"""Decision AR of research/ablation_plan.md (Adam's step on the linear part at its fan-in as the only step-size
candidate: decision AQ's plain candidate, F's factor at 1 / d_x and G's at 1 / d_u, in place of the default's two
candidates), on training data only: the 70/30 cuts of the 25 training halves, training seeds 1 and 2, scored on each
cut's last 30 % under causal and simulate. The default's rows are decision AM's "default" rows
(research/results/decision_am.jsonl). One JSON line per (cut, seed), variant "AR", appended (resumable; two workers
share the file with disjoint cells).

Run: python research/decision_ar.py research/results/decision_ar.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. This script is the research record's; nothing in the package imports it.
"""
from decision_ac import meets_rule
from decision_am import cut_cells, decide_variant, print_changed, run_variant
from decision_aq import fan_in_steps
from rows import worker_main

SEEDS = (1, 2)
PLAN = {"lr_scales": ({},)}  # one candidate, the plain step; fan_in_steps puts F and G at their fan-in


def run(out, worker, workers, reverse=False):
    run_variant(out, "AR", cut_cells(SEEDS)[worker::workers], fan_in_steps, plan=PLAN, reverse=reverse)


def decide(out):
    decide_variant(out, "AR", SEEDS, lambda geo, bounds, ratio: meets_rule(geo, bounds) and ratio <= 1.25,
                   lambda rows, pairs: print_changed(pairs, SEEDS))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
