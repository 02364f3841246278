"""Decision P of research/ablation_plan.md (the floor's kind scored on every window after each fold's origin), decided
on records 7-10 of the simulated plants, which no choice and no run has seen.

Records: as decision L's (research/decision_l.py), r = 7-10; the first half trains. On each record V0 (the package's
rule: the lower mean of the kinds' own cross-validation errors) and P choose a kind on the training half,
standardised as the GP fit does. P: each kind at the orders its own cross-validation chose is fitted to the past of
each rolling-origin fold (``Floor.refit``) and forecasts every window after that fold's origin by its exact
predictive mean; the lower mean RMSE over all (fold, window) pairs wins, ties to the ARX; where neither kind can be
scored, V0's kind. ``ARX()`` and ``LGSSM(dim_x="auto")`` at their defaults, fitted to the training half, are scored
on the second half under causal and simulate. ``--cuts`` runs the same on the 70 % cuts of the nine real data sets
(reported, deciding nothing). One JSON line per record, appended (resumable).

Run: python research/decision_p.py research/results/decision_p.jsonl [--cuts]; add --decide to apply the rule.
This script is the research record's; nothing in the package imports it.
"""
import json

import numpy as np

from gpssm_np.datasets.folds import Fold, fold_errors, mean_error, rolling_origin
from gpssm_np.models.default_fit import Plan
from gpssm_np.models.floor import FLOOR_KINDS, fit_kind, floor_of

from decision_l import cli, decide, held_out, model_units, records
from rows import done_keys

REPLICATES = (7, 8, 9, 10)


def later_window_errors(floor, ys, us, origins):
    """P's per-(fold, window) RMSEs of ``floor`` (a ``models.floor.Floor``): refitted to each fold's past, it forecasts
    every window after that fold's origin (module docstring)."""
    folds = rolling_origin(ys, us, origins)
    later = [Fold(f.ys, f.us, [w for g in folds[k:] for w in g.windows], f.origins) for k, f in enumerate(folds)]
    return fold_errors(later, floor.refit,
                       lambda model, w: model.forecast(w.u, y_past=w.y_past, u_past=w.u_past).mean)


def kinds(ds):
    """(V0's kind, P's kind, {kind: V0's score}, {kind: P's score})."""
    ys, us = model_units(ds)
    fitted = {kind: fit_kind(kind, ys, us) for kind in FLOOR_KINDS}
    v0_scores = {kind: mean_error(m.fold_errors_ or []) for kind, m in fitted.items()}
    v0 = "arx" if v0_scores["arx"] <= v0_scores["lgssm"] and np.isfinite(v0_scores["arx"]) else "lgssm"
    p_scores = {}
    for kind, model in fitted.items():
        floor = floor_of(kind, model, v0_scores, model.fold_errors_)
        p_scores[kind] = mean_error(later_window_errors(floor, ys, us, Plan().origins))
    if not any(np.isfinite(s) for s in p_scores.values()):
        p_kind = v0
    else:
        p_kind = "arx" if p_scores["arx"] <= p_scores["lgssm"] else "lgssm"
    return v0, p_kind, v0_scores, p_scores


def run(out, cuts):
    done = done_keys(out, "data", "record")
    for name, r, ds in records(cuts, REPLICATES):
        if (name, r) in done:
            continue
        v0, p_kind, v0_scores, p_scores = kinds(ds)
        row = {"data": name, "record": r, "cut": cuts, "v0": v0, "p": p_kind, "v0_scores": v0_scores,
               "p_scores": p_scores, "held_out": held_out(ds)}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    cli(run, lambda out: decide(out, "p", "P"))
