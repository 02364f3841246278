"""Channel names: the output and input names a model was fitted with (``y_names_``, ``u_names_``) checked against
the names of the data it is given.

A model fitted with names (``fit(..., y_names=..., u_names=...)``; the command line passes a CSV file's header)
keeps them in its model file. Data that come with names (a ``Dataset`` with ``y_names``/``u_names``, the
``y_names=``/``u_names=`` of ``forecast``, a dict given to an online filter's ``update``) are compared with them:
the same names in another order are reordered to the model's order; other names are a ValueError that says which
are missing and which are unknown. When either side has no names nothing is checked.

The name of the training data (``fit(..., data_name=...)``, kept in ``data_name_`` and in the model file) is checked
here too (:func:`data_name`): ``evaluate`` compares it with the name of the data set it scores.
"""
import dataclasses

import numpy as np

from ._validation import rectangular


def checked(names, dim, argname):
    """``names`` (None, or a sequence of ``dim`` distinct non-empty str) as a tuple (None stays None); ValueError
    naming ``argname`` otherwise."""
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    try:
        names = tuple(names)
    except TypeError:
        raise ValueError(f"{argname}: expected a list of {dim} channel names (str), got {names!r}") from None
    if not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{argname}: expected channel names as non-empty str, got {list(names)!r}")
    if len(names) != dim:
        raise ValueError(f"{argname}: expected {dim} names (one per channel), got {len(names)}: {list(names)}")
    if len(set(names)) != len(names):
        raise ValueError(f"{argname}: names repeat in {list(names)}")
    return names


def data_name(name):
    """``name``, the name of a model's training data (e.g. ``Dataset.name``): a non-empty str, or None (not told);
    ValueError otherwise."""
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"data_name: expected a non-empty str (the training data's name) or None, got {name!r}")
    return name


def arrays(y_names, u_names):
    """The channel names as a model file keeps them: "y_names", "u_names" -> str array, for those that are set."""
    return {kind: np.array(names, dtype=str).reshape(len(names))
            for kind, names in (("y_names", y_names), ("u_names", u_names)) if names is not None}


def from_arrays(state, dim_y, dim_u):
    """(y_names, u_names) from the entries of :func:`arrays` in ``state``, which are taken out of it (an absent one,
    as in files written before names were kept, is None); ValueError when they do not fit dim_y, dim_u."""
    names = {}
    for kind, dim in (("y_names", dim_y), ("u_names", dim_u)):
        value = state.pop(kind, None)
        names[kind] = None if value is None else checked([str(n) for n in np.asarray(value).reshape(-1)], dim,
                                                           f"state[{kind!r}]")
    return names["y_names"], names["u_names"]


def order(own, given, argname, what="outputs"):
    """Column indices that put data named ``given`` into the order ``own`` (the model's names): None when no reorder
    is needed or either is None; ValueError naming ``argname`` when the names differ."""
    if own is None or given is None:
        return None
    given = tuple(given)
    if given == tuple(own):
        return None
    if sorted(given) != sorted(own):
        missing = [n for n in own if n not in given]
        unknown = [n for n in given if n not in own]
        raise ValueError(f"{argname}: the model was fitted on the {what} {list(own)}, got {list(given)}"
                         + (f"; missing {missing}" if missing else "") + (f"; unknown {unknown}" if unknown else ""))
    return np.array([given.index(n) for n in own])


def reordered(a, columns, argname):
    """``a`` (..., d) with its columns taken in the order ``columns`` (from :func:`order`); ValueError naming
    ``argname`` when ``a`` is not an array with one column per name (indexing it would fail with an error that
    names neither the argument nor the names)."""
    a = rectangular(a, argname)
    if a.ndim == 0 or a.shape[-1] != len(columns):
        raise ValueError(f"{argname}: expected {len(columns)} columns, one per name given, got shape {a.shape}")
    return a[..., columns]


def align_dataset(model, dataset):
    """``dataset`` (a ``datasets.Dataset``) with its output and input columns in the order of the model's
    ``y_names_`` and ``u_names_`` (the data set itself when no reorder is needed); ValueError when the names differ
    (module docstring)."""
    y_order = order(getattr(model, "y_names_", None), getattr(dataset, "y_names", None), "dataset.y_names",
                    "outputs")
    u_order = order(getattr(model, "u_names_", None), getattr(dataset, "u_names", None), "dataset.u_names", "inputs")
    if (y_order is None and u_order is None) or not dataclasses.is_dataclass(dataset):
        return dataset
    changes = {}
    for kind, idx in (("y", y_order), ("u", u_order)):
        if idx is None:
            continue
        for field in (f"{kind}_train", f"{kind}_test", f"{kind}_mean", f"{kind}_std", f"{kind}_raw"):
            changes[field] = _readonly(np.asarray(getattr(dataset, field))[..., idx])
        changes[f"{kind}_names"] = tuple(getattr(dataset, f"{kind}_names")[i] for i in idx)
    return dataclasses.replace(dataset, **changes)


def _readonly(a):
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def from_mapping(values, own, argname, what):
    """``values`` as an array in the order ``own``: a mapping name -> value is read by name (ValueError when the
    model has no names, or the names differ); anything else is returned as it is."""
    if not hasattr(values, "keys"):
        return values
    if own is None:
        raise ValueError(f"{argname}: got values by name {sorted(values)}, but the model was fitted without "
                         f"{what} names; give an array in the order of the training columns")
    order(own, tuple(values.keys()), argname, what)  # ValueError naming the difference
    return np.array([values[n] for n in own], dtype=np.float64)
