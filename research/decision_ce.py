"""Decisions C, E and H of research/ablation_plan.md, on training data only, by the held-out rule of decision D.

Each set's training half (research/defaults_check.py's sets) is cut at 70 %; the variant's default fit (seed 0) is
fitted to the first 70 % and scored on the last 30 % under the causal protocol (100-step windows, the state filtered
from the 100 steps before each) and the simulate protocol (n_init = 5). The default's scores on the same cut are
decision D's rows with the factor 2 (research/results/decision_d.jsonl, ``model_causal``, ``model_simulate``).

- **C** (:class:`IterateToo`): every evaluation of the selection also scores the iterate of every fold run (the
  model holds it; the average is what the default scores), and the (step-size candidate, average or iterate, step)
  with the lowest mean fold error is kept; the acceptance test compares it with step 0 on its own windows; with the
  iterate chosen, the refit keeps the iterate after s* steps (the iterates do not depend on the average, so this
  is the refit without averaging). The lockstep runs stop after ``patience`` evaluations in which none of the four
  improves. The calibration factors are computed at the kept average either way (they do not enter the RMSE the
  decision is made on).
- **H** (:class:`FixedLinearToo`): a third step-size candidate, the linear part (F, G, b) fixed at the floor's, beside
  the plain step and the linear part at a tenth. Its default is the package's (decision E's rows, research/results/
  decision_e.jsonl, ``--default``); the rows of the other candidates are the default's, so a set differs only where
  the third candidate wins on the folds at some evaluation.
- **E**: the training windows are 20 steps long up to step max_steps / 3 (500 of the default's 1500), 40 up to
  2 max_steps / 3, 80 after (each at most the shortest training sequence); every window starts from the floor's
  filtered state (the floor's Kalman filter, in the warm start's state basis, given the outputs before the window's
  first), N(m, diag P). "As training goes" is read as the step count, because the selection does not know in
  advance where it stops; the refit's s* steps follow the same schedule. A new permutation of the windows starts
  where the length changes. E was run at e4a0431 as a subclass of the pipeline written here; once adopted it became
  the package's default fit (``DefaultFit.training_run``, ``training_loop.GrowingRun``), which reproduces its rows
  (checked to every digit on actuator), so ``E`` here now runs the package's default.

Decision rules (fixed before any run): C is adopted if the geometric mean over the 18 sets of the held-out causal
RMSE over the default's is below 0.99 and no set is more than 5 % worse; E if the geometric mean under simulate
falls by at least 2 % and the causal one rises by at most 1 %; H if the causal one is at most 0.99, the simulate one
at most 1.01 and no set is more than 5 % worse under causal.

The rows were computed at code e4a0431, where the default was the 20-step windows from the model's own q(x0): at
later commits ``C`` adds the iterate to the default with E's windows, which is not what was decided.

Run: python research/decision_ce.py C OUT.jsonl [--data name ...]; python research/decision_ce.py E OUT.jsonl;
then python research/decision_ce.py C OUT.jsonl --decide --default research/results/decision_d.jsonl (H:
--default research/results/decision_e.jsonl). This script
is the research record's; nothing in the package imports it.
"""
import argparse
import json
import math
import os
from dataclasses import replace

import numpy as np

import gpssm_np as gp
import gpssm_np.models.gpssm as gpssm_module
from gpssm_np.models.default_fit import DefaultFit, Plan

from decision_d import held_out_fits
from defaults_check import DATA, SIMULATORS


class IterateToo(DefaultFit):
    """Decision C (module docstring)."""

    iterate = False

    def evaluate(self, step):
        super().evaluate(step)  # the averages (the runs' models are left at their iterates)
        row, candidates = self.record[-1], len(self.plan.lr_scales)
        per_candidate = len(self.runs) // candidates
        errors = [score.window_scores(model) for model, _, score in self.runs]
        groups = [[e for errs in errors[c * per_candidate:(c + 1) * per_candidate] for e in errs]
                  for c in range(candidates)]
        row["candidates"] = row["candidates"] + [float(np.mean(g)) for g in groups]
        row["windows"] = row["windows"] + groups
        row["rmse"] = min(row["candidates"])
        return row["rmse"]

    def acceptance(self, record):
        step, t, c = super().acceptance(record)
        candidates = len(self.plan.lr_scales)
        self.iterate = bool(step) and c >= candidates
        return step, t, c % candidates

    def refit(self, floor, ys, us, steps, saved=None):
        plan = self.plan
        if self.iterate and steps:
            self.plan = replace(plan, average=None)
        try:
            super().refit(floor, ys, us, steps, saved)
        finally:
            self.plan = plan


class FixedLinearToo(DefaultFit):
    """Decision H (research/ablation_plan.md): a third step-size candidate, :data:`FIXED_LINEAR`, whose runs hold F,
    G and b at the floor's (the pipeline's frozen parameters, as ``Plan.fixed``) and move the rest by the plain
    step."""

    def __init__(self, model, plan=Plan(), *args, **kwargs):
        super().__init__(model, replace(plan, lr_scales=tuple(plan.lr_scales) + (FIXED_LINEAR,)), *args, **kwargs)

    def training_run(self, model, warm, ys, us, seed, scales):
        if scales != FIXED_LINEAR:
            return super().training_run(model, warm, ys, us, seed, scales)
        frozen = self.frozen
        self.frozen = tuple(frozen) + ("F", "G", "b")
        try:
            return super().training_run(model, warm, ys, us, seed, {})
        finally:
            self.frozen = frozen


#: The third candidate of decision H, named by the factor 0 it stands for (the runs freeze F, G, b instead).
FIXED_LINEAR = {"F": 0.0, "G": 0.0, "b": 0.0}
VARIANTS = {"C": IterateToo, "E": DefaultFit, "H": FixedLinearToo}  # E is the package's default fit now


def run(variant, out, names):
    gpssm_module.DefaultFit = VARIANTS[variant]  # what ODGPSSM.fit runs
    for name, ds, model, seconds in held_out_fits(out, names):
        sel = model.selection_
        row = {"data": name, "variant": variant, "fit_seconds": seconds,
               "gp_part": sel["gp_part"], "step": sel["step"], "t": sel["t"], "free_run": sel["free_run"],
               "lr_scale": sel["lr_scale"], "candidates": [r["candidates"] for r in sel["record"]]}
        for protocol in ("causal", "simulate"):
            row[f"model_{protocol}"] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in row if k not in ("free_run", "candidates")}), flush=True)


def decide(variant, out, default):
    rows = {json.loads(line)["data"]: json.loads(line) for line in open(out)}
    base = {json.loads(line)["data"]: json.loads(line) for line in open(default)}
    names = [n for n in base if n in rows]
    ratio = {p: {n: rows[n][f"model_{p}"] / base[n][f"model_{p}"] for n in names} for p in ("causal", "simulate")}
    gmean = {p: math.exp(sum(math.log(r) for r in ratio[p].values()) / len(names)) for p in ratio}
    print(f"decision {variant} over {len(names)} sets (of {len(base)}): geometric mean of the variant over the "
          f"default, causal {gmean['causal']:.4f}, simulate {gmean['simulate']:.4f}")
    for n in names:
        print(f"  {n:14s} gp_part {str(rows[n]['gp_part']):5s} (default {str(base[n]['gp_part']):5s}) causal "
              f"{ratio['causal'][n]:.4f} simulate {ratio['simulate'][n]:.4f}")
    if variant == "C":
        worse = [n for n in names if ratio["causal"][n] > 1.05]
        adopted = gmean["causal"] < 0.99 and not worse
        rule = f"causal < 0.99 and no set more than 5 % worse (worse: {worse})"
    elif variant in ("H", "I"):  # decision I (research/decision_i.py) was pre-registered with H's rule
        worse = [n for n in names if ratio["causal"][n] > 1.05]
        adopted = gmean["causal"] <= 0.99 and gmean["simulate"] <= 1.01 and not worse
        rule = f"causal <= 0.99, simulate <= 1.01 and no set more than 5 % worse under causal (worse: {worse})"
    else:
        adopted = gmean["simulate"] <= 0.98 and gmean["causal"] <= 1.01
        rule = "simulate <= 0.98 and causal <= 1.01"
    print(f"decision {variant}: {'adopted' if adopted else 'not adopted'} (rule: {rule})"
          + ("" if len(names) == len(base) else " -- incomplete, not a decision"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=DATA + SIMULATORS)
    parser.add_argument("--decide", action="store_true")
    parser.add_argument("--default", default=os.path.join(os.path.dirname(__file__), "results", "decision_d.jsonl"))
    args = parser.parse_args()
    decide(args.variant, args.out, args.default) if args.decide else run(args.variant, args.out, args.data)
