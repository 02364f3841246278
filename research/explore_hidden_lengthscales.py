"""An exploration, deciding nothing (research/ablation_plan.md, "the hidden states' initial lengthscales"): the
default fit against the same fit with the GP's initial lengthscales of the states other than the outputs (GP inputs
d_y .. d_x - 1) at ``FACTOR`` times their spread, on record ``R`` (default 40, which no decision has used) of some
simulated plants (``fresh_records.record``), training seed 1, scored on the record's second half (causal and
simulate, seed 0). One JSON line per fit, appended.

Run: python research/explore_hidden_lengthscales.py {default|ls<FACTOR>} OUT plant[,plant...] [R]
This script is the research record's; nothing in the package imports it.
"""
import json
import sys
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import gpssm as gpssm_mod, warm_start

from fresh_records import record


def hidden_lengthscales(factor):
    """Patch the warm start so that the hidden states' initial lengthscales are ``factor`` times their spread."""
    original = gpssm_mod.initial_params

    def patched(spec, params, start, us, rng, gp_share=warm_start.GP_SHARE, lengthscale=None):
        if lengthscale is None:
            spread = np.maximum(warm_start.gp_inputs(start, us).std(axis=0), 1e-3)
            spread[spec.dim_y:spec.dim_x] *= factor  # the GP inputs after the outputs' d_y states, before u
            lengthscale = spread
        return original(spec, params, start, us, rng, gp_share=gp_share, lengthscale=lengthscale)

    gpssm_mod.initial_params = patched


def fit_row(name, r, variant, out, **model_options):
    """Fit the default ``ODGPSSM`` (seed 1, ``model_options`` added) to record ``r`` of plant ``name``, score it on
    the record's second half and append its JSON line to ``out``."""
    ds = record(name, r)
    start = time.perf_counter()
    m = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=1, **model_options).fit(
        ds.y_train, ds.u_train, progress=False)
    sel = m.selection_
    row = {"data": name, "variant": variant, "record": r, "seconds": time.perf_counter() - start,
           "causal": gp.evaluate(m, ds, "causal", seed=0)["rmse"],
           "simulate": gp.evaluate(m, ds, "simulate", seed=0)["rmse"],
           "floor": [sel["floor"]["kind"], sel["floor"]["orders"]], "step": sel["step"], "gp_part": sel["gp_part"]}
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(row, flush=True)


def main(variant, out, names, r=40):
    if variant.startswith("ls"):
        hidden_lengthscales(float(variant[2:]))
    for name in names.split(","):
        fit_row(name, r, variant, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:]))
