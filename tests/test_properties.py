"""Property-based tests: random shapes, NaN/inf, empty arrays, wrong dtypes and extreme values thrown at the public
API. Each call either works (finite results) or raises the documented ValueError; never a Numba typing error,
a crash or a silent NaN."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpssm_np as gp
from gpssm_np.datasets import windows

FAST = settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
MODEL = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_latent=2, num_inducing=4, seed=0)

shapes = st.lists(st.integers(0, 6), min_size=0, max_size=4).map(tuple)
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.floats(-1e3, 1e3), st.sampled_from([0.0, 1e300, -1e300, 1e-300]))
dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.complex128, np.str_, object])


def any_array(draw_shape=shapes):
    return st.builds(lambda shape, dtype, seed: _make(shape, dtype, seed), draw_shape, dtypes, st.integers(0, 10))


def _make(shape, dtype, seed):
    values = np.random.default_rng(seed).normal(size=shape)
    if dtype is np.str_:
        return values.astype(str)
    if dtype is object:
        return values.astype(object)
    return values.astype(dtype)


def assert_works_or_value_error(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except ValueError:
        return None
    return out


@FAST
@given(y=any_array(), u=st.one_of(st.none(), any_array()))
def test_elbo_on_arbitrary_arrays(y, u):
    out = assert_works_or_value_error(MODEL.elbo, y, u, num_samples=2)
    if out is not None:
        assert np.isfinite(out)


@FAST
@given(T=st.integers(1, 8), value=floats, where=st.sampled_from(["y", "u"]))
def test_elbo_with_special_values(T, value, where):
    y, u = np.zeros((T, 1)), np.zeros((T, 1))
    (y if where == "y" else u)[T // 2, 0] = value
    out = assert_works_or_value_error(MODEL.elbo_and_grad, y, u, num_samples=2)
    if out is not None:
        value, grad = out
        assert np.isfinite(value)
        assert all(np.all(np.isfinite(g)) for g in grad.values())


@FAST
@given(num_samples=st.one_of(st.integers(-3, 3), st.floats(-2, 2), st.none(), st.just("5")))
def test_bad_sizes(num_samples):
    y, u = np.zeros((4, 1)), np.zeros((4, 1))
    out = assert_works_or_value_error(MODEL.elbo, y, u, num_samples=num_samples)
    if out is not None:
        assert isinstance(num_samples, int) and num_samples >= 1 and np.isfinite(out)


@FAST
@given(u=any_array(), steps=st.one_of(st.none(), st.integers(-2, 5)))
def test_forecast_on_arbitrary_inputs(u, steps):
    out = assert_works_or_value_error(MODEL.forecast, u, num_samples=3, steps=steps)
    if out is not None:
        assert np.all(np.isfinite(out.samples))


@FAST
@given(y=any_array(), seq_len=st.integers(-2, 12), stride=st.integers(-1, 4))
def test_windows_on_arbitrary_arrays(y, seq_len, stride):
    out = assert_works_or_value_error(windows, y, None, seq_len, stride)
    if out is not None:
        assert out[0].shape[1] == seq_len


@FAST
@given(y=any_array(), u=st.one_of(st.none(), any_array()))
def test_filter_on_arbitrary_arrays(y, u):
    out = assert_works_or_value_error(MODEL.filter, y, u, num_particles=20)
    if out is not None:
        assert np.all(np.isfinite(out.means))


@FAST
@given(name=st.one_of(st.text(max_size=12), st.integers(), st.none()))
def test_unknown_dataset_names(name):
    if name in gp.datasets.DATASET_NAMES:
        return
    with pytest.raises(ValueError, match="name"):
        gp.datasets.load(name, data_dir="/nonexistent")


@FAST
@given(params=st.dictionaries(st.sampled_from(sorted(MODEL.get_params())), any_array(), max_size=3))
def test_set_params_with_arbitrary_arrays(params):
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_latent=2, num_inducing=4, seed=0)
    full = dict(model.get_params(), **params)
    try:
        model.set_params(full)
    except ValueError:
        return
    for name, value in model.get_params().items():
        assert np.all(np.isfinite(value))
