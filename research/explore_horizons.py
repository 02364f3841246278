"""An exploration, deciding nothing (research/ablation_plan.md, "a shorter scoring horizon beside the selection's
100-step one"): the default fit on the 24 held-out cuts (training seed 1), and at every evaluation of each selection
every live fold run also scored, with the same particles and seeds as its own score, on 25-step windows at stride 12
after its fold's origin ("short") and on the cut's held-out part ("held": 100-step windows at stride 25, fewer steps
where the part is shorter, each after the 100 outputs before it). Nothing in the fit reads these scores. One JSON line
per cell (variant "horizons"), appended (resumable), with each selection's record and shadow scores; ``--decide``
prints the rules' comparison the plan describes.

Run: python research/explore_horizons.py research/results/explore_horizons.jsonl --worker k --workers 2; then
--decide (the summary; nothing is decided). This script is the research record's; nothing in the package imports it.
"""
import json
import time
from functools import partial

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import Window
from gpssm_np.models.default_fit import DefaultFit
from gpssm_np.models.training import ValidationScore, paired_t
from gpssm_np.ops.threads import run_tasks

from cut_seeds import rows_of
from decision_bb import cells
from decision_bd import baseline
from decision_m import held_out_cut
from rows import pending, worker_main

VARIANT, SEED = "horizons", 1
SHORT, SHORT_STRIDE, HELD, HELD_STRIDE, BURN_IN = 25, 12, 100, 25, 100
SELECTIONS = []  # the current fit's selections, in the order they ran
HELD_OUT = {}  # the current cut's held-out part (original units)
ORIGINAL = {"run": DefaultFit.run, "selection": DefaultFit.selection, "evaluate": DefaultFit.evaluate}


def windows(y, u, starts, horizon):
    """Forecast windows of ``horizon`` steps of the sequence y, u at ``starts``, each after the outputs before it."""
    return [Window(y[max(0, g - BURN_IN):g], u[max(0, g - BURN_IN):g], u[g:g + horizon], y[g:g + horizon], 0, g)
            for g in starts]


def run(self, ys, us):
    self.shadow_data = (ys, us)
    return ORIGINAL["run"](self, ys, us)


def selection(self, floor, folds, saved=None):
    """The selection, with each fold's short score and the held-out score made first (the cut is one sequence)."""
    (y,), (u,) = self.shadow_data
    scaling = self.model._fit_scaling
    y_all = np.concatenate([y, scaling.y_to_model(HELD_OUT["y"])])
    u_all = np.concatenate([u, scaling.u_to_model(HELD_OUT["u"])])
    T, horizon = len(y), min(HELD, len(HELD_OUT["y"]))
    held = ValidationScore.of_windows(windows(y_all, u_all, range(T, len(y_all) - horizon + 1, HELD_STRIDE), horizon),
                                      num_particles=self.plan.num_particles, num_samples=self.plan.num_samples,
                                      seed=self.seed)
    short = [ValidationScore.of_windows(windows(y, u, range(f.origins[0], T - SHORT + 1, SHORT_STRIDE), SHORT),
                                        num_particles=self.plan.num_particles, num_samples=self.plan.num_samples,
                                        seed=self.seed) for f in folds]
    self.shadow = {"origins": [int(f.origins[0]) for f in folds], "evaluations": []}
    self.shadow_scores = (short, held)
    SELECTIONS.append(self.shadow)
    runs, record = ORIGINAL["selection"](self, floor, folds, saved)
    self.shadow["record"] = record
    return runs, record


def evaluate(self, step):
    live = self.live_runs()  # the runs the package's evaluate scores (before it adds this step's row)
    result = ORIGINAL["evaluate"](self, step)
    short, held = self.shadow_scores
    per_fold = len(short)

    def both(k, model):
        return short[k % per_fold].window_scores(model), held.window_scores(model)

    scores = run_tasks([partial(self.runs[k][1].scored, partial(both, k)) for k in live])
    self.shadow["evaluations"].append({"step": step, "live": live, "short": [s for s, _ in scores],
                                       "held": [h for _, h in scores]})
    return result


def patch():
    DefaultFit.run, DefaultFit.selection, DefaultFit.evaluate = run, selection, evaluate


def fit_row(out, name, seed):
    ds = held_out_cut(name)
    HELD_OUT.update(y=ds.y_test, u=ds.u_test)
    SELECTIONS.clear()
    start = time.perf_counter()
    model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
    model.fit(ds.y_train, ds.u_train, progress=False)
    sel = model.selection_
    row = {"data": name, "variant": VARIANT, "seed": seed, "fit_seconds": time.perf_counter() - start,
           "gp_part": sel["gp_part"], "step": sel["step"], "floor": sel["floor"]["kind"],
           "selections": SELECTIONS[:]}
    for protocol in ("causal", "simulate"):
        row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "selections"}), flush=True)


def run_cells(out, worker, workers, reverse=False):
    patch()
    mine = [c for c in cells() if c[1] == SEED][worker::workers]
    for name, seed in pending(out, mine, lambda cell: (cell[0], VARIANT, cell[1]), reverse):
        fit_row(out, name, seed)


def pairs_of(selection):
    """{(step, candidate): (fold mean, short mean, held mean, fold windows, short windows)} of one selection."""
    record, F = selection["record"], len(selection["origins"])
    by_step = {e["step"]: e for e in selection["evaluations"]}
    out = {}
    for row in record:
        e = by_step[row["step"]]
        for c, mean in enumerate(row["candidates"]):
            runs = [i for i, k in enumerate(e["live"]) if k // F == c]
            if not np.isfinite(mean) or not runs:
                continue
            short = [x for i in runs for x in e["short"][i]]
            held = [x for i in runs for x in e["held"][i]]
            out[(row["step"], c)] = (mean, float(np.mean(short)) if short else np.nan, float(np.mean(held)),
                                     row["windows"][c], short)
    return out


def summary(out):
    rows = rows_of(out, VARIANT)
    default = baseline()
    ratios, agree = [], {"100": 0, "25": 0}
    print("| cut | A (step, c) | B (step, c) | held A | held B | held 0 | oracle | t100 | t25 | fit matches BC |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, r in sorted(rows.items()):
        pairs = pairs_of(r["selections"][0])
        a = min(pairs, key=lambda p: (pairs[p][0], p))
        # a cut too short for a 25-step window after its origins has no short evidence: rule B is rule A there
        b = min(pairs, key=lambda p: (pairs[p][1], p)) if np.isfinite(pairs[a][1]) else a
        zero = pairs[(0, 0)]
        t100 = (paired_t(zero[3], pairs[a][3]) or 0.0) if a[0] else 0.0
        t25 = (paired_t(zero[4], pairs[b][4]) or 0.0) if b[0] else 0.0
        oracle = min(p[2] for p in pairs.values())
        ratios.append(pairs[b][2] / pairs[a][2])
        agree["100"] += (t100 > 1) == (pairs[a][2] < zero[2])
        agree["25"] += (t25 > 1) == (pairs[b][2] < zero[2])
        d = default.get(key)
        same = d is not None and d["causal"] == r["causal"] and d["simulate"] == r["simulate"]
        print(f"| {key[0]} | {a} | {b} | {pairs[a][2]:.4f} | {pairs[b][2]:.4f} | {zero[2]:.4f} | {oracle:.4f} | "
              f"{t100:.2f} | {t25:.2f} | {same} |")
    ratios = np.array(ratios)
    better, worse = int(np.sum(ratios < 0.95)), int(np.sum(ratios > 1.05))
    print(f"\n{len(ratios)} cells: held-out(B) / held-out(A) geometric mean {np.exp(np.mean(np.log(ratios))):.3f}; "
          f"B more than 5 % better on {better}, more than 5 % worse on {worse}; "
          f"'t > 1' agrees with the held-out outcome on {agree['100']} (100-step) and {agree['25']} (25-step) cells")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run_cells, summary)
