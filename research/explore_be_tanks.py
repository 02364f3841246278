"""Why decision BE kept no GP part on the cascaded tanks' cut where the default kept one (research/ablation_plan.md,
outcome of BE): the selection's record of one training seed's fit under BE's candidates and under the default's, the
mean fold error of each candidate at each evaluation, the step the acceptance tested and its paired t.

Run: python research/explore_be_tanks.py [seed ...]. Nothing in the package imports it."""
import sys

import numpy as np

import gpssm_np as gp
from decision_be import PLAN, natural_candidate
from decision_m import held_out_cut


def trace(seed, plan=None):
    ds = held_out_cut("tanks")
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
    model.fit(ds.y_train, ds.u_train, plan=plan, progress=False)
    sel = model.selection_
    for r in sel["record"]:
        print(f"  step {r['step']:5d}  " + "  ".join(f"{c:.4f}" if np.isfinite(c) else "  stop"
                                                    for c in r["candidates"]))
    print(f"  kept {sel['gp_part']}, step {sel['step']}, t {sel['t']}, lr_scale {sel['lr_scale']}, "
          f"other floor {sel['other_floor']}, free run {sel['free_run']}")


if __name__ == "__main__":
    for seed in map(int, sys.argv[1:] or ["1"]):
        print(f"seed {seed}, BE")
        undo = natural_candidate()
        try:
            trace(seed, PLAN)
        finally:
            undo()
        print(f"seed {seed}, default")
        trace(seed)
