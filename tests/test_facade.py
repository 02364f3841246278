"""The model facade (estimator.py): abstract hooks, one list of training options, and the linear baselines saved
and loaded like the GP models."""
import inspect

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.io import MODEL_CLASSES
from gpssm_np.estimator import EPOCH_OPTIONS, STEP_OPTIONS, TRAINING_OPTIONS, GradientTrainedModel, StateSpaceModel
from gpssm_np.models.gpssm import GPSSM


def test_the_base_classes_are_abstract_and_name_their_hooks():
    with pytest.raises(TypeError, match="abstract"):
        StateSpaceModel()
    with pytest.raises(TypeError, match="abstract"):
        GradientTrainedModel()
    assert StateSpaceModel.__abstractmethods__ == {"get_config", "get_params", "set_params", "fit", "q_x0",
                                                   "forecast"}
    assert GradientTrainedModel.__abstractmethods__ == {"get_config", "q_x0", "param_shapes", "elbo_function",
                                                        "transition_moments", "obs_var", "_free_run"}

    class Incomplete(GradientTrainedModel):  # every hook but the free run
        get_config = q_x0 = param_shapes = elbo_function = transition_moments = obs_var = lambda self: None

    with pytest.raises(TypeError, match="_free_run"):
        Incomplete()


def test_training_options_are_the_keyword_arguments_of_fit():
    names = list(inspect.signature(GradientTrainedModel.fit).parameters)
    assert names[:3] == ["self", "y", "u"] and tuple(names[3:]) == EPOCH_OPTIONS
    names = list(inspect.signature(GPSSM.fit).parameters)
    assert names[:3] == ["self", "y", "u"] and tuple(names[3:]) == EPOCH_OPTIONS + STEP_OPTIONS == TRAINING_OPTIONS


def test_every_saved_class_implements_the_facade():
    for name, cls in MODEL_CLASSES.items():
        assert issubclass(cls, StateSpaceModel) and not inspect.isabstract(cls), name


def simulated(rng, T=120, dy=1, du=1):
    u = rng.normal(size=(T, du))
    y = np.zeros((T, dy))
    for t in range(1, T):
        y[t] = 0.7 * y[t - 1] + 0.5 * u[t, :dy] + 0.1 * rng.normal(size=dy)
    return y, u


@pytest.mark.parametrize("make, dy", [(lambda: gp.ARX(dim_y=1), 1), (lambda: gp.ARX(na=2, nb=2, dim_y=2), 2),
                                      (lambda: gp.LGSSM(dim_x=2, num_iters=3), 1)])
def test_linear_baselines_round_trip_through_save_and_load(tmp_path, rng, make, dy):
    y, u = simulated(rng, dy=dy, du=2)
    model = make()
    model = type(model)(**dict(model.get_config(), dim_u=2)).fit(y[:80], u[:80])
    model.set_output_scaling(np.full(dy, 0.5), np.full(dy, 2.0))
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))
    assert type(loaded) is type(model) and loaded.get_config() == model.get_config()
    assert loaded.history_ == model.history_
    for name, value in model.get_params().items():
        np.testing.assert_array_equal(loaded.get_params()[name], value)
    kwargs = dict(y_past=y[:80], u_past=u[:80], num_samples=7, seed=3)
    before, after = model.forecast(u[80:], **kwargs), loaded.forecast(u[80:], **kwargs)
    np.testing.assert_array_equal(after.samples, before.samples)
    np.testing.assert_array_equal(after.in_original_units().mean, before.in_original_units().mean)
    if model.has_latent_state:
        np.testing.assert_array_equal(loaded.q_x0(y[80:], u[80:])[1], model.q_x0(y[80:], u[80:])[1])


@pytest.mark.parametrize("model", [gp.ARX(), gp.LGSSM()])
def test_unfitted_baselines_round_trip_unfitted(tmp_path, model):
    assert model.get_params() == {}
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))
    assert not loaded.fitted and loaded.get_config() == model.get_config()
    with pytest.raises(ValueError, match="not fitted"):
        loaded.forecast(np.zeros((3, 1)))
