"""Explorations, deciding nothing (research/ablation_plan.md, "the GP's inducing points where the plants leave the
most room" and "the squared-exponential kernel in place of the Matern-5/2"): the default fit against the same fit
with ``num_inducing=40`` (variant ``m40``) or ``kernel="se"`` (variant ``se``) on record ``R`` of some simulated plants
(``fresh_records.record``), training seed 1, scored on the record's second half (causal and simulate, seed 0);
``linear`` scores ``ARX()`` and ``LGSSM(dim_x="auto")`` on the same records. One JSON line per fit, appended.

Run: python research/explore_capacity.py {default|m40|se|linear} OUT plant[,plant...] R
This script is the research record's; nothing in the package imports it.
"""
import json
import sys

import gpssm_np as gp

from explore_hidden_lengthscales import fit_row
from fresh_records import record


def linear_rows(names, r, out):
    """``ARX()`` and ``LGSSM(dim_x="auto")`` at their defaults on each record, one JSON line each."""
    for name in names:
        ds = record(name, r)
        d_y, d_u = ds.y_train.shape[1], ds.u_train.shape[1]
        models = (("arx", gp.ARX(dim_y=d_y, dim_u=d_u)), ("lgssm", gp.LGSSM(dim_x="auto", dim_y=d_y, dim_u=d_u)))
        for kind, model in models:
            model.fit(ds.y_train, ds.u_train)
            row = {"data": name, "variant": kind, "record": r,
                   "causal": gp.evaluate(model, ds, "causal", seed=0)["rmse"],
                   "simulate": gp.evaluate(model, ds, "simulate", seed=0)["rmse"]}
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(row, flush=True)


def main(variant, out, names, r):
    names, r = names.split(","), int(r)
    if variant == "linear":
        return linear_rows(names, r, out)
    options = ({"num_inducing": int(variant[1:])} if variant.startswith("m") else
               {"kernel": variant} if variant == "se" else {})
    for name in names:
        fit_row(name, r, variant, out, **options)


if __name__ == "__main__":
    main(*sys.argv[1:])
