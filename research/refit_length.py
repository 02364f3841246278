"""The refit's held-out error past round(r s*) steps (research/ablation_plan.md, "the refit's held-out error past
round(r s*) steps": an exploration, deciding nothing). On the cells of decision AX's rows with training seeds 1 and 2
that kept a GP part, the default fit is run with its refit continued on the same run to round(c r s*) steps for each
c of :data:`FACTORS`; the averaged parameters at each are kept, the fit returns the default's (c = 1), and after the
fit each is scored on the cut's last 30 % under causal and simulate. One JSON line per cell (keys data, seed),
appended (resumable); two workers share the cells from both ends (``--reverse`` for the second).

Run: python research/refit_length.py research/results/refit_length.jsonl [--reverse]; then --summary.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os
import time

import numpy as np

import gpssm_np as gp
from cut_seeds import rows_of
from decision_ac import upper_bound
from decision_m import RESULTS, held_out_cut
from default_rows_machine import machine
from rows import pending

from gpssm_np.models import default_fit

FACTORS = (1.0, 1.25, 1.5)
SEEDS = (1, 2)
AX = (os.path.join(RESULTS, "decision_ax.jsonl"), "AX")
#: The averaged parameters of the latest refit at each factor, by factor.
KEPT = {}


def continued_refit(refit, refit_steps, fit, floor, ys, us, step, saved, factors):
    """Run ``refit`` (``DefaultFit.refit``, unpatched) of the pipeline ``fit`` for s* = ``step`` on to round(c r s*)
    steps for the largest c of ``factors`` (``refit_steps``: ``DefaultFit.refit_steps``, giving round(r s*)), on the
    same run; returns {c: the averaged parameters at round(c r s*)} for every c. The model is left at the longest."""
    base = refit_steps(fit, step)
    targets = [int(round(c * base)) for c in factors]
    fit.refit_steps = lambda s: max(targets)  # the run goes to the longest; its params are kept on the way
    advance, kept = default_fit.GrowingRun.advance, {}

    def advance_keeping(run, n):
        for _ in range(n):
            advance(run, 1)
            for c, t in zip(factors, targets):
                if run.steps == t:
                    kept[c] = run.params()
    default_fit.GrowingRun.advance = advance_keeping
    try:
        refit(fit, floor, ys, us, step, saved)
    finally:
        default_fit.GrowingRun.advance = advance
        del fit.refit_steps
    return kept


def append_row(out, row):
    """Append ``row`` to the row file ``out`` as a JSON line, and print it."""
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def longer_refit_patch():
    """The refit runs on to round(c r s*) for every c of FACTORS, keeping the averaged parameters at each; the model
    ends with those at c = 1 (the default's). Returns the undo."""
    cls = default_fit.DefaultFit
    saved_refit, saved_steps = cls.refit, cls.refit_steps

    def refit(self, floor, ys, us, step, saved=None):
        KEPT.clear()
        if not step:
            return saved_refit(self, floor, ys, us, step, saved)
        KEPT.update(continued_refit(saved_refit, saved_steps, self, floor, ys, us, step, saved, FACTORS))
        self.model.set_learned_params(KEPT[1.0])

    cls.refit = refit
    return lambda: setattr(cls, "refit", saved_refit)


def cells():
    ax = rows_of(*AX)
    keep = [(n, s) for (n, s), r in ax.items() if s in SEEDS and r["gp_part"]]
    return sorted(keep, key=lambda cell: -ax[cell]["fit_seconds"])


def run(out, reverse):
    undo = longer_refit_patch()
    try:
        for name, seed in pending(out, cells(), lambda cell: (cell[0], "refit_length", cell[1]), reverse):
            ds = held_out_cut(name)
            start = time.perf_counter()
            model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
            model.fit(ds.y_train, ds.u_train, progress=False)
            seconds = time.perf_counter() - start
            final = model.get_learned_params()
            own = bool(KEPT) and all(np.array_equal(final[k], KEPT[1.0][k]) for k in final)
            row = {"data": name, "variant": "refit_length", "seed": seed, "machine": machine(), "fit_seconds": seconds,
                   "gp_part": model.selection_["gp_part"], "step": model.selection_["step"], "own_refit": own,
                   "scores": {}}
            for c in FACTORS if own else ():
                model.set_learned_params(KEPT[c])
                row["scores"][str(c)] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in ("causal", "simulate")}
            append_row(out, row)
    finally:
        undo()


def summary(out):
    ax = rows_of(*AX)
    with open(out) as f:
        rows = {(r["data"], r["seed"]): r for r in map(json.loads, f)}
    apart = [k for k, r in rows.items() if not r["own_refit"]
             or max(abs(r["scores"]["1.0"][p] / ax[k][p] - 1) for p in ("causal", "simulate")) > 1e-8]
    print(f"{len(rows)} cells; reported apart (not the returned model's refit, or c = 1 not AX's row): {apart}")
    names = sorted({n for n, _ in rows})
    for c in FACTORS[1:]:
        for p in ("causal", "simulate"):
            d = {n: np.mean([np.log(r["scores"][str(c)][p] / r["scores"]["1.0"][p])
                             for (m, _), r in rows.items() if m == n and (m, _) not in apart]) for n in names}
            d = {n: v for n, v in d.items() if np.isfinite(v)}
            v = np.array(list(d.values()))
            print(f"c = {c}, {p}: {len(v)} cuts, geometric mean {np.exp(v.mean()):.4f}, upper bound "
                  f"{upper_bound(v):.4f}; >5 % better: "
                  + ", ".join(f"{n} {np.exp(x):.3f}" for n, x in sorted(d.items(), key=lambda t: t[1]) if x < np.log(0.95))
                  + "; >5 % worse: "
                  + ", ".join(f"{n} {np.exp(x):.3f}" for n, x in sorted(d.items(), key=lambda t: -t[1]) if x > np.log(1.05)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args.out) if args.summary else run(args.out, args.reverse)
