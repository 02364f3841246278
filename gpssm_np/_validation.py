"""Input checks at the public API: every failure is a ValueError naming the argument and what was expected (and
:func:`positive_count`, the command lines' type of a count, whose failure argparse reports with the option's name)."""
import argparse
import inspect
import math
import numbers

import numpy as np

#: The largest magnitude a data array or an initial value may hold: squares overflow float64 (1.8e308) beyond
#: 1.3e154, and 1e150 leaves room for sums of squares (variances, standardisation).
LARGEST_VALUE = 1e150


def positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def int_at_least(value, name, minimum, what):
    """``value`` as an int; ValueError naming ``name`` unless it is an integer of at least ``minimum``. ``what``
    says what is counted and why the bound holds (the message reads "expected at least {minimum} {what}")."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected at least {minimum} {what}, got {value!r}")
    return int(value)


def non_negative_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    return int(value)


def seed(value, name="seed"):
    """A random seed: a non-negative integer (dimensions and orders use :func:`non_negative_int`)."""
    return non_negative_int(value, name)


def boolean(value, name):
    """``value`` as a bool; ValueError naming ``name`` unless it is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def positive_count(text):
    """A command-line count that must be positive (``--seeds``, ``--jobs``, ``reproduce --epochs``, the experiment
    scripts' ``--seeds``): an argparse type, its error raised as argparse's so that argparse names the option (0
    seeds would run nothing and write empty tables)."""
    try:
        return positive_int(int(text), "count")
    except ValueError:  # not an integer, or below 1
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None


def unused_particle_options(num_particles, seed_value):
    """Check the particle filter's ``num_particles`` (None or a positive integer) and ``seed`` where an exact filter
    (Kalman, ARX) takes them for the common surface and does not use them: a bad value is refused all the same."""
    if num_particles is not None:
        positive_int(num_particles, "num_particles")
    seed(seed_value)


def unit_interval(value, name):
    """``value`` as a float; ValueError naming ``name`` unless it is a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: expected a number in [0, 1], got {value!r}")
    return float(value)


def positive_float(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a positive finite number, got {value!r}")
    return float(value)


def non_negative_float(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: expected a non-negative finite number, got {value!r}")
    return float(value)


def fraction(value, name):
    """``value`` as a float; ValueError naming ``name`` unless it is a real number strictly between 0 and 1 (a share,
    a probability, a decay)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name}: expected a number in (0, 1), got {value!r}")
    return float(value)


def keywords(values, constructor=None, allowed=(), owner=None, also=()):
    """``values`` (the keyword arguments a function collected in ``**kwargs``) if each is named in ``allowed``;
    else ValueError naming the unknown ones and the valid ones: the named parameters of ``constructor`` (a class's
    ``__init__``, whose other keywords end up in ``values``), then ``also`` (named parameters of the function that
    collected ``values``), then ``allowed``. The message names ``owner``
    (default: the constructor's class), so a typo reads "n_latent: unknown keyword argument of DSSM; expected one
    of dim_x, ...", not Python's TypeError."""
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        named = [] if constructor is None else [
            name for name, p in list(inspect.signature(constructor).parameters.items())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        owner = owner or constructor.__qualname__.split(".")[0]
        raise ValueError(f"{', '.join(unknown)}: unknown keyword argument{'s' if len(unknown) > 1 else ''} of "
                         f"{owner}; expected one of {', '.join(named + list(also) + list(allowed))}")
    return values


def rectangular(x, name):
    """``x`` as an array (a subclass such as ``np.matrix``, whose reductions keep two dimensions, as a plain one);
    nested lists of unequal lengths (which NumPy refuses) are a ValueError naming ``name``."""
    if type(x) is np.ndarray:
        return x
    if isinstance(x, np.ndarray):
        return np.asarray(x).view(np.ndarray)
    try:
        return np.asarray(x)
    except ValueError:
        raise ValueError(f"{name}: expected an array of shape (T, d) (rows of equal length), got nested sequences of "
                         "unequal lengths") from None


def finite_array(x, name, ndims, nan_hint="", allow_nan=False):
    """``x`` as a float64 array with a number of dimensions in ``ndims`` and only finite values."""
    raw = rectangular(x, name)
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected a real numeric array, got dtype {raw.dtype} ({type(x).__name__})")
    arr = raw.astype(np.float64, copy=False)
    if arr.ndim not in ndims:
        raise ValueError(f"{name}: expected an array with {' or '.join(map(str, ndims))} dimensions, "
                         f"got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if allow_nan and np.isinf(arr).any():
        raise ValueError(f"{name}: contains inf (NaN marks a missing value here; inf is not one)")
    if not allow_nan and not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or inf{nan_hint}")
    return bounded(arr, name)


def bounded(arr, name):
    """``arr`` (a float array) unless a finite value is beyond :data:`LARGEST_VALUE` in magnitude: then a ValueError
    naming ``name`` and the largest magnitude given (NaN and inf are the finite checks' to name)."""
    _refuse_beyond_largest(np.max(np.abs(arr), initial=0.0, where=np.isfinite(arr)), name)
    return arr


def _refuse_beyond_largest(largest, name):
    """ValueError naming ``name`` when ``largest`` (the largest finite magnitude given) is beyond
    :data:`LARGEST_VALUE`."""
    if largest > LARGEST_VALUE:
        raise ValueError(f"{name}: values up to {largest:.3g} in magnitude; beyond {LARGEST_VALUE:g} their squares "
                         "overflow float64 (variances, standardisation): rescale them")


def step_values(x, name, size, what, allow_nan=False):
    """One step's ``size`` values (e.g. an online filter's y_t or u_t, one per ``what``: "output" or "input") as a
    float64 array (size,). ``x`` must be a real numeric scalar or array with that many entries (of any shape, read
    in order), all finite (NaN admitted when ``allow_nan``) and at most :data:`LARGEST_VALUE` in magnitude, as
    :func:`finite_array` takes a whole series; a ValueError names ``name`` and what was expected. The checks run
    over the values as Python floats: for the few values of one step that is several times faster than a NumPy
    reduction."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf" or arr.size != size:
        raise ValueError(f"{name}: expected {size} real number(s), one per {what}, got {x!r}")
    arr = arr.astype(np.float64, copy=False).reshape(size)
    bad = math.isinf if allow_nan else (lambda v: not math.isfinite(v))
    values = arr.tolist()
    if any(map(bad, values)):
        raise ValueError(f"{name}: expected {size} finite number(s){' or NaN (missing)' if allow_nan else ''}, one "
                         f"per {what}, got {x!r}")
    _refuse_beyond_largest(max((abs(v) for v in values if v == v), default=0.0), name)  # v == v: not NaN
    return arr


def columns(x, dim, name):
    """``x`` unchanged, or a one-dimensional ``x`` (T,) as the column (T, 1) when ``dim`` = 1 (one output or one
    input, as scikit-learn takes a 1-D y); a 1-D ``x`` for ``dim`` > 1 is ambiguous and raises ValueError. The
    caller checks dtype and values (``finite_array``)."""
    if x is None or np.ndim(rectangular(x, name)) != 1:
        return x
    if dim != 1:
        raise ValueError(f"{name}: a one-dimensional array is one channel, but the model has {dim} (expected shape "
                         f"(T, {dim}))")
    return np.asarray(x)[:, None]  # dtype and values are the caller's check


def sequences(y, u, dim_y, dim_u, allow_missing=False, names=("y", "u")):
    """Check outputs y ((T, d_y) or (B, T, d_y); (T,) when d_y = 1) and inputs u (same leading shape; (T,) when
    d_u = 1; None when d_u = 0), named ``names`` in the messages (the caller's arguments, e.g. y_past and u_past).

    Returns y and u as float64 arrays of shape (B, T, d_y) and (B, T, d_u); u is (B, T, 0) when d_u = 0.
    ``allow_missing`` admits NaN (not inf) in y, for the particle filter. When d_y != d_u and y has d_u columns
    and u d_y, the ValueError says that y and u look swapped.
    """
    yn, un = names
    y = finite_array(columns(y, dim_y, yn), yn, (2, 3),
                     "; NaN is read as a missing output only by the models' filters and forecasts "
                     "(model.filter, online_filter, forecast's y_past): remove or impute it here",
                     allow_nan=allow_missing)
    given = y.shape  # for the messages: the shape the caller passed, before the batch axis is added
    if y.ndim == 2:
        y = y[None]
    u = columns(u, dim_u, un)
    if len(given) == 3 and given[0] > 1 and u is not None and np.ndim(rectangular(u, un)) == 2:
        # said here, or the mismatch below would name u for what is most often a y of shape (T, 1, d_y)
        raise ValueError(f"{yn}: shape {given} reads as {given[0]} sequences of {given[1]} step(s), but {un} "
                         f"(shape {np.shape(u)}) is one sequence; give one sequence as ({given[0] * given[1]}, "
                         f"{dim_y}) or {un} as ({given[0]}, {given[1]}, {dim_u})")
    if y.shape[2] == dim_u != dim_y and u is not None and np.shape(u)[-1:] == (dim_y,):
        raise ValueError(f"{yn}, {un}: {yn} has shape {y.shape[1:]} and {un} {np.shape(u)[-2:]}, but the model has "
                         f"dim_y = {dim_y} and dim_u = {dim_u}: {yn} and {un} look swapped; the outputs come first, "
                         "as in fit(y, u)")
    if y.shape[2] != dim_y:
        raise ValueError(f"{yn}: expected dim_y = {dim_y} columns (last axis), got shape {given}")
    return y, inputs(u, y.shape[:2], dim_u, yn, un)


def one_sequence(y, u, dim_y, dim_u, allow_missing=False, names=("y", "u")):
    """:func:`sequences` for a method that reads one sequence (a filter, a smoother, a forecast's past): y (T, d_y)
    and u (T, d_u) as float64 arrays; several sequences (B, T, d_y) with B > 1, or a list of them, are a ValueError
    naming ``names[0]`` (the method would otherwise read the first alone)."""
    if isinstance(y, (list, tuple)) and len(y) > 1 and all(np.ndim(rectangular(yi, names[0])) == 2 for yi in y):
        raise ValueError(f"{names[0]}: expected one sequence (T, {dim_y}), got a list of {len(y)} sequences; give "
                         "each sequence in a call of its own")
    shape = rectangular(y, names[0]).shape  # y itself goes on, so that a message names the type given
    if len(shape) == 3 and shape[0] != 1:  # said before u is matched to y's shape, whose message would name u
        raise ValueError(f"{names[0]}: expected one sequence (T, {dim_y}), got {shape[0]} of them, shape {shape}; "
                         "give each sequence in a call of its own")
    y, u = sequences(y, u, dim_y, dim_u, allow_missing, names)
    return y[0], u[0]


def inputs(u, leading_shape, dim_u, matched="y", name="u"):
    """Check inputs u (named ``name`` in the messages) of shape leading_shape + (d_u,) (a missing leading batch axis
    is added); None, or an array of zero width, when d_u = 0. Returns a float64 array with the leading shape, of
    zero width when d_u = 0."""
    leading_shape = tuple(leading_shape)
    if dim_u == 0 and u is not None and np.shape(u) in (leading_shape + (0,), leading_shape[1:] + (0,)):
        u = None  # e.g. the (T, 0) inputs of a Dataset without inputs: nothing to check
    if u is None:
        if dim_u > 0:
            raise ValueError(f"{name}: the model has dim_u = {dim_u} inputs, got {name}=None (a model without inputs "
                             "is built with dim_u=0)")
        return np.zeros(leading_shape + (0,))
    u = finite_array(u, name, (len(leading_shape), len(leading_shape) + 1))
    given = u.shape  # for the message: the shape the caller passed
    if u.ndim == len(leading_shape):
        u = u[None]
    expected = leading_shape + (dim_u,)
    if u.shape != expected:
        if len(given) < len(expected) and leading_shape[0] == 1:  # one sequence: its shape as the caller wrote it
            expected = expected[1:]
        raise ValueError(f"{name}: expected shape {expected} to match {matched} and dim_u = {dim_u}, got {given}")
    return u


def x0(x0, dim_x):
    """``x0 = (mean, spread)`` checked: the mean (d_x,) and the variances (d_x,), non-negative, or a covariance
    matrix (d_x, d_x), symmetric positive semi-definite; returned as float64 arrays."""
    if not isinstance(x0, (tuple, list)) or len(x0) != 2:
        raise ValueError(f"x0: expected a pair (mean, var) or (mean, covariance), got {type(x0).__name__}")
    mean = finite_array(x0[0], "x0", (1,))
    spread = finite_array(x0[1], "x0", (1, 2))
    if mean.shape != (dim_x,) or spread.shape not in ((dim_x,), (dim_x, dim_x)):
        raise ValueError(f"x0: expected (mean ({dim_x},), var ({dim_x},) or covariance ({dim_x}, {dim_x})), got "
                         f"shapes {mean.shape} and {spread.shape}")
    if spread.ndim == 1 and np.any(spread < 0):
        raise ValueError("x0: the variances must be non-negative")
    # a round-off of the order of the largest entry is allowed: covariances computed in float64 carry it
    tolerance = 1e-10 * max(1.0, float(np.max(np.abs(spread))))
    if spread.ndim == 2 and (np.max(np.abs(spread - spread.T)) > tolerance
                             or np.linalg.eigvalsh(spread)[0] < -tolerance):
        raise ValueError("x0: the covariance must be a symmetric positive semi-definite matrix")
    return mean, spread
