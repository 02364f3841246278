"""The default fit's checkpoints (``models/default_fit.py``, "Checkpoints"): what identifies the fit a checkpoint was
written for (:func:`fingerprint`), and how a model, an Adam run and stage 4's result go into the checkpoint's
arrays and come back (``archive.write_state`` files: npz arrays and JSON, no pickle).
"""
import json
from dataclasses import replace

import numpy as np

from ..training_loop import fit_fingerprint

#: The label of the default fit's checkpoint files (``archive.write_state``).
CHECKPOINT_KIND = "default_fit_checkpoint"
#: The layout of the default fit's checkpoints, part of the fingerprint: raised whenever what a checkpoint holds
#: changes (2: stage 4's far-field radii; 3: the full q(x0), x0_sqrt; 4: an ARX floor's states in the basis of
#: ``warm_start.whitened_basis``), so that one written by another layout is refused with a ValueError.
CHECKPOINT_LAYOUT = 4
#: The stages a checkpoint can be written in, in order (``models/default_fit.py``, "Checkpoints").
STAGES = ("selection", "refit", "refitted", "checked", "done")
#: The order of stage 4's numbers in a checkpoint's "free_run" array.
_GUARD_FIELDS = ("model", "floor", "passed", "model_run", "model_filter", "floor_run", "floor_filter")


def guard_array(result):
    """Stage 4's result as the checkpoint's array (:data:`_GUARD_FIELDS`)."""
    far = result["far_field"]
    return np.array([result["model"], result["floor"], float(result["passed"]), far["model"]["run"],
                     far["model"]["filter"], far["floor"]["run"], far["floor"]["filter"]], dtype=np.float64)


def guard_result(values):
    """Undo :func:`guard_array`."""
    v = dict(zip(_GUARD_FIELDS, (float(x) for x in values)))
    far = {who: {"run": v[who + "_run"], "filter": v[who + "_filter"]} for who in ("model", "floor")}
    return {"model": v["model"], "floor": v["floor"], "passed": bool(v["passed"]), "far_field": far}


def fingerprint(model, ys, us, plan, seed, frozen):
    """What a default fit's checkpoint must have been written for (``training_loop.fit_fingerprint`` at
    :data:`CHECKPOINT_LAYOUT`, the whole plan): the state dimension, Q, the jitter and the kind of warm start, which
    the fit sets, are left out of the configuration."""
    return fit_fingerprint(model, ys, us, plan, seed, frozen, CHECKPOINT_LAYOUT,
                           config_left_out=("dim_x", "num_latent", "jitter", "init"))


def model_state(model, prefix, arrays):
    """A model's part of a checkpoint: its parameters and loss history into ``arrays`` under ``prefix``; returns
    its training log and jitter (plain JSON types)."""
    arrays.update({f"{prefix}params/{name}": np.asarray(value, dtype=np.float64)
                   for name, value in model.params.items()})
    arrays[prefix + "history"] = np.asarray(model.history_, dtype=np.float64).reshape(-1)
    return {"training_log": model.training_log_, "jitter": float(model.spec.jitter)}


def restore_model(model, prefix, info, arrays):
    """Undo :func:`model_state`."""
    model.params = {name: np.array(arrays[f"{prefix}params/{name}"], dtype=np.float64) for name in model.params}
    model.history_ = arrays[prefix + "history"].tolist()
    model.training_log_ = json.loads(json.dumps(info["training_log"]))
    model.spec = replace(model.spec, jitter=float(info["jitter"]))


def run_state(run, prefix, arrays):
    """An :class:`AdamRun`'s part of a checkpoint (``AdamRun.state``): its arrays into ``arrays`` under
    ``prefix``; returns its info."""
    info, run_arrays = run.state()
    arrays.update({prefix + "run/" + key: value for key, value in run_arrays.items()})
    return info


def restore_run(run, prefix, info, arrays):
    """Undo :func:`run_state`."""
    start = prefix + "run/"
    run.load_state(info, {key[len(start):]: value for key, value in arrays.items() if key.startswith(start)})
