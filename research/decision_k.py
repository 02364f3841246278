"""Decision K of research/ablation_plan.md (the far-field guard as a test of the filter's recovery on the training
record), on training data only, by the held-out rule of decisions C-J.

Cells, in this order: the 70 % cuts of the 7 plants of research/unseen_plants.py with seeds 0-4, then the 70 % cuts
of the 18 sets of research/defaults_check.py with seed 0. Each fit is the default's with stage 4's guards recorded
and bypassed (the refitted GP part is kept); the free-run guard, the radius rule (``guards.far_field_check``)
and K's recovery test (:func:`recovery`) are applied to that model. Under each rule the cell's model is the refitted
one when the free-run guard and the rule's far-field test pass, otherwise the floor in the model's form; both are
scored on the held-out 30 % under causal and simulate. One JSON line per cell, appended (resumable).

Run: python research/decision_k.py research/results/decision_k.jsonl [--part unseen|sets]; add --decide to apply
the rule. This script is the research record's; nothing in the package imports it.
"""
import argparse
import copy
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit as df

from decision_j import cut as unseen_cut
from defaults_check import DATA, SIMULATORS, held_out_cut
from rows import done_keys
from unseen_plants import SYSTEMS

DEFAULT_GUARDS = df.DefaultFit.guards
DISPLACEMENTS = (5, 20)  # state standard deviations
FACTOR = df.Plan().free_run_factor  # K's factor is the free-run guard's
UNSEEN_SEEDS = (0, 1, 2, 3, 4)


def cells(part):
    if part in ("unseen", "all"):
        for name in SYSTEMS:
            for seed in UNSEEN_SEEDS:
                yield name, seed, lambda name=name: unseen_cut(name)
    if part in ("sets", "all"):
        for name in DATA + SIMULATORS:
            yield name, 0, lambda name=name: held_out_cut(name)


def innovation_scores(model, y, u, num_particles, seed, displacements=DISPLACEMENTS):
    """K's score of ``model`` on the record (y, u) (original units) at each of the ``displacements``: the root mean
    squared innovation over the record's second half, its filter started from q(x0) with the mean displaced by k
    state standard deviations (nan where it is not finite)."""
    mean0, var0 = model.q_x0()
    base = model.filter(y, u, num_particles=num_particles, seed=seed)
    sd = np.sqrt(np.diagonal(base.covs, axis1=1, axis2=2)).mean(0) + np.std(base.means, axis=0)
    T, scores = len(y), {}
    for k in displacements:
        f = model.online_filter(num_particles=num_particles, seed=seed, x0=(mean0 + k * sd, var0))
        squares = []
        with np.errstate(all="ignore"):
            for t in range(T):
                f.update(y[t], u[t])
                squares.append(np.mean(f.innovation ** 2))
            score = float(np.sqrt(np.mean(squares[T // 2:])))
        scores[k] = score if np.isfinite(score) else float("nan")
    return scores


def recovery(model, floor_model, y, u, num_particles, seed):
    """K's test (module docstring): passed when at every displacement the model's score is finite and at most
    FACTOR times the floor's."""
    scores = {"model": innovation_scores(model, y, u, num_particles, seed),
              "floor": innovation_scores(floor_model, y, u, num_particles, seed)}
    passed = all(np.isfinite(scores["model"][k]) and scores["model"][k] <= FACTOR * scores["floor"][k]
                 for k in DISPLACEMENTS)
    return dict(scores, passed=bool(passed))


def fit_bypassing_guards(ds, seed):
    """The default ODGPSSM (``seed``) fitted to ``ds``'s training part with stage 4's guards recorded and bypassed:
    (the model, a copy with the floor's zero-residual parameters (``DefaultFit.floor_form``), the guards' result or
    None where the selection kept no GP part, the fit's seconds)."""
    kept = {}

    def guards(self, floor, ys, us):
        kept["floor_params"], kept["guard"] = self.floor_form(floor, ys, us).params, DEFAULT_GUARDS(self, floor, ys, us)
        return dict(kept["guard"], passed=True)

    df.DefaultFit.guards = guards
    try:
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
        model.fit(ds.y_train, ds.u_train, progress=False)
        seconds = time.perf_counter() - start
    finally:
        df.DefaultFit.guards = DEFAULT_GUARDS
    floor_model = None
    if "floor_params" in kept:
        floor_model = copy.deepcopy(model)
        floor_model.params = kept["floor_params"]
    return model, floor_model, kept.get("guard"), seconds


def fit_cell(ds, seed):
    model, floor_model, g, seconds = fit_bypassing_guards(ds, seed)
    sel = model.selection_
    row = {"fit_seconds": seconds, "step": sel["step"], "t": sel["t"], "gp_selected": sel["step"] > 0}
    if not row["gp_selected"]:
        return row
    free_run = bool(g["model"] <= FACTOR * g["floor"])
    radius = bool(g["passed"])  # the default's outcome: the free-run guard and the radius rule
    k_test = recovery(model, floor_model, ds.y_train, ds.u_train, df.Plan().num_particles, seed)
    row.update(guard={"model": g["model"], "floor": g["floor"], "far_field": g["far_field"]},
               recovery={w: {str(k): v for k, v in k_test[w].items()} for w in ("model", "floor")},
               free_run_passed=free_run, radius_passed=radius, k_passed=bool(free_run and k_test["passed"]))
    for who, m in (("gp", model), ("floor", floor_model)):
        if who == "floor" and radius and row["k_passed"]:
            continue  # both rules keep the GP part: the floor's scores are not needed
        if who == "gp" and not radius and not row["k_passed"]:
            continue
        for protocol in ("causal", "simulate"):
            row[f"{who}_{protocol}"] = gp.evaluate(m, ds, protocol, seed=0)["rmse"]
    return row


def run(out, part):
    done = done_keys(out, "data", "seed")
    for name, seed, make in cells(part):
        if (name, seed) in done:
            continue
        row = dict(data=name, seed=seed, **fit_cell(make(), seed))
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(name, seed, {k: row.get(k) for k in ("gp_selected", "radius_passed", "k_passed", "fit_seconds")},
              flush=True)


def ratio(row, protocol):
    """K's held-out RMSE over the radius rule's for one cell (1 where both give the same model)."""
    if not row["gp_selected"] or row["radius_passed"] == row["k_passed"]:
        return 1.0
    pick = lambda passed: row[f"{'gp' if passed else 'floor'}_{protocol}"]  # noqa: E731
    return pick(row["k_passed"]) / pick(row["radius_passed"])


def decide(out):
    rows = list(map(json.loads, open(out)))
    expected = {(n, s) for n, s, _ in cells("all")}
    missing = expected - {(r["data"], r["seed"]) for r in rows}
    if missing:
        print(f"{len(missing)} cells not run yet: {sorted(missing)}")
    ratios = {"causal": {}, "simulate": {}}
    for r in rows:
        for protocol in ratios:
            ratios[protocol].setdefault(r["data"], []).append(ratio(r, protocol))
        if r["gp_selected"] and r["radius_passed"] != r["k_passed"]:
            print(f"{r['data']} seed {r['seed']}: radius {'keeps' if r['radius_passed'] else 'drops'}, "
                  f"K {'keeps' if r['k_passed'] else 'drops'}; causal {ratio(r, 'causal'):.4f}, "
                  f"simulate {ratio(r, 'simulate'):.4f}; far field {r['guard']['far_field']}, "
                  f"recovery {r['recovery']}")
    per_set = {p: {name: float(np.mean(v)) for name, v in d.items()} for p, d in ratios.items()}
    geo = {p: float(np.exp(np.mean(np.log(list(d.values()))))) for p, d in per_set.items()}
    worst = max(per_set["causal"].values())
    differs = any(r["gp_selected"] and r["radius_passed"] != r["k_passed"] for r in rows)
    adopted = differs and geo["causal"] <= 0.99 and geo["simulate"] <= 1.01 and worst <= 1.05
    print(f"over {len(per_set['causal'])} sets: causal {geo['causal']:.4f}, simulate {geo['simulate']:.4f}, "
          f"worst causal {worst:.4f}: {'adopted' if adopted else 'not adopted'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--part", choices=("unseen", "sets", "all"), default="all")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out, args.part)
