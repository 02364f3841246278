"""The other linear kind's pipeline on every held-out cut (research/ablation_plan.md, "the other kind's pipeline on
every cut": an exploration, deciding nothing).

For each of the 24 held-out cuts (decision BC's, the steam generator's left out) and training seed 1, the default fit
with the floor held to the linear kind that stage 1 did not choose there (``ODGPSSM(init=<the other kind>)``; the
kind chosen is decision BC's row's ``floor``), scored on the cut's last 30 % under causal and simulate. Rows:
variant "other", one per cut, appended (resumable); two workers share the cells. ``--decide`` prints, per cut, the
default's and the other pipeline's held-out errors, and over the cuts the geometric means of the better of the two
(an oracle: no rule on training data is this good) beside the better of the default's seeds 1 and 2 (the same
oracle over two training seeds of one pipeline: what picking the lower of two noisy fits gives by itself).

Run: python research/explore_both_floors.py research/results/explore_both_floors.jsonl --worker 0 --workers 2; then
--decide (a summary; nothing is decided). This script is the research record's; nothing in the package imports it.
"""
import json
import math

from decision_bd import baseline
from decision_m import held_out_row
from rows import pending, worker_main

VARIANT = "other"
SEED = 1
OTHER = {"arx": "lgssm", "lgssm": "arx"}


def cells():
    """(cut, the other kind) of every cut, the default's longest fit first."""
    rows = [r for (name, seed), r in baseline().items() if seed == SEED]
    return [(r["data"], OTHER[r["floor"]]) for r in sorted(rows, key=lambda r: -r["fit_seconds"])]


def run(out, worker, workers, reverse=False):
    for name, kind in pending(out, cells()[worker::workers], lambda c: (c[0], VARIANT, SEED), reverse):
        held_out_row(out, name, VARIANT, options={"init": kind}, seed=SEED)


def summarise(out):
    base = baseline()
    other = {r["data"]: r for r in map(json.loads, open(out))}
    logs = {"oracle": {"causal": [], "simulate": []}, "seeds": {"causal": [], "simulate": []},
            "other": {"causal": [], "simulate": []}}
    for name in sorted(other):
        d1, d2, o = base[name, SEED], base[name, 2], other[name]
        for p in ("causal", "simulate"):
            logs["other"][p].append(math.log(o[p] / d1[p]))
            logs["oracle"][p].append(math.log(min(o[p], d1[p]) / d1[p]))
            logs["seeds"][p].append(math.log(min(d2[p], d1[p]) / d1[p]))
        print(f"{name:18s} default {d1['floor']:5s} part {str(d1['gp_part']):5s} causal {d1['causal']:.4f}  "
              f"other part {str(o['gp_part']):5s} causal {o['causal']:.4f} ({o['causal'] / d1['causal']:.3f})  "
              f"simulate {o['simulate'] / d1['simulate']:.3f}")
    n = len(other)
    for key, label in (("other", "the other kind's pipeline"), ("oracle", "the better of the two (oracle)"),
                       ("seeds", "the better of the default's seeds 1 and 2 (oracle)")):
        print(f"{label}: " + ", ".join(f"{p} {math.exp(sum(v) / n):.3f}" for p, v in logs[key].items())
              + f" over the default's seed 1 ({n} cuts)")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, summarise)
