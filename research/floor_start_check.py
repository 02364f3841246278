"""The validation-block loop started from the linear floor, checked on held-out cuts of training halves (training
data only; research/ablation_plan.md, "the validation-block loop starts from the floor"). Run with the package code to
check on the path: ``PYTHONPATH=CHECKOUT python research/floor_start_check.py NAME ...`` fits, with seed 0, to the 70 %
cut of each set's training half ``ODGPSSM(initial_state="smoothed")`` and ``ODGPSSM().fit(..., plan=BlockPlan())``
(the two configurations of the default settings whose start the change moves) and prints a JSON line per fit (its
scores on the last 30 %). Nothing in the package imports this script."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpssm_np as gp  # noqa: E402
from gpssm_np._versions import versions  # noqa: E402
from defaults_check import held_out_cut  # noqa: E402

CONFIGS = {"smoothed": ({"initial_state": "smoothed"}, None), "block_plan": ({}, gp.BlockPlan())}
for name in sys.argv[1:]:
    ds = held_out_cut(name)
    for config, (options, plan) in CONFIGS.items():
        t = time.time()
        m = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0, **options)
        m.fit(ds.y_train, ds.u_train, plan=plan, progress=False)
        out = {"data": name, "config": config, "code": (versions()["git_commit"] or "")[:7],
               "seconds": round(time.time() - t, 1),
               "causal": gp.evaluate(m, ds, "causal")["rmse"], "simulate": gp.evaluate(m, ds, "simulate")["rmse"],
               "kind": m.warm_start_, "dim_x": m.spec.dim_x}
        print(json.dumps(out), flush=True)
