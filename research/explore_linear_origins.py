"""More rolling origins for the linear models' choices (research/ablation_plan.md, "more rolling origins for the
linear models' choices"; an exploration on fresh records, deciding nothing).

On records R = 100-104 of the 16 simulated plants (``fresh_records.record``), the first half training: ``ARX()`` and
``LGSSM(dim_x="auto")`` with the package's five origins and with :data:`MANY` (their order selection's
``rolling_origin`` calls given MANY origins, :func:`origins_patch`), each scored on the second half under causal and
simulate, with the floor's kind under each (the lower mean fold error, ``models/floor.choose_floor``'s rule). One JSON
line per (plant, record, origins), appended (resumable).

Run: python research/explore_linear_origins.py research/results/explore_linear_origins.jsonl; then --summary.
This script is the research record's; nothing in the package imports it.
"""
import json
from contextlib import contextmanager

import numpy as np

import gpssm_np as gp
from gpssm_np.baselines import arx, lgssm_order
from gpssm_np.datasets.folds import mean_error, rolling_origin

from cut_targets import LINEAR, PROTOCOLS
from fresh_records import NAMES, record
from rows import done_keys, run_or_summarise

RECORDS = (100, 101, 102, 103, 104)
MANY = 20


@contextmanager
def origins_patch(origins):
    """The ARX's and the LGSSM's order selection on ``origins`` rolling origins (the package's five: no change)."""
    saved = arx.rolling_origin, lgssm_order.rolling_origin

    def many(ys, us, *args, **kwargs):
        return rolling_origin(ys, us, origins)

    arx.rolling_origin = lgssm_order.rolling_origin = many
    try:
        yield
    finally:
        arx.rolling_origin, lgssm_order.rolling_origin = saved


def run(out):
    done = done_keys(out, "data", "record", "origins")
    for r in RECORDS:
        for name in NAMES:
            ds = None
            for origins in (5, MANY):
                if (name, r, origins) in done:
                    continue
                ds = record(name, r) if ds is None else ds
                dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
                row = {"data": name, "record": r, "origins": origins}
                with origins_patch(origins):
                    models = {"arx": gp.ARX(dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train),
                              "lgssm": gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)}
                for kind, model in models.items():
                    row[f"{kind}_fold"] = mean_error(model.fold_errors_ or [])
                    row[f"{kind}_repr"] = repr(model)
                    for p in PROTOCOLS:
                        row[f"{kind}_{p}"] = gp.evaluate(model, ds, p)["rmse"]
                row["floor"] = min(LINEAR, key=lambda k: (row[f"{k}_fold"], LINEAR.index(k)))
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps({k: v for k, v in row.items() if "repr" not in k}), flush=True)


def gm(values):
    return float(np.exp(np.mean(np.log(values))))


def summary(out):
    rows = {(r["data"], r["record"], r["origins"]): r for r in map(json.loads, open(out))}
    keys = sorted({(n, r) for n, r, _ in rows if (n, r, 5) in rows and (n, r, MANY) in rows})
    print(f"{len(keys)} records with both")
    for p in PROTOCOLS:
        print(f"\n{p}: {MANY} origins over 5 (geometric means over the records)")
        for what in LINEAR + ("floor",):
            def err(row):
                return row[f"{row['floor']}_{p}"] if what == "floor" else row[f"{what}_{p}"]
            ratios = np.array([err(rows[n, r, MANY]) / err(rows[n, r, 5]) for n, r in keys])
            by_plant = {n: gm([x for (m, _), x in zip(keys, ratios) if m == n]) for n in sorted({n for n, _ in keys})}
            worst = max(by_plant, key=by_plant.get)
            changed = int(np.sum(np.abs(ratios - 1) > 1e-12))
            print(f"  {what}: {gm(ratios):.4f}, changed on {changed} of {len(keys)}, worst plant {worst} "
                  f"{by_plant[worst]:.3f}, plants more than 5 % worse {sum(v > 1.05 for v in by_plant.values())}")
        for origins in (5, MANY):
            ratios = [rows[n, r, origins][f"{rows[n, r, origins]['floor']}_{p}"]
                      / min(rows[n, r, origins][f"{k}_{p}"] for k in LINEAR) for n, r in keys]
            print(f"  the floor over the better kind, {origins} origins: {gm(ratios):.4f}, "
                  f"the better kind on {sum(x == 1 for x in ratios)} of {len(ratios)}")


if __name__ == "__main__":
    run_or_summarise(run, summary)
