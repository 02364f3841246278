"""The GP's share of the process noise at the start of the default fit (``warm_start.GP_SHARE``, 0.5 of the smallest
process-noise variance), changed for a probe on training data only: the default ODGPSSM (seed 0) with another share
on the 70/30 cut of a set's training half, scored on the last 30 % under causal and simulate. One JSON line per set.

Run: python research/probe_gp_share.py OUT.jsonl SHARE name [name ...]
This script is the research record's; nothing in the package imports it.
"""
import json
import sys
import time

import gpssm_np as gp
from gpssm_np.models import warm_start

from defaults_check import held_out_cut

if __name__ == "__main__":
    out, share = sys.argv[1], float(sys.argv[2])
    warm_start.initial_params.__defaults__ = (share,)  # the default fit's warm start takes the default argument
    for name in sys.argv[3:]:
        ds = held_out_cut(name)
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
        model.fit(ds.y_train, ds.u_train, progress=False)
        sel = model.selection_
        row = {"data": name, "gp_share": share, "fit_seconds": time.perf_counter() - start, "gp_part": sel["gp_part"],
               "floor": sel["floor"]["kind"], "t": sel["t"], "step": sel["step"], "other_floor": sel["other_floor"]}
        for protocol in ("causal", "simulate"):
            row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
