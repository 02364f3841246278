"""The model-file format: one ``.npz`` archive per model, without pickle, written atomically and checksummed.

The models (for training checkpoints) and ``io`` (``save``/``load``, which knows the model classes) both use this
module; it knows no model class itself: readers pass the classes they accept, by the name stored in the file.

File layout (``FORMAT_VERSION`` 2), one ``np.savez_compressed`` archive:

``params/<name>``
    Each array of ``model.get_learned_params()`` (for the GP models and the DSSM the unconstrained parameters), float64.
``history/loss``
    ``model.history_`` as a 1-D float64 array (empty for an untrained model).
``extra/<name>``
    Further model state, ``model.extra_state()`` (name -> ndarray; e.g. the output scaling); restored by
    ``model.set_extra_state(dict)``.
``train/<name>``
    Only in training checkpoints (``fit(checkpoint=...)``): the optimizer's arrays (Adam moments).
``__meta__``
    A 0-d unicode array holding a JSON object with the keys ``format_version`` (int), ``class`` (e.g. ``"ODGPSSM"``),
    ``config`` (``model.get_config()``), ``gpssm_np_version``, ``numpy_version``, ``created_at`` (UTC, ISO 8601) and
    ``checksum``; and ``arguments``, the constructor arguments as given (``model.get_params()``, where they are plain
    JSON types: the loaded model's ``get_params()`` gives them, not the fitted configuration it is rebuilt from; absent
    from older files); checkpoints add ``training`` (epochs done, Adam step count and learning rate, the random
    generator's state, the training log, and for a checkpoint written inside an epoch the epoch's order of windows and
    the next position in it).

The metadata also records ``meta_checksum``, the hex SHA-256 of its own sorted-key JSON without that entry
(:func:`meta_checksum`), so that an edit of the configuration, the arguments or a state is refused; files written
before it existed lack it and are read without that check.

The checksum is the hex SHA-256 of the data entries (every entry but ``__meta__``) taken in sorted name order;
for each entry the hash is fed, in this order::

    name.encode("utf-8") + b"\\0"
    array.dtype.str.encode("ascii") + b"\\0"          # e.g. "<f8"
    ",".join(str(n) for n in array.shape).encode("ascii") + b"\\0"   # "" for a 0-d array
    np.ascontiguousarray(array).tobytes()             # C order

A state file (:func:`write_state`, the default fit's checkpoints, ``models/default_fit.py``) is the same kind of
archive without a model: numeric arrays under any names but ``__meta__`` (integer or float, as given), and a
``__meta__`` JSON object with the keys ``format_version``, ``kind`` (e.g. ``"default_fit_checkpoint"``),
``gpssm_np_version``, ``created_at``, ``checksum`` and ``state`` (plain JSON types).

Format 2 differs from format 1 only in the parameters some models hold: a model class that changed them converts
the parameters of an older file with ``params_from_format(params, version)`` (the GP models: a warm-started model's
q(x0), stored by its variances ``x0_var`` in format 1, is a full Gaussian ``x0_sqrt`` since format 2); a training
checkpoint whose parameters would need that is refused (its optimizer state is of the other parameters).

Files are written atomically (temporary file in the target's directory, fsync, ``os.replace``), so a failed
write leaves any previous file at the path intact. Reading uses ``allow_pickle=False`` and picks the model class
from the classes the caller passes, never by importing a name read from the file.
"""
import datetime
import hashlib
import json
import math
import os
import struct
import tempfile
import tokenize
import zipfile
import zlib
from functools import partial

import numpy as np

from ._version import __version__

__all__ = ["FORMAT_VERSION", "ModelFileError", "checksum", "meta_checksum", "check_path", "check_writable",
           "check_checkpoint", "read_checkpoint", "read_model", "read_state", "write_model", "write_state"]

#: Version of the file layout written by :func:`write_model` (``io.save``); :func:`read_model` (``io.load``) refuses
#: files with a larger number.
FORMAT_VERSION = 2

_META = "__meta__"
_PARAMS = "params/"
_HISTORY = "history/loss"
_EXTRA = "extra/"
_TRAIN = "train/"
_META_KEYS = ("format_version", "class", "config", "gpssm_np_version", "numpy_version", "created_at", "checksum")
# What reading a damaged archive can raise (truncated or corrupted zip, bad .npy header, object arrays, a seek
# to an offset out of range: OSError, caught only once the file has been opened, so not a missing file). numpy
# parses a header that Python's parser refuses once more through the tokenizer, whose TokenError is none of these.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, ValueError, EOFError, NotImplementedError, RuntimeError, struct.error,
                OverflowError, OSError, SyntaxError, tokenize.TokenError)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip starting with a member, an empty zip


class ModelFileError(ValueError):
    """The file is not a valid gpssm_np model file (damaged, modified, newer format or unknown model class)."""


def write_model(model, name, path, training=None):
    """Write ``model`` (parameters, configuration, training history, extra state) to ``path`` as class ``name``.

    ``training`` (used by ``fit`` for checkpoints) is a dict with "arrays" (name -> numeric array) and "info"
    (plain JSON types), stored under ``train/`` and in the metadata's ``training`` entry.

    ``path`` is used exactly as given (no ``.npz`` suffix is added). The write is atomic: on failure any previous
    file at ``path`` is left as it was. Returns ``path``.
    """
    path = check_path(path)
    arrays = {_PARAMS + key: np.array(value, dtype=np.float64) for key, value in model.get_learned_params().items()}
    arrays[_HISTORY] = np.asarray(model.history_, dtype=np.float64).reshape(-1)
    arrays.update(_extra_arrays(model))
    if training is not None:
        arrays.update({_TRAIN + key: np.asarray(value, dtype=np.float64) for key, value in training["arrays"].items()})
    meta = {"format_version": FORMAT_VERSION, "class": name, "config": model.get_config(),
            "gpssm_np_version": __version__, "numpy_version": np.__version__,
            "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "checksum": checksum(arrays)}
    arguments = _plain_arguments(model)
    if arguments is not None:
        meta["arguments"] = arguments
    if training is not None:
        meta["training"] = training["info"]
    try:
        text = json.dumps(dict(meta, meta_checksum=meta_checksum(meta)), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"model: get_config() must return plain JSON types, got an error: {err}") from None
    arrays[_META] = np.array(text)
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))
    return path


def _plain_arguments(model):
    """``model.get_params()`` (the constructor arguments as given) with NumPy values, at any depth (a dict of
    options), as Python numbers and lists, or None where one is no plain JSON type (an object): the file then keeps
    the configuration alone."""
    def plain(value):
        if isinstance(value, (np.ndarray, np.generic)):
            return value.tolist()
        if isinstance(value, dict):
            return {key: plain(v) for key, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    try:
        arguments = {name: plain(value) for name, value in model.get_params().items()}
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return arguments


def read_checkpoint(path, classes):
    """(model, training) from a checkpoint of the epoch loop (``fit(checkpoint=...)`` with ``epochs``; the
    default fit writes a state file, :func:`read_state`, that its own resume reads): the model as :func:`read_model`
    gives it, and a dict with "arrays" (the optimizer's arrays) and "info" (epochs done, Adam step and learning
    rate, random generator state, training log)."""
    model, meta, arrays = read_model(path, classes)
    if "training" not in meta:
        raise _invalid(path, "it is a model file without training state, not a checkpoint")
    stored = {key[len(_PARAMS):] for key in arrays if key.startswith(_PARAMS)}
    if stored != set(model.params):  # converted from an older format: the optimizer's state is of other parameters
        raise _invalid(path, f"it holds the parameters {sorted(stored - set(model.params))} of file format "
                             f"{meta['format_version']}, which this gpssm_np holds otherwise; a checkpoint resumes "
                             "only with the parameters it was written with: start the fit again")
    train = {key[len(_TRAIN):]: value for key, value in arrays.items() if key.startswith(_TRAIN)}
    return model, {"arrays": train, "info": meta["training"]}


def read_model(path, classes):
    """(model, meta, arrays) from a file written by :func:`write_model`; ``classes`` maps the class names the
    caller accepts to the classes. The model is ``classes[name](**config)`` with the stored parameters, history and
    extra state; arguments the class has renamed since (its ``RENAMED_ARGUMENTS``) are read under their new names.

    Raises FileNotFoundError if ``path`` does not exist and :class:`ModelFileError` (a ValueError) if the file
    is not a valid gpssm_np model file: not an npz archive, truncated or corrupted, modified since it was
    written (checksum), written by a newer gpssm_np, holding pickled data, or naming a class not in ``classes``.
    """
    path = check_path(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"path: no such file {os.fspath(path)!r}")
    meta, arrays = _read(path, classes)
    name = meta["class"]
    params = {key[len(_PARAMS):]: value for key, value in arrays.items() if key.startswith(_PARAMS)}
    extra = {key[len(_EXTRA):]: value for key, value in arrays.items() if key.startswith(_EXTRA)}
    renamed = getattr(classes[name], "RENAMED_ARGUMENTS", {})
    config, arguments = ({renamed.get(k, k): v for k, v in d.items()} if isinstance(d, dict) else d
                         for d in (meta["config"], meta.get("arguments")))
    try:
        model = classes[name](**config)
        if meta["format_version"] < FORMAT_VERSION and hasattr(model, "params_from_format"):
            params = model.params_from_format(params, meta["format_version"])
        model.set_learned_params(params)
    except (TypeError, ValueError) as err:
        raise _invalid(path, f"its configuration or parameters do not fit a {name}: {err}") from None
    model.history_ = [float(v) for v in arrays[_HISTORY]]
    if isinstance(arguments, dict):
        model.restore_arguments(arguments)
    if extra:
        try:
            model.set_extra_state(extra)
        except (KeyError, TypeError, ValueError) as err:
            raise _invalid(path, f"its extra state {sorted(extra)} does not fit a {name}: {err!r}") from None
    return model, meta, arrays


def write_state(path, kind, state, arrays):
    """Write a state file (module docstring) atomically: ``state`` (plain JSON types, finite floats) and ``arrays``
    (name -> numeric array, kept in their dtype) under the label ``kind``. Returns ``path``."""
    path = check_path(path)
    arrays = {str(key): np.asarray(value) for key, value in arrays.items()}
    for key, value in arrays.items():
        if key == _META or value.dtype.hasobject or value.dtype.kind not in "biuf":
            raise ValueError(f"arrays: entry {key!r} must be a numeric array under another name than {_META!r}, "
                             f"got dtype {value.dtype}")
    meta = {"format_version": FORMAT_VERSION, "kind": kind, "gpssm_np_version": __version__,
            "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "checksum": checksum(arrays), "state": state}
    meta["meta_checksum"] = meta_checksum(meta)
    arrays[_META] = np.array(json.dumps(meta, sort_keys=True, allow_nan=False))
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))
    return path


def read_state(path, kind):
    """(state, arrays) of a state file written by :func:`write_state` with the label ``kind``; FileNotFoundError
    for a missing file, :class:`ModelFileError` for a damaged or modified one, another kind or a newer format."""
    path = check_path(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"path: no such file {os.fspath(path)!r}")
    meta, arrays = _entries(path, _state_meta, "a state file")
    if not isinstance(meta, dict) or meta.get("kind") != kind:
        raise _invalid(path, f"it is not a {kind!r} file")
    if not isinstance(meta.get("format_version"), int) or meta["format_version"] > FORMAT_VERSION:
        raise _invalid(path, f"its format_version {meta.get('format_version')!r} is not one this gpssm_np reads "
                             f"(up to {FORMAT_VERSION})")
    _check_checksums(path, meta, arrays)
    return meta["state"], arrays


def meta_checksum(meta):
    """Hex SHA-256 of the metadata ``meta`` (a dict of plain JSON types) without its ``meta_checksum`` entry, as
    sorted-key JSON: a file records it so that an edit of its configuration, arguments or state is detected."""
    text = json.dumps({k: v for k, v in meta.items() if k != "meta_checksum"}, sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_checksums(path, meta, arrays):
    """ModelFileError unless the data entries match ``meta``'s checksum and the metadata its ``meta_checksum`` (files
    written before it existed have none and are read as before)."""
    if checksum(arrays) != meta.get("checksum"):
        raise _invalid(path, "its checksum does not match; the file is corrupted or was modified")
    if "meta_checksum" in meta and meta_checksum(meta) != meta["meta_checksum"]:
        raise _invalid(path, "its metadata checksum does not match; its configuration or state was modified")


def checksum(arrays):
    """Hex SHA-256 of ``arrays`` (name -> ndarray) as described in the module docstring (``__meta__`` skipped)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        if name == _META:
            continue
        array = np.asarray(arrays[name])
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(array.dtype.str.encode("ascii") + b"\0")
        digest.update(",".join(str(n) for n in array.shape).encode("ascii") + b"\0")
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


# -- writing ---------------------------------------------------------------------------------------------------
def check_path(path, name="path", example="model.npz"):
    """``path`` if it is a str or os.PathLike and not a folder, else a ValueError naming the argument ``name`` (a
    folder's temporary file would go to its parent, and the rename onto the folder fail) and suggesting the file
    ``example`` in the folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{name}: expected a str or os.PathLike file path, got {type(path).__name__}")
    if os.path.isdir(path):
        raise ValueError(f"{name}: {os.fspath(path)!r} is a folder; expected a file path in it, such as "
                         f"{os.path.join(os.fspath(path), example)!r}")
    return path


def check_writable(path, name="path", example="model.npz"):
    """:func:`check_path` for a file to be written: its folder must exist and be writable (a ValueError naming
    ``name`` now, not an OSError at the first write after minutes of work)."""
    folder = os.path.dirname(os.path.abspath(check_path(path, name, example)))
    if not os.path.isdir(folder):
        raise ValueError(f"{name}: the folder {folder!r} of {os.fspath(path)!r} does not exist; make it first")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{name}: cannot write to the folder {folder!r} of {os.fspath(path)!r}")
    return path


def check_checkpoint(checkpoint, resume):
    """A ``fit``'s ``checkpoint`` (None, or a file path :func:`check_writable` accepts) and ``resume``, which needs
    one; ValueError naming the argument otherwise."""
    if resume and checkpoint is None:
        raise ValueError("resume: needs checkpoint=path to resume from")
    if checkpoint is not None:
        check_writable(checkpoint, "checkpoint")


def _extra_arrays(model):
    state = model.extra_state()
    if not isinstance(state, dict):
        raise ValueError(f"model: extra_state() must return a dict name -> ndarray, got {type(state).__name__}")
    out = {}
    for key, value in state.items():
        array = np.asarray(value)
        if not isinstance(key, str) or not key or array.dtype.hasobject:
            raise ValueError(f"model: extra_state() entry {key!r} must be a non-empty name mapped to a numeric "
                             f"array, got dtype {array.dtype}")
        out[_EXTRA + key] = array
    return out


def atomic_write(path, write):
    """Write a file at ``path`` whole or not at all: ``write(f)`` fills a temporary binary file in the same folder,
    which is synced and then renamed onto ``path`` (a file there before is kept until the rename replaces it)."""
    target = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    except OSError as err:  # name the path the caller gave, not the temporary file next to it
        raise type(err)(err.errno, err.strerror, os.fspath(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_directory(directory):
    """Make the rename durable where the platform allows opening a directory (POSIX)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- reading ---------------------------------------------------------------------------------------------------
def _invalid(path, reason):
    return ModelFileError(f"path: {os.fspath(path)!r} is not a valid gpssm_np model file: {reason}")


def _entries(path, read_meta, what):
    """(meta, arrays) of the npz archive at ``path``: the zip's magic and every entry's declared size checked
    (:func:`_check_declared_sizes`), ``read_meta(path, npz)`` the metadata, the other entries the arrays. What cannot
    be read is a :class:`ModelFileError` that says it cannot be read as ``what`` (pickled data: that it is never
    loaded)."""
    with open(path, "rb") as f:
        if f.read(4) not in _ZIP_MAGIC:
            raise _invalid(path, "it is not an npz (zip) archive")
    try:
        with np.load(path, allow_pickle=False) as npz:
            _check_declared_sizes(path, npz)
            meta = read_meta(path, npz)
            arrays = {key: npz[key] for key in npz.files if key != _META}
    except ModelFileError:
        raise
    except _READ_ERRORS as err:  # json.JSONDecodeError is a ValueError
        if isinstance(err, ValueError) and ("pickle" in str(err) or "Object arrays" in str(err)):
            raise _invalid(path, "it contains pickled (object) data, which is never loaded") from None
        raise _invalid(path, f"it cannot be read as {what} ({type(err).__name__}: {err})") from None
    return meta, arrays


def _state_meta(path, npz):
    """The metadata of a state file (:func:`read_state` checks it): the JSON of its ``__meta__`` entry."""
    if _META not in npz.files:
        raise _invalid(path, f"it has no {_META!r} entry")
    return json.loads(str(npz[_META][()]))


def _read(path, classes):
    """(meta, arrays) from the file, checked for format version, class, layout and checksum."""
    meta, arrays = _entries(path, partial(_read_meta, classes=classes), "an npz archive")
    _check_checksums(path, meta, arrays)
    _check_layout(path, arrays)
    return meta, arrays


def _check_declared_sizes(path, npz):
    """Refuse an entry of the archive ``npz`` whose .npy header declares more data than the entry holds (a damaged
    shape), before numpy allocates an array of that shape: such a header asked for hundreds of GiB (MemoryError)."""
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    for info in npz.zip.infolist():
        with npz.zip.open(info) as f:
            reader = readers.get(np.lib.format.read_magic(f))
            if reader is None:  # a later .npy version: numpy's own reading checks it
                continue
            shape, _, dtype = reader(f)
        if math.prod(shape) * dtype.itemsize > info.file_size:
            raise _invalid(path, f"its entry {info.filename!r} declares shape {shape} of {dtype}, more data than its "
                                 f"{info.file_size} bytes")


def _read_meta(path, npz, classes):
    if _META not in npz.files:
        raise _invalid(path, f"it has no {_META!r} entry")
    entry = npz[_META]
    if entry.dtype.kind != "U" or entry.ndim != 0:
        raise _invalid(path, f"its {_META!r} entry is not a JSON string")
    try:
        meta = json.loads(str(entry[()]))
    except json.JSONDecodeError as err:
        raise _invalid(path, f"its {_META!r} entry is not valid JSON ({err})") from None
    if not isinstance(meta, dict) or any(key not in meta for key in _META_KEYS):
        raise _invalid(path, f"its {_META!r} entry must be a JSON object with the keys {list(_META_KEYS)}")
    version = meta["format_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _invalid(path, f"format_version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise _invalid(path, f"it was written by a newer gpssm_np (version {meta['gpssm_np_version']!r}, file "
                             f"format {version}; this gpssm_np reads format {FORMAT_VERSION} and older); upgrade "
                             f"gpssm_np to load it")
    if meta["class"] not in classes:
        raise _invalid(path, f"unknown model class {meta['class']!r}; known classes: {sorted(classes)}")
    if not isinstance(meta["config"], dict) or not isinstance(meta["checksum"], str):
        raise _invalid(path, "its 'config' must be a JSON object and its 'checksum' a string")
    return meta


def _check_layout(path, arrays):
    if _HISTORY not in arrays or arrays[_HISTORY].ndim != 1 or arrays[_HISTORY].dtype.kind != "f":
        raise _invalid(path, f"its {_HISTORY!r} entry is missing or not a 1-D float array")
    unknown = sorted(key for key in arrays if key != _HISTORY and not key.startswith((_PARAMS, _EXTRA, _TRAIN)))
    if unknown:
        raise _invalid(path, f"it has unexpected entries {unknown}")
