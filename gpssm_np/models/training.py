r"""The training pieces of the GP models: Adam runs, the causal forecast score of held-out windows, and the
validation-block loop.

* :class:`gpssm_np.training_loop.AdamRun` (every regime's steps, the epoch loop's too): Adam steps over shuffled
  minibatches of training windows, optionally with the moving average of the iterates; the default fit
  (``models/default_fit.py``) and the loop below use it.
* :class:`ValidationScore`: the causal forecast score of held-out windows: for each window a particle filter over
  the (at most) ``burn_in`` outputs before it, then a free run over it with the true inputs; the RMSE of the
  particle-mean output, averaged over windows. The same random numbers at every call (common random numbers), so
  that scores of different parameters differ by the parameters. ``interval_scale``:
  ``metrics.widening_factors`` of the windows' standardised errors |y - mean| / std: intervals are widened per
  output where they were too narrow and otherwise left as the model has them.
* :func:`paired_t`: the paired statistic of per-window differences between two sets of parameters
  (se = sd / sqrt(W // 2): windows that overlap by half count half).

**The validation-block loop** (:func:`block_fit`: ``fit(y, u, plan=BlockPlan(...))``, and the fits of
configurations without a linear floor: ``init="random"``, a recognition network; the fields of
:class:`BlockPlan`; research/ablation_plan.md records how each was tried):

1. The last ``validation`` share of every training sequence is held back (blocks under :data:`MIN_VALIDATION`
   steps are not cut: training then runs its whole budget and keeps the last parameters).
2. Every ``eval_every`` steps the model forecasts every window of the block (horizon min(100, block), stride H / 2)
   and :class:`ValidationScore` scores them.
3. The parameters with the lowest score are kept, starting with the initial ones (step 0), so the kept model is
   never worse there than where training started; training stops after ``patience`` scores without a relative
   improvement of ``min_delta``, or after ``max_steps``.
4. ``restarts = N`` trains seeds seed .. seed + N - 1 and keeps the best.
5. ``refit``: True fits the final model to all the training data for the selected number of steps (the warm
   start, too, chosen on all of it); "warm_start" refits only where that number is 0 (the start from the floor
   chosen on all the data); False keeps the kept run's parameters.
6. ``calibrate``: the widening factors of the intervals (``interval_scale_``, ``metrics.widening_factors``) from
   the kept run's validation windows (True; False: none).
7. ``average``: score and keep the moving average of the iterates (a decay in (0, 1); False: the iterates).
8. ``lr_scales``: factors on Adam's step per parameter, or a list of such candidates, each a whole run; a later one
   replaces the kept one only where it wins the paired test by more than ``switch_t`` standard errors (2: a
   candidate tried after the first must win clearly; the default fit's acceptance, whose alternative is the simpler
   floor, takes one, ``models/default_fit.Plan``).

The budget counts gradient steps, not epochs over stride-1 windows, so that long series do not multiply the time;
the steps are deterministic given the seed.
"""
import time
from dataclasses import dataclass, replace

import numpy as np

from .. import _validation as check
from .._config import MAX_REJECTIONS
from .._progress import Progress, note_compilation
from ..datasets.windowing import window_starts, windows
from ..metrics import rmse, standardised_errors, widening_factors
from ..ops import kernels_on_disk
from ..ops.threads import blas_single_threaded
from ..optim import Adam
from ..training_loop import AdamRun, EpochPlan

#: Shortest validation block that is cut (steps).
MIN_VALIDATION = 20
#: Forecast horizon of the validation windows (steps), as the test protocols'.
VALIDATION_HORIZON = 100


@dataclass(frozen=True)
class BlockPlan:
    """The settings of the validation-block loop (module docstring, steps 1-8): at most ``max_steps`` Adam steps of
    ``lr`` on windows of ``seq_len`` steps at ``stride``, minibatches of ``batch_size``, ``num_samples`` particles per
    window, gradient norm clipped at ``clip_norm`` (None: not), parameters named in ``fixed`` held; the last
    ``validation`` share held back and scored every ``eval_every`` steps, stopped after ``patience`` scores without a
    relative improvement of ``min_delta``; ``restarts`` seeds; ``refit``, ``calibrate``, ``average``, ``lr_scales``,
    ``switch_t`` as in steps 5-8 (the default ``lr_scales`` drops the candidates that name parameters the model lacks);
    training stops after ``max_rejections`` consecutive non-finite steps."""

    max_steps: int = 2000
    validation: float = 0.2
    eval_every: int = 100
    patience: int = 5
    min_delta: float = 0.0
    restarts: int = 1
    seq_len: int = 20
    stride: int = 1
    batch_size: int = 16
    lr: float = 0.01
    num_samples: int = 50
    clip_norm: float = None
    fixed: tuple = ()
    max_rejections: int = MAX_REJECTIONS
    refit: object = "warm_start"
    calibrate: bool = True
    average: object = 0.99
    lr_scales: object = ({}, {"F": 0.1, "G": 0.1, "b": 0.1})
    switch_t: float = 2.0


def split_validation(ys, us, share):
    """(training part, validation block start) of each sequence: lists of (y, u) cut at round((1 - share) T_i), and
    the cut indices; a block shorter than MIN_VALIDATION, or share 0, leaves the sequence whole (cut = None)."""
    train_y, train_u, cuts = [], [], []
    for y, u in zip(ys, us):
        cut = int(round((1.0 - share) * len(y)))
        if share <= 0 or len(y) - cut < MIN_VALIDATION or cut < MIN_VALIDATION:
            train_y.append(y)
            train_u.append(u)
            cuts.append(None)
        else:
            train_y.append(y[:cut])
            train_u.append(u[:cut])
            cuts.append(cut)
    return train_y, train_u, cuts


class ValidationScore:
    """The causal forecast score of the validation blocks (module docstring, step 2); call it with a model."""

    def __init__(self, ys, us, cuts, burn_in=100, num_particles=200, num_samples=50, seed=0):
        self.tasks = []  # (y_past, u_past, u_window, y_window)
        for y, u, cut in zip(ys, us, cuts):
            if cut is None:
                continue
            block = len(y) - cut
            horizon = min(VALIDATION_HORIZON, block)
            for s in window_starts(block, horizon, max(1, horizon // 2)):
                g = cut + int(s)
                past = slice(max(0, g - burn_in), g)
                self.tasks.append((y[past], u[past], u[g:g + horizon], y[g:g + horizon]))
        self.num_particles, self.num_samples, self.seed = num_particles, num_samples, seed

    @classmethod
    def of_windows(cls, windows, num_particles=200, num_samples=50, seed=0):
        """The score of given forecast windows (``datasets.folds.Window``) instead of a validation block."""
        score = cls([], [], [], num_particles=num_particles, num_samples=num_samples, seed=seed)
        score.tasks = [(w.y_past, w.u_past, w.u, w.y) for w in windows]
        return score

    def __bool__(self):
        return bool(self.tasks)

    def forecasts(self, model):
        """(y_window, Forecast) of every validation window, the same random numbers at every call."""
        for k, (y_past, u_past, u_w, y_w) in enumerate(self.tasks):
            yield y_w, model.forecast(u_w, y_past=y_past, u_past=u_past, num_samples=self.num_samples,
                                      seed=self.seed + k, num_particles=self.num_particles)

    def window_scores(self, model):
        """The RMSE of the particle-mean forecast of every validation window (a list of floats)."""
        return [float(rmse(y_w, fc.mean)) for y_w, fc in self.forecasts(model)]

    def __call__(self, model):
        return float(np.mean(self.window_scores(model)))

    def standardised_errors(self, model):
        """|y - mean| / std of every validation window's forecast, stacked ((n, d_y))."""
        return np.concatenate([standardised_errors(y_w, fc.mean, fc.std) for y_w, fc in self.forecasts(model)])

    def interval_scale(self, model):
        """The widening factors c (d_y,) of step 6 of the module docstring (:func:`widening_factors` of the
        validation windows' standardised errors)."""
        return widening_factors(self.standardised_errors(model))


def train_steps(model, Y, U, x0, rng, optimizer, frozen, score, max_steps, eval_every, patience, min_delta,
                batch_size, num_samples, max_rejections, report=None, average=None):
    """Adam steps (:class:`AdamRun`) scored by ``score`` (a :class:`ValidationScore`, possibly empty) every
    ``eval_every`` steps; leaves the best parameters in ``model`` and returns the validation record (a list of
    dicts: step, rmse, windows (the RMSE of every validation window, whose mean is rmse), loss, seconds)."""
    start_time = time.perf_counter()
    record = []
    run = AdamRun(model, Y, U, x0, rng, optimizer, frozen, batch_size, num_samples, max_rejections, average)

    def evaluate(step):
        loss = float(np.mean(model.history_[-eval_every:])) if step else None
        scores = run.scored(score.window_scores) if score else None
        record.append({"step": step, "rmse": float(np.mean(scores)) if score else None, "windows": scores,
                       "loss": loss, "seconds": time.perf_counter() - start_time})
        return record[-1]["rmse"]

    best_score = evaluate(0)
    best_params, since_best = run.params(), 0
    while run.steps < max_steps and since_best < patience:
        run.advance(min(eval_every - run.steps % eval_every, max_steps - run.steps))
        current = evaluate(run.steps)
        if report is not None:
            report.update(run.steps, model.history_[-1], current)
        if current is None:
            best_params = run.params()
        elif current < best_score * (1.0 - min_delta):
            best_score, best_params, since_best = current, run.params(), 0
        else:
            since_best += 1
    model.set_learned_params(best_params)
    return record


def block_fit(model, ys, us, plan, progress, seed):
    """The validation-block loop (module docstring, steps 1-8) of ``model`` on ``ys``, ``us`` (lists of (T_i, d),
    model units) under ``plan`` (a checked :class:`BlockPlan`, or an :class:`EpochPlan` for a warm-started model: its
    epochs as steps over windows with no validation block); leaves the kept parameters and what the loop chose in
    ``model`` (``validation_``, ``restart_scores_``, ``lr_scale_``, ``lr_scale_tests_``, ``refit_``,
    ``interval_scale_``)."""
    epochs = plan.epochs if isinstance(plan, EpochPlan) else None
    if epochs is not None:  # the same loop over the epochs' steps (set below): no validation block, no average
        plan = BlockPlan(validation=0.0, patience=1, seq_len=plan.seq_len, stride=plan.stride,
                         batch_size=plan.batch_size, lr=plan.lr, num_samples=plan.num_samples,
                         clip_norm=plan.clip_norm, fixed=plan.fixed, max_rejections=plan.max_rejections,
                         average=None, lr_scales=({},))
    train_ys, train_us, cuts = split_validation(ys, us, plan.validation)
    refit = plan.refit if any(cut is not None for cut in cuts) else False  # nothing held back: nothing to add
    model._choose_floor(*((ys, us) if refit is True else (train_ys, train_us)), progress)
    seq_len = min(plan.seq_len, min(len(t) for t in train_ys))  # a short series gets shorter windows
    Y, U = windows(train_ys, train_us, seq_len, plan.stride)  # the same windows for every restart
    if epochs is not None:  # every step of the epochs, scored (by nothing) once at the end
        steps = epochs * -(-len(Y) // plan.batch_size)
        plan = replace(plan, max_steps=steps, eval_every=steps)
    max_steps, eval_every = plan.max_steps, plan.eval_every
    score = ValidationScore(ys, us, cuts, seed=seed)
    candidates = list(plan.lr_scales)
    if len(score.tasks) < 2:  # step 8: no later candidate can win the paired test on one window
        candidates = candidates[:1]
    average = plan.average
    model.restart_scores_, model.lr_scale_tests_, kept = [], [], None
    for scales in candidates:
        best = None
        for restart in range(plan.restarts):
            run_seed = seed + restart
            x0 = model._initialise(train_ys, train_us, seq_len, plan.stride, run_seed)
            model.clear_training_record()
            report = Progress(max_steps, enabled=progress, unit="step")
            note_compilation(report, kernels_on_disk())
            if kept is not None:
                report.note(f"training again with the step-size candidate {scales} (models/training.py, step 8)")
            with blas_single_threaded():
                record = train_steps(model, Y, U, x0, np.random.default_rng(run_seed),
                                     Adam(plan.lr, clip_norm=plan.clip_norm, scales=scales), plan.fixed, score,
                                     max_steps, eval_every, plan.patience, plan.min_delta, plan.batch_size,
                                     plan.num_samples, plan.max_rejections, report, average)
            report.close()
            value = min((r["rmse"] for r in record if r["rmse"] is not None), default=None)
            model.restart_scores_.append(value)
            if best is None or (value is not None and value < best["score"]):
                best = {"score": value, "params": model.get_learned_params(), "history": model.history_,
                        "log": model.training_log_, "record": record, "seed": run_seed, "scales": scales}
        if kept is not None:  # step 8: a later candidate replaces the kept run only on paired evidence
            pair = (selected_windows(kept["record"], plan.min_delta),
                    selected_windows(best["record"], plan.min_delta))
            model.lr_scale_tests_.append({"lr_scale": scales, "t": paired_t(*pair),
                                          "kept": switches(*pair, plan.switch_t)})
        if kept is None or model.lr_scale_tests_[-1]["kept"]:
            kept = best
    model.history_, model.training_log_ = kept["history"], kept["log"]
    model.validation_, model.lr_ = kept["record"], plan.lr
    run_seed, scales = kept["seed"], kept["scales"]
    model.lr_scale_ = dict(scales)
    model.set_learned_params(kept["params"])
    model.interval_scale_ = score.interval_scale(model) if plan.calibrate and score else None
    model.refit_ = None
    steps = selected_step(model.validation_, plan.min_delta)
    if refit is True or (refit == "warm_start" and steps == 0):
        model.refit_ = {"steps": steps, "seed": run_seed}
        if refit == "warm_start":  # the start itself, from the floor chosen on all the data (as ``initialise``'s)
            model._choose_floor(ys, us, progress)
        optimizer = Adam(model.lr_, clip_norm=plan.clip_norm, scales=scales)
        refit_on_all(model, ys, us, seq_len, plan, steps, run_seed, optimizer, progress, average)


def refit_on_all(model, ys, us, seq_len, plan, steps, seed, optimizer, progress, average):
    """Step 5 of the module docstring: the warm start on all the training sequences ``ys``, ``us``, then
    ``steps`` gradient steps from ``seed`` under ``plan`` without a validation score (the last parameters are
    kept)."""
    seq_len = min(seq_len, min(len(t) for t in ys))
    x0 = model._initialise(ys, us, seq_len, plan.stride, seed)
    model.clear_training_record()
    if not steps:  # the warm start itself: no windows to cut
        return
    Y, U = windows(ys, us, seq_len, plan.stride)
    report = Progress(steps, enabled=progress, unit="step")
    report.note(f"refit on all the training data: {steps} steps")
    with blas_single_threaded():
        train_steps(model, Y, U, x0, np.random.default_rng(seed), optimizer, plan.fixed,
                    ValidationScore([], [], []), steps, steps, 1, 0.0, plan.batch_size, plan.num_samples,
                    plan.max_rejections, report, average)
    report.close()


def selected_step(record, min_delta):
    """The gradient step whose parameters :func:`train_steps` kept, from its ``record``: the first of the scores that
    each improved on the best before by at least ``min_delta`` (relative); the last step when nothing was scored."""
    best = record[0]
    for entry in record[1:]:
        if entry["rmse"] is None or best["rmse"] is None:
            best = entry
        elif entry["rmse"] < best["rmse"] * (1.0 - min_delta):
            best = entry
    return int(best["step"])


def selected_windows(record, min_delta):
    """The per-window validation RMSEs of the parameters :func:`train_steps` kept (None when nothing was scored)."""
    step = selected_step(record, min_delta)
    return next(entry["windows"] for entry in record if entry["step"] == step)


def paired_t(kept, other):
    """The paired statistic t = mean(d) / se of step 8 for per-window RMSEs ``kept`` and ``other`` (W each):
    d_w = kept_w - other_w, se = sd(d) / sqrt(W // 2) (sample sd; the windows overlap by half, so W // 2 of them
    are taken as independent). None for W < 2; +-inf where every d_w is the same non-zero number, 0 where all are 0."""
    d = np.asarray(kept, float) - np.asarray(other, float)
    if len(d) < 2:
        return None
    se = d.std(ddof=1) / np.sqrt(len(d) // 2)
    if se > 0:
        return float(d.mean() / se)
    return float(np.sign(d.mean()) * np.inf) if d.mean() else 0.0


def wins(t, switch_t):
    """Whether a paired statistic ``t`` (:func:`paired_t`; None: too few windows) is beyond ``switch_t`` standard
    errors: the test of step 8 and of the default fit's acceptance."""
    return t is not None and t > switch_t


def switches(kept, other, switch_t):
    """Whether a later candidate with per-window validation RMSEs ``other`` replaces the kept one (step 8): it wins
    the paired test by more than ``switch_t`` standard errors."""
    return wins(paired_t(kept, other), switch_t)


#: The values of ``fit(refit=...)`` (step 5 of the module docstring).
REFITS = (False, True, "warm_start")


def check_switch(value, name, choices):
    """A ``fit`` option that is off, on, or a named variant (``choices``: (False, True, "variant", ...)), validated;
    a numpy bool becomes a bool."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value in choices[2:]:
        return value
    raise ValueError(f"{name}: expected one of {choices}, got {value!r}")


def check_average(average):
    """``fit``'s ``average``: False (the iterates themselves; returned as None) or the decay of the average of the
    iterates, in (0, 1)."""
    if average is None or (isinstance(average, (bool, np.bool_)) and not average):
        return None
    if isinstance(average, (bool, np.bool_)):
        raise ValueError(f"average: expected False or a decay in (0, 1), got {average!r}")
    return check.fraction(average, "average")
