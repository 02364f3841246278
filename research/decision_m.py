"""Decision M of research/ablation_plan.md (the iterates instead of their average), on training data only, by the
held-out rule of decisions C-J.

Each set's training half is cut at 70 % (the 18 sets of research/defaults_check.py and the 7 plants of
research/unseen_plants.py); the default fit with ``plan={"average": None}`` (seed 0) is fitted to the first 70 % and
scored on the last 30 % under causal and simulate. The current default's scores on the same cuts are decision K's
seed-0 rows where its selection kept a GP part, otherwise research/results/decision_i_default.jsonl and the J rows of
research/results/decision_j.jsonl (research/ablation_plan.md, decision M, the correction). One JSON line per set,
appended (resumable).

Run: python research/decision_m.py research/results/decision_m.jsonl [--data name ...]; add --decide to apply the
rule. This script is the research record's; nothing in the package imports it.
"""
import json
import os
import time

import numpy as np

import gpssm_np as gp

from decision_j import cut as unseen_cut
from defaults_check import DATA, SIMULATORS, decision_cli, held_out_cut as set_cut
from rows import done_keys
from unseen_plants import SYSTEMS

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
NAMES = DATA + SIMULATORS + list(SYSTEMS)


def held_out_cut(name):
    return unseen_cut(name) if name in SYSTEMS else set_cut(name)


def held_out_row(out, name, variant, extra=(), plan=None, options=None, seed=0):
    """The default ODGPSSM fit (training seed ``seed``; ``plan``: a dict of changes to the default plan; ``options``: a
    dict of constructor options) on the 70/30 cut of ``name``'s training half (:func:`held_out_cut`), scored on its
    last 30 % under causal and simulate (the scoring's random numbers: seed 0): one row appended to ``out`` and
    printed, with what the fit's ``selection_`` chose and the ``extra`` items (pairs of key and a function of the
    fitted model, called after the fit: what a variant records, such as its counters)."""
    ds = held_out_cut(name)
    start = time.perf_counter()
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed, **(options or {}))
    model.fit(ds.y_train, ds.u_train, plan=plan, progress=False)
    sel = model.selection_
    row = {"data": name, "variant": variant, "seed": seed, "fit_seconds": time.perf_counter() - start,
           "gp_part": sel["gp_part"], "step": sel["step"], "t": sel["t"], "floor": sel["floor"]["kind"],
           "other_floor": sel["other_floor"], "free_run": sel["free_run"], "lr_scale": sel["lr_scale"],
           "step0": sel["record"][0]["rmse"]}
    row.update({key: value(model) for key, value in extra})
    for protocol in ("causal", "simulate"):
        row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def held_out_rule(pairs, variant, causal_max, simulate_max, missing=(), otherwise="", worst_max=1.05):
    """The held-out rule of the decisions in research/ablation_plan.md: ``pairs`` is a list of (cut, the default's
    row, the variant's row); prints each cut's RMSE ratios (the variant over the default) and the verdict: adopted
    when no cut is ``missing``, the geometric means over the cuts are at most ``causal_max`` under causal and
    ``simulate_max`` under simulate, and no cut's causal ratio exceeds ``worst_max``. Returns whether adopted."""
    ratios = {"causal": [], "simulate": []}
    for name, d, v in pairs:
        for protocol in ratios:
            ratios[protocol].append(v[protocol] / d[protocol])
        print(f"{name:18s} GP part {d['gp_part']!s:5s} -> {v['gp_part']!s:5s}  step {d['step']:5d} -> {v['step']:5d}  "
              f"causal {ratios['causal'][-1]:.4f}  simulate {ratios['simulate'][-1]:.4f}  ({variant} over the default)")
    if missing:
        print(f"not run yet: {list(missing)}")
    if not ratios["causal"]:
        return False
    geo = {p: float(np.exp(np.mean(np.log(v)))) for p, v in ratios.items()}
    worst = max(ratios["causal"])
    adopted = not missing and geo["causal"] <= causal_max and geo["simulate"] <= simulate_max and worst <= worst_max
    print(f"over {len(ratios['causal'])} cuts: causal {geo['causal']:.4f}, simulate {geo['simulate']:.4f}, worst "
          f"causal {worst:.4f}: {variant + ' adopted' if adopted else 'not adopted (' + otherwise + ')'}")
    return adopted


def run(out, names, plan=(("average", None),)):
    """The variant's held-out rows: the default fit with the ``plan`` changes (pairs; M's by default) on each cut."""
    done = done_keys(out, "data")
    for name in names:
        if name in done:
            continue
        ds = held_out_cut(name)
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
        model.fit(ds.y_train, ds.u_train, plan=dict(plan), progress=False)
        sel = model.selection_
        row = {"data": name, "fit_seconds": time.perf_counter() - start, "gp_part": sel["gp_part"],
               "step": sel["step"], "t": sel["t"], "lr_scale": sel["lr_scale"], "floor": sel["floor"]["kind"]}
        for protocol in ("causal", "simulate"):
            row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def default_scores():
    """The current default's held-out scores on the 25 cuts: {name: {"causal": RMSE, "simulate": RMSE, "gp_part":
    bool}}: decision K's seed-0 rows where the selection kept a GP part (the model, or the floor where the guards
    drop the part), otherwise decision_i_default's (the 18) and decision_j's J rows (the 7)."""
    scores = {}
    for line in open(os.path.join(RESULTS, "decision_i_default.jsonl")):
        r = json.loads(line)
        scores[r["data"]] = {"causal": r["model_causal"], "simulate": r["model_simulate"], "gp_part": r["gp_part"]}
    for line in open(os.path.join(RESULTS, "decision_j.jsonl")):
        r = json.loads(line)
        if r["variant"] == "J":
            scores[r["data"]] = {"causal": r["causal"], "simulate": r["simulate"], "gp_part": r["gp_part"]}
    for line in open(os.path.join(RESULTS, "decision_k.jsonl")):
        r = json.loads(line)
        if r["seed"] == 0 and r["gp_selected"]:
            who = "gp" if r["radius_passed"] else "floor"
            scores[r["data"]] = {"causal": r[who + "_causal"], "simulate": r[who + "_simulate"],
                                 "gp_part": r["radius_passed"]}
    return scores


def decide(out, label, adopted_text, kept_text, base=None):
    """M's rule (research/ablation_plan.md) on the variant's rows in ``out`` against ``base`` ({name: {"causal",
    "simulate", "gp_part"}}; default :func:`default_scores`)."""
    rows = {json.loads(line)["data"]: json.loads(line) for line in open(out)}
    base = default_scores() if base is None else base
    missing = [n for n in NAMES if n not in rows]
    if missing:
        print(f"not run yet: {missing}")
    ratios = {"causal": [], "simulate": []}
    for name in NAMES:
        if name not in rows:
            continue
        r, b = rows[name], base[name]
        for protocol in ratios:
            ratios[protocol].append(r[protocol] / b[protocol])
        print(f"{name:18s} GP part {b['gp_part']!s:5s} -> {r['gp_part']!s:5s}  causal {ratios['causal'][-1]:.4f}  "
              f"simulate {ratios['simulate'][-1]:.4f}  ({label} over the default)")
    geo = {p: float(np.exp(np.mean(np.log(v)))) for p, v in ratios.items()}
    worst = max(ratios["causal"])
    adopted = not missing and geo["causal"] <= 1.01 and geo["simulate"] <= 1.01 and worst <= 1.05
    print(f"over {len(ratios['causal'])} sets: causal {geo['causal']:.4f}, simulate {geo['simulate']:.4f}, worst "
          f"causal {worst:.4f}: {adopted_text if adopted else kept_text}")


def cli(label, adopted_text, kept_text, plan=(), base=None):
    """The command line of a decision on the 25 cuts by M's rule (``defaults_check.decision_cli``): ``OUT [--data
    name ...]`` runs the default fit with the ``plan`` changes on each cut, ``--decide`` applies the rule against
    ``base`` (default :func:`default_scores`)."""
    decision_cli(lambda out, names: run(out, names, plan),
                 lambda out: decide(out, label, adopted_text, kept_text, base), NAMES)


if __name__ == "__main__":
    cli("M", "M adopted (the average removed)", "not adopted (the average stays)", plan=(("average", None),))
