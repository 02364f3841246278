"""The default fit against the package's own linear models on every data set and simulator (issue #28's targets).

For each cell (data, seed): ``ODGPSSM(dim_y, dim_u, seed).fit(y_train, u_train)`` with nothing else set, beside
``ARX(dim_y=dy, dim_u=du)`` and ``LGSSM(dim_x="auto", ...)`` at their defaults on the same training part; each scored
under the causal and simulate protocols (and envi) on the test part. One JSON line per (data, seed, model) is
appended to OUT as soon as it is computed; a rerun skips the lines already there (resumable).

Run: python research/defaults_check.py OUT.jsonl [--seeds 0 1 ...] [--data name ...]
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import gpssm_np as gp
from gpssm_np.experiments.systems import NONLINEAR_SYSTEMS, make_system
from rows import done_keys, head_commit

DATA = ["actuator", "ballbeam", "drive", "dryer", "gas_furnace", "cd_player_arm", "winding", "dryer2", "steamgen"]
SIMULATORS = ["tanks", "hammerstein", "wiener", "pendulum", "duffing", "quad_tanks", "two_mass", "reactor",
              "three_tanks"]
PROTOCOLS = ("causal", "simulate", "envi")


def dataset(name):
    if name in NONLINEAR_SYSTEMS:
        y, u, _, _ = make_system(name)
        return gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)
    return gp.datasets.load(name)


def models(ds, seed):
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    return {"arx": gp.ARX(dim_y=dy, dim_u=du), "lgssm": gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du),
            "odgpssm": gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed)}


def selection_row(selection):
    """What a row keeps of a default fit's ``selection_``: the floor, s*, the paired t, whether the GP part was kept,
    stage 4's guards, the step-size candidate and stage 3b's record."""
    return {k: selection.get(k) for k in ("floor", "step", "t", "gp_part", "free_run", "lr_scale", "other_floor")}


def held_out_cuts(out, names):
    """For each set of ``names`` without a row in ``out`` (a JSON-lines file, rows keyed by "data"): (name, the
    70/30 cut of its training half as a Dataset), the held-out data of the decisions in research/ablation_plan.md."""
    done = done_keys(out, "data")
    for name in names:
        if name not in done:
            yield name, held_out_cut(name)


def held_out_cut(name, fraction=0.7):
    """The cut of set ``name``'s training half at ``fraction`` as a Dataset (the first ``fraction`` trains; 70 %: the
    held-out cut of the decisions)."""
    full = dataset(name)
    return gp.datasets.from_arrays(full.y_train, full.u_train, train_fraction=fraction, name=name)


def decision_cli(run, decide, names=DATA + SIMULATORS, variants=None):
    """The command line of a held-out decision script: ``OUT [--data name ...]`` runs ``run(out, names)`` (default
    ``names``; with ``names=None`` there is no ``--data`` and ``run(out)`` runs its own cells), ``--decide OUT``
    applies its rule (``decide(out)``). ``variants``: the choices of a required ``--variant`` when running, passed
    on as ``run(out, names, variant)``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    if names is not None:
        parser.add_argument("--data", nargs="+", default=names)
    if variants is not None:
        parser.add_argument("--variant", choices=variants)
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        decide(args.out)
    elif variants is not None:
        if args.variant is None:
            parser.error("--variant is required to run")
        run(args.out, args.data, args.variant)
    else:
        run(args.out) if names is None else run(args.out, args.data)


def fitted_row(name, ds, seed, kind, model, commit):
    """The row of one cell: ``model`` (of ``kind``: "arx", "lgssm" or "odgpssm") fitted to the training part of
    ``ds`` and scored under every protocol of :data:`PROTOCOLS` on its test part (a diverging model's error is
    kept in the row), with what its fit chose."""
    start = time.perf_counter()
    model.fit(ds.y_train, ds.u_train)
    row = {"data": name, "seed": seed, "model": kind, "fit_seconds": time.perf_counter() - start, "commit": commit}
    for protocol in PROTOCOLS:
        try:
            r = gp.evaluate(model, ds, protocol, seed=seed)
            row[protocol] = r["rmse"]
            row[protocol + "_orig"] = r["rmse_original_units_per_output"]
        except Exception as err:  # a diverging model is a result too
            row[protocol] = float("nan")
            row[protocol + "_error"] = repr(err)
    if kind == "odgpssm":
        row["selection"] = selection_row(model.selection_)
        row["fold_rmse"] = [(r["step"], r["rmse"], r.get("candidates")) for r in model.selection_["record"]]
    elif kind == "arx":
        row["orders"] = [model.na_, model.nb_]
    else:
        row["dim_x"] = model.spec.dim_x
    return row


def run_cells(out, seeds, names, kinds, dataset=dataset, linear_once=False):
    """Fit and score every (data, seed, model) of ``names`` x ``seeds`` x ``kinds`` (of :func:`models`) without a
    row in ``out``, appending each row as it is computed (resumable); ``dataset``: name -> Dataset. ``linear_once``:
    the linear models only with seed 0 (they draw no random numbers; one row per data set)."""
    done = done_keys(out, "data", "seed", "model")
    commit = head_commit()
    for seed in seeds:
        for name in names:
            ds = dataset(name)
            for kind, model in models(ds, seed).items():
                if kind not in kinds or (name, seed, kind) in done or (linear_once and kind != "odgpssm" and seed):
                    continue
                row = fitted_row(name, ds, seed, kind, model, commit)
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps({k: row[k] for k in ("data", "seed", "model", "causal", "simulate", "fit_seconds")}),
                      flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--data", nargs="+", default=DATA + SIMULATORS)
    parser.add_argument("--models", nargs="+", default=["arx", "lgssm", "odgpssm"])
    args = parser.parse_args()
    run_cells(args.out, args.seeds, args.data, args.models)


if __name__ == "__main__":
    main()
