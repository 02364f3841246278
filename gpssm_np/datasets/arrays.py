r"""Your own data as a :class:`~gpssm_np.datasets.Dataset`: :func:`from_arrays` (arrays or nested lists) and
:func:`from_csv` (a CSV file with a header row of column names, read with Python's ``csv`` module).

Both split the series at ``train_fraction``: the first ``floor(train_fraction N)`` rows are the training part (the
product rounded to 9 decimals first, so that 0.29 of 100 rows is 29, not the 28 of 28.999999999999996), the
rest the test part (0.5 gives the benchmarks' halves), and z-score outputs and inputs with the training part's mean
and population standard deviation, as :func:`~gpssm_np.datasets.load` does for the benchmarks. The returned
``Dataset`` keeps those statistics (``y_mean``, ``y_std``, ``u_mean``, ``u_std``) and the raw series; a series
without inputs has ``d_u = 0`` (u arrays of shape (T, 0)).
"""
import csv
import os
from pathlib import Path

import numpy as np

from .. import _validation as check
from .files import split_dataset

#: Fewest rows of each part: one training row has no spread to standardise with, one test row no forecast to score.
MIN_ROWS = 2


def _columns(a, name):
    """``a`` (N, d) or (N,) as a float64 (N, d) array of finite values; ValueError naming ``name`` otherwise."""
    raw = np.asarray(a)
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {raw.dtype}")
    if raw.ndim not in (1, 2) or raw.size == 0:
        raise ValueError(f"{name}: expected a non-empty array of shape (N, d) or (N,), got shape {raw.shape}")
    a = raw.astype(np.float64).reshape(len(raw), -1)
    bad = np.flatnonzero(~np.all(np.isfinite(a), axis=1))
    if len(bad):
        raise ValueError(f"{name}: NaN or inf in rows {_some(bad)}; remove or fill them (training needs complete "
                         "data)")
    return a


def _some(rows, count=5, noun="rows"):
    """The first ``count`` row indices (or line numbers) as text, with an ellipsis and the total when there are
    more."""
    text = ", ".join(str(int(r)) for r in rows[:count])
    return f"[{text}]" if len(rows) <= count else f"[{text}, ...] ({len(rows)} {noun})"


def _dataset(name, y, u, train_fraction, y_names=None, u_names=None):
    """The checked (N, d_y) and (N, d_u) arrays split at ``train_fraction`` and standardised (module docstring)."""
    train_fraction = check.fraction(train_fraction, "train_fraction")  # a Python float: a float16 would overflow
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty str, got {name!r}")
    if len(u) != len(y):
        raise ValueError(f"u: expected {len(y)} rows to match y, got {len(u)}")
    n_train = int(np.floor(round(train_fraction * len(y), 9)))
    if min(n_train, len(y) - n_train) < MIN_ROWS:
        raise ValueError(f"y: {len(y)} rows split at train_fraction={train_fraction} leave {n_train} training and "
                         f"{len(y) - n_train} test rows; each part needs at least {MIN_ROWS}")
    return split_dataset(name, y, u, n_train, y_names, u_names)


def from_arrays(y, u=None, train_fraction=0.5, name="mine"):
    """A :class:`~gpssm_np.datasets.Dataset` of your own series, split and standardised as the module docstring says.

    Parameters
    ----------
    y : array_like, shape (N, d_y) or (N,)
        Outputs in original units (arrays or nested lists, e.g. ``y.tolist()``).
    u : array_like, shape (N, d_u) or (N,), or None
        Inputs in original units aligned with ``y`` (row k of u acts on the step that produces row k of y), or None
        for a series without inputs (d_u = 0); an (N, 0) array means the same, as it does for the models.
    train_fraction : float in (0, 1)
        Share of the rows, from the start, that form the training part.
    name : str
        The data set's name (``Dataset.name``).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Non-numeric values, NaN or inf (the rows are named), ``u`` of another length, a fraction outside (0, 1),
        fewer than :data:`MIN_ROWS` rows in a part, or a column that is constant in the training part.
    """
    y = _columns(y, "y")
    no_inputs = u is None or (np.ndim(u) == 2 and np.shape(u)[1] == 0)
    u = np.zeros((len(y) if u is None else len(u), 0)) if no_inputs else _columns(u, "u")
    return _dataset(name, y, u, train_fraction)


def _names(columns, argname, header, path):
    """``columns`` (a name, a list of names or None) as a list; ValueError naming ``argname`` for a missing column
    or one named twice."""
    columns = [columns] if isinstance(columns, str) else list(columns or ())
    if not all(isinstance(c, str) for c in columns):
        raise ValueError(f"{argname}: expected column names (str), got {columns!r}")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ValueError(f"{argname}: the columns {repeated} are named more than once; name each column once")
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{argname}: no column {', '.join(map(repr, missing))} in {os.fspath(path)}; its columns "
                         f"are {header}")
    return columns


def _data_rows(lines, width, path, first_line):
    """(rows, line numbers): the data rows of a CSV file's ``lines`` after its header (lists of fields, as
    ``csv.reader`` splits them, quotes honoured) and the file's line number of each (``first_line``: the number of
    the line after the header): blank lines and lines starting with ``#`` left out, every row ``width`` fields
    (empty fields after the last are dropped); ValueError naming the first line of another width."""
    rows, numbers = [], []
    for line_number, fields in enumerate(lines, start=first_line):
        if not any(f.strip() for f in fields) or fields[0].lstrip().startswith("#"):
            continue
        while len(fields) > width and not fields[-1].strip():
            fields = fields[:-1]
        if len(fields) != width:
            raise ValueError(f"path: line {line_number} of {os.fspath(path)} has {len(fields)} fields, the header "
                             f"{width}; every row needs a field per column")
        rows.append(fields)
        numbers.append(line_number)
    return rows, numbers


def from_csv(path, outputs, inputs=(), train_fraction=0.5, name=None, delimiter=","):
    """A :class:`~gpssm_np.datasets.Dataset` of the columns of a CSV file, split and standardised as the module
    docstring says.

    The first line that is not blank holds the column names (a leading ``#``, as ``np.savetxt(header=...)`` writes
    it, is dropped, and so is a byte-order mark); the file is UTF-8 text; every other line is one time step, but
    blank lines and lines starting with ``#``. The header and the rows are read alike (Python's ``csv`` module: a
    quoted field may hold the delimiter), every row has a field per column, and only the named columns are
    converted; they must be complete numbers.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    outputs : str or list of str
        Names of the output columns (d_y of them), in the order wanted.
    inputs : str or list of str or None
        Names of the input columns (d_u of them; none for a series without inputs).
    train_fraction : float in (0, 1)
        Share of the rows, from the start, that form the training part.
    name : str or None
        The data set's name; default the file name without its suffix.
    delimiter : str
        The field separator.

    Returns
    -------
    Dataset
        With ``y_names`` and ``u_names`` set to ``outputs`` and ``inputs``.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that is not UTF-8 text or not CSV, a ``delimiter`` that is not one character, no data rows after the
        header, a row with another number of fields than the header (its line is named), a column missing (the message
        lists the file's columns) or both an output and an input, an empty, non-numeric, NaN or inf cell in a used
        column (the file's lines are named, the first line 1; a quoted field over several lines counts one), and the
        conditions of :func:`from_arrays`.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a str or os.PathLike file path, got {type(path).__name__}")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\"":
        raise ValueError(f"delimiter: expected one character other than a quote or a line break, got {delimiter!r}")
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:  # -sig: a byte-order mark (Excel's) is dropped
            lines = list(csv.reader(fh, delimiter=delimiter))
    except UnicodeDecodeError as err:
        raise ValueError(f"path: {os.fspath(path)} is not UTF-8 text ({err.reason} at byte {err.start}); save it "
                         "as UTF-8") from None
    except csv.Error as err:  # e.g. a field longer than the csv module's limit
        raise ValueError(f"path: {os.fspath(path)} cannot be read as CSV: {err}") from None
    first = next((i for i, line in enumerate(lines) if line), None)  # blank lines before the header are skipped
    if first is None:
        raise ValueError(f"path: {os.fspath(path)} is empty; expected a header row of column names")
    header, data_lines = lines[first], lines[first + 1:]
    header = [h.strip() for h in header]
    header[0] = header[0].lstrip("#").strip()
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise ValueError(f"path: the header of {os.fspath(path)} repeats the column names {duplicated}")
    outputs = _names(outputs, "outputs", header, path)
    inputs = _names(inputs, "inputs", header, path)
    if not outputs:
        raise ValueError("outputs: expected at least one output column, got none")
    both = sorted(set(outputs) & set(inputs))
    if both:
        raise ValueError(f"inputs: the columns {both} are also outputs; a column is one or the other")
    columns = outputs + inputs
    rows, line_numbers = _data_rows(data_lines, len(header), path, first + 2)
    if not rows:
        raise ValueError(f"path: {os.fspath(path)} has a header and no data rows; expected at least "
                         f"{2 * MIN_ROWS} rows ({MIN_ROWS} for the training part and {MIN_ROWS} for the test part)")
    table = np.empty((len(rows), len(columns)))
    for k, column in enumerate(columns):
        index = header.index(column)
        for i, row in enumerate(rows):
            cell = row[index]
            try:  # Python's float reads "1_000" and Arabic-Indic digits; a data file's number has neither
                table[i, k] = float(cell) if cell.strip().isascii() and "_" not in cell else np.nan
            except ValueError:  # empty or not a number: reported with NaN and inf below
                table[i, k] = np.nan
        bad = np.flatnonzero(~np.isfinite(table[:, k]))
        if len(bad):
            raise ValueError(f"{'outputs' if column in outputs else 'inputs'}: column {column!r} of "
                             f"{os.fspath(path)} has empty, non-numeric, NaN or inf cells on its lines "
                             f"{_some(np.asarray(line_numbers)[bad], noun='lines')}; remove or fill them")
    d_y = len(outputs)
    return _dataset(Path(path).stem if name is None else name, table[:, :d_y], table[:, d_y:], train_fraction,
                    outputs, inputs)
