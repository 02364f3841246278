"""What the choice of one linear kind costs on the 25 held-out cuts (research/ablation_plan.md, "what the choice of one
linear kind costs on the held-out cuts"; a reading on training data only, deciding nothing).

On each 70/30 cut (``decision_m.held_out_cut``): ``ARX()`` and ``LGSSM(dim_x="auto")`` fitted to the first 70 %, their
causal and simulate forecasts of the last 30 % (seed 0, as ``gp.evaluate`` makes them), and the mean of the two
forecasts' means, each scored by RMSE on the standardised scale. One JSON line per cut, appended (resumable).
``--summary`` compares the folds' kind (research/results/cut_targets.jsonl, model "floor"), the other kind and the mean
forecast with the better of the two per cut.

Run: python research/explore_linear_combination.py research/results/explore_linear_combination.jsonl; then --summary.
This script is the research record's; nothing in the package imports it.
"""
import json
import os

import numpy as np

from gpssm_np import protocols
from gpssm_np.metrics import rmse

from cut_seeds import RESULTS
from cut_targets import LINEAR, PROTOCOLS, linear_model
from decision_m import NAMES, held_out_cut
from rows import done_keys, run_or_summarise


def forecasts(model, ds):
    """{protocol: [(the forecast's mean, the outputs it forecasts), ...]} under causal (one pair per window) and
    simulate (one pair), both on the standardised scale."""
    data = protocols.evaluation_data(model, ds)
    causal = [(fc.mean, data.y_test[s:s + len(fc.mean)]) for s, fc in protocols.causal_forecasts(model, data)]
    fc = protocols.simulate_forecast(model, data)
    simulate = [(fc.mean, data.y_test[protocols.N_INIT:])]
    return {p: [(m / data.y_scale, y / data.y_scale) for m, y in pairs]
            for p, pairs in (("causal", causal), ("simulate", simulate))}


def score(pairs):
    """The protocol's RMSE: the mean over its windows of each window's RMSE (``protocols._summarise``)."""
    return float(np.mean([rmse(y, m) for m, y in pairs]))


def run(out):
    done = done_keys(out, "data")
    for name in NAMES:
        if name in done:
            continue
        ds = held_out_cut(name)
        fcs = {who: forecasts(linear_model(who, ds.y_train.shape[1], ds.u_train.shape[1]).fit(ds.y_train, ds.u_train),
                              ds) for who in LINEAR}
        row = {"data": name}
        for p in PROTOCOLS:
            for who in LINEAR:
                row[f"{p}_{who}"] = score(fcs[who][p])
            row[f"{p}_mean"] = score([(0.5 * (a_m + b_m), y) for (a_m, y), (b_m, _) in zip(fcs["arx"][p],
                                                                                          fcs["lgssm"][p])])
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def summary(out):
    floors = {r["data"]: r["kind"] for r in map(json.loads, open(os.path.join(RESULTS, "cut_targets.jsonl")))
              if r["model"] == "floor"}
    rows = list(map(json.loads, open(out)))
    for p in PROTOCOLS:
        ratios = {"folds' kind": [], "other kind": [], "mean forecast": []}
        print(f"\n{p}: over the better of ARX and LGSSM on the held-out 30 %")
        print("| cut | folds' kind | folds' kind | other kind | mean forecast |")
        print("|---|---|---|---|---|")
        for r in rows:
            best = min(r[f"{p}_{w}"] for w in LINEAR)
            kind = floors[r["data"]]
            other = next(w for w in LINEAR if w != kind)
            values = (r[f"{p}_{kind}"] / best, r[f"{p}_{other}"] / best, r[f"{p}_mean"] / best)
            for key, v in zip(ratios, values):
                ratios[key].append(v)
            print(f"| {r['data']} | {kind} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
        for key, v in ratios.items():
            v = np.array(v)
            print(f"{key}: geometric mean {np.exp(np.mean(np.log(v))):.4f}, within 1.02 on {int(np.sum(v <= 1.02))} "
                  f"of {len(v)}, below 1 on {int(np.sum(v < 1))}, worst {v.max():.3f}")


if __name__ == "__main__":
    run_or_summarise(run, summary)
