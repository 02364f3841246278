r"""The default fit of the GP models: a short pipeline of named stages, all choices made on rolling-origin folds.

``model.fit(y, u)`` with the defaults runs :class:`DefaultFit` with the frozen :class:`Plan`:

1. **floor** (``models/floor.py``): the better of ``ARX()`` and ``LGSSM(dim_x="auto")``, each at the orders its own
   rolling-origin cross-validation chooses, on the same folds (``datasets/folds.py``). The GP model takes the
   floor's state dimension (d_x = n d_y for an ARX of n = max(na, nb) lags) and Q = min(d_x, max(5, 3 d_y))
   latent GPs. A GP model's ``init="arx"`` or ``"lgssm"`` holds the floor to that kind, a fixed ``dim_x`` to
   that state dimension (the LGSSM with d_x states, the ARX of d_x / d_y lags of outputs and inputs), and a list of
   candidate d_x to the best of them on the same folds. Training data too short for the folds to score either kind
   (31 to about 40 steps per sequence) get ``choose_floor``'s fallback, and a UserWarning says so; shorter ones are
   a ValueError (the LGSSM's subspace step needs 31 steps; ``init="arx"`` takes fewer). The GP model holds the
   floor with diagonal noise; its form of the floor (a zero GP residual: what the fit returns without a GP part)
   must forecast the GP folds' windows (stage 2's) within :data:`FORM_TOLERANCE` times the linear model's error
   (taken at least :data:`FORM_RESOLUTION`, the form's noise resolution). Where it cannot (an LGSSM's correlated
   noise over nearly collinear outputs: 7 times worse), the other kind is the floor if its form forecasts them
   better, and a UserWarning says where no form holds (:meth:`DefaultFit.floor`).
2. **selection**: on each of the ``gp_folds`` latest origins, a copy of the model starts from the floor refitted to
   the data before the origin (``warm_start.floor_warm_start``: the GP residual at zero mean, so it forecasts as
   the floor does) and takes Adam steps on windows of that part, once with each step-size candidate of
   ``lr_scales`` (the plain step, and the linear part F, G, b at a tenth of it: Adam moves every coordinate by
   about its step, which can carry the floor's maximum-likelihood F out of its fit within a few dozen steps).
   The windows grow as training goes, 20, 40 and then 80 steps over the thirds of ``max_steps`` (``seq_lens``),
   each started from the floor's filtered state before its first output, N(m, diag P) given the outputs before
   it, where a forecast would start (decision E of research/ablation_plan.md; with ``initial_state="smoothed"``
   the floor's smoothed state there, given all the outputs). Under EnVI's objective (the
   default) every output of a window then updates its ensemble, so a window's length is how much data a step
   sees, not a free-run horizon; the paper's prior objective, whose particles run free through each window, lost
   more than 5 % on some held-out cuts in its place and as a second candidate (decisions AA and AB). Every
   ``eval_every`` steps each copy forecasts causally every window after its origin (``training.ValidationScore``:
   a particle filter over the past, then a free run; the same random numbers at every evaluation). The runs go
   in lockstep, their training steps and evaluations side by side on the cores (``ops.threads.run_tasks``: the
   same bits as one after the other); the (candidate, step) with the lowest mean error over its windows wins, and
   the runs stop after ``patience`` evaluations without a lower one (or ``max_steps``). A candidate's runs stop
   sooner, once its own mean error has not fallen for ``patience`` evaluations (:func:`live_candidates`): they are
   neither trained nor scored again, so no steps go to a candidate that stopped improving while the other still
   improves (decision AU of research/ablation_plan.md). And at the end of the first window stage (step
   ``max_steps`` / len(``seq_lens``), 500 of 1500), of the candidates still training only the one with the lowest
   mean error so far goes on (successive halving, Jamieson and Talwalkar, AISTATS 2016; decision BC).
3. **acceptance**: the GP part is kept only when, at that step, it beats the floor the fit would otherwise return
   (on each fold the floor refitted to the fold's past with a zero GP residual, forecast exactly through the Kalman
   filter on the same windows: ``DefaultFit.floor_errors``, computed in stage 1) by more than ``switch_t`` standard
   errors of the paired per-window differences (``training.paired_t``); otherwise s* = 0. Not step 0 of the runs:
   their warm start, whose GP residual has a prior variance, is forecast by the particle filter, which over the lag
   states of two nearly collinear outputs scored the floor's windows at two to three times the exact floor's error
   (decision BK of research/ablation_plan.md). The default of one standard error is the one-standard-error rule of
   model selection (Hastie, Tibshirani and Friedman, The Elements of Statistical Learning, 2009, sec. 7.10): the
   simpler model (the floor) unless the richer one is better by more than the noise of the estimate.
3b. **the other floor** (:func:`fit`): where stage 3 kept no GP part, the pipeline runs once more with the floor
   held to the kind not chosen (at the orders its own cross-validation chose, as stage 1 fitted it; its folds,
   windows, seeds and plan the same), and its model is returned instead where its own stages 3 and 4 keep a GP part and,
   at its s* and step-size candidate, it beats the chosen floor (exact, as in stage 3) on the same windows by more than
   ``switch_t`` standard errors: it beats both linear models the fit could fall back to. The GP part can learn from
   one linear model's state what it cannot from the other's: the ARX's observer form holds n d_y states, up to 30
   for a three-output plant at 10 lags, where the LGSSM's are at most 10 (decision S of research/ablation_plan.md).
   It costs a second selection (not a second fit of the linear model) only where the first kept nothing.
4. **refit**: the floor is fitted to all the training data (it was in stage 1); with the GP part kept, the model
   starts there and takes round(r s*) Adam steps with the chosen candidate on all of it, r = the training data's
   steps over the mean of the GP folds' training steps (:func:`passes_ratio`; r >= 1: 1.36-1.40 for one sequence of up
   to 400 steps, 1.18 for one of 1000): as many passes over all the data as the fold runs made over their shorter
   pasts, its windows growing at the fold runs' steps scaled by r alike (the last average of the iterates kept;
   decision AX of research/ablation_plan.md; Goodfellow, Bengio and Courville, Deep Learning, 2016, sec. 7.8, name
   both choices, the steps or the passes); without, it is the floor with a zero GP residual (A = 0, all process
   noise the floor's; PRSSM, whose A = I is fixed: q(u) at its prior, the kernel variances at the warm start's
   floor, ``warm_start.zero_residual_variance``): a linear model in the GP model's form, which forecasts exactly,
   through the Kalman filter (``GPSSM.linear_gaussian``), as the floor does.
   A guard against transitions whose long free runs leave the data (the folds score 100-step windows only):
   the refitted model and the floor (in the model's form, the same random numbers) each simulate every training
   sequence from its first 5 outputs over all the rest (the simulate protocol on the training data); where the
   model's error is not finite or more than twice the floor's, the GP part is dropped after all. And one
   against a filter that diverges once the state leaves the data: far from the inducing inputs the model is the
   linear transition of ``Transition.far_field`` (F, P), and its free run (F) and its particle filter's error
   dynamics ((I - K C) F, the fully adapted proposal's gain K = P C^T (C P C^T + R)^-1) must be stable, or no less
   stable than the floor's (``guards.far_field_radii``); otherwise the GP part is dropped too
   (``selection_["free_run"]``).
5. **calibration**: per output, a factor on the predictive standard deviation so that the 95 % intervals of the
   selection's forecasts at s* would have covered 95 % of their outputs, only where that widens them
   (``training.ValidationScore.interval_scale``); with no GP part kept (s* = 0), of the forecasts of the model
   returned, each fold's floor with a zero residual (exact, through the Kalman filter; :meth:`DefaultFit.calibration`).

What was chosen is in ``model.selection_`` (floor, with the check of its form, fold origins, the record of fold
errors by step, the exact floor's errors on the same windows ("floor_errors"), s*, the refit's steps, the paired t,
whether the GP part was kept, the widening factors (``interval_scale_``), and stage 3b's record as "other_floor";
where stage 3b's model was returned, everything else is that pipeline's, the chosen floor in "other_floor"'s
"chosen").

**Checkpoints** (``fit(y, u, checkpoint=path)``): the pipeline writes its state to ``path`` (an ``archive.write_state``
file: npz arrays and JSON, no pickle; atomically, a temporary file moved into place) after every evaluation of the
selection, at the refit's start and every ``eval_every`` steps of it, and after the refit, the guard and the
calibration (``checkpoint.STAGES``). It holds every fold run's parameters, loss history, training log, jitter and
:class:`training_loop.AdamRun` state (Adam's moments, step count and step size, the generator's state, the average, the
pass's permutation and position), the record, the kept parameters and the evaluations since the best; from the
refit on the model's. ``fit(..., checkpoint=path, resume=True)`` recomputes the floor (deterministic), restores
that state and goes on: the result is bit-identical to an uninterrupted fit's. A fingerprint (data shapes, a
SHA-256 of the training arrays, the plan, seed, frozen parameters and model configuration, and the checkpoints'
layout) makes a checkpoint of other data, settings or layout a ValueError.

Assumptions: the later part of the training data says how a model will forecast what follows it (the folds'
assumption); the number of passes over the data that helps on the folds' shorter data helps on all of it.
"""
import copy
import json
import os
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from .. import archive
from .._progress import Progress, note_compilation
from ..datasets.folds import ORIGINS, rolling_origin
from ..datasets.windowing import window_starts, windows
from ..ops import compile_ahead, kernels_on_disk
from ..ops.threads import blas_single_threaded, run_tasks
from ..optim import Adam
from .._config import MAX_REJECTIONS
from .._warn import warn
from ..training_loop import GrowingRun, check_fingerprint
from .checkpoint import (CHECKPOINT_KIND, STAGES, fingerprint, guard_array, guard_result, model_state, restore_model,
                         restore_run, run_state)
from .floor import FLOOR_KINDS, choose_floor
from .guards import far_field_check, free_run_check
from .warm_start import VAR_MIN
from ..metrics import widening_factors
from .training import ValidationScore, paired_t, wins


@dataclass(frozen=True)
class Plan:
    """The settings of the default fit (module docstring). ``origins``: the rolling origins of the folds the GP part's
    selection draws from (the floor's orders are chosen on the linear models' own, ``datasets.folds.ORIGINS``);
    ``gp_folds``: the latest origins the GP part is trained and scored on (at most ``origins``); ``switch_t``: how many
    standard errors it must win by; ``average``: decay of the average of the iterates (None: the iterates);
    ``free_run_factor``: how many times the floor's free-run error on the training record the model's may reach (stage
    4's guard); ``lr_scales``: the step-size candidates (factors on Adam's step per parameter, ``optim.Adam``'s
    ``scales``), each trained on every fold in the selection stage; ``seq_lens``: the training windows' lengths, each
    for an equal share of ``max_steps`` (:meth:`DefaultFit.training_run`); parameters named in ``fixed`` never move."""

    origins: int = ORIGINS
    gp_folds: int = 2
    max_steps: int = 1500
    eval_every: int = 50
    patience: int = 4
    seq_lens: tuple = (20, 40, 80)
    batch_size: int = 16
    num_samples: int = 50
    lr: float = 0.01
    average: float = 0.99
    switch_t: float = 1.0
    free_run_factor: float = 2.0
    calibrate: bool = True
    num_particles: int = 200
    lr_scales: tuple = ({}, {"F": 0.1, "G": 0.1, "b": 0.1})
    fixed: tuple = ()


#: How many times the linear model's mean window error on the GP folds the GP model's form of a floor may forecast at
#: and still hold it (stage 1, :meth:`DefaultFit.floor`): the forms of both kinds are within 1.015 of their linear
#: models on the 18 sets of docs/results.md, section 1, and the held-out cuts, an ARX's within about 2 % by design
#: (docs/defaults.md, stage 1), and an LGSSM's over two nearly collinear outputs 6.8-7.0 times worse (research/
#: ablation_plan.md, "the floor's form against the floor").
FORM_TOLERANCE = 1.1

#: The smallest linear error stage 1's form check compares with: the standard deviation of the smallest variance the
#: warm start gives the form (``warm_start.VAR_MIN``), below which a window error says nothing of how the form holds
#: the floor (an exact ARX of noiseless data scores 1e-15, its form about 1e-4; research/ablation_plan.md, "stage 1's
#: form check at the form's noise resolution").
FORM_RESOLUTION = float(np.sqrt(VAR_MIN))


def live_candidates(record, candidates, patience, halve_at=None):
    """For each of the ``candidates`` step-size candidates of the selection's ``record`` (its evaluations, step 0
    first), whether it still trains: its mean fold error fell below its own lowest within the last ``patience``
    evaluations (decision AU of research/ablation_plan.md). A candidate that stopped scores inf from then on, so it
    stays stopped; one whose forecasts stopped being finite stops too. All train before the first evaluation.
    From the first evaluation at or after step ``halve_at`` (and after step 0) on, of the candidates still training
    there only the one with the lowest mean fold error up to it goes on, ties to the earlier candidate (successive
    halving, decision BC of research/ablation_plan.md; None: never)."""
    if not record:
        return [True] * candidates
    live = []
    for c in range(candidates):
        best, since = record[0]["candidates"][c], 0
        for r in record[1:]:
            best, since = (r["candidates"][c], 0) if r["candidates"][c] < best else (best, since + 1)
        live.append(since < patience)
    # the first evaluation at or after halve_at, and after step 0, where every candidate scores the floor
    at = None if halve_at is None else next((r["step"] for r in record if r["step"] >= max(halve_at, 1)), None)
    if at is None:
        return live
    upto = [r for r in record if r["step"] <= at]
    at_halving = live_candidates(upto, candidates, patience)
    if sum(at_halving) < 2:
        return live
    lowest = [min(r["candidates"][c] for r in upto) for c in range(candidates)]
    leader = min((c for c in range(candidates) if at_halving[c]), key=lambda c: (lowest[c], c))
    return [alive and c == leader for c, alive in enumerate(live)]


def floor_rmse(selection):
    """The mean fold error of the floor a default fit's GP part was judged against (stage 3), from its ``selection_``:
    the exact floor's ("floor_errors"); for a record without them (a model file that does not keep them), its
    step 0; None where nothing was scored."""
    if selection.get("floor_errors"):
        return float(np.mean(selection["floor_errors"]))
    return selection["record"][0]["rmse"] if selection.get("record") else None


def passes_ratio(ys, folds):
    """r of stage 4 (module docstring): the steps of the training data ``ys`` (summed over its sequences) over the
    mean of the ``folds``' training steps (each summed over its sequences), at least 1; 1 without folds."""
    if not folds:
        return 1.0
    fold_steps = np.mean([sum(len(y) for y in fold.ys) for fold in folds])
    return max(1.0, sum(len(y) for y in ys) / fold_steps)


def form_ratio(form_errors, linear_errors):
    """Stage 1's check of the floor's form: the mean of its form's window errors over the mean of the linear model's
    on the same windows, the latter taken at least :data:`FORM_RESOLUTION`; 1 where there are no windows or the
    linear model's mean is not finite (nothing to compare with), inf where the form's is not finite."""
    form, own = (float(np.mean(e)) if len(e) else 1.0 for e in (form_errors, linear_errors))
    ratio = form / max(own, FORM_RESOLUTION) if np.isfinite(own) else 1.0
    return float(ratio) if np.isfinite(ratio) else np.inf


def num_latent_for(dim_x, dim_y):
    """Q of the default fit: d_x latent GPs, at most max(5, 3 d_y) (stage 1 of the module docstring)."""
    return min(dim_x, max(5, 3 * dim_y))


class DefaultFit:
    """The pipeline of the module docstring for ``model`` (a :class:`gpssm_np.models.gpssm.GPSSM` with the linear
    mean) under ``plan``; :meth:`run` fits it to training sequences in model units. ``checkpoint``: a path written
    as the fit goes (module docstring, "Checkpoints"); ``resume``: continue from it where it exists."""

    def __init__(self, model, plan=Plan(), progress=False, seed=0, checkpoint=None, resume=False, kinds=FLOOR_KINDS,
                 dim_x=None, fitted=None):
        self.model, self.plan, self.progress, self.seed, self.frozen = model, plan, progress, seed, tuple(plan.fixed)
        self.checkpoint, self.resume, self.kinds, self.dim_x = checkpoint, resume, tuple(kinds), dim_x
        # stage 1's linear models by kind: those given, taken as they are (floor.choose_floor's ``fitted``); after
        # stage 1 every kind it has (Floor.fitted), which stage 3b takes the other kind's from
        self.fitted = fitted
        self.floor_scores, self.accepted = {}, 0  # stage 1's fold scores by kind; stage 3's s*
        self.runs, self.record, self.kept, self.best, self.since, self.step = [], [], {}, None, 0, 0
        self.refit_run, self.free_run, self.scale, self.floor_choice = None, None, None, None
        self.passes = 1.0  # stage 4's r (passes_ratio), set by run
        self.folds, self.fold_floors = [], []  # the GP folds and the floor refitted to each one's past (selection)
        self.candidate = 0  # the step-size candidate the acceptance chose (index into plan.lr_scales)
        # stage 1's check: the floor's form's window errors on the selection's windows (stage 3 compares with them),
        # their mean over the linear model's, and the kind refused where its form could not hold it (None)
        self.floor_errors, self.form_ratio, self.refused = [], None, None
        # child processes compiling the training's kernels and the scores' filter step (set by run)
        self.ahead, self.filter_ahead = compile_ahead.Ahead(), compile_ahead.Ahead()

    def run(self, ys, us):
        """Stages 1-5 on ``ys``, ``us`` (lists of (T_i, d), model units); leaves the fitted parameters in the
        model and returns ``selection_``."""
        # the training objective's kernels and the scores' filter step compile in two more processes while this one
        # compiles the floor's (ops/compile_ahead.py); the first evaluation and the first training step wait for them
        self.ahead = compile_ahead.start("enkf") if self.model.objective == "enkf" else compile_ahead.Ahead()
        self.filter_ahead = compile_ahead.start("filter")
        try:
            return self.stages(ys, us)
        finally:  # a child not waited for (no training step, or an error) ends with the fit
            self.ahead.stop()
            self.filter_ahead.stop()

    def stages(self, ys, us):
        """The body of :meth:`run`, once the children compiling kernels have started."""
        self.fingerprint = fingerprint(self.model, ys, us, self.plan, self.seed, self.frozen)
        saved = None
        if self.resume and self.checkpoint is not None and os.path.exists(self.checkpoint):
            saved = self.read_checkpoint()
        stage = saved[0]["stage"] if saved else None
        folds = rolling_origin(ys, us, self.plan.origins)[-self.plan.gp_folds:]
        floor = self.floor(ys, us, folds)
        self.floor_choice = {"kind": floor.kind, "dim_x": int(floor.dim_x), "orders": floor.summary()["orders"]}
        if saved and json.loads(json.dumps(self.floor_choice)) != saved[0]["floor"]:
            raise ValueError(f"checkpoint: {os.fspath(self.checkpoint)!r} was written after the floor "
                             f"{saved[0]['floor']}, this fit chose {self.floor_choice}")
        self.passes = passes_ratio(ys, folds)
        runs, record = self.selection(floor, folds, saved)
        step, t, self.candidate = self.acceptance(record, self.floor_errors)
        self.accepted = step
        if stage in (None, "selection", "refit"):
            self.refit(floor, ys, us, step, saved if stage == "refit" else None)
            self.save("refitted")
        else:
            restore_model(self.model, "model/", saved[0]["model"], saved[1])
        if stage in ("checked", "done"):
            free_run = saved[0]["free_run"]
            if free_run is not None:
                free_run = guard_result(saved[1]["free_run"])
        else:
            free_run = self.guards(floor, ys, us) if step else None
        self.free_run = free_run
        if stage != "done":
            self.save("checked")
        if free_run is not None and not free_run["passed"]:
            step = 0
            self.refit(floor, ys, us, step)
        if stage == "done":
            scale = saved[1].get("interval_scale")
        else:
            scale = self.calibration(runs, step) if self.plan.calibrate else None
        self.model.interval_scale_ = self.scale = scale
        if stage != "done":
            self.save("done")
        return {"floor": self.floor_record(floor), "origins": [list(f.origins) for f in folds], "record": record,
                "floor_errors": self.floor_errors, "step": step, "refit_steps": self.refit_steps(step), "t": t,
                "gp_part": step > 0, "free_run": free_run,
                "lr_scale": dict(self.plan.lr_scales[self.candidate]) if step else None,
                "interval_scale": None if scale is None else scale.tolist()}

    # -- checkpoints -----------------------------------------------------------------------------------------
    def save(self, stage, refit_steps=None):
        """Write the checkpoint of ``stage`` (``checkpoint.STAGES``) when a path was given: the selection's state (every
        fold run's model and :class:`AdamRun`, the record, the kept parameters, the best score and the evaluations
        since), the model's from the refit on, the refit's run inside it, the guard's result and the
        calibration."""
        if self.checkpoint is None:
            return
        arrays = {}
        runs = []
        for k, (model, run, _) in enumerate(self.runs):
            runs.append({"model": model_state(model, f"sel/run{k}/", arrays), "run": run_state(run, f"sel/run{k}/",
                                                                                                  arrays)})
        if self.record:
            arrays["sel/record/step"] = np.array([r["step"] for r in self.record], dtype=np.int64)
            arrays["sel/record/rmse"] = np.array([r["rmse"] for r in self.record], dtype=np.float64)
            arrays["sel/record/candidates"] = np.array([r["candidates"] for r in self.record], dtype=np.float64)
            for c in range(len(self.record[0]["windows"])):
                arrays[f"sel/record/windows/{c}"] = np.array([r["windows"][c] for r in self.record],
                                                             dtype=np.float64)
        for step, params in self.kept.items():
            for k, p in enumerate(params):
                arrays.update({f"sel/kept/{step}/{k}/{name}": value for name, value in p.items()})
        if self.best is not None:
            arrays["sel/best"] = np.array(self.best, dtype=np.float64)
        state = {"fingerprint": self.fingerprint, "stage": stage, "floor": self.floor_choice,
                 "selection": {"runs": runs, "kept": sorted(self.kept), "since": self.since, "step": self.step,
                               "evaluations": len(self.record)},
                 "model": None, "refit": None, "free_run": None}
        if stage != "selection":
            state["model"] = model_state(self.model, "model/", arrays)
        if stage == "refit":
            state["refit"] = {"steps": refit_steps, "run": run_state(self.refit_run, "refit/", arrays)}
        if stage in ("checked", "done") and self.free_run is not None:
            state["free_run"] = True
            arrays["free_run"] = guard_array(self.free_run)
        if stage == "done" and self.scale is not None:
            arrays["interval_scale"] = np.asarray(self.scale, dtype=np.float64)
        self.write_checkpoint(state, arrays)

    def write_checkpoint(self, state, arrays):
        """Write ``state``, ``arrays`` to the checkpoint path atomically (a temporary file, then ``os.replace``)."""
        archive.write_state(self.checkpoint, CHECKPOINT_KIND, state, arrays)

    def read_checkpoint(self):
        """(state, arrays) of the checkpoint, refused (ValueError) when written for other data or another plan."""
        state, arrays = archive.read_state(self.checkpoint, CHECKPOINT_KIND)
        check_fingerprint(self.fingerprint, state.get("fingerprint", {}), self.checkpoint, "a default fit")
        if state.get("stage") not in STAGES:
            raise ValueError(f"checkpoint: unknown stage {state.get('stage')!r} in {os.fspath(self.checkpoint)!r}")
        return state, arrays

    def restore_selection(self, state, arrays):
        """The selection's state from a checkpoint (:meth:`save`) into the fold runs built afresh."""
        sel = state["selection"]
        for k, (model, run, _) in enumerate(self.runs):
            restore_model(model, f"sel/run{k}/", sel["runs"][k]["model"], arrays)
            restore_run(run, f"sel/run{k}/", sel["runs"][k]["run"], arrays)
        steps, rmse, means = arrays["sel/record/step"], arrays["sel/record/rmse"], arrays["sel/record/candidates"]
        win = [arrays[f"sel/record/windows/{c}"] for c in range(means.shape[1])]
        self.record[:] = [{"step": int(steps[i]), "rmse": float(rmse[i]), "candidates": means[i].tolist(),
                           "windows": [w[i].tolist() for w in win]} for i in range(len(steps))]
        names = list(self.runs[0][1].params())
        self.kept = {step: [{name: np.array(arrays[f"sel/kept/{step}/{k}/{name}"], dtype=np.float64)
                             for name in names} for k in range(len(self.runs))] for step in sel["kept"]}
        self.best, self.since, self.step = float(arrays["sel/best"]), int(sel["since"]), int(sel["step"])

    # -- stage 1 ---------------------------------------------------------------------------------------------
    def floor(self, ys, us, folds=None):
        """Stage 1 on ``ys``, ``us`` with the GP ``folds`` (None: the plan's): the floor of ``floor.choose_floor``, the
        model's d_x and Q set to it (:meth:`hold`), and its form checked (:meth:`held`): where the GP model's form of
        the chosen kind forecasts the folds' windows more than :data:`FORM_TOLERANCE` times worse than the linear model,
        the other kind (where allowed and scored) is the floor if its form forecasts them better."""
        report = Progress(0, enabled=self.progress)
        folds = rolling_origin(ys, us, self.plan.origins)[-self.plan.gp_folds:] if folds is None else folds
        d = self.dim_x
        names = ({"arx": "ARX()", "lgssm": "LGSSM(dim_x='auto')"} if d is None else
                 {"arx": f"the ARX of d_x {'in' if isinstance(d, list) else '='} {d}", "lgssm": f"LGSSM(dim_x={d})"})
        report.note("floor: " + " and ".join(names[kind] for kind in FLOOR_KINDS if kind in self.kinds)
                    + " on rolling-origin folds")
        floor = choose_floor(ys, us, kinds=self.kinds, dim_x=self.dim_x, fitted=self.fitted)
        self.floor_scores, self.fitted = dict(floor.scores), floor.fitted
        if not np.isfinite(floor.scores.get(floor.kind, np.inf)):
            warn(f"y: {sum(len(y) for y in ys)} training steps are too few for the rolling-origin folds to "
                 f"score a linear model (no fold error is finite): the floor, the {floor.kind} of orders "
                 f"{floor.orders}, is a fallback chosen without evidence", UserWarning)
        held = self.held(floor, folds)
        other = next((kind for kind in self.kinds if kind != floor.kind), None)
        if held["ratio"] > FORM_TOLERANCE and other is not None and self.scored(other):
            fitted = None if self.fitted is None else {other: self.fitted[other]}
            alternative = choose_floor(ys, us, kinds=(other,), dim_x=self.dim_x, fitted=fitted)
            theirs = self.held(alternative, folds)
            report.note(f"floor: the GP model's form of the {floor.kind} forecasts the folds {held['ratio']:.2f} times "
                        f"worse than the {floor.kind} itself; the {other}'s form {theirs['ratio']:.2f} times")
            if np.mean(theirs["errors"]) < np.mean(held["errors"]):  # stage 1's scores of both kinds kept
                self.refused, floor, held = floor.kind, replace(alternative, scores=dict(self.floor_scores)), theirs
            else:
                self.hold(floor)
        if held["ratio"] > FORM_TOLERANCE:
            warn(f"the GP model's form of its floor, the {floor.kind} of orders {floor.orders}, forecasts "
                 f"the folds' windows {held['ratio']:.2f} times worse than the {floor.kind} itself (diagonal "
                 "noise cannot hold the floor's, as over nearly collinear outputs): a fit without a GP part "
                 "returns that form", UserWarning)
        self.fold_floors, self.floor_errors, self.form_ratio = held["starts"], held["errors"], held["ratio"]
        report.note(f"floor: {floor.kind} {floor.orders}, d_x = {floor.dim_x} (fold errors: " +
                    ", ".join(f"{k} {v:.4f}" for k, v in floor.scores.items()) + ")")
        return floor

    def scored(self, kind):
        """Whether stage 1's folds gave the linear ``kind`` a finite error (a kind they could not score is never a
        floor on evidence: not the other kind of stage 1's form check, nor stage 3b's)."""
        return bool(np.isfinite(self.floor_scores.get(kind, np.inf)))

    def floor_record(self, floor):
        """Stage 1's choice as plain JSON types: ``floor.summary()`` with the check of its form (:meth:`held`):
        "form_ratio" (its form's mean window error over the linear model's, :func:`form_ratio`; 1 without folds)
        and "refused" (the kind whose form could not hold it, else None)."""
        return dict(floor.summary(), form_ratio=self.form_ratio, refused=self.refused)

    def hold(self, floor):
        """The model's d_x set to ``floor``'s and its Q to the default's for it (stage 1 of the module docstring)."""
        model, d_x = self.model, floor.dim_x
        if model.spec.independent:  # PRSSM: one GP per state
            num_latent = d_x
        elif model.latent_follows_dim_x:
            num_latent = num_latent_for(d_x, model.spec.dim_y)
        else:  # a num_latent the user gave
            num_latent = model.spec.num_latent
        model.spec = replace(model.spec, dim_x=d_x, num_latent=num_latent)

    def held(self, floor, folds):
        """How the GP model holds ``floor`` (the model's d_x set to it, :meth:`hold`): on each of the ``folds`` the
        floor refitted to the fold's past and its form (:meth:`floor_form`: the model the fit returns without a GP
        part), each forecasting the windows after the fold's origin (:meth:`window_score`). {"starts": the refitted
        floors, "errors": the form's window errors, fold by fold, "ratio": their mean over the linear model's (1 without
        folds)}."""
        self.hold(floor)
        starts, errors, linear = [], [], []
        for k, fold in enumerate(folds):
            starts.append(floor.refit(fold.ys, fold.us))
            score = self.window_score(folds, k)
            errors += score.window_scores(self.floor_form(starts[k], fold.ys, fold.us, self.seed + k))
            linear += score.window_scores(starts[k])
        return {"starts": starts, "errors": errors, "ratio": form_ratio(errors, linear)}

    def window_score(self, folds, k):
        """The causal score (``training.ValidationScore``) of every window after fold ``k``'s origin."""
        later = [w for f in folds[k:] for w in f.windows]
        return ValidationScore.of_windows(later, num_particles=self.plan.num_particles,
                                          num_samples=self.plan.num_samples, seed=self.seed)

    # -- stage 2 ---------------------------------------------------------------------------------------------
    def selection(self, floor, folds, saved=None):
        """The lockstep fold runs; returns (runs, record): one (model, AdamRun, score) per fold and the list of
        {step, rmse, windows} (windows: every fold's window errors, fold by fold). ``saved``: a checkpoint's
        (state, arrays) to continue from."""
        plan, runs = self.plan, []
        if not folds:
            return runs, [{"step": 0, "rmse": None, "windows": []}]
        starts, self.folds = self.fold_floors, folds  # the floor refitted to each fold's past (stage 1)
        for scales in plan.lr_scales:  # every candidate on every fold, the same seeds (step 0 is the same)
            for k, fold in enumerate(folds):
                model = copy.deepcopy(self.model)
                model.clear_training_record()
                warm = model.start_from_floor(starts[k], fold.ys, fold.us, self.seed + k)
                score = self.window_score(folds, k)
                runs.append((model, self.training_run(model, warm, fold.ys, fold.us, self.seed + k, scales), score))
        self.runs, self.record = runs, []
        report = Progress(plan.max_steps, enabled=self.progress, unit="step")
        note_compilation(report, kernels_on_disk())
        report.note(f"selection: the GP part trained on {len(folds)} fold(s) with {len(plan.lr_scales)} step-size "
                    "candidate(s), scored on the windows after each origin")

        with blas_single_threaded():
            if saved is not None:
                self.restore_selection(*saved)
                report.note(f"selection: resumed at step {self.step} from the checkpoint")
            else:
                self.best, self.since, self.step = self.evaluate(0), 0, 0
                self.kept = {0: [run.params() for _, run, _ in runs]}  # step 0 and the best step so far
                self.save("selection")
            self.ahead.wait()
            while self.step < plan.max_steps and self.since < plan.patience:
                n = min(plan.eval_every, plan.max_steps - self.step)
                trained = self.advance(n)
                self.step += n
                current = self.evaluate(self.step)
                # the loss of a run still training (none where every candidate diverged at once)
                report.update(self.step, runs[(trained or [-1])[-1]][0].history_[-1], current)
                if current < self.best:
                    self.best, self.since = current, 0
                    self.kept = {0: self.kept[0], self.step: [run.params() for _, run, _ in runs]}
                else:
                    self.since += 1
                self.save("selection")
        report.close()
        return runs, self.record

    def training_run(self, model, warm, ys, us, seed, scales, passes=1.0):
        """The :class:`GrowingRun` of ``model`` on ``ys``, ``us`` with Adam's step-size factors ``scales`` and random
        numbers from ``seed``: windows (stride 1) of ``plan.seq_lens[k]`` steps (at most the shortest sequence) from
        step k M / len(``seq_lens``) on (rounded down; M = round(``passes`` ``max_steps``), ``passes`` stage 4's r),
        each started from the floor's filtered state before its first output (``warm.filtered_states``, the
        :class:`warm_start.WarmStart` the model started from): N(m, diag P) given the outputs before the window only,
        as a forecast starts; for a model with ``initial_state="smoothed"`` the smoothed one
        (``warm.initial_states``), given all the outputs."""
        plan = self.plan
        shortest = min(len(y) for y in ys)
        states = warm.initial_states if model.initial_state == "smoothed" else warm.filtered_states

        def cut(seq_len):
            seq_len = min(seq_len, shortest)
            moments = [states(i, window_starts(len(y), seq_len, 1)) for i, y in enumerate(ys)]
            return (*windows(ys, us, seq_len, 1), (np.concatenate([m for m, _ in moments]),
                                                   np.concatenate([v for _, v in moments])))

        budget = int(round(passes * plan.max_steps))
        stages = [(k * budget // len(plan.seq_lens), n) for k, n in enumerate(plan.seq_lens)]
        return GrowingRun(model, cut, stages, np.random.default_rng(seed), Adam(plan.lr, scales=scales), self.frozen,
                          plan.batch_size, plan.num_samples, MAX_REJECTIONS, plan.average)

    def live_runs(self):
        """The indices into ``self.runs`` of the step-size candidates still training (:func:`live_candidates`, halved
        where the windows first grow, at step ``max_steps / len(seq_lens)``; the runs of one candidate are
        consecutive)."""
        candidates = len(self.plan.lr_scales)
        per_candidate = len(self.runs) // candidates
        live = live_candidates(self.record, candidates, self.plan.patience,
                               self.plan.max_steps // len(self.plan.seq_lens))
        return [k for k in range(len(self.runs)) if live[k // per_candidate]]

    def advance(self, n):
        """``n`` Adam steps of every fold run of a candidate still training, side by side on the cores (the runs are
        independent); returns the indices into ``self.runs`` of the runs trained."""
        live = self.live_runs()
        run_tasks([partial(self.runs[k][1].advance, n) for k in live])
        return live

    def evaluate(self, step):
        """Every fold run's window errors at ``step`` into the record, candidate by candidate (the runs of one
        step-size candidate are consecutive in ``self.runs``); returns the lowest candidate's mean. A candidate
        whose forecasts are not finite (a run that diverged) scores inf: NaN would compare as neither better nor
        worse, so that the step kept here and the step stage 3 chooses could differ. A candidate that has stopped
        (:func:`live_candidates`) is not scored: inf, each of its windows too, so stage 3 cannot choose it at a
        step it did not train to."""
        self.filter_ahead.wait()
        candidates = len(self.plan.lr_scales)
        per_candidate = len(self.runs) // candidates
        live = self.live_runs()
        # side by side: a wide floor's particle filters are mostly kernel time (bench/README.md, dryer2)
        errors = dict(zip(live, run_tasks([partial(self.runs[k][1].scored, self.runs[k][2].window_scores)
                                           for k in live])))
        groups = [[e for k in range(c * per_candidate, (c + 1) * per_candidate) for e in errors[k]]
                  if c * per_candidate in errors else [np.inf] * len(self.record[0]["windows"][c])
                  for c in range(candidates)]
        means = [float(np.mean(g)) for g in groups]
        means = [m if np.isfinite(m) else np.inf for m in means]
        self.record.append({"step": step, "rmse": min(means), "candidates": means, "windows": groups})
        return self.record[-1]["rmse"]

    # -- stage 3 ---------------------------------------------------------------------------------------------
    @staticmethod
    def best_of(record):
        """(row, candidate): the record's row and step-size candidate of the lowest mean fold error (ties to the
        earlier step, then the earlier candidate)."""
        return min(((r, c) for r in record for c in range(len(r["candidates"]))),
                   key=lambda rc: (rc[0]["candidates"][rc[1]], rc[0]["step"], rc[1]))

    def acceptance(self, record, floor_errors):
        """(s*, t, candidate): the step and step-size candidate of the lowest mean fold error (:meth:`best_of`), kept
        only when the paired test on that candidate's windows beats ``floor_errors``, the exact floor's on the same
        windows (module docstring, stage 3)."""
        if len(record) < 2:
            return 0, None, 0
        best, c = self.best_of(record)
        if best["step"] == 0:
            return 0, 0.0, 0
        step = best["step"]
        t = paired_t(floor_errors, best["windows"][c])
        return (step, t, c) if wins(t, self.plan.switch_t) else (0, t, 0)

    # -- stage 3b --------------------------------------------------------------------------------------------
    def other_kind(self):
        """The floor kind stage 3b trains from (module docstring): the kind not chosen, where stage 3 kept no GP part
        from the chosen floor (s* = 0 with folds to train on), both kinds were allowed and the other had a finite
        fold score; None otherwise."""
        if self.accepted or len(self.record) < 2 or set(self.kinds) != set(FLOOR_KINDS):
            return None
        other = next(kind for kind in self.kinds if kind != self.floor_choice["kind"])
        return other if self.scored(other) and other != self.refused else None

    def t_over(self, first):
        """The paired t (``training.paired_t``) of this fit's window errors at its final s* and step-size candidate
        over ``first``'s exact floor errors (the floor ``first`` chose, on the same windows); None where this fit
        returns no GP part."""
        if not self.accepted or self.free_run is None or not self.free_run["passed"]:
            return None
        at = next(r for r in self.record if r["step"] == self.accepted)
        return paired_t(first.floor_errors, at["windows"][self.candidate])

    # -- stage 4 ---------------------------------------------------------------------------------------------
    def refit_steps(self, step):
        """The refit's Adam steps for the selection's ``step`` s*: round(r s*), r = ``self.passes``
        (:func:`passes_ratio`; module docstring, stage 4)."""
        return int(round(self.passes * step))

    def refit(self, floor, ys, us, step, saved=None):
        """The final parameters on all of ``ys``, ``us`` (module docstring, stage 4) for the selection's ``step``
        s* (0: the floor with a zero residual); a checkpoint at its start and every ``eval_every`` steps. ``saved``:
        a checkpoint's (state, arrays) written inside the refit."""
        model, plan = self.model, self.plan
        model.clear_training_record()
        if not step:
            model.start_from_floor(floor.model, ys, us, self.seed, gp_share=0.0)
            return
        steps = self.refit_steps(step)
        warm = model.start_from_floor(floor.model, ys, us, self.seed)
        report = Progress(steps, enabled=self.progress, unit="step")
        report.note(f"refit on all the training data: {steps} steps")
        with blas_single_threaded():
            run = self.refit_run = self.training_run(model, warm, ys, us, self.seed, plan.lr_scales[self.candidate],
                                                     self.passes)
            if saved is not None:
                state, arrays = saved
                restore_model(model, "model/", state["model"], arrays)
                restore_run(run, "refit/", state["refit"]["run"], arrays)
                report.note(f"refit: resumed at step {run.steps} from the checkpoint")
            else:
                self.save("refit", steps)
            self.ahead.wait()
            while run.steps < steps:
                run.advance(min(plan.eval_every, steps - run.steps))
                report.update(run.steps, model.history_[-1])
                self.save("refit", steps)
        model.set_learned_params(run.params())
        self.refit_run = None
        report.close()

    def floor_form(self, linear, ys, us, seed):
        """A copy of the model holding the ``linear`` model (fitted to ``ys``, ``us``) with a zero GP residual (A = 0),
        its random numbers from ``seed``: what the fit returns without a GP part, whose forecasts are exact (through the
        Kalman filter); stage 1 checks it on each fold (the floor refitted to the fold's past), stage 4's guards compare
        the refitted model with it on all the data, stage 5 calibrates it where no GP part is kept."""
        as_floor = copy.deepcopy(self.model)
        as_floor.start_from_floor(linear, ys, us, seed, gp_share=0.0)
        return as_floor

    def guards(self, floor, ys, us):
        """Stage 4's guards of the refitted model against the floor in the same form (:meth:`floor_form`, forecast
        with the same random numbers): ``guards.free_run_check`` on the training record and ``guards.far_field_check``
        (module docstring); passed when both pass."""
        as_floor = self.floor_form(floor.model, ys, us, self.seed)
        result = free_run_check(self.model, as_floor, ys, us, self.plan.free_run_factor, self.seed,
                                self.plan.num_samples, self.plan.num_particles)
        far = far_field_check(self.model, as_floor)
        return dict(result, far_field={k: far[k] for k in ("model", "floor")},
                    passed=result["passed"] and far["passed"])

    # -- stage 5 ---------------------------------------------------------------------------------------------
    def calibration(self, runs, step):
        """The widening factors (d_y,) of the selection's forecasts at ``step`` (None without folds). At step 0 (no GP
        part kept) those of the model returned: each fold's floor with a zero GP residual (:meth:`floor_form`), whose
        forecasts are exact, not the warm start's particles (step 0 of the runs, whose GP part has a prior variance and
        whose particle filter over a floor's lag states can degenerate: on a three-state plant with correlated outputs
        they gave factors of 7.5 and 8.3 where the LGSSM's own were 1.55)."""
        if not runs:
            return None
        z = []
        per_candidate = len(runs) // len(self.plan.lr_scales)
        chosen = slice(self.candidate * per_candidate, (self.candidate + 1) * per_candidate)
        for k, ((model, _, score), params) in enumerate(zip(runs[chosen], self.kept[step][chosen])):
            if step:
                model.set_learned_params(params)
            else:
                fold = self.folds[k]
                model = self.floor_form(self.fold_floors[k], fold.ys, fold.us, self.seed + k)
            z.append(score.standardised_errors(model))
        return widening_factors(np.concatenate(z))


def fit(model, ys, us, plan=Plan(), progress=False, seed=0, checkpoint=None, resume=False, kinds=FLOOR_KINDS,
        dim_x=None):
    """The default fit of ``model`` on ``ys``, ``us`` (lists of (T_i, d), model units): stages 1-5
    (:class:`DefaultFit`) with the floor of one of ``kinds`` (a GP model's ``init="arx"`` or ``"lgssm"`` allows
    one) and, with ``dim_x`` given, of that state dimension (``floor.choose_floor``), and, where both kinds are
    allowed, stage 3b where stage 3 kept no GP part (module docstring). Leaves the fitted
    parameters in ``model`` and returns ``selection_``; its "other_floor" is stage 3b's record: None where stage 3b
    did not run, else {"kind", "step", "t", "kept"} ("t": over the chosen floor, exact), with the chosen floor as
    "chosen" where stage 3b's model was returned.
    ``checkpoint``: stage 3b's pipeline writes its own beside it (the path with ".other" appended)."""
    pristine = copy.deepcopy(model)  # stage 3b starts where stage 1 did
    first = DefaultFit(model, plan, progress, seed, checkpoint, resume, kinds, dim_x)
    selection = first.run(ys, us)
    other = first.other_kind()
    if other is None:
        return dict(selection, other_floor=None)
    Progress(0, enabled=progress).note(f"stage 3b: no GP part kept from the {selection['floor']['kind']} floor; "
                                       f"the selection again from the {other} floor")
    path = None if checkpoint is None else os.fspath(checkpoint) + ".other"
    # the other kind's linear model as stage 1 fitted it (the same fit on the same data)
    fitted = None if first.fitted is None else {other: first.fitted[other]}
    second = DefaultFit(pristine, plan, progress, seed, path, resume, (other,), dim_x, fitted)
    theirs = second.run(ys, us)
    t = second.t_over(first)
    record = {"kind": other, "step": theirs["step"], "t": t, "kept": wins(t, plan.switch_t)}
    if not record["kept"]:
        return dict(selection, other_floor=record)
    for name in ("spec", "params", "history_", "training_log_", "interval_scale_"):
        setattr(model, name, getattr(pristine, name))
    return dict(theirs, other_floor=dict(record, chosen=selection["floor"]))
