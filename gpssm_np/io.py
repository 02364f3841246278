"""Save and load fitted models as a single ``.npz`` file, without pickle.

The file format (layout, checksum, atomic writes) is :mod:`gpssm_np.archive`; this module sits above the models
and maps the name stored in the file to the class (the classes of ``models.registry``). Every class
implements the facade of ``estimator.py`` (``get_config``, ``get_learned_params``/``set_learned_params``, ``history_``,
``extra_state``/``set_extra_state``).
"""
from . import archive
from .archive import FORMAT_VERSION, ModelFileError, checksum
from .models.registry import MODELS

__all__ = ["FORMAT_VERSION", "MODEL_CLASSES", "ModelFileError", "checksum", "load", "read_checkpoint", "save"]

#: Model classes that can be saved and loaded, by the name stored in the file.
MODEL_CLASSES = {cls.__name__: cls for cls in sorted(MODELS.values(), key=lambda cls: cls.__name__)}


def save(model, path, training=None):
    """Write ``model`` (parameters, configuration, training history, extra state) to ``path``.

    ``training`` (checkpoints) is as :func:`gpssm_np.archive.write_model` takes it. ``path`` is used exactly as
    given (no ``.npz`` suffix is added). The write is atomic: on failure any previous file at ``path`` is left as
    it was. Returns ``path``.
    """
    archive.check_path(path)
    name = type(model).__name__
    if MODEL_CLASSES.get(name) is not type(model):
        raise ValueError(f"model: expected an instance of one of {sorted(MODEL_CLASSES)}, got {type(model).__name__}")
    return archive.write_model(model, name, path, training)


def load(path):
    """Read a model written by :func:`save`.

    Raises FileNotFoundError if ``path`` does not exist and :class:`ModelFileError` (a ValueError) if the file
    is not a valid gpssm_np model file: not an npz archive, truncated or corrupted, modified since it was
    written (checksum), written by a newer gpssm_np, holding pickled data, or naming an unknown model class.
    """
    return archive.read_model(path, MODEL_CLASSES)[0]


def read_checkpoint(path):
    """(model, training) from a checkpoint written by ``fit(checkpoint=...)``: the model as :func:`load` gives it,
    and a dict with "arrays" (the optimizer's arrays) and "info" (epochs done, Adam step and learning rate, random
    generator state, training log)."""
    return archive.read_checkpoint(path, MODEL_CLASSES)
