r"""The training pieces of the GP models: Adam runs, the causal forecast score of held-out windows, and the
validation-block loop.

* :class:`AdamRun`: Adam steps over shuffled minibatches of training windows, optionally with the moving average of
  the iterates (theta_bar <- a theta_bar + (1 - a) theta after every step, from the initial parameters); its state
  can be saved and restored exactly. The default fit (``models/default_fit.py``) and the loop below use it.
* :class:`ValidationScore`: the causal forecast score of held-out windows: for each window a particle filter over
  the (at most) ``burn_in`` outputs before it, then a free run over it with the true inputs; the RMSE of the
  particle-mean output, averaged over windows. The same random numbers at every call (common random numbers), so
  that scores of different parameters differ by the parameters. ``interval_scale`` and
  :func:`widening_factors`: per output, the 95 % quantile of |y - mean| / std over the windows divided by
  1.959964 (a split-conformal recalibration of the predictive scale), clipped to [1, 100] (widening only) or
  [0.1, 100].
* :func:`paired_t`: the paired statistic of per-window differences between two sets of parameters
  (se = sd / sqrt(W // 2): windows that overlap by half count half).

**The validation-block loop** (``fit`` with any of its options ``validation``, ``restarts``, ``validation_windows``,
``refit``, ``calibrate``, ``average``, ``lr_scale``, ``min_delta``, or a fixed ``init``/``dim_x``; the default
fit does not use it; research/ablation_plan.md records how each option was tried):

1. The last ``validation`` share of every training sequence is held back (blocks under :data:`MIN_VALIDATION`
   steps are not cut: training then runs its whole budget and keeps the last parameters).
2. Every ``eval_every`` steps the model forecasts the block's windows (horizon min(100, block), stride H / 2; all,
   or the first ``validation_windows``) and :class:`ValidationScore` scores them.
3. The parameters with the lowest score are kept, starting with the initial ones (step 0), so the kept model is
   never worse there than where training started; training stops after ``patience`` scores without a relative
   improvement of ``min_delta``, or after ``max_steps``.
4. ``restarts = N`` trains seeds seed .. seed + N - 1 (and every step size of a sequence ``lr``) and keeps the best.
5. ``refit``: True fits the final model to all the training data for the selected number of steps; "warm_start"
   refits only where that number is 0 (the warm start on all the data); "linear" as "warm_start" with the warm
   start chosen again on all of it.
6. ``calibrate``: the interval factors above from the kept run's validation windows (True: both ways; "widen").
7. ``average``: score and keep the moving average of the iterates (a decay in (0, 1); False: the iterates).
8. ``lr_scale``: factors on Adam's step per parameter, or a list of such candidates, each a whole run; a later one
   replaces the kept one only where it wins the paired test by more than :data:`SWITCH_STANDARD_ERRORS`.

The budget counts gradient steps, not epochs over stride-1 windows, so that long series do not multiply the time;
the steps are deterministic given the seed.
"""
import time

import numpy as np
from scipy.special import ndtri

from .. import _validation as check
from ..datasets.windowing import window_starts
from ..metrics import rmse

#: Shortest validation block that is cut (steps).
MIN_VALIDATION = 20
#: Forecast horizon of the validation windows (steps), as the test protocols'.
VALIDATION_HORIZON = 100


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

    def __init__(self, ys, us, cuts, burn_in=100, num_particles=200, num_samples=50, seed=0,
                 max_windows=None):
        self.tasks = []  # (y_past, u_past, u_window, y_window)
        for y, u, cut in zip(ys, us, cuts):
            if cut is None:
                continue
            block = len(y) - cut
            horizon = min(VALIDATION_HORIZON, block)
            for s in window_starts(block, horizon, max(1, horizon // 2))[:max_windows]:  # None: all
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

    def interval_scale(self, model, widen_only=False):
        """The calibration factors c (d_y,) of step 6 of the module docstring: per output, the 95 % quantile of
        |y - mean| / std over the validation windows over the Gaussian's, clipped to [0.1, 100] (to [1, 100] with
        ``widen_only``)."""
        z = np.concatenate([np.abs(y_w - fc.mean) / fc.std for y_w, fc in self.forecasts(model)])
        return widening_factors(z, widen_only)


def widening_factors(z, widen_only=True):
    """Step 6 of the module docstring: per output, the 95 % quantile of the standardised errors ``z`` (n, d_y) over
    the Gaussian's, clipped to [1, 100] (``widen_only``) or [0.1, 100]."""
    return np.clip(np.quantile(z, 0.95, axis=0) / ndtri(0.975), 1.0 if widen_only else 0.1, 100.0)


class AdamRun:
    """Adam steps of ``model`` over shuffled minibatches of the windows (Y, U) with per-window initial states ``x0``
    (or None), drawn from ``rng``: a new permutation of the windows at the start of every pass, ``batch_size``
    windows per step, ``num_samples`` particles per window. ``average`` (a decay in (0, 1), or None): the
    parameters :meth:`params` gives are the exponential moving average of the iterates, theta_bar <- average
    theta_bar + (1 - average) theta after every step, from the initial ones (step 7 of the module docstring); Adam
    still steps the iterates. Parameters named in ``frozen`` never move (nor does their average)."""

    def __init__(self, model, Y, U, x0, rng, optimizer, frozen, batch_size, num_samples, max_rejections,
                 average=None):
        self.model, self.average, self.frozen = model, average, frozen
        self.Y, self.U, self.x0, self.rng, self.optimizer = Y, U, x0, rng, optimizer
        self.batch_size, self.num_samples, self.max_rejections = batch_size, num_samples, max_rejections
        self.mean = model.get_learned_params() if average is not None else None
        self.steps = 0
        # the current pass: its permutation of the windows (None before the first step) and the next position in it
        self.order, self.position = None, 0

    def step(self):
        """One gradient step: the next minibatch of the current pass, a new permutation where a pass begins."""
        num_windows = self.Y.shape[0]
        if self.order is None or self.position >= num_windows:
            self.order, self.position = self.rng.permutation(num_windows), 0
        idx = self.order[self.position:self.position + self.batch_size]
        self.model.train_step(self.Y[idx], self.U[idx], self.rng, self.num_samples, num_windows, self.optimizer,
                              self.frozen, self.max_rejections,
                              None if self.x0 is None else (self.x0[0][idx], self.x0[1][idx]))
        if self.mean is not None:
            for name, value in self.model.params.items():
                if name not in self.frozen:  # a fixed parameter stays bit-identical
                    self.mean[name] = self.average * self.mean[name] + (1.0 - self.average) * value
        self.position += self.batch_size
        self.steps += 1

    def advance(self, steps):
        """Take ``steps`` more gradient steps."""
        for _ in range(steps):
            self.step()

    def state(self):
        """(info, arrays): everything that continues this run exactly, besides the model's own parameters, history
        and training log: info (plain JSON types: steps, position, Adam's step count and step size, the random
        generator's state) and arrays (Adam's moments "adam/m:<name>", "adam/v:<name>", the average "mean/<name>",
        the pass's permutation "order")."""
        adam = self.optimizer.state_dict()
        info = {"steps": self.steps, "position": int(self.position), "adam_t": int(adam.pop("t")),
                "lr": float(self.optimizer.lr), "rng_state": self.rng.bit_generator.state}
        arrays = {"adam/" + key: value for key, value in adam.items()}
        if self.mean is not None:
            arrays.update({"mean/" + key: value.copy() for key, value in self.mean.items()})
        if self.order is not None:
            arrays["order"] = np.asarray(self.order, dtype=np.int64)
        return info, arrays

    def load_state(self, info, arrays):
        """Continue from :meth:`state`'s (info, arrays)."""
        adam = {key[5:]: value for key, value in arrays.items() if key.startswith("adam/")}
        self.optimizer.load_state_dict(dict(adam, t=int(info["adam_t"])))
        self.optimizer.lr = float(info["lr"])
        self.rng.bit_generator.state = info["rng_state"]
        if self.mean is not None:
            self.mean = {key[5:]: np.array(value, dtype=np.float64) for key, value in arrays.items()
                         if key.startswith("mean/")}
        self.order = np.asarray(arrays["order"], dtype=np.intp) if "order" in arrays else None
        self.steps, self.position = int(info["steps"]), int(info["position"])

    def params(self):
        """A copy of the parameters that are scored and kept: the iterate or the average of the iterates."""
        return self.model.get_learned_params() if self.mean is None else {k: v.copy() for k, v in self.mean.items()}

    def scored(self, score):
        """``score(model)`` at :meth:`params`, the model's iterate restored afterwards."""
        if self.mean is None:
            return score(self.model)
        iterate = self.model.get_learned_params()
        self.model.set_learned_params(self.params())
        try:
            return score(self.model)
        finally:
            self.model.set_learned_params(iterate)


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


#: Step 8 of the module docstring: how many standard errors a later candidate must win by.
SWITCH_STANDARD_ERRORS = 2.0


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


def switches(kept, other):
    """Whether a later candidate with per-window validation RMSEs ``other`` replaces the kept one (step 8)."""
    t = paired_t(kept, other)
    return t is not None and t > SWITCH_STANDARD_ERRORS


#: The values of ``fit(refit=...)`` (step 5 of the module docstring) and ``fit(calibrate=...)`` (step 6).
REFITS = (False, True, "warm_start", "linear")
CALIBRATIONS = (False, True, "widen")


def check_switch(value, name, choices):
    """A ``fit`` option that is off, on, or a named variant (``choices``: (False, True, "variant", ...)), validated;
    a numpy bool becomes a bool."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value in choices[2:]:
        return value
    raise ValueError(f"{name}: expected one of {choices}, got {value!r}")


def check_step_sizes(lr):
    """``fit``'s ``lr``: one Adam step size or a non-empty sequence of them, as a tuple of floats."""
    rates = tuple(lr) if isinstance(lr, (list, tuple, np.ndarray)) else (lr,)
    if not rates:
        raise ValueError("lr: expected a positive step size or a non-empty sequence of them, got an empty sequence")
    return tuple(check.positive_float(rate, "lr") for rate in rates)


def check_average(average):
    """``fit``'s ``average``: False (the iterates themselves; returned as None) or the decay of the average of the
    iterates, in (0, 1)."""
    if average is False or average is None:
        return None
    if isinstance(average, bool) or not isinstance(average, (int, float)) or not 0 < average < 1:
        raise ValueError(f"average: expected False or a decay in (0, 1), got {average!r}")
    return float(average)


def check_budget(max_steps, eval_every, patience, validation, restarts, min_delta, validation_windows):
    """The training-budget arguments, validated; ``validation_windows`` ("all" or a count) as ValidationScore's
    ``max_windows`` (None for all)."""
    max_steps = check.positive_int(max_steps, "max_steps")
    eval_every = check.positive_int(eval_every, "eval_every")
    patience = check.positive_int(patience, "patience")
    restarts = check.positive_int(restarts, "restarts")
    if not (isinstance(validation, (int, float)) and 0 <= validation < 1):
        raise ValueError(f"validation: expected a share in [0, 1), got {validation!r}")
    if not (isinstance(min_delta, (int, float)) and 0 <= min_delta < 1):
        raise ValueError(f"min_delta: expected a relative improvement in [0, 1), got {min_delta!r}")
    max_windows = None if validation_windows == "all" else check.positive_int(validation_windows,
                                                                                "validation_windows")
    return max_steps, eval_every, patience, float(validation), restarts, float(min_delta), max_windows
