"""The free-run guard of the five-seed default check's cells that kept a GP part (research/results/defaults_v6.jsonl),
applied again at the current code.

Those rows were computed before a GP model without a GP residual forecast exactly (86ae05f). Stage 4's free-run guard
compares the refitted model's free run of the training record with the floor's in the model's form (A = 0), and
that floor now forecasts exactly, through the Kalman filter, where it forecast through particles before: the
guard's reference changed although no fit did. This script recomputes the floor's free-run error on each training
half as the guard does (``guards.free_run_check`` on the floor in the model's form, the cell's seed) and
applies the guard to the model's recorded free-run error (its GP part forecasts through particles, as before) and
its recorded far-field radii. Where the outcome changes, the current default returns the floor, and its test scores
are those of the floor-only model (research/rescore_floor_only.py's shortcut, which ``--verify`` checks against
the full default fit for the cells named). One JSON line per cell, appended (resumable).

Run: python research/recheck_free_run_guard.py research/results/defaults_v8_guard.jsonl [--verify data:seed ...].
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os

import gpssm_np as gp
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.models.guards import far_field_passes, free_run_check

from defaults_check import dataset
from rescore_floor_only import add_scores, floor_only_model
from rows import done_keys, head_commit


def floor_free_run_error(ds, seed):
    """The floor's free-run error on the training half as stage 4's guard computes it (model units)."""
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed)
    ys, us = (list(part) for part in zip(*model._training_data(ds.y_train, ds.u_train)))
    pipeline = DefaultFit(model, seed=seed)
    as_floor = pipeline.floor_form(pipeline.floor(ys, us), ys, us)
    plan = Plan()
    return free_run_check(as_floor, as_floor, ys, us, plan.free_run_factor, seed, plan.num_samples,
                          plan.num_particles)["floor"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--verify", nargs="*", default=[])
    args = parser.parse_args()
    done = done_keys(args.out, "data", "seed")
    commit = head_commit()
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "defaults_v6.jsonl")
    cells = [r for r in map(json.loads, open(source))
             if r["model"] == "odgpssm" and r["selection"]["gp_part"] and (r["data"], r["seed"]) not in done]
    for old in sorted(cells, key=lambda r: (r["data"], r["seed"])):
        name, seed = old["data"], old["seed"]
        ds = dataset(name)
        guard = old["selection"]["free_run"]
        floor_error = floor_free_run_error(ds, seed)
        far = guard["far_field"]
        passed = bool(guard["model"] <= Plan().free_run_factor * floor_error
                      and far_field_passes(far["model"], far["floor"]))
        row = {"data": name, "seed": seed, "commit": commit, "model_error": guard["model"],
               "floor_error_before": guard["floor"], "floor_error": floor_error, "passed": passed}
        if not passed:
            row["verified_against_full_fit"] = f"{name}:{seed}" in args.verify
            add_scores(row, floor_only_model(ds, seed, row["verified_against_full_fit"]), ds, seed, old)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row.get(k) for k in ("data", "seed", "model_error", "floor_error_before", "floor_error",
                                                  "passed", "causal", "causal_before")}), flush=True)


if __name__ == "__main__":
    main()
