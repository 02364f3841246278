r"""The default fit of the GP models: a short pipeline of named stages, all choices made on rolling-origin folds.

``model.fit(y, u)`` with the defaults runs :class:`DefaultFit` with the frozen :class:`Plan`:

1. **floor** (``models/floor.py``): the better of ``ARX()`` and ``LGSSM(dim_x="auto")``, each at the orders its own
   rolling-origin cross-validation chooses, on the same folds (``datasets/folds.py``). The GP model takes the
   floor's state dimension (d_x = n d_y for an ARX of n = max(na, nb) lags) and Q = min(d_x, max(5, 3 d_y))
   latent GPs.
2. **selection**: on each of the ``gp_folds`` latest origins, a copy of the model starts from the floor refitted to
   the data before the origin (``warm_start.floor_warm_start``: the GP residual at zero mean, so it forecasts as
   the floor does) and takes Adam steps on windows of that part; every ``eval_every`` steps each copy forecasts
   causally every window after its origin (``training.ValidationScore``: a particle filter over the past, then a
   free run; the same random numbers at every evaluation). The runs go in lockstep; the stopping step s* is the
   one with the lowest mean error over all their windows, and they stop after ``patience`` evaluations without
   a lower one (or ``max_steps``).
3. **acceptance**: the GP part is kept only when, at s*, it beats the floor (step 0 of the same runs: the floor
   refitted on each fold's past, forecast by the same particles) by more than ``switch_t`` standard errors of
   the paired per-window differences (``training.paired_t``); otherwise s* = 0. The default of one standard
   error is the one-standard-error rule of model selection (Hastie, Tibshirani and Friedman, The Elements of
   Statistical Learning, 2009, sec. 7.10): the simpler model (the floor) unless the richer one is better by
   more than the noise of the estimate.
4. **refit**: the floor is fitted to all the training data (it was in stage 1); with the GP part kept, the model
   starts there and takes s* Adam steps on all of it (the last average of the iterates kept); without, it is the
   floor with a zero GP residual (A = 0, all process noise the floor's): a linear model in the GP model's form.
   A guard against transitions whose long free runs leave the data (the folds score 100-step windows only):
   the refitted model and the floor (in the model's form, the same random numbers) each simulate every training
   sequence from its first 5 outputs over all the rest (the simulate protocol on the training data); where the
   model's error is not finite or more than twice the floor's, the GP part is dropped after all
   (``selection_["free_run"]``).
5. **calibration**: per output, a factor on the predictive standard deviation so that the 95 % intervals of the
   selection's forecasts at s* would have covered 95 % of their outputs, only where that widens them
   (``training.ValidationScore.interval_scale``).

What was chosen is in ``model.selection_`` (floor, fold origins, the record of fold errors by step, s*, the paired
t, whether the GP part was kept, the calibration factors).

Assumptions: the later part of the training data says how a model will forecast what follows it (the folds'
assumption); the number of gradient steps that helps on the folds' shorter data helps on all of it.
"""
import copy
from dataclasses import dataclass, replace

import numpy as np

from .._progress import Progress, note_compilation
from ..datasets.folds import rolling_origin
from ..datasets.windowing import windows
from ..ops import kernels_on_disk
from ..ops.threads import blas_single_threaded
from ..optim import Adam
from ..params import init_params
from .floor import choose_floor
from .._config import MAX_REJECTIONS
from ..protocols import N_INIT
from .training import AdamRun, ValidationScore, paired_t, widening_factors
from .warm_start import floor_warm_start, initial_params


@dataclass(frozen=True)
class Plan:
    """The settings of the default fit (module docstring). ``origins``: folds of the floor; ``gp_folds``: the latest
    origins the GP part is trained and scored on; ``switch_t``: how many standard errors it must win by;
    ``average``: decay of the average of the iterates (None: the iterates); ``free_run_factor``: how many times the
    floor's free-run error on the training record the model's may reach (stage 4's guard)."""

    origins: int = 5
    gp_folds: int = 2
    max_steps: int = 1500
    eval_every: int = 50
    patience: int = 4
    seq_len: int = 20
    batch_size: int = 16
    num_samples: int = 50
    lr: float = 0.01
    average: float = 0.99
    switch_t: float = 1.0
    free_run_factor: float = 2.0
    calibrate: bool = True
    num_particles: int = 200


def num_latent_for(dim_x, dim_y):
    """Q of the default fit: d_x latent GPs, at most max(5, 3 d_y) (stage 1 of the module docstring)."""
    return min(dim_x, max(5, 3 * dim_y))


class DefaultFit:
    """The pipeline of the module docstring for ``model`` (a :class:`gpssm_np.models.gpssm.GPSSM` with the linear
    mean) under ``plan``; :meth:`run` fits it to training sequences in model units."""

    def __init__(self, model, plan=Plan(), progress=False, seed=0, frozen=()):
        self.model, self.plan, self.progress, self.seed, self.frozen = model, plan, progress, seed, frozen

    def run(self, ys, us):
        """Stages 1-5 on ``ys``, ``us`` (lists of (T_i, d), model units); leaves the fitted parameters in the
        model and returns ``selection_``."""
        floor = self.floor(ys, us)
        folds = rolling_origin(ys, us, self.plan.origins)[-self.plan.gp_folds:]
        runs, record = self.selection(floor, folds)
        step, t = self.acceptance(record)
        self.refit(floor, ys, us, step)
        free_run = self.free_run_check(floor, ys, us) if step else None
        if free_run is not None and not free_run["passed"]:
            step = 0
            self.refit(floor, ys, us, step)
        scale = self.calibration(runs, step) if self.plan.calibrate else None
        self.model.interval_scale_ = scale
        return {"floor": floor.summary(), "origins": [list(f.origins) for f in folds], "record": record,
                "step": step, "t": t, "gp_part": step > 0, "free_run": free_run,
                "interval_scale": None if scale is None else scale.tolist()}

    # -- stage 1 ---------------------------------------------------------------------------------------------
    def floor(self, ys, us):
        report = Progress(0, enabled=self.progress)
        report.note("floor: ARX() and LGSSM(dim_x='auto') on rolling-origin folds")
        floor = choose_floor(ys, us)
        model = self.model
        d_x = floor.dim_x
        model.spec = replace(model.spec, dim_x=d_x,
                             num_latent=num_latent_for(d_x, model.spec.dim_y) if not model.spec.independent else d_x)
        report.note(f"floor: {floor.kind} {floor.orders}, d_x = {d_x} (fold errors: " +
                    ", ".join(f"{k} {v:.4f}" for k, v in floor.scores.items()) + ")")
        return floor

    def start(self, model, floor_model, ys, us, seed, gp_share=None):
        """Set ``model``'s parameters to the warm start from the fitted ``floor_model`` on ``ys``, ``us``."""
        rng = np.random.default_rng(seed)
        params = init_params(model.spec, rng, **model.init_values)
        start = floor_warm_start(floor_model, ys, us)
        kwargs = {} if gp_share is None else {"gp_share": gp_share}
        model.params = initial_params(model.spec, params, start, us, rng, **kwargs)

    # -- stage 2 ---------------------------------------------------------------------------------------------
    def selection(self, floor, folds):
        """The lockstep fold runs; returns (runs, record): one (model, AdamRun, score) per fold and the list of
        {step, rmse, windows} (windows: every fold's window errors, fold by fold)."""
        plan, runs = self.plan, []
        if not folds:
            return runs, [{"step": 0, "rmse": None, "windows": []}]
        for k, fold in enumerate(folds):
            model = copy.deepcopy(self.model)
            model.history_, model.training_log_ = [], {"rejected_steps": [], "jitter": []}
            self.start(model, floor.refit(fold.ys, fold.us), fold.ys, fold.us, self.seed + k)
            later = [w for f in folds[k:] for w in f.windows]  # every window after this fold's origin
            score = ValidationScore.of_windows(later, num_particles=plan.num_particles,
                                               num_samples=plan.num_samples, seed=self.seed)
            seq_len = min(plan.seq_len, min(len(y) for y in fold.ys))
            Y, U = windows(fold.ys, fold.us, seq_len, 1)
            run = AdamRun(model, Y, U, None, np.random.default_rng(self.seed + k), Adam(plan.lr), self.frozen,
                          plan.batch_size, plan.num_samples, MAX_REJECTIONS, plan.average)
            runs.append((model, run, score))
        report = Progress(plan.max_steps, enabled=self.progress, unit="step")
        note_compilation(report, kernels_on_disk())
        report.note(f"selection: the GP part trained on {len(folds)} fold(s), scored on the windows after each")
        record = []

        def evaluate(step):
            errors = [e for _, run, score in runs for e in run.scored(score.window_scores)]
            record.append({"step": step, "rmse": float(np.mean(errors)), "windows": errors})
            return record[-1]["rmse"]

        with blas_single_threaded():
            best, since = evaluate(0), 0
            self.kept = {0: [run.params() for _, run, _ in runs]}  # step 0 and the best step so far
            step = 0
            while step < plan.max_steps and since < plan.patience:
                n = min(plan.eval_every, plan.max_steps - step)
                for _, run, _ in runs:
                    run.advance(n)
                step += n
                current = evaluate(step)
                report.update(step, runs[-1][0].history_[-1], current)
                if current < best:
                    best, since = current, 0
                    self.kept = {0: self.kept[0], step: [run.params() for _, run, _ in runs]}
                else:
                    since += 1
        report.close()
        return runs, record

    # -- stage 3 ---------------------------------------------------------------------------------------------
    def acceptance(self, record):
        """(s*, t): the step of the lowest mean fold error, kept only when the paired test beats step 0."""
        if len(record) < 2:
            return 0, None
        best = min(record, key=lambda r: (r["rmse"], r["step"]))
        if best["step"] == 0:
            return 0, 0.0
        t = paired_t(record[0]["windows"], best["windows"])
        return (best["step"], t) if t is not None and t > self.plan.switch_t else (0, t)

    # -- stage 4 ---------------------------------------------------------------------------------------------
    def refit(self, floor, ys, us, steps):
        """The final parameters on all of ``ys``, ``us`` (module docstring, stage 4)."""
        model, plan = self.model, self.plan
        model.history_, model.training_log_ = [], {"rejected_steps": [], "jitter": []}
        if not steps:
            self.start(model, floor.model, ys, us, self.seed, gp_share=0.0)
            return
        self.start(model, floor.model, ys, us, self.seed)
        seq_len = min(plan.seq_len, min(len(y) for y in ys))
        Y, U = windows(ys, us, seq_len, 1)
        report = Progress(steps, enabled=self.progress, unit="step")
        report.note(f"refit on all the training data: {steps} steps")
        with blas_single_threaded():
            run = AdamRun(model, Y, U, None, np.random.default_rng(self.seed), Adam(plan.lr), self.frozen,
                          plan.batch_size, plan.num_samples, MAX_REJECTIONS, plan.average)
            run.advance(steps)
        model.set_params(run.params())
        report.close()

    def free_run_check(self, floor, ys, us):
        """Stage 4's guard (:func:`free_run_check`) of the refitted model against the floor in the same form (a
        copy with the floor's zero-residual parameters, forecast with the same random numbers)."""
        as_floor = copy.deepcopy(self.model)
        self.start(as_floor, floor.model, ys, us, self.seed, gp_share=0.0)
        return free_run_check(self.model, as_floor, ys, us, self.plan.free_run_factor, self.seed,
                              self.plan.num_samples, self.plan.num_particles)

    # -- stage 5 ---------------------------------------------------------------------------------------------
    def calibration(self, runs, step):
        """The widening factors (d_y,) of the selection's forecasts at ``step`` (None without folds)."""
        if not runs:
            return None
        z = []
        for (model, _, score), params in zip(runs, self.kept[step]):
            model.set_params(params)
            z += [np.abs(y_w - fc.mean) / fc.std for y_w, fc in score.forecasts(model)]
        return widening_factors(np.concatenate(z))


def free_run_check(model, floor, ys, us, factor=2.0, seed=0, num_samples=50, num_particles=200):
    """A guard against a transition whose long free runs leave the data: each training sequence of ``ys``, ``us``
    is simulated from its first :data:`N_INIT` outputs over all the rest (the simulate protocol on the training
    data) by ``model`` and by ``floor``; passed when the model's RMSE is at most ``factor`` times the floor's
    (summed over sequences; an inf or NaN error fails). A detector of divergence, not a second selection (the folds
    select): in-sample errors on the training record say little about finer differences. Returns {"model": RMSE,
    "floor": RMSE, "passed": bool}."""
    errors = {"model": 0.0, "floor": 0.0}
    for y, u in zip(ys, us):
        if len(y) <= 2 * N_INIT:
            continue
        for name, m in (("model", model), ("floor", floor)):
            mean = m.forecast(u[N_INIT:], y_past=y[:N_INIT], u_past=u[:N_INIT], seed=seed, num_samples=num_samples,
                              num_particles=num_particles).mean
            with np.errstate(over="ignore", invalid="ignore"):
                errors[name] += float(np.sqrt(np.mean((mean - y[N_INIT:]) ** 2)))
    return dict(errors, passed=bool(errors["model"] <= factor * errors["floor"]))  # False for inf or NaN too
