"""Fault injection: non-finite steps, Cholesky failures, interrupted checkpoints."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np import archive, io
from gpssm_np.estimator import TrainingError


def toy_data(T=40, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sin(np.arange(T) / 3.0)[:, None]
    y = np.cumsum(0.3 * u[:, 0])[:, None] * 0.2 + 0.05 * rng.normal(size=(T, 1))
    return y, u


def small_model(**kwargs):
    return gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, seed=0, settings="authors", **kwargs)


FIT = dict(epochs=3, seq_len=10, stride=3, batch_size=4, lr=0.02, num_samples=4)


def poison(model, calls_to_poison):
    """Make the given minibatch-loss calls (0-based) return NaN."""
    original = model.minibatch_loss
    counter = {"n": 0}

    def patched(*args):
        loss = original(*args)
        k = counter["n"]
        counter["n"] += 1
        return (lambda params: loss(params) * np.nan) if k in calls_to_poison else loss

    model.minibatch_loss = patched


def test_non_finite_step_is_rejected_and_training_recovers():
    y, u = toy_data()
    model = small_model()
    poison(model, {2})
    model.fit(y, u, plan=FIT)
    assert model.training_log_["rejected_steps"] == [2]
    assert len(model.history_) == 3 * 3  # 11 windows, batch 4: 3 steps per epoch, none lost
    assert all(np.all(np.isfinite(v)) for v in model.get_learned_params().values())


def test_repeated_non_finite_steps_stop_with_a_clear_error(caplog):
    y, u = toy_data()
    model = small_model()
    poison(model, set(range(1, 100)))
    before = model.get_learned_params()
    with pytest.raises(TrainingError, match="after 4 consecutive non-finite steps \\(step 1\\)"):
        with caplog.at_level("WARNING", logger="gpssm_np.training_loop"):
            model.fit(y, u, plan=dict(FIT, max_rejections=4))
    assert caplog.text.count("step rejected") == 4  # the 4th consecutive rejection stops, not an earlier one
    assert model.history_ == []  # a fit that raises leaves the model as it was before the call
    after = model.get_learned_params()
    assert all(np.array_equal(after[name], value) for name, value in before.items())


def test_failed_cholesky_raises_the_jitter():
    y, u = toy_data()
    model = small_model()
    original = model.minibatch_loss
    state = {"failed": False}

    def failing_once(*args):
        loss = original(*args)
        if state["failed"]:
            return loss

        def raise_once(params):
            state["failed"] = True
            raise np.linalg.LinAlgError("Matrix is not positive definite")

        return raise_once

    model.minibatch_loss = failing_once
    model.fit(y, u, plan=dict(FIT, epochs=1))
    assert model.spec.jitter == pytest.approx(1e-5)
    assert model.training_log_["jitter"] == [[0, pytest.approx(1e-5)]]
    assert model.get_config()["jitter"] == pytest.approx(1e-5)


def test_interrupted_checkpoint_resumes_bit_identically(tmp_path, monkeypatch):
    y, u = toy_data()
    reference = small_model(recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4})
    reference.fit(y, u, plan=FIT)

    path = str(tmp_path / "run.ckpt")
    crashing = small_model(recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4})
    real_replace = archive.os.replace
    calls = {"n": 0}

    def replace_then_crash(src, dst):
        calls["n"] += 1
        if calls["n"] == 2:  # the second checkpoint write dies after writing its temporary file
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(archive.os, "replace", replace_then_crash)
    with pytest.raises(KeyboardInterrupt):
        crashing.fit(y, u, checkpoint=path, plan=FIT)
    monkeypatch.setattr(archive.os, "replace", real_replace)
    _, training = io.read_checkpoint(path)  # the first checkpoint is intact
    assert training["info"]["epochs_done"] == 1

    resumed = small_model(recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4})
    resumed.fit(y, u, checkpoint=path, resume=True, plan=FIT)
    assert resumed.history_ == reference.history_
    for name, value in reference.get_learned_params().items():
        np.testing.assert_array_equal(resumed.get_learned_params()[name], value)
    # the finished checkpoint holds the final state; resuming again does nothing more
    again = small_model(recognition="mlp", recognition_options={"num_steps": 3, "hidden": 4})
    again.fit(y, u, checkpoint=path, resume=True, plan=FIT)
    assert again.history_ == reference.history_


def test_same_seed_same_training_bitwise():
    y, u = toy_data()
    a, b = small_model(), small_model()
    a.fit(y, u, plan=FIT)
    b.fit(y, u, plan=FIT)
    assert a.history_ == b.history_
    for name, value in a.get_learned_params().items():
        np.testing.assert_array_equal(b.get_learned_params()[name], value)


def test_checkpoint_argument_errors(tmp_path):
    y, u = toy_data()
    with pytest.raises(ValueError, match="resume"):
        small_model().fit(y, u, resume=True, plan=FIT)
    path = str(tmp_path / "prssm.ckpt")
    model = gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, settings="authors")
    model.fit(y, u, checkpoint=path, plan=dict(FIT, epochs=1))
    with pytest.raises(ValueError, match="checkpoint"):
        small_model().fit(y, u, checkpoint=path, resume=True, plan=FIT)
    warm = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=5, init="lgssm")  # epochs without checkpoints
    with pytest.raises(ValueError, match="^checkpoint_steps: the epochs of a warm-started model"):
        warm.fit(y, u, epochs=1, plan=dict(seq_len=10, checkpoint_steps=2))
    model_file = str(tmp_path / "model.npz")
    gp.save(small_model(), model_file)
    with pytest.raises(io.ModelFileError, match="not a checkpoint"):
        io.read_checkpoint(model_file)
