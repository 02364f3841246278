"""Resume in every state: a run interrupted right after a rejected step, after a raised jitter, in the middle of an
epoch (with checkpoints at epoch ends or inside epochs), with and without a recognition network, resumed from its
checkpoint, ends in exactly the state of an uninterrupted run: parameters, Adam state, random generator, jitter,
learning rate, history and training log, bit for bit.

Faults are injected as in tests/test_reliability.py, by wrapping the model's minibatch loss: call k of it returns
NaN (a rejected step), raises LinAlgError (a failed Cholesky, the jitter is raised) or raises KeyboardInterrupt (the
process is killed). The uninterrupted reference run sees the same NaN and Cholesky faults at the same calls."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np import io

# 11 windows of 10 steps, batch 4: 3 steps per epoch
FIT = dict(epochs=3, seq_len=10, stride=3, batch_size=4, lr=0.02, num_samples=4)


def toy_data(T=40, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sin(np.arange(T) / 3.0)[:, None]
    y = np.cumsum(0.3 * u[:, 0])[:, None] * 0.2 + 0.05 * rng.normal(size=(T, 1))
    return y, u


def build(kind):
    if kind == "odgpssm":
        return gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, seed=0, settings="authors")
    if kind == "prssm_mlp":
        return gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, seed=0, settings="authors", recognition="mlp",
                        recognition_options={"num_steps": 3, "hidden": 4})
    if kind == "odgpssm_lstm":
        return gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, seed=0, settings="authors", recognition="lstm",
                          recognition_options={"hidden": 4, "num_layers": 1})
    if kind == "dssm":
        return gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4, seed=0)
    raise ValueError(kind)


class Killed(KeyboardInterrupt):
    pass


def inject(model, faults):
    """faults: {call index: "nan" | "cholesky" | "kill"} for the calls of model.minibatch_loss."""
    original = model.minibatch_loss
    calls = {"n": 0}

    def patched(*args):
        loss = original(*args)
        action = faults.get(calls["n"])
        calls["n"] += 1
        if action == "nan":
            return lambda params: loss(params) * np.nan
        if action == "cholesky":
            def fail(params):
                raise np.linalg.LinAlgError("Matrix is not positive definite")
            return fail
        if action == "kill":
            def kill(params):
                raise Killed("killed")
            return kill
        return loss

    model.minibatch_loss = patched
    return model


def end_state(model, path):
    """Everything that determines how training goes on, from the model and the checkpoint written at the end."""
    saved, training = io.read_checkpoint(path)
    info = training["info"]
    return {"params": model.get_learned_params(), "saved_params": saved.get_learned_params(),
            "history": list(model.history_), "saved_history": list(saved.history_), "training_log": model.training_log_,
            "saved_training_log": info["training_log"], "jitter": getattr(model.spec, "jitter", None),
            "saved_jitter": saved.get_config().get("jitter"), "lr": info["lr"], "adam_t": info["adam_t"],
            "adam": training["arrays"], "rng_state": info["rng_state"], "epochs_done": info["epochs_done"]}


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key in ("params", "saved_params", "adam"):
            assert a[key].keys() == b[key].keys(), key
            for name in a[key]:
                np.testing.assert_array_equal(a[key][name], b[key][name], err_msg=f"{key}[{name}]")
        else:
            assert a[key] == b[key], key


def interrupted_then_resumed(kind, faults, kill_at, tmp_path, **options):
    """(reference end state, resumed end state, the checkpoint's training info when the run was killed)."""
    y, u = toy_data()
    ref_path = str(tmp_path / "reference.ckpt")
    reference = inject(build(kind), faults).fit(y, u, checkpoint=ref_path, plan=dict(FIT, **options))

    path = str(tmp_path / "run.ckpt")
    crashing = inject(build(kind), {**faults, kill_at: "kill"})
    with pytest.raises(Killed):
        crashing.fit(y, u, checkpoint=path, plan=dict(FIT, **options))
    _, training = io.read_checkpoint(path)
    resumed = build(kind).fit(y, u, checkpoint=path, resume=True, plan=dict(FIT, **options))
    return end_state(reference, ref_path), end_state(resumed, path), training["info"]


@pytest.mark.parametrize("kind", ["odgpssm", "prssm_mlp", "dssm"])
def test_resume_right_after_a_rejected_step(kind, tmp_path):
    # calls 0, 1, 2 (NaN: rejected), 3 (its retry) form epoch 1, whose checkpoint holds the halved step size;
    # the process dies at the first step of epoch 2
    ref, resumed, at_kill = interrupted_then_resumed(kind, {2: "nan"}, 4, tmp_path)
    assert at_kill["epochs_done"] == 1 and at_kill["lr"] == FIT["lr"] / 2
    assert at_kill["training_log"]["rejected_steps"] == [2]
    assert ref["lr"] == FIT["lr"] / 2 and ref["training_log"]["rejected_steps"] == [2]
    assert_same_state(ref, resumed)


@pytest.mark.parametrize("kind", ["odgpssm", "prssm_mlp", "odgpssm_lstm"])
def test_resume_after_a_raised_jitter(kind, tmp_path):
    ref, resumed, at_kill = interrupted_then_resumed(kind, {1: "cholesky"}, 4, tmp_path)
    assert at_kill["epochs_done"] == 1 and at_kill["training_log"]["jitter"] == [[1, pytest.approx(1e-5)]]
    assert ref["jitter"] == pytest.approx(1e-5)
    assert_same_state(ref, resumed)


@pytest.mark.parametrize("kind", ["odgpssm", "prssm_mlp", "dssm"])
def test_resume_from_an_epoch_checkpoint_after_a_crash_mid_epoch(kind, tmp_path):
    # killed at the second step of epoch 2: the epoch is redone from the checkpoint of epoch 1
    ref, resumed, at_kill = interrupted_then_resumed(kind, {}, 4, tmp_path, checkpoint_every=1)
    assert at_kill["epochs_done"] == 1
    assert_same_state(ref, resumed)


@pytest.mark.parametrize("kind", ["odgpssm", "prssm_mlp", "dssm"])
def test_resume_from_a_checkpoint_inside_an_epoch(kind, tmp_path):
    # a checkpoint after every accepted step; killed at the third step of epoch 2, right after a rejected step:
    # the checkpoint holds the epoch's order of windows and the position in it
    ref, resumed, at_kill = interrupted_then_resumed(kind, {4: "nan"}, 6, tmp_path, checkpoint_steps=1)
    assert at_kill["epochs_done"] == 1 and at_kill["position"]["next"] == 8  # windows 0..7 of epoch 2 done
    assert at_kill["lr"] == FIT["lr"] / 2
    assert_same_state(ref, resumed)


def test_resume_mid_epoch_with_every_fault_at_once(tmp_path):
    # epoch 1: calls 0, 1 (Cholesky), 2, 3 (NaN), 4; epoch 2: 5, 6, 7 (NaN), 8; epoch 3: 9, then killed at 10
    faults = {1: "cholesky", 3: "nan", 7: "nan"}
    ref, resumed, at_kill = interrupted_then_resumed("prssm_mlp", faults, 10, tmp_path, checkpoint_steps=1)
    assert at_kill["epochs_done"] == 2 and at_kill["position"]["next"] == 4
    assert at_kill["training_log"]["rejected_steps"] == [2, 5] and at_kill["lr"] == FIT["lr"] / 4
    assert at_kill["training_log"]["jitter"] == [[1, pytest.approx(1e-5)]]
    assert_same_state(ref, resumed)


def test_checkpoint_steps_do_not_change_training(tmp_path):
    y, u = toy_data()
    plain = build("odgpssm").fit(y, u, plan=FIT)
    stepped = build("odgpssm").fit(y, u, checkpoint=str(tmp_path / "c.ckpt"), plan=dict(FIT, checkpoint_steps=2))
    assert plain.history_ == stepped.history_
    for name, value in plain.get_learned_params().items():
        np.testing.assert_array_equal(stepped.get_learned_params()[name], value)
    with pytest.raises(ValueError, match="checkpoint_steps"):
        build("odgpssm").fit(y, u, checkpoint=str(tmp_path / "d.ckpt"), plan=dict(FIT, checkpoint_steps=0))


@pytest.mark.parametrize("kind", ["odgpssm", "prssm_mlp", "dssm"])
def test_a_second_fit_starts_afresh(kind):
    """fit is not a continuation (estimator.GradientTrainedModel.fit): a model fitted to other data first, its jitter
    raised after that fit, then fitted to these data ends where a new model fitted to them alone does (parameters,
    history and jitter, bit for bit)."""
    y, u = toy_data()
    fresh = build(kind).fit(y, u, plan=FIT)
    twice = build(kind).fit(*toy_data(seed=1), plan=FIT)
    twice.increase_jitter()
    twice.fit(y, u, plan=FIT)
    assert twice.history_ == fresh.history_
    for name, value in fresh.get_learned_params().items():
        np.testing.assert_array_equal(twice.get_learned_params()[name], value, err_msg=name)
    assert getattr(twice.spec, "jitter", None) == getattr(fresh.spec, "jitter", None)


def test_an_epoch_fit_after_a_validation_block_fit_starts_afresh():
    """The same for a first fit in the other regime (the validation-block loop, ``GPSSM._fit_block``): its parameters
    are a fit's, so the epoch loop that follows starts from the model's own initialisation, not from them."""
    y, u = toy_data()
    fresh = build("odgpssm").fit(y, u, plan=FIT)
    twice = build("odgpssm").fit(*toy_data(seed=1), plan=gp.BlockPlan(max_steps=3, seq_len=10, num_samples=4))
    twice.fit(y, u, plan=FIT)
    assert twice.history_ == fresh.history_
    for name, value in fresh.get_learned_params().items():
        np.testing.assert_array_equal(twice.get_learned_params()[name], value, err_msg=name)


@pytest.mark.parametrize("kind", ["odgpssm", "dssm"])
def test_a_fit_starts_from_parameters_set_before_it(kind):
    """Initial values set with set_learned_params before a fit (as the car-tracking experiment sets its inducing
    inputs and q(x0)) are the fit's start, also after an earlier fit: a parameter held fixed keeps them."""
    y, u = toy_data()
    name = "x0_mean" if kind == "odgpssm" else "obs_noise"
    for model in (build(kind), build(kind).fit(*toy_data(seed=1), plan=FIT)):
        params = model.get_learned_params()
        params[name] = params[name] + 0.5
        model.set_learned_params(params)
        model.fit(y, u, plan=dict(FIT, fixed=(name,)))
        np.testing.assert_array_equal(model.get_learned_params()[name], params[name])


def test_a_checkpoint_of_other_data_or_settings_is_refused(tmp_path):
    """The epoch loop resumes only the fit its checkpoint was written for (``training_loop.fit_fingerprint``):
    other data, another configuration, seed or step size is a ValueError naming what differs; more epochs continue
    the run, as an uninterrupted run of that many epochs goes."""
    y, u = toy_data()
    path = str(tmp_path / "c.ckpt")
    build("odgpssm").fit(y, u, checkpoint=path, plan=dict(FIT, epochs=1))
    other_y, _ = toy_data(seed=1)
    refused = [(lambda: build("odgpssm").fit(other_y, u, checkpoint=path, resume=True, plan=FIT), "data_sha256"),
               (lambda: gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=0, settings="authors").fit(
                   y, u, checkpoint=path, resume=True, plan=FIT), "config"),
               (lambda: build("odgpssm").fit(y, u, checkpoint=path, resume=True, plan=FIT, seed=3), "seed"),
               (lambda: build("odgpssm").fit(y, u, checkpoint=path, resume=True, plan=dict(FIT, lr=0.01)), "plan")]
    for fit, differing in refused:
        with pytest.raises(ValueError, match=f"^checkpoint: .* other data or settings \\(differing: {differing}") as err:
            fit()
        assert "data shapes" not in str(err.value)  # the same shapes: only what differs is named
    resumed = build("odgpssm").fit(y, u, checkpoint=path, resume=True, plan=FIT)
    whole = build("odgpssm").fit(y, u, plan=FIT)
    assert resumed.history_ == whole.history_


def test_a_checkpoint_past_the_epochs_asked_is_refused(tmp_path):
    """Resumed with fewer epochs than its checkpoint has run, the fit returned the longer run without a word."""
    y, u = toy_data()
    path = str(tmp_path / "c.ckpt")
    build("odgpssm").fit(y, u, checkpoint=path, plan=dict(FIT, epochs=2))
    with pytest.raises(ValueError, match="^epochs: the checkpoint .* has run past 2 epochs, more than the 1 asked"):
        build("odgpssm").fit(y, u, checkpoint=path, resume=True, plan=dict(FIT, epochs=1))
    same = build("odgpssm").fit(y, u, checkpoint=path, resume=True, plan=dict(FIT, epochs=2))
    assert same.history_ == build("odgpssm").fit(y, u, plan=dict(FIT, epochs=2)).history_


def test_epoch_checkpoints_are_written_every_checkpoint_every_epochs_and_at_the_end(tmp_path, monkeypatch):
    from gpssm_np import training_loop

    written = []
    real = training_loop.write_checkpoint

    def recording(model, path, optimizer, rng, epochs_done, position=None, fingerprint=None):
        if position is None:  # an epoch's checkpoint (the steps' carry a position inside the epoch)
            written.append(epochs_done)
        return real(model, path, optimizer, rng, epochs_done, position, fingerprint)

    monkeypatch.setattr(training_loop, "write_checkpoint", recording)
    y, u = toy_data()
    build("odgpssm").fit(y, u, checkpoint=str(tmp_path / "c.ckpt"), plan=dict(FIT, epochs=5, checkpoint_every=3))
    assert written == [3, 5]
