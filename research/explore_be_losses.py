"""Why decision BE lost where it lost (research/ablation_plan.md, outcome of BE): the selection's record of one
training seed's fit of a held-out cut under BE's candidates and under the default's, the mean fold error of each
candidate at each evaluation, the step the acceptance tested and its paired t, and, at the halving's evaluation (the
first at or after the plan's halving step, or the last where the runs stopped before), the paired t
(``training.paired_t``, over the fold windows) of each candidate still training against the one with the lowest error
there (by how many standard errors the leader led), and that of each candidate's lowest error against the lowest of
all (``DefaultFit.best_of``).

Run: python research/explore_be_losses.py CUT [seed ...] (the cascaded tanks' cut is "tanks"). Nothing in the package
imports it."""
import sys

import numpy as np

import gpssm_np as gp
from decision_be import PLAN, natural_candidate
from decision_m import held_out_cut
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.models.training import paired_t

HALVING = Plan().max_steps // len(Plan().seq_lens)  # the step where the candidates are halved (DefaultFit.live_runs)


def trace(name, seed, plan=None):
    ds = held_out_cut(name)
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
    model.fit(ds.y_train, ds.u_train, plan=plan, progress=False)
    sel = model.selection_
    for r in sel["record"]:
        print(f"  step {r['step']:5d}  " + "  ".join(f"{c:.4f}" if np.isfinite(c) else "  stop"
                                                    for c in r["candidates"]))
    at = next((r for r in sel["record"] if r["step"] >= HALVING), sel["record"][-1])  # the last where the runs stopped
    live = [c for c, e in enumerate(at["candidates"]) if np.isfinite(e)]
    leader = min(live, key=lambda c: at["candidates"][c])
    print(f"  at step {at['step']}: leader {leader}; paired t of each other candidate against it: "
          + ", ".join(f"{c}: {paired_t(at['windows'][c], at['windows'][leader]):.2f}" for c in live if c != leader))
    best = [min((r for r in sel["record"] if np.isfinite(r["candidates"][c])), key=lambda r: r["candidates"][c])
            for c in range(len(at["candidates"]))]
    chosen = DefaultFit.best_of(sel["record"])[1]
    print("  lowest of each candidate (step, error): "
          + ", ".join(f"{c}: ({b['step']}, {b['candidates'][c]:.4f})" for c, b in enumerate(best))
          + f"; paired t of each other's lowest against candidate {chosen}'s: "
          + ", ".join(f"{c}: {paired_t(best[c]['windows'][c], best[chosen]['windows'][chosen]):.2f}"
                      for c in range(len(best)) if c != chosen))
    print(f"  kept {sel['gp_part']}, step {sel['step']}, t {sel['t']}, lr_scale {sel['lr_scale']}, "
          f"other floor {sel['other_floor']}, free run {sel['free_run']}")


if __name__ == "__main__":
    name = sys.argv[1]
    for seed in map(int, sys.argv[2:] or ["1"]):
        print(f"{name} seed {seed}, BE")
        undo = natural_candidate()
        try:
            trace(name, seed, PLAN)
        finally:
            undo()
        print(f"{name} seed {seed}, default")
        trace(name, seed)
