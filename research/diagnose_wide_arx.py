"""Why the GP part is never kept on the sets whose floor is a wide ARX (d_x = 20-40: the two masses, the three
tanks, dryer2, the steam generator): a diagnosis on training data only, no choice of the default made from it.

In the default check (research/results/defaults_v6.jsonl) the selection's fold error at its first evaluation
(step 50) is 1e2 to 1e18 times the floor's on these sets, for both step-size candidates, so the acceptance can only
keep the floor. This script runs the first two evaluations (steps 50 and 100) of the default fit's selection on a
training half (the folds are training data; the test half is not read), seed 0, with variants of which parameters
move, and prints each candidate's mean fold error over the floor's (step 0):

- V0: the default (candidates: the plain step; F, G, b at a tenth);
- FGb-fixed: F, G and b fixed at the floor's (the GP part, A and the noises train);
- A-slow: F, G, b and A at a tenth;
- all-slow: every parameter at a tenth (lr 0.001).

Run: python research/diagnose_wide_arx.py OUT.jsonl [--data two_mass ...]. Rows: one per (set, variant).
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import gpssm_np as gp
from defaults_check import dataset
from rows import done_keys

SLOW = {"F": 0.1, "G": 0.1, "b": 0.1}
VARIANTS = {
    "V0": {},
    "FGb-fixed": {"fixed": ("F", "G", "b"), "lr_scales": ({},)},
    "A-slow": {"lr_scales": (dict(SLOW, A=0.1),)},
    "all-slow": {"lr": 0.001, "lr_scales": ({},)},
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=["two_mass", "three_tanks", "dryer2", "steamgen"])
    args = parser.parse_args()
    done = done_keys(args.out, "data", "variant")
    for name in args.data:
        ds = dataset(name)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        for variant, options in VARIANTS.items():
            if (name, variant) in done:
                continue
            start = time.perf_counter()
            model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=0).fit(
                ds.y_train, ds.u_train, plan=dict(options, max_steps=100, eval_every=50, patience=10),
                progress=False)
            record = model.selection_["record"]
            floor = record[0]["rmse"]
            row = {"data": name, "variant": variant, "dim_x": model.spec.dim_x,
                   "floor_kind": model.selection_["floor"]["kind"], "floor_fold_rmse": floor,
                   "ratios": [[r["step"], [c / floor for c in r["candidates"]]] for r in record[1:]],
                   "seconds": time.perf_counter() - start}
            print(json.dumps(row), flush=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
