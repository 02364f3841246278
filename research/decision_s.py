"""Decision S of research/ablation_plan.md (the GP part from the other kind's floor where the chosen floor's is not
kept), decided on the fresh records 5-10 of the 16 simulated plants.

Cells: the records whose current default fit (rows of research/fresh_records.py: fresh_records_n.jsonl for records 5
and 6, fresh_records_7_10.jsonl for 7-10) kept no GP part in the selection and whose other floor kind had a finite
fold score. On each: the chosen floor's step-0 window errors (the default fit cut to one step, ``max_steps=1``: its
step 0 is the same floor, folds, windows and particles as the full fit's), the default fit (seed 0) with its floor
held to the other kind (``choose_floor(kinds=(other,))``), and S's model: that fit where its own stages kept the GP
part and, at its s* and step-size candidate, it beats the chosen floor's step 0 on the same windows by more than
``Plan.switch_t`` standard errors (``training.paired_t``); otherwise the default's. Both are scored on the record's
second half under causal and simulate (the default's scores are its row's). One JSON line per cell, appended
(resumable). The records, the default's rows and the rule are decision Q's (research/decision_q.py).

The rows were made with the package code before stage 3b (d7802d9), whose default fit is S's "default"; under
later code the default fit itself runs stage 3b. Run: python research/decision_s.py
research/results/decision_s.jsonl [--reverse]; add --decide to apply the rule.
``--reverse`` takes the cells from the last, so that two workers can share the file (each skips the cells done).
This script is the research record's; nothing in the package imports it.
"""
import argparse
import functools
import json
import os
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit
from gpssm_np.models.floor import choose_floor
from gpssm_np.models.training import paired_t

from decision_q import PROTOCOLS, default_rows, second_opinion_rule
from fresh_records import record


def cells():
    """(plant, record, the default's row) of every cell (module docstring), in the rows' order."""
    for row in default_rows():
        if row["selection"]["gp_part"]:
            continue
        if row["selection"]["step"] == 0 and row["selection"].get("free_run") is not None:
            continue  # kept in the selection, dropped by stage 4: not a cell (s* > 0)
        scores = row["selection"]["floor"]["scores"]
        if len(scores) == 2 and all(np.isfinite(v) for v in scores.values()):
            yield row["data"], row["record"], row


def fit_with_floor(ds, kinds, **changes):
    """The default ODGPSSM (seed 0) fitted to the training half of ``ds`` with its floor's kinds held to ``kinds``
    and the plan's ``changes``; returns (model, seconds)."""
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
    start, held = time.perf_counter(), default_fit.choose_floor
    default_fit.choose_floor = functools.partial(choose_floor, kinds=kinds)
    try:
        model.fit(ds.y_train, ds.u_train, plan=changes or None, progress=False)
    finally:
        default_fit.choose_floor = held
    return model, time.perf_counter() - start


def done(out):
    """The (plant, record) of the cells in ``out``."""
    return {(r["data"], r["record"]) for r in map(json.loads, open(out))} if os.path.exists(out) else set()


def run(out, reverse=False):
    lr_scales = default_fit.Plan().lr_scales
    for name, r, default_row in (reversed if reverse else iter)(list(cells())):
        if (name, r) in done(out):
            continue
        ds = record(name, r)
        chosen = default_row["selection"]["floor"]["kind"]
        other = "lgssm" if chosen == "arx" else "arx"
        step0, _ = fit_with_floor(ds, ("arx", "lgssm"), max_steps=1, eval_every=1)
        floor_repeats = step0.selection_["floor"] == default_row["selection"]["floor"]
        reference = step0.selection_["record"][0]["windows"][0]
        model, seconds = fit_with_floor(ds, (other,))
        sel = model.selection_
        row = {"data": name, "record": r, "chosen": chosen, "other": other, "floor_repeats": bool(floor_repeats),
               "other_fit": {k: sel[k] for k in ("floor", "step", "t", "gp_part", "free_run", "lr_scale")},
               "fit_seconds": seconds, "t_s": None}
        if sel["gp_part"]:
            c = lr_scales.index(sel["lr_scale"]) if sel["lr_scale"] in lr_scales else 0
            at = next(e for e in sel["record"] if e["step"] == sel["step"])
            row["t_s"] = paired_t(reference, at["windows"][c])
            row["other_scores"] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}
        row["s_keeps"] = bool(row["t_s"] is not None and row["t_s"] > default_fit.Plan().switch_t)
        row["default"] = {p: default_row[p] for p in PROTOCOLS}
        row["s"] = dict(row["other_scores"]) if row["s_keeps"] else dict(row["default"])
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def decide(out):
    rows = list({(r["data"], r["record"]): r for r in map(json.loads, reversed(list(open(out))))}.values())[::-1]
    for r in rows:
        t = "-" if r["t_s"] is None else f"{r['t_s']:.2f}"
        print(f"{r['data']:18s} {r['record']:3d}  {r['chosen']:5s} -> {r['other']:5s}  own GP part "
              f"{'kept' if r['other_fit']['gp_part'] else 'not kept'}, t over the chosen floor {t}: S "
              f"{'keeps it' if r['s_keeps'] else 'is the default'}; causal "
              f"{r['s']['causal'] / r['default']['causal']:.3f}  simulate "
              f"{r['s']['simulate'] / r['default']['simulate']:.3f} (S over the default; floor repeats: "
              f"{r['floor_repeats']})")
    second_opinion_rule(rows, "s", "s_keeps", "S keeps a GP part on")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out, args.reverse)
