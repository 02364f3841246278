"""What the default fit's selection finds on the Hammerstein plant when it never stops early: the default fit with
``patience`` at the whole budget (30 evaluations) on decision AA's held-out cut of its training half, or on the
training half of its fresh record 12 (research/fresh_records.py), printing the fold error of each step-size
candidate by step and, for the cut, the held-out 30 % (training data of the five-seed check). No test half is read.

Run: python research/diagnose_patience.py cut|r12
This script is the research record's; nothing in the package imports it.
"""
import json
import sys

import gpssm_np as gp

from decision_m import held_out_cut
from fresh_records import record

if __name__ == "__main__":
    which = sys.argv[1]
    ds = held_out_cut("hammerstein") if which == "cut" else record("hammerstein", 12)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
    model.fit(ds.y_train, ds.u_train, plan={"patience": 30}, progress=False)
    selection = model.selection_
    print(json.dumps({k: selection[k] for k in ("step", "t", "gp_part", "lr_scale")}), selection["floor"]["kind"],
          selection["other_floor"])
    for r in selection["record"]:
        print(r["step"], [round(c, 4) for c in r["candidates"]])
    if which == "cut":
        print("held-out 30 %:", gp.evaluate(model, ds, "causal", seed=0)["rmse"],
              gp.evaluate(model, ds, "simulate", seed=0)["rmse"])
