r"""The nine real system-identification data sets on disk: locating, verifying and reading their files, and the
split and standardisation of the ODGPSSM / PR-SSM / RGP protocol (see ``shared/data/SOURCES.md``).

:func:`load` reads one of the paper's five, ``"actuator"``, ``"ballbeam"``, ``"drive"``, ``"dryer"``,
``"gas_furnace"``, or of the four multi-output plants, ``"cd_player_arm"``, ``"winding"``, ``"steamgen"``,
``"dryer2"`` (:data:`DATASET_FILES`), from disk (no downloads), checks its sha256, and applies the protocol:

* **split** -- the first ``N // 2`` samples are the training half, the rest the test half;
* **standardisation** -- u and y are z-scored separately with the mean and the *population* standard deviation
  (``ddof=0``, NumPy's default) of the training half only; the test half uses the same statistics.

The data folder is, in order of precedence: the ``data_dir`` argument, the environment variable
``GPSSM_NP_DATA``, or the per-user cache folder ``$XDG_CACHE_HOME/gpssm_np/data`` (``~/.cache/gpssm_np/data``
when ``XDG_CACHE_HOME`` is unset). Inside it a file is looked for as ``<dir>/<name>/<file>`` (the layout of
``shared/data``) and then as ``<dir>/<file>`` (the flat layout of RGP's ``datasets/system_identification``).
"""
import dataclasses
import hashlib
import logging
import os
from pathlib import Path
from typing import Optional, Tuple

import numpy as np

from ..units import Scaling, constant_columns

logger = logging.getLogger(__name__)

#: Environment variable naming the data folder.
DATA_ENV_VAR = "GPSSM_NP_DATA"

#: Where the paper's five files can be obtained (they are copied unchanged from this repository and folder).
DATA_URL = "https://github.com/zhenwendai/RGP (folder datasets/system_identification/, commit be679607)"
#: Where the four multi-output DaISy records can be obtained (copied unchanged from this repository's history).
MIMO_DATA_URL = "https://github.com/robotsorcerer/FARNN (folder data/, commit 9cfb82f2)"

#: Dataset name -> file path relative to the data folder.
DATASET_FILES = {
    "actuator": "actuator/actuator.mat",
    "ballbeam": "ballbeam/ballbeam.dat",
    "drive": "drive/drive.mat",
    "dryer": "dryer/dryer.dat",
    "gas_furnace": "gas_furnace/gas_furnace.csv",
    "cd_player_arm": "cd_player_arm/CD_player_arm.dat",
    "winding": "winding/winding.dat",
    "steamgen": "steamgen/steamgen.dat",
    "dryer2": "dryer2/dryer2.dat",
}

#: The multi-output plants (``shared/data/SOURCES.md`` sections 6-9): input columns, output columns of the
#: whitespace-separated file, and the channels' names.
MIMO_LAYOUT = {
    "cd_player_arm": ((0, 1), (2, 3), ("force 1", "force 2"), ("tracking 1", "tracking 2")),
    "winding": ((0, 1, 2, 3, 4), (5, 6), ("speed S1", "speed S2", "speed S3", "current I1*", "current I3*"),
                ("tension T1", "tension T3")),
    "steamgen": ((1, 2, 3, 4), (5, 6, 7, 8), ("fuel", "air", "level reference", "load disturbance"),
                 ("drum pressure", "excess oxygen", "drum water level", "steam flow")),
    "dryer2": ((1, 2, 3), (4, 5, 6), ("fuel flow", "exhaust fan speed", "raw material flow"),
               ("dry bulb temperature", "wet bulb temperature", "moisture content")),
}

#: The channels' names of the paper's five data sets (input, output; ``shared/data/SOURCES.md`` sections 1-5; the
#: drive's input is only described there as a PRBS of amplitude 1).
CHANNELS = {
    "actuator": (("valve opening",), ("oil pressure",)),
    "ballbeam": (("beam angle",), ("ball position",)),
    "drive": (("PRBS input",), ("pulley speed",)),
    "dryer": (("heater voltage",), ("outlet air temperature",)),
    "gas_furnace": (("methane feed rate",), ("CO2 concentration",)),
}

#: Expected sha256 of each file, from ``shared/data/SOURCES.md``.
DATASET_SHA256 = {
    "actuator": "35d1f95176afd856eb4fe0e2f87e3dff39657db8e6fcf7c531078c8f4eb571e4",
    "ballbeam": "e9c48a4f7474953969d4950b4ef72558084b1995f776792ac0cbc80550e6ff42",
    "drive": "47d0825678d854d8a1bbcfb0ad1188026b853f69beb2067ea00cfd88d13dc4ca",
    "dryer": "adcb2f5a1d9e174d08dd49f7f037626745b5e69cbda0bc1e8dca2a7c687d4538",
    "gas_furnace": "ce46e11490a11ac254a959d42d5858f66b3c8013a1b667e553b3d890c67e4d43",
    "cd_player_arm": "a2ef4bf51c3102487a0690c7a68d97f3b1966cd07319580011a97fc0af904eaa",
    "winding": "2c81e2760cd2360aa10d6cbd8fbc0c4c83f35dabefaa3e412e974d166413a9af",
    "steamgen": "7f1e66031197c9502c7c7583b313b6349b7da678644410f4902d18b743eabc23",
    "dryer2": "0b3a3d6341212c9919a60a8ac06c1bd6069f055f4d72bc27da767f66a47cafc1",
}

DATASET_NAMES = tuple(DATASET_FILES)


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is not in the data folder; the message says where it was looked for and how to fix it."""


def _readonly(a):
    a = np.array(a, dtype=np.float64)  # always a fresh copy, so freezing it cannot affect the caller
    a.setflags(write=False)
    return a


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A series split into a training and a test part and standardised with the training part's statistics: one
    of the real benchmarks (:func:`load`, split in halves) or your own data (:func:`gpssm_np.datasets.from_arrays`,
    :func:`gpssm_np.datasets.from_csv`, split at a fraction).

    All arrays are float64 and read-only. For the benchmarks ``T_train = N // 2`` and ``T_test = N - N // 2``
    (the paper's five have ``d_y = d_u = 1``, the multi-output plants more); ``d_u = 0`` for a series without
    inputs.

    Attributes
    ----------
    name : str
        Dataset name: one of :data:`DATASET_NAMES`, or the name given to ``from_arrays`` / ``from_csv``.
    y_train, u_train : ndarray, shapes (T_train, d_y) and (T_train, d_u)
        Standardised outputs and inputs of the training part (mean 0, population std 1 per column).
    y_test, u_test : ndarray, shapes (T_test, d_y) and (T_test, d_u)
        Standardised outputs and inputs of the test part (same statistics as the training part).
    y_mean, y_std : ndarray, shape (d_y,)
        Training-part mean and population standard deviation (``ddof=0``) of the raw outputs.
    u_mean, u_std : ndarray, shape (d_u,)
        The same for the raw inputs.
    y_raw, u_raw : ndarray, shapes (N, d_y) and (N, d_u)
        The full raw series, in original units.
    y_names, u_names : tuple of str or None
        Names of the output and input columns (the CSV header for ``from_csv``), None when unknown.
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
    y_names: Optional[Tuple[str, ...]] = None
    u_names: Optional[Tuple[str, ...]] = None

    def __repr__(self):
        """The name, the lengths of the two parts, the dimensions and the channel names (not the arrays)."""
        names = "".join(f", {k}={v!r}" for k, v in (("y_names", self.y_names), ("u_names", self.u_names)) if v)
        return (f"Dataset(name={self.name!r}, T_train={len(self.y_train)}, T_test={len(self.y_test)}, "
                f"d_y={self.y_train.shape[1]}, d_u={self.u_train.shape[1]}{names})")

    @property
    def scaling(self):
        """The standardisation of the data set as a ``units.Scaling`` (the training part's statistics): what a model
        fitted with ``standardize=True`` to the raw training part keeps in ``scaling_``."""
        return Scaling(self.y_mean, self.y_std, self.u_mean, self.u_std)

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
        return self.scaling.y_to_original(_last_axis(y_std_units, len(self.y_mean), "y_std_units"))

    def to_original_u(self, u_std_units):
        """Undo the input standardisation: ``u_std_units * u_std + u_mean``; shapes as :meth:`to_original_y`."""
        return self.scaling.u_to_original(_last_axis(u_std_units, len(self.u_mean), "u_std_units"))


def _last_axis(a, size, argname):
    """``a`` as a float64 array whose last axis has ``size`` entries; ValueError naming ``argname`` otherwise."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != size:
        raise ValueError(f"{argname}: expected an array whose last axis has length {size}, got shape {a.shape}")
    return a


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
    if isinstance(name, (str, os.PathLike)) and os.fspath(name).lower().endswith(".csv"):
        raise ValueError(f"name: {os.fspath(name)!r} is a CSV file, not one of the benchmark names; read your own "
                         "data with gpssm_np.datasets.from_csv(path, outputs=[...], inputs=[...])")
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
        f"The file can be obtained from {source_url(name)}."
    )


def source_url(name):
    """Where the file of data set ``name`` can be obtained: :data:`DATA_URL` for the paper's five,
    :data:`MIMO_DATA_URL` for the multi-output records."""
    return MIMO_DATA_URL if name in MIMO_LAYOUT else DATA_URL


def _verify_sha256(name, path):
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    expected = DATASET_SHA256[name]
    if digest != expected:
        raise ValueError(f"dataset {name!r}: file {path} is corrupted or not the expected version "
                         f"(sha256 {digest}, expected {expected}); replace it with a fresh copy from "
                         f"{source_url(name)}")


def _read_raw(name, path):
    """(u, y) raw arrays of shape (N, d_u), (N, d_y) in float64 (native byte order)."""
    if name in MIMO_LAYOUT:
        inputs, outputs = MIMO_LAYOUT[name][:2]
        table = np.loadtxt(path)
        return table[:, list(inputs)], table[:, list(outputs)]
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


def _standardise(train, test, argname, names=None):
    """(train, test) z-scored with the training part's mean and population std, and those statistics; ValueError
    naming the column (its name from ``names``, else its index) when the training part is constant in it."""
    mean = train.mean(axis=0)
    std = train.std(axis=0)  # population std, ddof=0
    constant = constant_columns(train, std)
    if np.any(constant):
        column = int(np.flatnonzero(constant)[0])
        label = repr(names[column]) if names is not None else str(column)
        hint = "; leave it out of the inputs (it tells the models nothing there)" if argname == "u" else ""
        raise ValueError(f"{argname}: column {label} is constant in the training part, so it cannot be "
                         f"standardised{hint}")
    return (train - mean) / std, (test - mean) / std, mean, std


def load(name, data_dir=None):
    """Load a real benchmark, split it in halves and standardise it with training-half statistics.

    Parameters
    ----------
    name : str
        One of ``"actuator"``, ``"ballbeam"``, ``"drive"``, ``"dryer"``, ``"gas_furnace"`` (the paper's five), or the
        multi-output plants ``"cd_player_arm"``, ``"winding"``, ``"steamgen"``, ``"dryer2"``.
    data_dir : str or os.PathLike or None
        Data folder; when None, ``$GPSSM_NP_DATA`` and then :func:`default_data_dir` are used.

    Returns
    -------
    Dataset
        N (train / test): actuator 1024 (512 / 512), ballbeam 1000 (500 / 500), drive 500 (250 / 250),
        dryer 1000 (500 / 500), gas_furnace 296 (148 / 148), d_y = d_u = 1; cd_player_arm 2048 (d_u = d_y = 2),
        winding 2500 (d_u = 5, d_y = 2), steamgen 9600 (d_u = d_y = 4), dryer2 867 (d_u = d_y = 3); every one
        with its channels' names in ``y_names`` and ``u_names`` (:data:`CHANNELS`, :data:`MIMO_LAYOUT`). Every
        channel is z-scored with the training half's statistics.

    Raises
    ------
    ValueError
        Unknown ``name`` (a path ending in ``.csv`` is pointed to :func:`gpssm_np.datasets.from_csv`), or the file's
        sha256 does not match :data:`DATASET_SHA256` (corrupted file).
    DatasetNotFoundError
        (a FileNotFoundError) The file is missing; the message lists the paths tried and how to provide it.
    """
    path = dataset_path(name, data_dir)
    _verify_sha256(name, path)
    u_raw, y_raw = _read_raw(name, path)
    logger.debug("loaded %s from %s: N=%d, %d training samples", name, path, y_raw.shape[0], y_raw.shape[0] // 2)
    names = MIMO_LAYOUT[name][2:] if name in MIMO_LAYOUT else CHANNELS[name]
    return split_dataset(name, y_raw, u_raw, y_raw.shape[0] // 2, y_names=names[1], u_names=names[0])


def split_dataset(name, y_raw, u_raw, n_train, y_names=None, u_names=None):
    """The :class:`Dataset` of the raw series ``y_raw`` (N, d_y), ``u_raw`` (N, d_u) (checked by the caller): the
    first ``n_train`` rows are the training part, the rest the test part, both z-scored with the training part's
    statistics; ``y_names``, ``u_names``: column names or None."""
    y_train, y_test, y_mean, y_std = _standardise(y_raw[:n_train], y_raw[n_train:], "y", y_names)
    u_train, u_test, u_mean, u_std = _standardise(u_raw[:n_train], u_raw[n_train:], "u", u_names)
    return Dataset(name=name, y_train=_readonly(y_train), u_train=_readonly(u_train), y_test=_readonly(y_test),
                   u_test=_readonly(u_test), y_mean=_readonly(y_mean), y_std=_readonly(y_std),
                   u_mean=_readonly(u_mean), u_std=_readonly(u_std), y_raw=_readonly(y_raw), u_raw=_readonly(u_raw),
                   y_names=None if y_names is None else tuple(y_names),
                   u_names=None if u_names is None else tuple(u_names))
