"""scikit-learn's meanings of get_params/set_params (arguments.py): the constructor arguments, so that its ``clone``
works; the learned arrays are get_learned_params/set_learned_params, and set_params with a dict of arrays is their
deprecated alias. scikit-learn itself is not needed: :func:`sklearn_clone` does what ``sklearn.base.clone`` does."""
import copy
import inspect
import warnings

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.io import MODEL_CLASSES


def tiny_models():
    return [gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, seed=1, lengthscale=1.5),
            gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors", recognition="mlp"),
            gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4), gp.ARX(na=2, nb=1), gp.LGSSM(dim_x="auto")]


def sklearn_clone(model):
    """``sklearn.base.clone(model)``: a deep copy of each argument of ``get_params(deep=False)`` given to the
    constructor, which must keep each as it is (scikit-learn checks identity)."""
    arguments = {name: copy.deepcopy(value) for name, value in model.get_params(deep=False).items()}
    clone = type(model)(**arguments)
    kept = clone.get_params(deep=False)
    for name, value in arguments.items():
        assert kept[name] is value, f"{type(model).__name__}: the constructor does not keep {name}"
    return clone


def same_model(a, b):
    assert type(a) is type(b) and a is not b
    assert a.get_config() == b.get_config() and repr(a) == repr(b)
    arrays_a, arrays_b = a.get_learned_params(), b.get_learned_params()
    assert set(arrays_a) == set(arrays_b)
    for name in arrays_a:
        assert np.array_equal(arrays_a[name], arrays_b[name]), name


@pytest.mark.parametrize("model", tiny_models(), ids=lambda m: type(m).__name__)
def test_get_params_are_the_constructor_arguments_and_rebuild_the_model(model):
    params = model.get_params()
    named = [name for name, p in inspect.signature(type(model)).parameters.items()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert list(params)[:len(named)] == named  # every argument, in the signature's order, defaults included
    assert model.get_params(deep=False) == params
    same_model(type(model)(**params), model)
    same_model(sklearn_clone(model), model)


def test_get_params_keep_the_initial_values_a_gp_model_takes_as_keywords():
    model = gp.ODGPSSM(dim_x=2, dim_y=1, num_inducing=4, lengthscale=1.5, obs_noise=0.3, init="random")
    assert model.get_params()["lengthscale"] == 1.5 and model.get_params()["obs_noise"] == 0.3
    assert "lengthscale" not in gp.ODGPSSM(dim_x=2, dim_y=1, num_inducing=4).get_params()


def test_a_fitted_model_gives_the_arguments_as_given_and_clones_unfitted(rng):
    y, u = rng.standard_normal((120, 1)), rng.standard_normal((120, 1))
    model = gp.ARX().fit(y, u)  # the orders are chosen by fit
    assert model.fitted and model.get_params()["na"] is None
    clone = sklearn_clone(model)
    assert not clone.fitted and clone.get_learned_params() == {}


def test_a_loaded_model_gives_the_arguments_of_its_file(tmp_path):
    model = gp.DSSM(dim_x=2, hidden=4, rnn_hidden=4, seed=3)
    gp.save(model, tmp_path / "m.npz")
    loaded = gp.load(tmp_path / "m.npz")
    assert {k: loaded.get_params()[k] for k in model.get_config()} == model.get_config()


@pytest.mark.parametrize("cls", list(MODEL_CLASSES.values()), ids=list(MODEL_CLASSES))
def test_set_params_sets_arguments_by_name_and_returns_the_model(cls, rng):
    small = {"ODGPSSM": dict(dim_x=2, num_inducing=4), "PRSSM": dict(dim_x=2, num_inducing=4),
             "DSSM": dict(dim_x=2, hidden=4, rnn_hidden=4)}.get(cls.__name__, {})
    model = cls(**small)
    assert model.set_params() is model
    assert model.set_params(seed=7, standardize=False) is model
    assert model.get_params()["seed"] == 7 and model.seed == 7 and model.standardize is False
    same_model(model, cls(**dict(small, seed=7, standardize=False)))  # rebuilt: as constructed with them
    with pytest.raises(ValueError, match="n_latent: unknown keyword argument of " + cls.__name__):
        model.set_params(n_latent=3)
    with pytest.raises(ValueError, match="standardize"):  # the constructor checks the values too
        model.set_params(standardize="yes")


def test_set_params_leaves_a_fitted_model_unfitted(rng):
    y, u = rng.standard_normal((120, 1)), rng.standard_normal((120, 1))
    model = gp.LGSSM(dim_x=2).fit(y, u)
    model.set_params(num_iters=3)
    assert not model.fitted and model.history_ == [] and model.scaling_ is None and model.num_iters == 3


@pytest.mark.parametrize("model", tiny_models()[:3], ids=lambda m: type(m).__name__)
def test_set_params_with_a_dict_of_arrays_is_the_deprecated_set_learned_params(model):
    arrays = {name: value + 0.25 for name, value in model.get_learned_params().items()}
    with pytest.warns(DeprecationWarning, match="set_learned_params") as caught:
        assert model.set_params(arrays) is model
    assert [w.filename for w in caught] == [__file__]  # the deprecated call's line
    for name, value in model.get_learned_params().items():
        np.testing.assert_array_equal(value, arrays[name])
    with pytest.raises(TypeError, match="by name"):
        model.set_params(arrays, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.set_learned_params(arrays)  # the new name does not warn


def test_numpy_numbers_are_taken_as_python_numbers(tmp_path):
    """A NumPy integer (``for q in np.arange(1, 4)``) passed the checks but stayed in the configuration: the default
    fit's fingerprint and ``save`` then failed on a type JSON does not know, after the fit; a NumPy float jitter
    was refused."""
    import json

    i = np.int64
    models = [gp.ODGPSSM(dim_y=i(1), dim_u=i(1), num_inducing=i(10), jitter=np.float32(1e-6)),
              gp.PRSSM(dim_x=i(3), dim_y=i(1), recognition="lstm", recognition_options={"hidden": i(8)}),
              gp.DSSM(dim_x=i(2), dim_y=i(1), hidden=i(8), rnn_hidden=i(4)), gp.ARX(na=i(2), nb=i(1)),
              gp.LGSSM(dim_x=i(2))]
    for model in models:
        config = model.get_config()
        assert json.loads(json.dumps(config)) == config, type(model).__name__
    rng = np.random.default_rng(0)
    dssm = models[2].fit(rng.normal(size=(60, 1)), rng.normal(size=(60, 1)), epochs=1, progress=False)
    gp.save(dssm, tmp_path / "dssm.npz")


def test_the_authors_settings_start_where_the_authors_code_does():
    """GPyTorch's raw zeros give softplus(0) = log 2 for the lengthscales, the output scales and the per-task process
    noises, the observation noise adds the global noise 1, q(u) starts at 1e-3 N(0, 1) with L = I, q(x0) at the
    prior N(0, I), and A ~ N(0, 1) (../shared/research/odgpssm_reference.md, sections 3-4)."""
    m = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=4, num_inducing=20, settings="authors", seed=0)
    p = m.constrained_params()
    for name in ("lengthscale", "variance", "process_var"):
        np.testing.assert_allclose(p[name], np.log(2.0), rtol=1e-12)
    np.testing.assert_allclose(p["obs_var"], 1.0 + np.log(2.0), rtol=1e-12)
    np.testing.assert_allclose(p["x0_var"], 1.0, rtol=1e-12)
    assert not np.any(p["x0_mean"])
    np.testing.assert_array_equal(p["q_sqrt"], np.broadcast_to(np.eye(20), (4, 20, 20)))
    assert 0.7e-3 < p["q_mu"].std() < 1.3e-3 and abs(p["q_mu"].mean()) < 3e-4  # 80 draws of 1e-3 N(0, 1)
    assert 0.5 < p["A"].std() < 1.5


def test_the_epoch_loops_defaults_are_the_authors_settings():
    """EpochPlan's defaults are the authors' regime (its docstring; models/registry.AUTHORS_SETTINGS)."""
    from gpssm_np.models.registry import AUTHORS_SETTINGS
    from gpssm_np.training_loop import EpochPlan

    plan = EpochPlan()
    for name in ("epochs", "seq_len", "stride", "batch_size", "lr", "num_samples"):
        assert getattr(plan, name) == AUTHORS_SETTINGS[name], name
