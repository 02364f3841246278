"""The cells of the five-seed default check (research/results/defaults_v6.jsonl) whose default fit kept no GP part,
scored again now that a GP model without a GP residual (A = 0) forecasts exactly, through the Kalman filter, instead
of through a particle filter and particle free runs (``GPSSM.linear_gaussian``).

Nothing of the fit changes: the model such a default fit returns is the floor refitted on all the training data
with A = 0 (stage 4 of ``models/default_fit.py``), and its interval calibration is that of the selection's step 0.
Both are reached here with a plan whose acceptance bar no GP part can pass (``switch_t`` = 1e300) after one selection
step (``max_steps`` = 1), which skips the rest of the selection's training. ``--verify``: for the cells named
(data:seed), the full default fit is run too and its parameters and calibration must equal the shortcut's to every
bit, else the script stops. The rows keep the fit time and the selection record of the v6 row (the default fit's
own) and add the new scores and this commit (``rescored_commit``).

Run: python research/rescore_floor_only.py research/results/defaults_v7_floor_only.jsonl [--data ...]
[--verify dryer:0 two_mass:0]. This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

import numpy as np

import gpssm_np as gp
from defaults_check import PROTOCOLS, dataset
from rows import done_keys, head_commit

SHORTCUT = dict(max_steps=1, eval_every=1, patience=1, switch_t=1e300)


def same_model(a, b):
    return (set(a.params) == set(b.params) and all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
            and np.array_equal(np.asarray(a.interval_scale_, dtype=float), np.asarray(b.interval_scale_, dtype=float)))


def floor_only_model(ds, seed, verify=False):
    """The floor-only model the default fit (``seed``) returns on ``ds`` when it keeps no GP part, by the shortcut
    (module docstring); with ``verify``, the full default fit must give the same model, else the script stops."""
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed).fit(ds.y_train, ds.u_train, plan=SHORTCUT, progress=False)
    if verify:
        full = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed).fit(ds.y_train, ds.u_train, progress=False)
        if full.selection_["gp_part"] or not same_model(full, model):
            raise SystemExit(f"{ds.name}:{seed}: the shortcut's model is not the default fit's")
    return model


def add_scores(row, model, ds, seed, old):
    """``row`` with ``model``'s scores on ``ds`` under every protocol beside ``old``'s (``<protocol>_before``)."""
    for protocol in PROTOCOLS:
        r = gp.evaluate(model, ds, protocol, seed=seed)
        row[protocol], row[protocol + "_orig"] = r["rmse"], r["rmse_original_units_per_output"]
        row[protocol + "_before"] = old[protocol]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "results", "defaults_v6.jsonl"))
    parser.add_argument("--data", nargs="+")
    parser.add_argument("--verify", nargs="*", default=[])
    args = parser.parse_args()
    done = done_keys(args.out, "data", "seed")
    commit = head_commit()
    source = [json.loads(line) for line in open(args.source)]
    cells = [r for r in source if r["model"] == "odgpssm" and not r["selection"]["gp_part"]
             and (args.data is None or r["data"] in args.data) and (r["data"], r["seed"]) not in done]
    for old in sorted(cells, key=lambda r: (r["data"], r["seed"])):
        name, seed = old["data"], old["seed"]
        ds = dataset(name)
        verified = f"{name}:{seed}" in args.verify
        model = floor_only_model(ds, seed, verified)
        sel = model.selection_
        assert not sel["gp_part"] and model.linear_gaussian() is not None
        assert json.loads(json.dumps(sel["floor"])) == old["selection"]["floor"], (name, seed)
        row = {k: old[k] for k in ("data", "seed", "model", "fit_seconds", "commit", "selection", "fold_rmse")}
        row.update(rescored_commit=commit, verified_against_full_fit=verified)
        add_scores(row, model, ds, seed, old)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in ("data", "seed", "causal", "causal_before", "simulate", "simulate_before",
                                                "verified_against_full_fit")}), flush=True)


if __name__ == "__main__":
    main()
