"""What the default fit does on the two masses' training half from the LGSSM floor (research/ablation_plan.md, "the
two masses from the LGSSM floor": a diagnosis, deciding nothing, written after its runs).

For training seed S, the default fit held to the LGSSM floor (``ODGPSSM(init="lgssm")``) three ways: ``default``
(the package's stage 4), ``no-guard`` (the free-run guard's factor 1e9, so the refitted GP part is returned whatever
its free run) and ``fold-model`` (no guard, and stage 4 returns the latest fold's run at s* instead of the refit:
decision V's ``refit_v``). Printed: the selection's fold errors (step 0 and the lowest), the paired t, s*, the
guard's free-run errors, and the test half's causal and simulate errors. The test half is read: nothing may be
chosen from this.

Run: python research/diagnose_two_mass_lgssm.py default|no-guard|fold-model SEED. This script is the research
record's; nothing in the package imports it.
"""
import json
import sys

import gpssm_np as gp
from gpssm_np.models.default_fit import DefaultFit

import decision_v
from defaults_check import dataset


def main(how, seed):
    if how == "fold-model":
        DefaultFit.refit = decision_v.refit_v
    plan = None if how == "default" else {"free_run_factor": 1e9}
    ds = dataset("two_mass")
    model = gp.ODGPSSM(dim_y=2, dim_u=1, seed=seed, init="lgssm").fit(ds.y_train, ds.u_train, plan=plan, progress=False)
    sel = model.selection_
    print(json.dumps({"how": how, "seed": seed, "gp_part": sel["gp_part"], "step": sel["step"], "t": sel["t"],
                      "step0": sel["record"][0]["rmse"], "lowest": min(r["rmse"] for r in sel["record"]),
                      "free_run": sel["free_run"], "causal": gp.evaluate(model, ds, "causal")["rmse"],
                      "simulate": gp.evaluate(model, ds, "simulate")["rmse"]}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
