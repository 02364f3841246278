"""Decision J of research/ablation_plan.md (the far-field guard measured over the training record's length), on
training data only, by the held-out rule of decisions C, E, H and I.

Each set's training half is cut at 70 %; the fit (seed 0) is on the first 70 %, the scores on the last 30 % under
the causal and simulate protocols. Sets: research/defaults_check.py's 18, whose ratios are 1 by construction where
the default's far-field guard did not fail alone (decision E's rows, the default's full fits on those cuts, record
no such failure), and research/unseen_plants.py's
7, where J's fit runs (its guard replaced by J's rule, the default's outcome recorded beside it) and, where the two
outcomes differ, the default's fit runs too.

Run: python research/decision_j.py research/results/decision_j.jsonl; add --decide to apply the rule.
This script is the research record's; nothing in the package imports it.
"""
import json
import os
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit as df, guards
from defaults_check import decision_cli
from rows import done_keys
from unseen_plants import SYSTEMS

RESULTS = os.path.join(os.path.dirname(__file__), "results")
DEFAULT_GUARDS = df.DefaultFit.guards


def guards_j(self, floor, ys, us):
    """Stage 4's guards with J's far-field rule; the default's outcome kept as ``default_passed``."""
    as_floor = self.floor_form(floor, ys, us)
    result = guards.free_run_check(self.model, as_floor, ys, us, self.plan.free_run_factor, self.seed,
                               self.plan.num_samples, self.plan.num_particles)
    far = guards.far_field_check(self.model, as_floor)
    limit = self.plan.free_run_factor ** (1.0 / max(len(y) for y in ys))
    far_j = all(far["model"][k] <= max(1.0, far["floor"][k], limit) for k in far["model"])
    return dict(result, far_field={k: far[k] for k in ("model", "floor")}, limit=limit,
                passed=result["passed"] and far_j, default_passed=result["passed"] and far["passed"])


def cut(name):
    y, u = SYSTEMS[name](np.random.default_rng(2026))
    full = gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)
    return gp.datasets.from_arrays(full.y_train, full.u_train, train_fraction=0.7, name=name)


def fit_and_score(ds, guards):
    df.DefaultFit.guards = guards
    try:
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
        model.fit(ds.y_train, ds.u_train, progress=False)
        seconds = time.perf_counter() - start
    finally:
        df.DefaultFit.guards = DEFAULT_GUARDS
    scores = {}
    for protocol in ("causal", "simulate"):
        try:
            scores[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
        except ValueError as err:  # a held-out part too short for the protocol
            scores[protocol] = str(err)
    sel = model.selection_
    fr = sel["free_run"]
    return {"fit_seconds": seconds, "gp_part": sel["gp_part"], "step": sel["step"], "t": sel["t"],
            "free_run": None if fr is None else {k: v for k, v in fr.items()}, **scores}


def run(out):
    done = done_keys(out, "data", "variant")
    for name in SYSTEMS:
        ds = cut(name)
        if (name, "J") not in done:
            write(out, dict(data=name, variant="J", **fit_and_score(ds, guards_j)))
        row = [r for r in map(json.loads, open(out)) if r["data"] == name and r["variant"] == "J"][0]
        fr = row["free_run"]
        differs = fr is not None and fr["passed"] != fr["default_passed"]
        if differs and (name, "default") not in done:
            write(out, dict(data=name, variant="default", **fit_and_score(ds, DEFAULT_GUARDS)))


def write(out, row):
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(row["data"], row["variant"], row.get("causal"), row.get("simulate"), row["gp_part"], flush=True)


def decide(out):
    rows = list(map(json.loads, open(out)))
    ratios = {"causal": [], "simulate": []}
    for name in SYSTEMS:
        j = [r for r in rows if r["data"] == name and r["variant"] == "J"][0]
        d = [r for r in rows if r["data"] == name and r["variant"] == "default"]
        for protocol in ratios:
            ratios[protocol].append(d and j[protocol] / d[0][protocol] or 1.0)
        print(name, "changed" if d else "unchanged", {p: round(ratios[p][-1], 4) for p in ratios})
    # the 18 cuts: decision E's rows are the default's full fits there, with their guards' outcomes (decision I's
    # default rows reuse them, or the floor-only shortcut, which runs no guard)
    defaults = list(map(json.loads, open(os.path.join(RESULTS, "decision_e.jsonl"))))
    failed = [r["data"] for r in defaults if r.get("free_run") and r["free_run"]["passed"] is False
              and r["free_run"]["model"] <= 2 * r["free_run"]["floor"]]
    assert not failed, failed  # a far-field failure alone on the 18 cuts would need a run
    for protocol in ratios:
        ratios[protocol] += [1.0] * len(defaults)
    geo = {p: float(np.exp(np.mean(np.log(v)))) for p, v in ratios.items()}
    worst = max(ratios["causal"])
    adopted = geo["causal"] <= 0.99 and geo["simulate"] <= 1.01 and worst <= 1.05
    print(f"over {len(ratios['causal'])} sets: causal {geo['causal']:.4f}, simulate {geo['simulate']:.4f}, "
          f"worst causal {worst:.4f}: {'adopted' if adopted else 'not adopted'}")


if __name__ == "__main__":
    decision_cli(run, decide, names=None)
