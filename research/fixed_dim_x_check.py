"""A fixed dim_x (or a list of candidates) under the default fit, checked on held-out cuts of training halves
(training data only; research/ablation_plan.md, "a fixed dim_x under the default fit" and "a list of candidate dim_x
under the default fit"). Run with the package code to check on the path:
``PYTHONPATH=CHECKOUT python research/fixed_dim_x_check.py N NAME ...`` fits ``ODGPSSM(dim_x=N d_y)`` with seed 0 to the
70 % cut of each set's training half and prints a JSON line per set (its scores on the last 30 %); ``N`` written
``2,4,6`` fits ``ODGPSSM(dim_x=[2 d_y, 4 d_y, 6 d_y])``. Nothing in the package imports this script."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpssm_np as gp  # noqa: E402
from gpssm_np._versions import versions  # noqa: E402
from defaults_check import held_out_cut  # noqa: E402
for name in sys.argv[2:]:
    ds = held_out_cut(name)
    factors = [int(n) for n in sys.argv[1].split(",")]
    d = [n * ds.y_train.shape[1] for n in factors] if len(factors) > 1 else factors[0] * ds.y_train.shape[1]
    t = time.time()
    m = gp.ODGPSSM(dim_x=d, dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
    m.fit(ds.y_train, ds.u_train, progress=False)
    out = {"data": name, "dim_x": d, "chosen_dim_x": m.spec.dim_x, "code": (versions()["git_commit"] or "")[:7],
           "seconds": round(time.time() - t, 1),
           "causal": gp.evaluate(m, ds, "causal")["rmse"], "simulate": gp.evaluate(m, ds, "simulate")["rmse"],
           "kind": m.warm_start_, "plan": type(m.training_plan()).__name__}
    print(json.dumps(out), flush=True)
