"""Decision AJ of research/ablation_plan.md (stage 4's guards constrain the chosen step instead of dropping the GP
part), on training data only, by the held-out rule: on the five held-out cells (cut, training seed) where the
default's guards dropped a part, the default fit with AJ (:func:`guards_aj`), scored on the cut's last 30 % under
causal and simulate, against the default's rows (decision AC's and research/cut_seeds.py's). One JSON line per cell,
appended (resumable; two workers can share the file with disjoint cells).

Run: python research/decision_aj.py research/results/decision_aj.jsonl --cells ballbeam:1 tanks:2 ...; then
python research/decision_aj.py research/results/decision_aj.jsonl --decide. The research variant returns the
step it chose in ``aj_step`` (the row's ``step`` stays s*, and its calibration that of s*: RMSE does not read it).
This script is the research record's; nothing in the package imports it.
"""
import argparse
import os

import numpy as np

from gpssm_np.models.default_fit import DefaultFit
from gpssm_np.models.training import paired_t

from cut_seeds import default_rows, rows_of
from decision_m import NAMES, RESULTS, held_out_row, held_out_rule
from rows import done_keys

PACKAGE_GUARDS = DefaultFit.guards
#: The cells (cut, seed) of the 150 where the default's guards dropped a GP part (research/ablation_plan.md, AJ).
CELLS = [("ballbeam", 1), ("ballbeam", 5), ("ballbeam", 6), ("tanks", 2), ("deadzone_backlash", 6)]
#: What :func:`guards_aj` did in the current fit (either pipeline): the steps tried and the step returned.
TRIED = {"tried": [], "chosen": None}


def constrained_steps(record, candidate, switch_t):
    """The steps 0 < s < s* AJ tries: those of ``candidate`` whose windows beat step 0 by more than ``switch_t``
    standard errors, in ascending order of the candidate's mean fold error (ties: the earlier step)."""
    best = min(r["candidates"][candidate] for r in record)
    star = min(r["step"] for r in record if r["candidates"][candidate] == best and r["step"] > 0)
    steps = []
    for r in record:
        if 0 < r["step"] < star:
            t = paired_t(record[0]["windows"][candidate], r["windows"][candidate])
            if t is not None and t > switch_t:
                steps.append((r["candidates"][candidate], r["step"]))
    return [s for _, s in sorted(steps)]


def guards_aj(self, floor, ys, us):
    """AJ's stage 4 guards: the package's; where they fail, :func:`constrained_steps` refitted and guarded in
    turn, the first that passes kept (its step in ``TRIED["chosen"]``)."""
    result = PACKAGE_GUARDS(self, floor, ys, us)
    if result["passed"]:
        return result
    for s in constrained_steps(self.record, self.candidate, self.plan.switch_t):
        TRIED["tried"].append(s)
        self.refit(floor, ys, us, s)
        result = PACKAGE_GUARDS(self, floor, ys, us)
        if result["passed"]:
            TRIED["chosen"] = s
            return result
    return result


def run(out, cells):
    done = done_keys(out, "data", "seed")
    DefaultFit.guards = guards_aj
    for name, seed in cells:
        if (name, seed) in done:
            continue
        TRIED.update(tried=[], chosen=None)
        held_out_row(out, name, "AJ", [("aj_tried", lambda m: list(TRIED["tried"])),
                                       ("aj_step", lambda m: TRIED["chosen"])], seed=seed)


def baseline():
    """{(cut, seed): row} of the default on seeds 1-6."""
    return {**default_rows(), **rows_of(os.path.join(RESULTS, "cut_seeds_56.jsonl"), "default", (5, 6))}


def decide(out):
    """AJ's rule: over the five cells, the geometric mean of AJ's RMSE over the default's at most 0.95 under causal
    and 1.00 under simulate, no cell more than 5 % worse under causal; and, deciding nothing, over all 150 cells."""
    rows = rows_of(out, "AJ")
    default = baseline()
    for (name, seed), r in sorted(rows.items()):
        d = default[name, seed]
        # the same selection as the stored row (whose "step" is the returned one, 0 after its guards failed), and
        # AJ acted only where the guards failed at s* here too (AJ tried a step or returned the floor)
        same = bool(np.isclose(d["t"], r["t"], rtol=1e-6)) and bool(r["aj_tried"] or not r["gp_part"])
        print(f"{name} seed {seed}: s* {r['step']}, t {r['t']:.4f} (stored {d['t']:.4f}), s* refit's guards "
              f"{'failed' if r['aj_tried'] or not r['gp_part'] else 'passed'}; comparable {same}; tried "
              f"{r['aj_tried']}, chosen {r['aj_step']}")
    missing = [c for c in CELLS if c not in rows]
    pairs = [(f"{n} s{s}", default[n, s], rows[n, s]) for n, s in CELLS if (n, s) in rows]
    print("the rule over the comparable cells:")
    held_out_rule([p for p in pairs if np.isclose(p[1]["t"], p[2]["t"], rtol=1e-6)], "AJ", 0.95, 1.00, missing,
                  "the floor where the guards fail")
    print("over all five cells:")
    held_out_rule(pairs, "AJ", 0.95, 1.00, missing, "the floor where the guards fail")
    if not missing:
        ratios = {p: [np.log(rows[c][p] / default[c][p]) if c in rows else 0.0 for c in default]
                  for p in ("causal", "simulate")}
        print(f"over all {len(default)} cells (deciding nothing): " +
              ", ".join(f"{p} {np.exp(np.mean(v)):.4f}" for p, v in ratios.items()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cells", nargs="+", default=[f"{n}:{s}" for n, s in CELLS])
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        decide(args.out)
    else:
        cells = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cells]
        assert all(c in CELLS and c[0] in NAMES for c in cells), cells
        run(args.out, cells)
