"""Property-based tests: random shapes, NaN/inf, empty arrays, wrong dtypes and extreme values thrown at the public
API. An oracle written here from the documented rules says for each input whether the call must work (finite
results of the right shape) or raise a ValueError, and which argument its message must name first; never a Numba
typing error, a crash or a silent NaN. Explicit valid examples make sure that a check rejecting everything fails."""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
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


def is_real(a):
    return np.asarray(a).dtype.kind in "biuf"


def array_error(a, ndims):
    """Why ``a`` fails the package's array checks (wrong dtype, dimensions, empty, NaN/inf), or None."""
    if not is_real(a) or np.ndim(a) not in ndims or np.size(a) == 0:
        return True
    return not np.all(np.isfinite(np.asarray(a, dtype=np.float64)))


def as_column(a, dim):
    """A one-dimensional ``a`` read as the single channel (T, 1) when ``dim`` is 1 (README, "Data")."""
    return np.asarray(a)[:, None] if a is not None and np.ndim(a) == 1 and dim == 1 else a


def sequences_error(y, u, dim_y=1, dim_u=1):
    """The argument the package must name for outputs y and inputs u of a model with these dimensions (y is
    checked first), or None when both are valid; written from the documented rules of y ((T, d_y) or (B, T, d_y);
    (T,) for d_y = 1) and u (the same leading shape, with d_u columns; (T,) for d_u = 1)."""
    y, u = as_column(y, dim_y), as_column(u, dim_u)
    if array_error(y, (2, 3)) or np.shape(y)[-1] != dim_y:
        return "y"
    leading = np.shape(y)[:-1] if np.ndim(y) == 3 else (1,) + np.shape(y)[:-1]
    if u is None:
        return "u" if dim_u > 0 else None
    if array_error(u, (2, 3)):
        return "u"
    shape = np.shape(u) if np.ndim(u) == 3 else (1,) + np.shape(u)
    return None if shape == leading + (dim_u,) else "u"


def one_sequence_error(y, u, dim_y=1, dim_u=1):
    """:func:`sequences_error` for a method that reads one sequence (a filter): several sequences (B, T, d_y) with
    B > 1 name y before anything else is matched to them (``_validation.one_sequence``)."""
    return "y" if np.ndim(y) == 3 and np.shape(y)[0] != 1 else sequences_error(y, u, dim_y, dim_u)


def outcome(fn, argname, *args, **kwargs):
    """Call ``fn``: with ``argname`` None it must work and its result is returned; otherwise it must raise a
    ValueError whose message starts with ``argname:`` (a tuple: any of them), and None is returned."""
    if argname is None:
        return fn(*args, **kwargs)
    names = argname if isinstance(argname, tuple) else (argname,)
    with pytest.raises(ValueError) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(tuple(f"{n}:" for n in names)), (names, str(info.value))
    return None


def bad_size(value):
    return isinstance(value, bool) or not isinstance(value, int) or value < 1


@FAST
@given(y=any_array(), u=st.one_of(st.none(), any_array()))
@example(y=np.zeros((3, 1)), u=np.zeros((3, 1)))
@example(y=np.zeros((2, 3, 1)), u=np.ones((2, 3, 1)))
@example(y=np.zeros((3, 1)), u=np.zeros((3, 2)))
@example(y=np.array([[0.0], [np.nan], [0.0]]), u=np.zeros((3, 1)))  # NaN and inf without the CI profile
@example(y=np.zeros((3, 1)), u=np.array([[0.0], [np.inf], [0.0]]))
@example(y=np.array([[0.0], [-np.inf], [0.0]]), u=np.array([[np.nan], [0.0], [0.0]]))
def test_elbo_on_arbitrary_arrays(y, u):
    out = outcome(MODEL.elbo, sequences_error(y, u), y, u, num_samples=2)
    if out is not None:
        assert np.isfinite(out)


@FAST
@given(T=st.integers(1, 8), value=floats, where=st.sampled_from(["y", "u"]))
@example(T=3, value=0.5, where="u")
@example(T=3, value=np.nan, where="y")  # the special values without the CI profile's many draws
@example(T=3, value=np.nan, where="u")
@example(T=2, value=np.inf, where="y")
@example(T=4, value=-np.inf, where="u")
@example(T=3, value=1e300, where="y")
@example(T=3, value=-1e300, where="u")
def test_elbo_with_special_values(T, value, where):
    y, u = np.zeros((T, 1)), np.zeros((T, 1))
    (y if where == "y" else u)[T // 2, 0] = value
    # NaN or inf: the argument holding it. Values beyond ~1e154 overflow the squared residuals or kernel distances:
    # the ELBO is not finite, and the error must name the same argument; from 1e100 to 1e200 either outcome is
    # right (the threshold depends on the lengthscales and noise); smaller values must work
    if not np.isfinite(value) or abs(value) > 1e200:
        expected = where
    elif abs(value) > 1e100:
        expected = (where, None)
    else:
        expected = None
    if isinstance(expected, tuple):
        try:
            out = MODEL.elbo_and_grad(y, u, num_samples=2)
        except ValueError as err:
            assert str(err).startswith(f"{where}:"), str(err)
            return
    else:
        out = outcome(MODEL.elbo_and_grad, expected, y, u, num_samples=2)
    if out is not None:
        value, grad = out
        assert np.isfinite(value)
        assert all(np.all(np.isfinite(g)) for g in grad.values())


@FAST
@given(num_samples=st.one_of(st.integers(-3, 3), st.floats(-2, 2), st.none(), st.just("5")))
@example(num_samples=2)
def test_bad_sizes(num_samples):
    # MODEL has the default ensemble-Kalman objective, which needs at least 2 members per window
    y, u = np.zeros((4, 1)), np.zeros((4, 1))
    bad = bad_size(num_samples) or num_samples < 2
    out = outcome(MODEL.elbo, "num_samples" if bad else None, y, u, num_samples=num_samples)
    if out is not None:
        assert np.isfinite(out)


@FAST
@given(u=any_array(), steps=st.one_of(st.none(), st.integers(-2, 5)))
@example(u=np.zeros((4, 1)), steps=None)
@example(u=np.array([[0.0], [np.nan]]), steps=None)
@example(u=np.array([[np.inf], [0.0], [0.0]]), steps=3)
def test_forecast_on_arbitrary_inputs(u, steps):
    # the model has inputs, so u_future (T, 1) is required, and steps, where given, must be its length
    bad = array_error(as_column(u, 1), (2,)) or np.shape(as_column(u, 1))[1] != 1
    expected = "u_future" if bad else None if steps is None or steps == len(u) else "steps"
    out = outcome(MODEL.forecast, expected, u, num_samples=3, steps=steps)
    if out is not None:
        assert out.samples.shape == (3, len(u), 1) and np.all(np.isfinite(out.samples))


@FAST
@given(y=any_array(), seq_len=st.integers(-2, 12), stride=st.integers(-1, 4))
@example(y=np.zeros((5, 2)), seq_len=2, stride=2)
def test_windows_on_arbitrary_arrays(y, seq_len, stride):
    if seq_len < 1:
        expected = "seq_len"
    elif stride < 1:
        expected = "stride"
    elif not is_real(y) or np.ndim(y) != 2:
        expected = "y"
    elif seq_len > np.shape(y)[0]:
        expected = "seq_len"
    else:
        expected = None
    out = outcome(windows, expected, y, None, seq_len, stride)
    if out is not None:
        T = np.shape(y)[0]
        assert out[0].shape == (len(range(0, T - seq_len + 1, stride)) + ((T - seq_len) % stride != 0), seq_len,
                                np.shape(y)[1])
        assert out[1] is None


@FAST
@given(y=any_array(), u=st.one_of(st.none(), any_array()))
@example(y=np.zeros((6, 1)), u=np.zeros((6, 1)))
@example(y=np.zeros((6, 1)), u=None)
@example(y=np.zeros((2, 1, 1)), u=None)
def test_filter_on_arbitrary_arrays(y, u):
    out = outcome(MODEL.filter, one_sequence_error(y, u), y, u, num_particles=20)
    if out is not None:
        assert np.all(np.isfinite(out.means))


@FAST
@given(name=st.one_of(st.text(max_size=12), st.integers(), st.none()))
def test_unknown_dataset_names(name):
    if name in gp.datasets.DATASET_NAMES:
        return
    with pytest.raises(ValueError, match="^name:"):
        gp.datasets.load(name, data_dir="/nonexistent")


@FAST
@given(params=st.dictionaries(st.sampled_from(sorted(MODEL.get_learned_params())), any_array(), max_size=3))
@example(params={})
@example(params={"A": np.ones((2, 2), dtype=np.int64)})
@example(params={"A": np.full((2, 2), np.nan)})
@example(params={"A": np.array([[0.0, np.inf], [0.0, 0.0]])})
def test_set_learned_params_with_arbitrary_arrays(params):
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_latent=2, num_inducing=4, seed=0)
    before = model.get_learned_params()
    full = dict(before, **params)
    expected = None
    for name, shape in model.param_shapes().items():  # checked in this order
        value = full[name]
        if array_error(value, (len(shape),)) or np.shape(value) != shape:
            expected = f"params[{name!r}]"
            break
    outcome(model.set_learned_params, expected, full)
    after = model.get_learned_params()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name] if expected else full[name])
