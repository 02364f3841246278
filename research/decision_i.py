"""Decision I of research/ablation_plan.md (the ensemble Kalman filter for the GP model's state estimates), on
training data only, by the held-out rule of decisions C, E and H.

Each set's training half (research/defaults_check.py's sets) is cut at 70 %; the fit (seed 0) is on the first 70 %,
the scores on the last 30 % under the causal protocol (100-step windows, the state filtered from the 100 steps
before each) and the simulate protocol (n_init = 5).

- ``I``: the default fit of ``gp.ODGPSSM(..., filter_method="enkf")``: its selection's fold scores and its forecasts
  from data filter with the ensemble Kalman filter.
- ``default``: the default's scores with the current code. Where decision E's row (research/results/
  decision_e.jsonl, the package's default fit) kept a GP part, that row (the code of such a model's forecasts has
  not changed since); where it kept none, the floor-only model the default fit returns, reached by
  research/rescore_floor_only.py's shortcut (its equality with the full fit's model is checked there) and scored
  with the exact forecasts of a model without a GP residual.

Run: python research/decision_i.py I research/results/decision_i.jsonl; python research/decision_i.py default
research/results/decision_i_default.jsonl; then python research/decision_i.py I research/results/decision_i.jsonl
--decide (decision_ce.py's ``decide``, with decision H's rule). This script is the research record's; nothing in the
package imports it.
"""
import argparse
import json
import os
import time

import gpssm_np as gp
from decision_ce import decide
from defaults_check import DATA, SIMULATORS, held_out_cuts
from rescore_floor_only import SHORTCUT

RESULTS = os.path.join(os.path.dirname(__file__), "results")


def score(row, model, ds):
    for protocol in ("causal", "simulate"):
        row[f"model_{protocol}"] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
    return row


def run_variant(out, names):
    for name, ds in held_out_cuts(out, names):
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0, filter_method="enkf")
        model.fit(ds.y_train, ds.u_train, progress=False)
        sel = model.selection_
        row = {"data": name, "variant": "I", "fit_seconds": time.perf_counter() - start, "gp_part": sel["gp_part"],
               "step": sel["step"], "t": sel["t"], "lr_scale": sel["lr_scale"],
               "candidates": [r["candidates"] for r in sel["record"]]}
        write(out, score(row, model, ds))


def run_default(out, names):
    e_rows = {r["data"]: r for r in map(json.loads, open(os.path.join(RESULTS, "decision_e.jsonl")))}
    for name, ds in held_out_cuts(out, names):
        old = e_rows[name]
        if old["gp_part"]:
            row = dict(old, variant="default", source="decision_e.jsonl")
        else:
            model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
            model.fit(ds.y_train, ds.u_train, plan=SHORTCUT, progress=False)
            assert not model.selection_["gp_part"] and model.linear_gaussian() is not None
            row = score({"data": name, "variant": "default", "gp_part": False, "source": "floor-only, rescored",
                         "before_causal": old["model_causal"], "before_simulate": old["model_simulate"]}, model, ds)
        write(out, row)


def write(out, row):
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps({k: row[k] for k in row if k != "candidates"}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("I", "default"))
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=DATA + SIMULATORS)
    parser.add_argument("--decide", action="store_true")
    parser.add_argument("--default", default=os.path.join(RESULTS, "decision_i_default.jsonl"))
    args = parser.parse_args()
    if args.decide:
        decide("I", args.out, args.default)
    else:
        (run_variant if args.what == "I" else run_default)(args.out, args.data)
