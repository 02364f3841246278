"""Issue #28's targets measured on the 25 held-out cuts, on training data only: the default ODGPSSM against the
better of ARX() and LGSSM(dim_x="auto") on the 70/30 cuts of the training halves (decision M's cuts: the 18 sets of
research/defaults_check.py and the 7 plants of research/unseen_plants.py), each scored on the last 30 % of its cut
under causal and simulate (the scoring's random numbers: seed 0).

The linear models draw no random numbers; this script fits them (one JSON line per (cut, model), appended,
resumable), and records the floor the default fit chooses on the cut (``models/floor.choose_floor`` on the cut's
training part in model units, as the fit runs it: model "floor", with both kinds' mean fold errors). The default's
rows are its training seeds 1-4 on the same cuts (``cut_seeds.default_rows``), each cut's four seeds averaged in
log, as the multi-seed decisions average them. ``--summary`` prints, per cut, the default over
the better linear model under both protocols, which floor the fits chose and on how many seeds a GP part was kept,
and the counts of the targets' thresholds (causal at most 1.02, at least 10 % better, simulate at most 1): where the
default loses to the linear models on data no test half enters, the place a decision can aim at.

Run: python research/cut_targets.py research/results/cut_targets.jsonl [--data name ...];
then ``--summary``; ``--summary --rows FILE:VARIANT ...`` puts a decision's rows (keys data, variant, seed) in place
of the default's where they exist (e.g. ``--rows research/results/decision_ac.jsonl:AC
research/results/decision_af.jsonl:AF``: decision AF's variant on seeds 1-4), so that a variant's targets on the
cuts can be read beside the default's. This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models.floor import choose_floor

from cut_seeds import default_rows, rows_of
from decision_m import NAMES, held_out_cut
from rows import done_keys

SEEDS = (1, 2, 3, 4)
LINEAR = ("arx", "lgssm")
PROTOCOLS = ("causal", "simulate")


def linear_model(who, dim_y, dim_u):
    return gp.ARX(dim_y=dim_y, dim_u=dim_u) if who == "arx" else gp.LGSSM(dim_x="auto", dim_y=dim_y, dim_u=dim_u)


def floor_row(ds):
    """The floor the default fit chooses on ``ds``'s training part: its kind, orders and both kinds' fold errors."""
    y, u = ds.y_train, ds.u_train
    floor = choose_floor([(y - y.mean(0)) / y.std(0)], [(u - u.mean(0)) / u.std(0)])
    return {"kind": floor.kind, "orders": list(floor.orders), "scores": floor.scores}


def run(out, names):
    """ARX() and LGSSM(dim_x="auto") on the cut of every set of ``names``, one row each, and the floor's row."""
    done = done_keys(out, "data", "model")
    for name in names:
        ds = None
        for who in LINEAR + ("floor",):
            if (name, who) in done:
                continue
            ds = held_out_cut(name) if ds is None else ds
            start = time.perf_counter()
            if who == "floor":
                row = floor_row(ds)
            else:
                model = linear_model(who, ds.y_train.shape[1], ds.u_train.shape[1]).fit(ds.y_train, ds.u_train)
                row = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}
            row = dict({"data": name, "model": who, "fit_seconds": time.perf_counter() - start}, **row)
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


def variant_rows(specs):
    """{(cut, seed): row} of the ``FILE:VARIANT`` specs (a later spec's row replaces an earlier one's)."""
    rows = {}
    for spec in specs:
        rows.update(rows_of(*spec.rsplit(":", 1)))
    return rows


def summary(out, specs=()):
    """The table and counts of the module docstring for every cut with both linear rows and four rows of the
    default (or of the variant of ``specs``, :func:`variant_rows`, where it has them)."""
    linear = {(r["data"], r["model"]): r for r in map(json.loads, open(out))}
    default = {**default_rows(), **variant_rows(specs)}
    names = [n for n in NAMES if all((n, w) in linear for w in LINEAR + ("floor",))
             and all((n, s) in default for s in SEEDS)]
    print("| cut | causal: default | ARX | LGSSM | ratio | simulate: default | ARX | LGSSM | ratio | GP part kept | "
          "floor (orders) | fold error: ARX, LGSSM |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    reversed_ = []
    ratios = {p: [] for p in PROTOCOLS}
    for n in names:
        rows = [default[n, s] for s in SEEDS]
        cells = []
        for p in PROTOCOLS:
            ours = float(np.exp(np.mean([np.log(r[p]) for r in rows])))
            better = min(linear[n, w][p] for w in LINEAR)
            ratios[p].append(ours / better)
            cells.append(f"{ours:.4f} | {linear[n, 'arx'][p]:.4f} | {linear[n, 'lgssm'][p]:.4f} | "
                         f"**{ours / better:.3f}**")
        floor, kept = linear[n, "floor"], sum(bool(r["gp_part"]) for r in rows)
        scores = floor["scores"]
        held_out = min(LINEAR, key=lambda w: linear[n, w]["causal"])
        if held_out != floor["kind"]:
            reversed_.append(f"{n} {linear[n, floor['kind']]['causal'] / linear[n, held_out]['causal']:.2f}")
        print(f"| {n} | " + " | ".join(cells) + f" | {kept}/{len(SEEDS)} | {floor['kind']} {tuple(floor['orders'])} "
              f"| {scores['arx']:.4f}, {scores['lgssm']:.4f} |")
    causal, simulate = np.array(ratios["causal"]), np.array(ratios["simulate"])
    print(f"\n{len(names)} cuts: causal <= 1.02 on {int(np.sum(causal <= 1.02))}, at least 10 % better on "
          f"{int(np.sum(causal <= 0.9))}, simulate <= 1 on {int(np.sum(simulate <= 1.0))}; geometric means: causal "
          f"{np.exp(np.mean(np.log(causal))):.3f}, simulate {np.exp(np.mean(np.log(simulate))):.3f}")
    print(f"the floor's kind is the worse linear model on the held-out 30 % (causal) on {len(reversed_)} cuts (the "
          f"chosen kind over the other): {', '.join(reversed_)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=NAMES)
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--rows", nargs="+", default=(), metavar="FILE:VARIANT")
    args = parser.parse_args()
    if args.summary:
        summary(args.out, args.rows)
    else:
        run(args.out, args.data)
