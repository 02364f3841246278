r"""Training that ends at a good model: a validation block, early stopping, a budget in gradient steps, restarts.

The default ``fit`` of the GP models (``settings="default"``) does not train for a fixed number of epochs:

1. **Validation block.** The last ``validation`` share (default 20 %) of every training sequence is held back
   (never the test data). Blocks shorter than :data:`MIN_VALIDATION` steps are not cut: training then runs for its
   whole budget and keeps the last parameters (``validation_`` says so).
2. **Score.** Every ``eval_every`` gradient steps the model forecasts the validation block causally: for each
   validation window (horizon H = min(100, block length), starts at stride H / 2; all of them, or the first
   ``validation_windows``: amendment 5 of docs/ablation_plan.md chose all, the first four having selected
   parameters that forecast worse on held-out data) a particle filter over the ``burn_in`` outputs before the
   window (which reach back into the training part), then a free run over the window with the true inputs; the
   score is the RMSE of the particle-mean output averaged over windows. The filter and forecast use the same seed
   at every evaluation (common random numbers), so that scores of different parameters differ by the parameters,
   not by the noise.
3. **Selection.** The parameters with the lowest score are kept, starting with the initial ones (step 0): the
   selected model is never worse on the validation block than where training started (for a linear ``init`` the
   linear-Gaussian warm start). Training stops when ``patience`` evaluations in a row bring no improvement of at
   least ``min_delta`` (relative), or after ``max_steps`` gradient steps.
4. **Restarts.** ``restarts = N`` trains from N seeds (seed, seed + 1, ...) and keeps the run with the best
   validation score. A sequence of Adam step sizes ``lr`` trains every seed with every step size (ties go to the
   first listed). Not the default: amendment 13 found that the step with the better validation score forecast
   dryer2's held-out block 59 % worse (its later outputs leave the training range), though it helped on five sets.
5. **Refit** (``refit=True``). The selected model has never been fitted to the validation block, which is the
   most recent data. A refit fits the final model to all the training data instead, as a cross-validated
   estimator refits on everything once its settings are chosen: ``dim_x="auto"`` is cross-validated on all of it,
   the warm start is fitted to it, and the selected run's number of gradient steps (:func:`selected_step`; 0 keeps
   the warm start) is taken from the same seed, without a score (the last parameters are kept). Assumption: the
   step count chosen on the training part suits the longer data too. Not the default: amendment 6 of
   docs/ablation_plan.md found a refit that diverged (nothing scores it), though it helped on most sets.
   ``refit="warm_start"`` refits only where the selected step is 0 (training never beat the warm start): the
   final model is then the warm start, with the d_x chosen on the training part, fitted to all the training data;
   trained models are kept as validated; the default since amendment 9 (held-out RMSE 1.3 % lower by the
   geometric mean over eleven sets, dryer2 -9 %, at most 2.6 % worse). ``refit="linear"`` is "warm_start" with
   the warm start chosen again on all the training data (d_x, and for ``init="linear"`` the kind: the final model
   is then the linear model that cross-validates best on all of it). Without a refit the validation block informs
   the model only through the filter.
6. **Calibration** (``calibrate=True`` or ``"widen"``). The forecasts of the selected run on the validation
   windows (step 2) also say how wide its predictive intervals should be: for each output j the 95 % quantile of
   the standardised errors |y - mean| / std over those windows, divided by 1.959964 (the Gaussian's), is a factor
   c_j on the predictive standard deviation of every later forecast (``interval_scale_``;
   ``Forecast.std_scale``), so that the 95 % interval would have covered 95 % of the validation outputs (a
   split-conformal recalibration of the scale; the point forecasts are unchanged). It is computed before a refit
   and kept for the refitted model (assumption: its calibration is that of the validated one). Factors are
   clipped to [0.1, 100]; ``calibrate="widen"``, the default, clips them to [1, 100]: intervals only ever widen.
   Amendments 7 and 8 of docs/ablation_plan.md chose it on held-out training data: the mean distance of the
   coverage from 95 % fell from 0.20 (no factors) to 0.12 (two-sided factors) to 0.09 (widen only), the mean NLPD
   from 1.32 to 0.39 to 0.27; the two-sided factors had shrunk intervals on six of eleven sets where the later
   data needed the width.

7. **An average of the iterates** (``average=0.99``, the default since amendment 15 of docs/ablation_plan.md;
   ``average=False`` turns it off, as the epoch loop of ``fit(epochs=...)`` does). The parameters that are scored,
   selected and kept (and a refit's final ones) are the exponential moving average of Adam's iterates,
   theta_bar <- a theta_bar + (1 - a) theta after every step, started at the initial parameters (the warm start),
   in the unconstrained parameters: the minibatch noise of the last iterate is smoothed out and the average leaves
   the warm start more slowly (time constant 1 / (1 - a) steps, 100 for 0.99).
   Amendment 14 found held-out RMSE 14 % lower by the geometric mean over eleven training halves (steam generator
   -46 %) but gas furnace 10.7 % worse; amendment 15 repeated it on two new seeds: 10 % lower, at most 7.5 % worse
   (actuator, ballbeam), gas furnace 21 % better.

8. **A slow linear part where the evidence asks for it** (``lr_scale``, a sequence of candidates; the default
   ``({}, {"F": 0.1, "G": 0.1, "b": 0.1})`` since amendment 21 of docs/ablation_plan.md). Adam moves every
   coordinate by about its step, so the maximum-likelihood F, G and b of the linear warm start leave their fit
   within a few dozen steps while the GP's parameters, which start at the prior, need those steps (docs/results.md,
   6.20). Each candidate (factors on Adam's step per parameter) is a whole training run (its step sizes and
   restarts, the same seeds); the first is kept unless a later one beats it on the validation windows by more than
   two standard errors of the paired per-window differences (:func:`paired_t`; a later candidate is compared with
   the one kept so far). With fewer than two validation windows no later candidate could win, so none is trained
   and the fit is the first candidate's. Amendment 21 found held-out RMSE 5.2 % lower by the geometric mean over
   17 cells and none worse: the rule switched in 5 of 34 fits (steam generator 0.189 -> 0.121, a cascaded-tanks
   system 0.063 -> 0.028), though the slow part alone was worse on four sets of eleven (actuator's error doubled;
   amendment 19). On the plants' test halves the steam generator's error fell from 0.185 to 0.127 (docs/results.md,
   6.21). A default fit trains twice where the validation block holds two windows or more (at least 150 steps).

The budget counts gradient steps (minibatches), not epochs over stride-1 windows, so that long series do not
multiply the time. The steps are deterministic given the seed.
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
        self.mean = model.get_params() if average is not None else None
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
        return self.model.get_params() if self.mean is None else {k: v.copy() for k, v in self.mean.items()}

    def scored(self, score):
        """``score(model)`` at :meth:`params`, the model's iterate restored afterwards."""
        if self.mean is None:
            return score(self.model)
        iterate = self.model.get_params()
        self.model.set_params(self.params())
        try:
            return score(self.model)
        finally:
            self.model.set_params(iterate)


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
    model.set_params(best_params)
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
