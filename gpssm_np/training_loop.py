"""The training loop every gradient-trained model shares, and the epoch regime with its checkpoints.

* :class:`AdamRun`: the Adam steps of every regime (the epoch loop here, the validation-block loop of
  ``models/training.py``, the default fit of ``models/default_fit.py``): shuffled minibatches of windows, a new
  order of windows per pass, optionally the moving average of the iterates; its state is saved and restored
  exactly. Each step is :func:`train_step` (non-finite steps rejected with the step size halved, a failed
  Cholesky retried at a larger jitter), through the model's ``train_step``.
* :func:`run_epochs` (``GradientTrainedModel.fit``, the authors' regime): passes of an AdamRun with checkpoints
  after epochs and steps (:func:`write_checkpoint`, :func:`restore_checkpoint`: model, Adam state, generator
  state and position in the epoch, through ``archive``), and resume; :class:`EpochPlan`, its settings.
* :class:`TrainingError`, :func:`without_frozen`, and the names of the training options of the gradient-trained
  models' ``fit`` (:data:`TRAINING_OPTIONS`).

The functions take the model: they read and write its public attributes (``params``, ``spec``, ``history_``,
``training_log_``) and call its public methods (``train_step``, ``minibatch_loss``, ``increase_jitter``).
"""
import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass, fields, replace

import numpy as np
from autograd import value_and_grad

from . import _validation as check
from . import archive
from ._config import MAX_REJECTIONS
from ._progress import Progress, note_compilation
from .ops import kernels_on_disk
from .ops.threads import blas_single_threaded

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class EpochPlan:
    """The settings of the epoch loop (:func:`run_epochs`; the authors' regime, ``fit(y, u, plan=EpochPlan(...))``
    of the GP models): ``epochs`` passes over windows of ``seq_len`` steps cut at ``stride``, minibatches of
    ``batch_size``, Adam step ``lr`` (gradient norm clipped at ``clip_norm``, None: not clipped), ``num_samples``
    particles per window; parameters named in ``fixed`` never move; checkpoints every ``checkpoint_every`` epochs
    and every ``checkpoint_steps`` steps inside one (None: only between epochs); training stops after
    ``max_rejections`` consecutive non-finite steps. The defaults are the authors' (70 epochs of 50-step windows,
    minibatches of 16, Adam at 0.01, 50 particles)."""

    epochs: int = 70
    seq_len: int = 50
    stride: int = 1
    batch_size: int = 16
    lr: float = 0.01
    num_samples: int = 50
    clip_norm: float = None
    fixed: tuple = ()
    checkpoint_every: int = 1
    checkpoint_steps: int = None
    max_rejections: int = MAX_REJECTIONS


#: The keyword arguments of :meth:`GradientTrainedModel.fit` after y and u: the settings in one ``plan`` (an
#: :class:`EpochPlan`, or a dict of changes to its defaults), ``epochs`` written directly, and the fit's own.
EPOCH_OPTIONS = ("plan", "epochs", "seed", "progress", "checkpoint", "resume")
#: Those the GP models' ``fit`` adds: ``max_steps`` written directly (their plans: ``models/gpssm.py``).
PLAN_OPTIONS = ("max_steps",)
#: The keyword argument of every model's ``fit`` that records which data it was fitted on (``data_name_``).
DATA_OPTIONS = ("data_name",)
#: The training options of the GP models' ``fit`` (the linear models, fitted in closed form, take only data_name).
TRAINING_OPTIONS = EPOCH_OPTIONS + PLAN_OPTIONS + DATA_OPTIONS


#: Plan fields under their earlier names: {earlier: current}.
RENAMED_FIELDS = {"lr_scale": "lr_scales"}


def changed_plan(plan, changes):
    """``plan`` (any of the training plans) with the fields named in ``changes`` (a dict) replaced; a name the plan
    lacks is a ValueError listing its fields (and the current name of a renamed one)."""
    names = [f.name for f in fields(plan)]
    unknown = sorted(set(changes) - set(names))
    renamed = [old for old in unknown if RENAMED_FIELDS.get(old) in names]
    if renamed:
        raise ValueError(f"plan: {renamed[0]} is now named {RENAMED_FIELDS[renamed[0]]}")
    if unknown:
        raise ValueError(f"plan: {type(plan).__name__} has no field {unknown}; its fields are {names}")
    return replace(plan, **changes)


def checked_field(name, value):
    """A field the training plans share, checked (a ValueError naming it) and normalised: ``fixed`` as a tuple of
    names, ``clip_norm`` and ``checkpoint_steps`` positive or None, ``lr`` a positive number, any other a positive
    integer (epochs, steps, sizes, counts)."""
    if name == "fixed":
        return (value,) if isinstance(value, str) else tuple(value)
    if name == "clip_norm":
        return None if value is None else check.positive_float(value, name)
    if name == "checkpoint_steps":
        return None if value is None else check.positive_int(value, name)
    if name == "lr":
        return check.positive_float(value, name)
    return check.positive_int(value, name)


def epoch_plan(plan=None, epochs=None):
    """The checked :class:`EpochPlan` of ``plan`` (None, an EpochPlan, or a dict of changes to the default one)
    with ``epochs`` (None: the plan's); a ValueError names a bad field or value."""
    if plan is None or isinstance(plan, dict):
        plan = changed_plan(EpochPlan(), plan or {})
    elif not isinstance(plan, EpochPlan):
        raise ValueError(f"plan: expected None, a dict of changes or an EpochPlan, got {plan!r}")
    if epochs is not None:
        plan = replace(plan, epochs=epochs)
    return replace(plan, **{f.name: checked_field(f.name, getattr(plan, f.name)) for f in fields(plan)})


class TrainingError(RuntimeError):
    """Training cannot go on (repeated non-finite steps, or a Cholesky that fails at the largest jitter)."""


def run_epochs(model, Y, U, rng, optimizer, frozen, epochs, batch_size, num_samples, max_rejections, checkpoint,
               checkpoint_every, checkpoint_steps, resume, progress, fingerprint=None):
    """``epochs`` passes over the windows Y (B, T, d_y), U (B, T, d_u) in an order drawn from ``rng`` per epoch, an
    Adam step (``model.train_step``) per minibatch of ``batch_size`` windows; checkpoints to the path
    ``checkpoint`` (None: none) every ``checkpoint_every`` epochs, after the last one and every ``checkpoint_steps``
    steps inside an epoch; with ``resume`` it first restores that file when it exists, refused when written for
    another ``fingerprint`` (:func:`fit_fingerprint`). The arguments are checked by ``GradientTrainedModel.fit``,
    which documents them."""
    num_windows = Y.shape[0]
    run = AdamRun(model, Y, U, None, rng, optimizer, frozen, batch_size, num_samples, max_rejections)
    first_epoch = 0
    if resume and os.path.exists(checkpoint):
        first_epoch, position = restore_checkpoint(model, checkpoint, optimizer, rng, fingerprint)
        if first_epoch > epochs or (first_epoch == epochs and position is not None):  # it cannot go back
            raise ValueError(f"epochs: the checkpoint {os.fspath(checkpoint)!r} has run past {first_epoch} epochs, "
                             f"more than the {epochs} asked (epochs counts the whole run); ask at least as many, or "
                             f"fit without resume=True to start afresh")
        if position is not None:  # inside an epoch: its order of windows and the next position
            run.order, run.position = position
    report = Progress(epochs, enabled=progress)
    note_compilation(report, kernels_on_disk())
    with blas_single_threaded():  # small BLAS calls inside the steps: extra BLAS threads only contend
        for epoch in range(first_epoch, epochs):
            while True:  # one pass: the run draws the epoch's order of windows at its first step
                run.step()
                if run.position >= num_windows:
                    break
                if (checkpoint is not None and checkpoint_steps is not None
                        and len(model.history_) % checkpoint_steps == 0):
                    write_checkpoint(model, checkpoint, optimizer, rng, epoch, (run.order, run.position),
                                     fingerprint)
            report.update(epoch + 1, model.history_[-1])
            if checkpoint is not None and ((epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs):
                write_checkpoint(model, checkpoint, optimizer, rng, epoch + 1, fingerprint=fingerprint)
    report.close()


class AdamRun:
    """Adam steps of ``model`` over shuffled minibatches of the windows (Y, U) with per-window initial states ``x0``
    (or None), drawn from ``rng``: a new permutation of the windows at the start of every pass, ``batch_size``
    windows per step, ``num_samples`` particles per window. ``average`` (a decay in (0, 1), or None): the
    parameters :meth:`params` gives are the exponential moving average of the iterates, theta_bar <- average
    theta_bar + (1 - average) theta after every step, from the initial ones (step 7 of ``models/training.py``); Adam
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


class GrowingRun(AdamRun):
    """An :class:`AdamRun` whose windows grow as training goes: ``stages`` ((0, n_0), (s_1, n_1), ...) gives windows
    of n_k steps from step s_k on, each set cut by ``cut(n)`` -> (Y, U, x0) (x0: per-window q(x0) moments, or None).
    Short windows first let the gradient see short stretches while the model is far from the data, longer ones
    then more of each sequence per window (under the prior objective, whose particles run free through a window,
    longer free runs: multiple shooting over growing horizons). Where the length changes a new pass begins (a new
    permutation of the new windows). The other arguments are :class:`AdamRun`'s."""

    def __init__(self, model, cut, stages, rng, optimizer, frozen, batch_size, num_samples, max_rejections,
                 average=None):
        self.cut, self.stages = cut, tuple(stages)
        super().__init__(model, *cut(self.stages[0][1]), rng, optimizer, frozen, batch_size, num_samples,
                         max_rejections, average)

    def step(self):
        for start, seq_len in self.stages[1:]:
            if self.steps == start:
                self.Y, self.U, self.x0 = self.cut(seq_len)
                self.order, self.position = None, 0
        super().step()

    def load_state(self, info, arrays):
        super().load_state(info, arrays)
        # the windows the saved run last stepped on (those of step self.steps - 1), which its permutation orders
        seq_len = [n for start, n in self.stages if start < self.steps][-1] if self.steps else self.stages[0][1]
        self.Y, self.U, self.x0 = self.cut(seq_len)


def train_step(model, y, u, rng, num_samples, num_windows, optimizer, frozen, max_rejections, x0=None):
    """One accepted Adam step of ``model`` on the minibatch (y, u), rejecting non-finite steps (see
    ``GradientTrainedModel.fit``); ``x0``: per-window q(x0) moments (mean (B, d_x), var (B, d_x)) or None for the
    model's own q(x0)."""
    log = model.training_log_
    rejections = 0
    while True:
        loss = model.minibatch_loss(y, u, rng, num_samples, num_windows, x0)
        try:
            value, grads = value_and_grad(loss)(model.params)
        except np.linalg.LinAlgError as err:
            if not model.increase_jitter():
                raise TrainingError(f"Cholesky of K(Z, Z) failed even with the largest jitter: {err}") from err
            log["jitter"].append([len(model.history_), float(model.spec.jitter)])
            logger.warning("Cholesky failed; jitter raised to %g", model.spec.jitter)
            continue
        if np.isfinite(value) and all(np.all(np.isfinite(g)) for g in grads.values()):
            break
        rejections += 1
        optimizer.lr *= 0.5
        log["rejected_steps"].append(len(model.history_))
        logger.warning("non-finite loss or gradient at step %d: step rejected, learning rate halved to %g",
                       len(model.history_), optimizer.lr)
        if rejections >= max_rejections:
            raise TrainingError(f"training stopped after {rejections} consecutive non-finite steps (step "
                                f"{len(model.history_)}); fit leaves the model as it was before it, and a run with a "
                                f"checkpoint keeps its last one")
    model.params = optimizer.step(model.params, without_frozen(grads, frozen))
    model.history_.append(float(value))


def without_frozen(grads, frozen):
    """The gradients with those of the frozen parameters set to zero (Adam then leaves them where they are)."""
    return {name: (np.zeros_like(g) if name in frozen else g) for name, g in grads.items()}


#: The layout of the epoch loop's checkpoints, part of their fingerprint (:func:`fit_fingerprint`).
EPOCH_CHECKPOINT_LAYOUT = 1
#: Plan fields that a resumed epoch loop may change: more epochs continue a run, and when checkpoints are written
#: does not change it.
RESUMABLE_PLAN_FIELDS = ("epochs", "checkpoint_every", "checkpoint_steps")


def fit_fingerprint(model, ys, us, plan, seed, frozen, layout, plan_left_out=(), config_left_out=("jitter",)):
    """What a checkpoint must have been written for (plain JSON types), so that resuming a fit of other data or
    settings from it is refused (:func:`check_fingerprint`): the checkpoint ``layout``, the data's shapes and the
    SHA-256 of its arrays ``ys``, ``us`` (model units), the plan's fields but ``plan_left_out``, the seed, the frozen
    parameters, and the model's class and configuration but ``config_left_out`` (what the fit itself sets)."""
    digest = hashlib.sha256()
    for array in (a for pair in zip(ys, us) for a in pair):
        array = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(",".join(str(n) for n in array.shape).encode("ascii") + b"\0" + array.tobytes())
    config = {k: v for k, v in model.get_config().items() if k not in config_left_out}
    plan_fields = {k: v for k, v in asdict(plan).items() if k not in plan_left_out}
    return json.loads(json.dumps({
        "layout": layout, "shapes": [[list(y.shape), list(u.shape)] for y, u in zip(ys, us)],
        "data_sha256": digest.hexdigest(), "plan": plan_fields, "seed": int(seed), "frozen": list(frozen),
        "class": type(model).__name__, "config": config}))


def check_fingerprint(mine, theirs, path, fit):
    """ValueError naming what differs unless the checkpoint at ``path`` was written for the same fit (``mine`` and
    ``theirs`` from :func:`fit_fingerprint`; ``fit`` names the kind of fit in the message)."""
    if theirs == mine:
        return
    differ = [key for key in mine if (theirs or {}).get(key) != mine[key]]
    shapes = (f"; data shapes there {(theirs or {}).get('shapes')}, here {mine['shapes']}" if "shapes" in differ
              else "")  # the shapes say something only where they differ
    raise ValueError(f"checkpoint: {os.fspath(path)!r} was written by {fit} of other data or settings (differing: "
                     f"{', '.join(differ)}{shapes}); remove it or pass another path")


def write_checkpoint(model, path, optimizer, rng, epochs_done, position=None, fingerprint=None):
    """Write ``model`` with the Adam state, the generator state, the training log and ``epochs_done`` to ``path``
    (atomically, ``archive.write_model``); ``position``: (order of windows, next position) inside epoch
    ``epochs_done + 1``, or None between epochs."""
    state = optimizer.state_dict()
    arrays = {key: np.asarray(value, dtype=np.float64) for key, value in state.items() if key != "t"}
    info = {"epochs_done": epochs_done, "adam_t": int(state["t"]), "lr": optimizer.lr,
            "rng_state": rng.bit_generator.state, "training_log": model.training_log_, "fingerprint": fingerprint}
    if position is not None:  # inside epoch epochs_done + 1: its order of windows and the next position
        info["position"] = {"order": [int(i) for i in position[0]], "next": int(position[1])}
    archive.write_model(model, type(model).__name__, path, training={"arrays": arrays, "info": info})


def restore_checkpoint(model, path, optimizer, rng, fingerprint=None):
    """Restore into ``model``, ``optimizer`` and ``rng`` what :func:`write_checkpoint` wrote to ``path``; returns
    (epochs done, position inside the next epoch or None). A checkpoint written for another ``fingerprint``
    (:func:`fit_fingerprint`: other data, plan, seed or configuration, or none recorded) is a ValueError."""
    try:
        saved, training = archive.read_checkpoint(path, {type(model).__name__: type(model)})
    except archive.ModelFileError as err:  # say which run could not resume, not only what the file is
        raise archive.ModelFileError(f"checkpoint: cannot resume a {type(model).__name__} from it: {err}") from None
    if type(saved) is not type(model) or set(saved.params) != set(model.params):
        raise ValueError(f"checkpoint: {path!r} holds a {type(saved).__name__} that does not match this model")
    info, arrays = training["info"], training["arrays"]
    check_fingerprint(fingerprint, info.get("fingerprint"), path, f"an epoch loop of a {type(model).__name__}")
    model.params = saved.params
    model.spec = saved.spec  # keeps a jitter raised during the interrupted run
    model.history_ = list(saved.history_)
    model.training_log_ = info["training_log"]
    optimizer.load_state_dict(dict(arrays, t=info["adam_t"]))
    optimizer.lr = info["lr"]
    rng.bit_generator.state = info["rng_state"]
    position = info.get("position")
    if position is not None:
        position = (np.asarray(position["order"], dtype=np.intp), int(position["next"]))
    return int(info["epochs_done"]), position
