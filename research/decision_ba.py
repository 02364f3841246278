"""Decision BA of research/ablation_plan.md (the refit trained for round(1.25 r s*) steps): the 70/30 cuts of the 24
training halves other than the steam generator, training seeds 3 and 4; one fit per cell gives both rows. The default
fit runs with its refit continued on the same run to round(1.25 r s*) (``refit_length.continued_refit``);
the longer refit's averaged parameters go through stage 4's guards against the same floor form (the floor form's
parameters kept for where they fail), the fit returns the default's model, and after it both are scored on the cut's
last 30 % under causal and simulate. One JSON line per cell, appended (resumable); two workers share the cells from
both ends (``--reverse`` for the second). The cells whose AX row kept a GP part come first.

Run: python research/decision_ba.py research/results/decision_ba.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import copy
import json
import os
import time

import numpy as np

import gpssm_np as gp
import decision_av
from cut_seeds import rows_of
from decision_ac import BOUND, statistics
from decision_m import NAMES, RESULTS, held_out_cut
from default_rows_machine import machine
from refit_length import append_row, continued_refit
from rows import pending

from gpssm_np.models import default_fit

FACTOR = 1.25
SEEDS = (3, 4)
LEFT_OUT = "steamgen"
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
AX = (os.path.join(RESULTS, "decision_ax.jsonl"), "AX")
#: What the latest refit with a GP part left: its parameters at round(r s*) and round(FACTOR r s*), the longer
#: one's guard record, the floor form's parameters, and its steps.
KEPT = {}
#: The first pipeline's floor form, which the fit returns where stage 3b's part is not kept.
FIRST_FLOOR = {}


def ba_patch():
    """The refit runs on to round(FACTOR r s*), keeping the averaged parameters at round(r s*) (which the model ends
    with) and at the end, and the longer one's guards; the training steps counted (``decision_av.counting``). Returns
    the undo."""
    cls = default_fit.DefaultFit
    saved_refit, saved_steps = cls.refit, cls.refit_steps
    undo_counting = decision_av.counting()

    def refit(self, floor, ys, us, step, saved=None):
        if not step:
            saved_refit(self, floor, ys, us, step, saved)
            if len(self.kinds) > 1:  # the first pipeline's floor form: where stage 3b's part fails BA's guards
                FIRST_FLOOR["model"] = copy.deepcopy(self.model)
            return
        KEPT.clear()
        kept = continued_refit(saved_refit, saved_steps, self, floor, ys, us, step, saved, (1.0, FACTOR))
        base, longer = (int(round(c * saved_steps(self, step))) for c in (1.0, FACTOR))
        KEPT["default"], KEPT["BA"], KEPT["extra_steps"] = kept[1.0], kept[FACTOR], longer - base
        decision_av.COUNTS["refit"] += longer
        KEPT["BA_guard"] = self.guards(floor, ys, us)
        KEPT["floor"] = self.floor_form(floor, ys, us).get_learned_params()
        KEPT["stage_3b"] = len(self.kinds) == 1  # the default model allows both kinds: one is stage 3b's pipeline
        self.model.set_learned_params(KEPT["default"])

    cls.refit = refit

    def t_over(self, first):
        """Stage 3b's t, and its t whatever the guards said (the longer refit's guards may pass where the default's
        did not; ablation_plan.md, BA's cells whose fit returned no model of its last refit)."""
        guarded = self.free_run
        self.free_run = {"passed": True}
        KEPT["t_unguarded"] = saved_t_over(self, first)
        self.free_run = guarded
        return saved_t_over(self, first)

    saved_t_over, cls.t_over = cls.t_over, t_over

    def undo():
        cls.refit, cls.t_over = saved_refit, saved_t_over
        undo_counting()
    return undo


def cells():
    ax = rows_of(*AX)
    mine = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    return sorted(mine, key=lambda cell: (not ax[cell]["gp_part"], -ax[cell]["fit_seconds"]))


def scores(model, ds):
    return {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in ("causal", "simulate")}


def run(out, reverse):
    undo = ba_patch()
    try:
        for name, seed in pending(out, cells(), lambda cell: (cell[0], "BA", cell[1]), reverse, settled):
            ds = held_out_cut(name)
            KEPT.clear()
            FIRST_FLOOR.clear()
            start = time.perf_counter()
            model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
            model.fit(ds.y_train, ds.u_train, progress=False)
            sel = model.selection_
            final = model.get_learned_params()
            own = "default" in KEPT and all(np.array_equal(final[k], KEPT["default"][k]) for k in final)
            row = {"data": name, "variant": "BA", "seed": seed, "machine": machine(),
                   "fit_seconds": time.perf_counter() - start, "gp_part": sel["gp_part"], "step": sel["step"],
                   "floor": sel["floor"]["kind"], "other_floor": sel["other_floor"], "free_run": sel["free_run"],
                   "selection_steps": decision_av.COUNTS["selection"], "refit_steps": decision_av.COUNTS["refit"],
                   "extra_steps": KEPT.get("extra_steps", 0)}
            for k in decision_av.COUNTS:
                decision_av.COUNTS[k] = 0
            row["default"] = scores(model, ds)
            if "BA" in KEPT:  # the longer refit's guards
                passed = bool(KEPT["BA_guard"]["passed"])
                row["BA_guard"] = {"passed": passed, "model": KEPT["BA_guard"]["model"],
                                   "floor": KEPT["BA_guard"]["floor"]}
                row["stage_3b"] = KEPT["stage_3b"]
            if own:  # BA's model: the longer refit where it passes the guards, else the floor form the fit returns
                if passed or not KEPT["stage_3b"]:
                    model.set_learned_params(KEPT["BA"] if passed else KEPT["floor"])
                    row["BA"] = scores(model, ds)
                else:  # stage 3b's t is None without its guards: the first pipeline's floor is returned
                    row["BA"] = scores(FIRST_FLOOR["model"], ds)
            elif "BA" in KEPT:  # a refit whose model the fit did not return (ablation_plan.md, BA): BA would have
                # returned the longer part where its guards pass and, from stage 3b, its unguarded t beats switch_t
                row["t_unguarded"] = KEPT.get("t_unguarded")
                returned = passed and (not KEPT["stage_3b"] or (row["t_unguarded"] is not None
                                                                and row["t_unguarded"] > default_fit.Plan().switch_t))
                row["BA_returned"] = returned
                if returned:
                    model.set_learned_params(KEPT["BA"])
                    row["BA"] = scores(model, ds)
                else:
                    row["BA"] = dict(row["default"])
            else:  # no refit with a GP part: both rows are the floor's
                row["BA"] = dict(row["default"])
            append_row(out, row)
    finally:
        undo()


def settled(row):
    """Whether ``row`` is final: the rows written without a BA row (before ablation_plan.md settled those cells) are
    fitted again."""
    return row["BA"] is not None


def decide(out):
    with open(out) as f:
        written = [json.loads(line) for line in f]
    rows = {(r["data"], r["seed"]): r for r in written}  # a cell fitted again: its later row
    for r in written:
        later = rows[r["data"], r["seed"]]
        if r is not later and r["default"] != later["default"]:
            print(f"  {r['data']} seed {r['seed']}: the default's row fitted again differs: {r['default']} against "
                  f"{later['default']}")
    every = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    missing = [c for c in every if c not in rows or rows[c]["BA"] is None]
    names = [n for n in NAMES if n != LEFT_OUT and all((n, s) in rows and rows[n, s]["BA"] for s in SEEDS)]
    if not names:
        print("no complete cut yet")
        return
    pairs = {n: [(rows[n, s]["BA"], rows[n, s]["default"]) for s in SEEDS] for n in names}
    bounds, means = statistics("BA over the default, seeds 3 and 4", pairs)
    dropped = [c for c, r in rows.items() if r.get("BA_guard") and not r["BA_guard"]["passed"]]
    print(f"  cells where the guards dropped the longer refit's part: {dropped}")
    base = sum(r["selection_steps"] + r["refit_steps"] - r["extra_steps"] for c, r in rows.items() if c[0] in names)
    ratio = sum(r["selection_steps"] + r["refit_steps"] for c, r in rows.items() if c[0] in names) / base
    print(f"  training steps over the complete cuts: {ratio:.3f} times the default's")
    adopted = not missing and ratio <= STEPS_RATIO
    adopted = adopted and all(bounds[p] <= BOUND and means[p] <= most for p, most in MEANS_AT_MOST.items())
    if missing:
        print(f"not run yet or apart: {missing}")
    print("BA adopted" if adopted else "BA not adopted")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out, args.reverse)
