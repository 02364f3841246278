r"""Benchmark data: the five real system-identification sets, two synthetic generators, and windowing.

Real data (see ``shared/data/SOURCES.md``)
-------------------------------------------
:func:`load` reads one of ``"actuator"``, ``"ballbeam"``, ``"drive"``, ``"dryer"``, ``"gas_furnace"`` from
disk (no downloads), checks its sha256, and applies the ODGPSSM / PR-SSM / RGP protocol:

* **split** -- the first ``N // 2`` samples are the training half, the rest the test half;
* **standardisation** -- u and y are z-scored separately with the mean and the *population* standard deviation
  (``ddof=0``, NumPy's default) of the training half only; the test half uses the same statistics.

The data folder is, in order of precedence: the ``data_dir`` argument, the environment variable
``GPSSM_NP_DATA``, or the per-user cache folder ``$XDG_CACHE_HOME/gpssm_np/data`` (``~/.cache/gpssm_np/data``
when ``XDG_CACHE_HOME`` is unset). Inside it a file is looked for as ``<dir>/<name>/<file>`` (the layout of
``shared/data``) and then as ``<dir>/<file>`` (the flat layout of RGP's ``datasets/system_identification``).

Synthetic data
--------------
:func:`car_tracking` (Sarkka 2013, Example 4.3, a linear-Gaussian constant-velocity model) and :func:`kink`
(the 1-D kink transition of Ialongo et al. 2019). Both use the time convention: ``x_0`` given,
``x_t = f(x_{t-1}) + w_t`` and ``y_t = h(x_t) + r_t`` for ``t = 1..T``, so ``x`` has ``T + 1`` rows (row 0 is
``x_0``) and ``y`` has ``T`` rows (row ``t - 1`` is ``y_t``).

Windowing
---------
:func:`windows` cuts training / test windows the way the authors' ``generate_batches`` does: starts every
``stride`` steps, plus one tail window ending at the last sample when ``(T - seq_len) % stride != 0``.
"""
import dataclasses
import hashlib
import logging
import os
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

#: Environment variable naming the data folder.
DATA_ENV_VAR = "GPSSM_NP_DATA"

#: Where the five files can be obtained (they are copied unchanged from this repository and folder).
DATA_URL = "https://github.com/zhenwendai/RGP (folder datasets/system_identification/, commit be679607)"

#: Dataset name -> file path relative to the data folder.
DATASET_FILES = {
    "actuator": "actuator/actuator.mat",
    "ballbeam": "ballbeam/ballbeam.dat",
    "drive": "drive/drive.mat",
    "dryer": "dryer/dryer.dat",
    "gas_furnace": "gas_furnace/gas_furnace.csv",
}

#: Expected sha256 of each file, from ``shared/data/SOURCES.md``.
DATASET_SHA256 = {
    "actuator": "35d1f95176afd856eb4fe0e2f87e3dff39657db8e6fcf7c531078c8f4eb571e4",
    "ballbeam": "e9c48a4f7474953969d4950b4ef72558084b1995f776792ac0cbc80550e6ff42",
    "drive": "47d0825678d854d8a1bbcfb0ad1188026b853f69beb2067ea00cfd88d13dc4ca",
    "dryer": "adcb2f5a1d9e174d08dd49f7f037626745b5e69cbda0bc1e8dca2a7c687d4538",
    "gas_furnace": "ce46e11490a11ac254a959d42d5858f66b3c8013a1b667e553b3d890c67e4d43",
}

DATASET_NAMES = tuple(DATASET_FILES)


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is not in the data folder; the message says where it was looked for and how to fix it."""


def _readonly(a):
    a = np.array(a, dtype=np.float64)  # always a fresh copy, so freezing it cannot affect the caller
    a.setflags(write=False)
    return a


@dataclasses.dataclass(frozen=True, eq=False)
class Dataset:
    """One real benchmark, split in halves and standardised with training-half statistics.

    All arrays are float64 and read-only. ``T_train = N // 2`` and ``T_test = N - N // 2``; ``d_y = d_u = 1``
    for the five benchmarks.

    Attributes
    ----------
    name : str
        Dataset name, one of :data:`DATASET_NAMES`.
    y_train, u_train : ndarray, shapes (T_train, d_y) and (T_train, d_u)
        Standardised outputs and inputs of the training half (mean 0, population std 1 per column).
    y_test, u_test : ndarray, shapes (T_test, d_y) and (T_test, d_u)
        Standardised outputs and inputs of the test half (same statistics as the training half).
    y_mean, y_std : ndarray, shape (d_y,)
        Training-half mean and population standard deviation (``ddof=0``) of the raw outputs.
    u_mean, u_std : ndarray, shape (d_u,)
        The same for the raw inputs.
    y_raw, u_raw : ndarray, shapes (N, d_y) and (N, d_u)
        The full raw series, in original units.
    """

    name: str
    y_train: np.ndarray
    u_train: np.ndarray
    y_test: np.ndarray
    u_test: np.ndarray
    y_mean: np.ndarray
    y_std: np.ndarray
    u_mean: np.ndarray
    u_std: np.ndarray
    y_raw: np.ndarray
    u_raw: np.ndarray

    def to_original_y(self, y_std_units):
        """Undo the output standardisation: ``y_std_units * y_std + y_mean``.

        Parameters
        ----------
        y_std_units : array_like, shape (..., d_y)
            Outputs on the standardised scale (any leading shape; the last axis is the output dimension).

        Returns
        -------
        ndarray, shape (..., d_y)
            Outputs in original units.
        """
        return _unstandardise(y_std_units, self.y_mean, self.y_std, "y_std_units")

    def to_original_u(self, u_std_units):
        """Undo the input standardisation: ``u_std_units * u_std + u_mean``; shapes as :meth:`to_original_y`."""
        return _unstandardise(u_std_units, self.u_mean, self.u_std, "u_std_units")


def _unstandardise(a, mean, std, argname):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != mean.shape[0]:
        raise ValueError(f"{argname}: expected an array whose last axis has length {mean.shape[0]}, "
                         f"got shape {a.shape}")
    return a * std + mean


# ---------------------------------------------------------------------------------------------------------------
# Locating, verifying and reading the files
# ---------------------------------------------------------------------------------------------------------------
def default_data_dir():
    """The per-user data folder: ``$XDG_CACHE_HOME/gpssm_np/data``, else ``~/.cache/gpssm_np/data``.

    Returns
    -------
    pathlib.Path
    """
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(cache) if cache else Path.home() / ".cache"
    return base / "gpssm_np" / "data"


def resolve_data_dir(data_dir=None):
    """The data folder to use and why: the argument, else ``$GPSSM_NP_DATA``, else :func:`default_data_dir`.

    Parameters
    ----------
    data_dir : str or os.PathLike or None

    Returns
    -------
    path : pathlib.Path
    origin : str
        Human-readable description of where ``path`` came from (used in error messages).
    """
    if data_dir is not None:
        if not isinstance(data_dir, (str, os.PathLike)):
            raise ValueError(f"data_dir: expected a str or os.PathLike path or None, got {type(data_dir).__name__}")
        return Path(data_dir).expanduser(), "the data_dir argument"
    env = os.environ.get(DATA_ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser(), f"the environment variable {DATA_ENV_VAR}"
    return default_data_dir(), f"the default per-user folder ({DATA_ENV_VAR} is not set)"


def _check_name(name):
    if not isinstance(name, str) or name not in DATASET_FILES:
        raise ValueError(f"name: expected one of {', '.join(repr(n) for n in DATASET_NAMES)}, got {name!r}")


def dataset_path(name, data_dir=None):
    """Path of the file of dataset ``name``; raises :class:`DatasetNotFoundError` if it is in neither layout.

    Parameters
    ----------
    name : str
        One of :data:`DATASET_NAMES`.
    data_dir : str or os.PathLike or None
        See :func:`resolve_data_dir`.

    Returns
    -------
    pathlib.Path
    """
    _check_name(name)
    root, origin = resolve_data_dir(data_dir)
    rel = Path(DATASET_FILES[name])
    candidates = [root / rel, root / rel.name]
    for path in candidates:
        if path.is_file():
            return path
    looked = "\n".join(f"  {p}" for p in candidates)
    raise DatasetNotFoundError(
        f"dataset {name!r}: file not found. Looked at:\n{looked}\n"
        f"(data folder {root}, taken from {origin}).\n"
        f"Put the file at {root / rel}, or pass data_dir=..., or set the environment variable {DATA_ENV_VAR} "
        f"to the folder holding it, e.g. `export {DATA_ENV_VAR}=/path/to/data`.\n"
        f"The file can be obtained from {DATA_URL}."
    )


def _verify_sha256(name, path):
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    expected = DATASET_SHA256[name]
    if digest != expected:
        raise ValueError(f"dataset {name!r}: file {path} is corrupted or not the expected version "
                         f"(sha256 {digest}, expected {expected}); replace it with a fresh copy from {DATA_URL}")


def _read_raw(name, path):
    """(u, y) raw arrays of shape (N, 1) in float64 (native byte order)."""
    if path.suffix == ".mat":
        from scipy.io import loadmat

        raw = loadmat(str(path))
        u_key, y_key = ("u", "p") if name == "actuator" else ("u1", "z1")
        u, y = raw[u_key], raw[y_key]
    else:
        kwargs = {"skiprows": 1, "delimiter": ","} if path.suffix == ".csv" else {}
        table = np.loadtxt(path, **kwargs)
        u, y = table[:, 0], table[:, 1]
    return np.asarray(u, dtype=np.float64).reshape(-1, 1), np.asarray(y, dtype=np.float64).reshape(-1, 1)


def _standardise(train, test, argname):
    mean = train.mean(axis=0)
    std = train.std(axis=0)  # population std, ddof=0
    if np.any(std == 0.0):
        raise ValueError(f"{argname}: the training half is constant in some column, so it cannot be standardised")
    return (train - mean) / std, (test - mean) / std, mean, std


def load(name, data_dir=None):
    """Load a real benchmark, split it in halves and standardise it with training-half statistics.

    Parameters
    ----------
    name : str
        One of ``"actuator"``, ``"ballbeam"``, ``"drive"``, ``"dryer"``, ``"gas_furnace"``.
    data_dir : str or os.PathLike or None
        Data folder; when None, ``$GPSSM_NP_DATA`` and then :func:`default_data_dir` are used.

    Returns
    -------
    Dataset
        N (train / test): actuator 1024 (512 / 512), ballbeam 1000 (500 / 500), drive 500 (250 / 250),
        dryer 1000 (500 / 500), gas_furnace 296 (148 / 148); d_y = d_u = 1.

    Raises
    ------
    ValueError
        Unknown ``name``, or the file's sha256 does not match :data:`DATASET_SHA256` (corrupted file).
    DatasetNotFoundError
        (a FileNotFoundError) The file is missing; the message lists the paths tried and how to provide it.
    """
    path = dataset_path(name, data_dir)
    _verify_sha256(name, path)
    u_raw, y_raw = _read_raw(name, path)
    n_train = y_raw.shape[0] // 2
    y_train, y_test, y_mean, y_std = _standardise(y_raw[:n_train], y_raw[n_train:], "y")
    u_train, u_test, u_mean, u_std = _standardise(u_raw[:n_train], u_raw[n_train:], "u")
    logger.debug("loaded %s from %s: N=%d, %d training samples", name, path, y_raw.shape[0], n_train)
    return Dataset(name=name, y_train=_readonly(y_train), u_train=_readonly(u_train), y_test=_readonly(y_test),
                   u_test=_readonly(u_test), y_mean=_readonly(y_mean), y_std=_readonly(y_std),
                   u_mean=_readonly(u_mean), u_std=_readonly(u_std), y_raw=_readonly(y_raw), u_raw=_readonly(u_raw))


# ---------------------------------------------------------------------------------------------------------------
# Synthetic generators
# ---------------------------------------------------------------------------------------------------------------
def _check_positive_int(value, argname):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{argname}: expected a positive integer, got {value!r}")
    return int(value)


def _check_real(value, argname, *, positive):
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
    if not ok or not np.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{argname}: expected a finite {'positive' if positive else 'non-negative'} number, "
                         f"got {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True, eq=False)
class CarTracking:
    """A simulated car-tracking trajectory (Sarkka 2013, Example 4.3); see :func:`car_tracking`.

    Attributes
    ----------
    x : ndarray, shape (T + 1, 4)
        States ``[p1, p2, v1, v2]``; row 0 is ``x_0``, row t is ``x_t``.
    y : ndarray, shape (T, 2)
        Noisy positions; row ``t - 1`` is ``y_t = H x_t + r_t``.
    x0 : ndarray, shape (4,)
        Initial state.
    F : ndarray, shape (4, 4)
        Transition matrix.
    Q : ndarray, shape (4, 4)
        Process-noise covariance.
    H : ndarray, shape (2, 4)
        Observation matrix ``[I_2, 0]``.
    R : ndarray, shape (2, 2)
        Observation-noise covariance ``obs_std**2 I_2``.
    dt : float
        Sampling interval.
    u : None
        The model has no control inputs.
    """

    x: np.ndarray
    y: np.ndarray
    x0: np.ndarray
    F: np.ndarray
    Q: np.ndarray
    H: np.ndarray
    R: np.ndarray
    dt: float
    u: None = None


def car_tracking(T=120, seed=0, dt=0.1, q=1.0, obs_std=0.5):
    r"""Simulate the constant-velocity car model of Sarkka (2013), Example 4.3.

    State ``x = [p1, p2, v1, v2]``, ``x_0 = [0, 0, 1, -1]``, and for ``t = 1..T``::

        x_t = F x_{t-1} + w_t,   w_t ~ N(0, Q)
        y_t = H x_t + r_t,       r_t ~ N(0, obs_std^2 I_2)

        F = [[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]],   H = [I_2, 0]
        Q = q [[dt^3/3, 0, dt^2/2, 0], [0, dt^3/3, 0, dt^2/2], [dt^2/2, 0, dt, 0], [0, dt^2/2, 0, dt]]

    Parameters
    ----------
    T : int
        Number of transitions and observations (the ODGPSSM paper's car-tracking run uses 120).
    seed : int or None
        Seed of ``numpy.random.default_rng``; equal seeds give equal trajectories.
    dt : float
        Sampling interval, > 0.
    q : float
        Spectral density of the continuous-time white-noise acceleration, >= 0.
    obs_std : float
        Observation-noise standard deviation, >= 0.

    Returns
    -------
    CarTracking
        ``x`` of shape (T + 1, 4) including ``x_0``, ``y`` of shape (T, 2), and the model matrices.
    """
    T = _check_positive_int(T, "T")
    dt = _check_real(dt, "dt", positive=True)
    q = _check_real(q, "q", positive=False)
    obs_std = _check_real(obs_std, "obs_std", positive=False)
    rng = np.random.default_rng(seed)

    eye2 = np.eye(2)
    F = np.block([[eye2, dt * eye2], [np.zeros((2, 2)), eye2]])
    Q_unit = np.kron(np.array([[dt**3 / 3.0, dt**2 / 2.0], [dt**2 / 2.0, dt]]), eye2)  # Q for q = 1
    H = np.hstack([eye2, np.zeros((2, 2))])
    R = obs_std**2 * eye2
    x0 = np.array([0.0, 0.0, 1.0, -1.0])

    w = np.sqrt(q) * rng.standard_normal((T, 4)) @ np.linalg.cholesky(Q_unit).T
    r = obs_std * rng.standard_normal((T, 2))
    x = np.empty((T + 1, 4))
    x[0] = x0
    for t in range(1, T + 1):
        x[t] = F @ x[t - 1] + w[t - 1]
    y = x[1:] @ H.T + r
    return CarTracking(x=x, y=y, x0=x0, F=F, Q=q * Q_unit, H=H, R=R, dt=dt)


def kink_function(x):
    r"""The kink transition ``f(x) = 0.8 + (x + 0.2) (1 - 5 / (1 + exp(-2 x)))`` (Ialongo et al. 2019).

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, same shape as ``x``
    """
    x = np.asarray(x, dtype=np.float64)
    # 5 / (1 + exp(-2x)) = 5 * sigmoid(2x); 0.5 * (1 + tanh(x)) is the overflow-free form of sigmoid(2x)
    return 0.8 + (x + 0.2) * (1.0 - 2.5 * (1.0 + np.tanh(x)))


@dataclasses.dataclass(frozen=True, eq=False)
class Kink:
    """A simulated kink-function trajectory; see :func:`kink`.

    Attributes
    ----------
    x : ndarray, shape (T + 1, 1)
        Latent states; row 0 is ``x_0``.
    y : ndarray, shape (T, 1)
        Observations; row ``t - 1`` is ``y_t = x_t + r_t``.
    x0 : float
        Initial state.
    process_noise_std, obs_noise_std : float
        Noise standard deviations used.
    u : None
        No control inputs.
    """

    x: np.ndarray
    y: np.ndarray
    x0: float
    process_noise_std: float
    obs_noise_std: float
    u: None = None

    #: The noise-free transition, :func:`kink_function`.
    kink_function = staticmethod(kink_function)


def kink(T=120, seed=0, process_noise_std=0.1, obs_noise_std=float(np.sqrt(0.1)), x0=0.5):
    r"""Simulate the 1-D kink-function state-space model used as a GPSSM benchmark (Ialongo et al. 2019).

    For ``t = 1..T``::

        x_t = f(x_{t-1}) + w_t,   w_t ~ N(0, process_noise_std^2)
        y_t = x_t + r_t,          r_t ~ N(0, obs_noise_std^2)

    with ``f`` = :func:`kink_function`. The defaults are a choice, not a value taken from the paper:
    process-noise variance 0.01 (std 0.1), observation-noise variance 0.1 (std ~0.316) and ``x_0 = 0.5``, the
    settings of common public GPSSM kink generators. The states then stay roughly within [-3, 1.5].

    Parameters
    ----------
    T : int
        Number of transitions and observations.
    seed : int or None
        Seed of ``numpy.random.default_rng``; equal seeds give equal trajectories.
    process_noise_std, obs_noise_std : float
        Noise standard deviations, >= 0.
    x0 : float
        Initial state.

    Returns
    -------
    Kink
        ``x`` of shape (T + 1, 1) including ``x_0`` and ``y`` of shape (T, 1).
    """
    T = _check_positive_int(T, "T")
    process_noise_std = _check_real(process_noise_std, "process_noise_std", positive=False)
    obs_noise_std = _check_real(obs_noise_std, "obs_noise_std", positive=False)
    if isinstance(x0, bool) or not isinstance(x0, (int, float, np.integer, np.floating)) or not np.isfinite(x0):
        raise ValueError(f"x0: expected a finite number, got {x0!r}")
    rng = np.random.default_rng(seed)
    w = process_noise_std * rng.standard_normal(T)
    r = obs_noise_std * rng.standard_normal(T)
    x = np.empty(T + 1)
    x[0] = x0
    for t in range(1, T + 1):
        x[t] = kink_function(x[t - 1]) + w[t - 1]
    y = x[1:] + r
    return Kink(x=x[:, None], y=y[:, None], x0=float(x0), process_noise_std=process_noise_std,
                obs_noise_std=obs_noise_std)


# ---------------------------------------------------------------------------------------------------------------
# Windowing
# ---------------------------------------------------------------------------------------------------------------
def window_starts(T, seq_len, stride=1):
    """Start indices of the windows :func:`windows` cuts from a sequence of length ``T``.

    Starts are ``0, stride, 2 stride, ...`` up to ``T - seq_len``, plus ``T - seq_len`` itself (a tail window
    ending at the last sample) when ``(T - seq_len) % stride != 0``.

    Parameters
    ----------
    T : int
        Sequence length.
    seq_len : int
        Window length, ``1 <= seq_len <= T``.
    stride : int
        Step between window starts, >= 1.

    Returns
    -------
    ndarray of int, shape (num_windows,)
    """
    T = _check_positive_int(T, "T")
    seq_len = _check_positive_int(seq_len, "seq_len")
    stride = _check_positive_int(stride, "stride")
    if seq_len > T:
        raise ValueError(f"seq_len: expected at most the sequence length {T}, got {seq_len}")
    last = T - seq_len
    starts = np.arange(0, last + 1, stride)
    if last % stride:
        starts = np.append(starts, last)
    return starts


def _as_sequence_list(a, argname):
    seqs = list(a) if isinstance(a, (list, tuple)) else [a]
    if not seqs:
        raise ValueError(f"{argname}: expected a 2-D array (T, d) or a non-empty list of them, got an empty list")
    out = []
    for i, s in enumerate(seqs):
        where = f"{argname}[{i}]" if isinstance(a, (list, tuple)) else argname
        if np.asarray(s).dtype.kind not in "biuf":
            raise ValueError(f"{where}: expected a real numeric array, got dtype {np.asarray(s).dtype}")
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2:
            raise ValueError(f"{where}: expected a 2-D array of shape (T, d), got shape {s.shape}")
        out.append(s)
    return out


def windows(y, u, seq_len, stride=1):
    """Cut overlapping windows of length ``seq_len`` from one sequence or a list of sequences.

    Window starts are given by :func:`window_starts` (including the tail window). For a list, the windows of
    each sequence are concatenated in order.

    Parameters
    ----------
    y : ndarray, shape (T, d_y), or list of ndarray, shapes (T_i, d_y)
        Output sequence(s).
    u : ndarray, shape (T, d_u), or list of ndarray, shapes (T_i, d_u), or None
        Input sequence(s) aligned with ``y`` (same lengths), or None for models without inputs.
    seq_len : int
        Window length, >= 1 and at most the length of every sequence.
    stride : int
        Step between window starts, >= 1.

    Returns
    -------
    y_windows : ndarray, shape (num_windows, seq_len, d_y)
    u_windows : ndarray, shape (num_windows, seq_len, d_u), or None when ``u`` is None
    """
    seq_len = _check_positive_int(seq_len, "seq_len")
    stride = _check_positive_int(stride, "stride")
    ys = _as_sequence_list(y, "y")
    if u is None:
        us = None
    else:
        us = _as_sequence_list(u, "u")
        if len(us) != len(ys):
            raise ValueError(f"u: expected {len(ys)} sequence(s) to match y, got {len(us)}")
    y_out, u_out = [], []
    for i, ys_i in enumerate(ys):
        T = ys_i.shape[0]
        if seq_len > T:
            raise ValueError(f"seq_len: {seq_len} is longer than sequence {i} of y, which has {T} steps")
        idx = window_starts(T, seq_len, stride)[:, None] + np.arange(seq_len)  # (num_windows_i, seq_len)
        y_out.append(ys_i[idx])
        if us is not None:
            if us[i].shape[0] != T:
                raise ValueError(f"u: sequence {i} has {us[i].shape[0]} steps but y's has {T}")
            u_out.append(us[i][idx])
    for name, parts in (("y", y_out), ("u", u_out)):
        if len({p.shape[-1] for p in parts}) > 1:
            raise ValueError(f"{name}: all sequences must have the same number of columns")
    return np.concatenate(y_out), (np.concatenate(u_out) if us is not None else None)
