r"""Training and test windows cut from one sequence or a list of sequences, the way the authors' ``generate_batches``
does: starts every ``stride`` steps, plus one tail window ending at the last sample when
``(T - seq_len) % stride != 0``. The models and the evaluation protocols import this module, not the loaders.
"""
import numpy as np

from .. import _validation as check


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
    T = check.positive_int(T, "T")
    seq_len = check.positive_int(seq_len, "seq_len")
    stride = check.positive_int(stride, "stride")
    if seq_len > T:
        raise ValueError(f"seq_len: expected at most the sequence length {T}, got {seq_len}")
    last = T - seq_len
    starts = np.arange(0, last + 1, stride)
    if last % stride:
        starts = np.append(starts, last)
    return starts


def _is_list_of_sequences(a):
    """Whether ``a`` is a list or tuple of sequences rather than one sequence written as nested lists: a list whose
    entries are numbers or rows of numbers (``y.tolist()`` of a (T, d) array) is one sequence."""
    return isinstance(a, (list, tuple)) and not (a and all(np.ndim(entry) <= 1 for entry in a))


def sequence_lists(y, u):
    """``y`` and ``u``, each one sequence or a list or tuple of sequences, as two lists of equal length, entries as
    given (the caller checks them); a single ``u``, or None, goes with every sequence of ``y``. A list of numbers or
    of rows (``y.tolist()`` of a (T, d_y) array) is one sequence."""
    ys = list(y) if _is_list_of_sequences(y) else [y]
    if not ys:
        raise ValueError("y: expected a sequence (T, d_y) or a non-empty list of them, got an empty list")
    us = list(u) if _is_list_of_sequences(u) else [u] * len(ys)
    if len(us) != len(ys):
        hint = ("; y, a list of 1-D entries, was read as one sequence of rows: give each sequence as (T_i, d_y)"
                if len(ys) == 1 and isinstance(y, (list, tuple)) else "")
        raise ValueError(f"u: expected {len(ys)} input sequence(s) to match y, got {len(us)}{hint}")
    return ys, us


def _matrix(a, name):
    if np.asarray(a).dtype.kind not in "biuf":  # strings and objects are not silently converted
        raise ValueError(f"{name}: expected a real numeric array, got dtype {np.asarray(a).dtype}")
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (T, d), got shape {a.shape}")
    return a


def windows(y, u, seq_len, stride=1):
    """Cut overlapping windows of length ``seq_len`` from one sequence or a list of sequences.

    Window starts are given by :func:`window_starts` (including the tail window). For a list, the windows of
    each sequence are concatenated in order.

    Parameters
    ----------
    y : ndarray, shape (T, d_y), or list of ndarray, shapes (T_i, d_y)
        Output sequence(s).
    u : ndarray, shape (T, d_u), or list of ndarray, shapes (T_i, d_u), or None
        Input sequence(s) aligned with ``y`` (same lengths; one array goes with every sequence of a list ``y``), or
        None for models without inputs.
    seq_len : int
        Window length, >= 1 and at most the length of every sequence.
    stride : int
        Step between window starts, >= 1.

    Returns
    -------
    y_windows : ndarray, shape (num_windows, seq_len, d_y)
    u_windows : ndarray, shape (num_windows, seq_len, d_u), or None when ``u`` is None
    """
    seq_len = check.positive_int(seq_len, "seq_len")
    stride = check.positive_int(stride, "stride")
    ys, us = sequence_lists(y, u)
    ys = [_matrix(a, "y" if len(ys) == 1 else f"y[{i}]") for i, a in enumerate(ys)]
    us = None if u is None else [_matrix(a, "u" if len(us) == 1 else f"u[{i}]") for i, a in enumerate(us)]
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
