"""What the default fit's selection saw on a training half: the floor, the fold origins, and per evaluation the mean
fold error of each step-size candidate and how many windows it is the mean of; then s*, the paired t and whether
the GP part was kept. Training halves only (``defaults_check.dataset``); no test half is read. ``--kind arx|lgssm``
holds the floor to that kind (the model's ``init``; stage 3b then does not run) instead of the better of the
two, to see what the selection would make of the other kind's floor on the same folds and windows.

Run: python research/diagnose_selection.py drive [ballbeam ...] [--seed 0] [--kind lgssm]
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json

import gpssm_np as gp
from gpssm_np.models.floor import FLOOR_KINDS

from defaults_check import dataset

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="+")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", choices=FLOOR_KINDS)
    args = parser.parse_args()
    for name in args.names:
        ds = dataset(name)
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=args.seed,
                          **({"init": args.kind} if args.kind else {}))
        model.fit(ds.y_train, ds.u_train, progress=False)
        sel = model.selection_
        print(json.dumps({"data": name, "seed": args.seed, "kind": args.kind, "training_steps": len(ds.y_train),
                          "floor": sel["floor"], "origins": sel["origins"]}))
        for r in sel["record"]:
            print(json.dumps({"step": r["step"], "candidates": [round(c, 4) for c in r["candidates"]],
                              "windows": [len(w) for w in r["windows"]]}))
        print(json.dumps({"step": sel["step"], "t": sel["t"], "gp_part": sel["gp_part"],
                          "free_run": sel["free_run"]}), flush=True)
