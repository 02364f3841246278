"""The units a model works in: :class:`Scaling`, the per-column standardisation ``fit`` takes from its data
(``standardize=True``), and the constants that go with it.

With ``standardize=True`` (the default of every model) ``fit`` takes the mean and the population standard
deviation of each output and input column over all the data it is given (every sequence, the validation block
included) and trains on y_model = (y - y_mean) / y_std, u_model = (u - u_mean) / u_std: training windows, the
validation split, the warm start and the checkpoints all see these standardised data. A column without spread
keeps std 1; statistics within :data:`SNAP` of 0 (means, relative to the std) and of 1 (stds) are taken as
exactly 0 and 1, so data that are already standardised (``gp.datasets`` gives them so) pass through bit for bit.
The statistics are kept in ``scaling_`` (a :class:`Scaling`; None before ``fit`` and with
``standardize=False``, when the model works in the units it is given) and in the model file. ``forecast``,
``predict``, ``filter``, ``smooth``, ``q_x0``, ``score`` and ``protocols.evaluate`` take data in the original units
and return outputs in them; ``forecast(..., units="model")`` gives the standardised view (its
``in_original_units()`` maps back), and ``scaling_`` converts by hand. The latent states are the model's own,
whatever the units of the data. ``elbo`` and ``elbo_and_grad`` work on model units (the objective training
maximises).
"""
import logging
from dataclasses import dataclass

import numpy as np

from . import _validation as check

#: Means within SNAP standard deviations of 0 and standard deviations within SNAP of 1 are taken as exactly 0 and 1.
SNAP = 1e-10
#: A column whose population std is at most CONSTANT_RTOL times its largest magnitude is constant: a constant
#: column's computed std is rounding (0.1 repeated has std 1.4e-17, not 0), never a spread of the data.
CONSTANT_RTOL = 1e-12
#: The arrays of a :class:`Scaling` (its fields); a model file keeps them as ``scaling_<name>``.
SCALING_FIELDS = ("y_mean", "y_std", "u_mean", "u_std")
#: The values of ``forecast``'s ``units``.
UNITS = ("original", "model")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scaling:
    """The standardisation a model works in (module docstring): y_model = (y - y_mean) / y_std and
    u_model = (u - u_mean) / u_std, per column; arrays (d_y,) and (d_u,)."""

    y_mean: np.ndarray
    y_std: np.ndarray
    u_mean: np.ndarray
    u_std: np.ndarray

    @classmethod
    def of(cls, ys, us):
        """The statistics of the sequences ``ys`` (each (T, d_y)) and ``us`` (each (T, d_u)) taken together:
        means and population standard deviations, a constant column keeping std 1, values within :data:`SNAP` of 0
        and 1 snapped to them."""
        return cls(*_statistics(np.concatenate(ys)), *_statistics(np.concatenate(us)))

    def y_to_model(self, y):
        """Outputs (..., d_y) in original units -> model units (NaN stays NaN)."""
        return (y - self.y_mean) / self.y_std

    def u_to_model(self, u):
        """Inputs (..., d_u) in original units -> model units."""
        return (u - self.u_mean) / self.u_std

    def to_model(self, data):
        """A list of (y, u) sequence pairs in original units -> the same in model units."""
        return [(self.y_to_model(y), self.u_to_model(u)) for y, u in data]

    def y_to_original(self, y):
        """Outputs (..., d_y) in model units -> original units."""
        return y * self.y_std + self.y_mean

    def u_to_original(self, u):
        """Inputs (..., d_u) in model units -> original units."""
        return u * self.u_std + self.u_mean

    def y_spread_to_original(self, a, power=1):
        """A spread of outputs (..., d_y) in model units (a std or a difference: ``power`` 1; a variance: 2) -> the
        same in original units."""
        return a * self.y_std**power

    def y_spread_to_model(self, a, power=1):
        """A spread of outputs (..., d_y) in original units -> the same in model units (the inverse of
        :meth:`y_spread_to_original`)."""
        return a / self.y_std**power

    def log_jacobian(self, y):
        """log |d y_model / d y| of each row of ``y`` (..., d_y): minus the sum of log y_std over the row's observed
        (not NaN) entries, shape (...). Added to a log-density of model units it gives that of original units."""
        return -((~np.isnan(np.asarray(y, dtype=np.float64))) @ np.log(self.y_std))

    def arrays(self):
        """name -> array, what a model file keeps (:meth:`from_arrays` reads it back)."""
        return {"scaling_" + name: getattr(self, name) for name in SCALING_FIELDS}

    @classmethod
    def from_arrays(cls, state):
        """The :class:`Scaling` of :meth:`arrays`' dict (ValueError for missing or non-finite entries; the input
        statistics of a model without inputs are empty)."""
        values = []
        for name in SCALING_FIELDS:
            value = np.atleast_1d(np.asarray(state["scaling_" + name], dtype=np.float64))
            if not (name.startswith("u_") and value.shape == (0,)):
                value = check.finite_array(value, "scaling_" + name, (1,))
            values.append(value)
        if np.any(values[1] <= 0) or np.any(values[3] <= 0):
            raise ValueError("scaling_y_std, scaling_u_std: expected positive standard deviations")
        return cls(*values)

    @classmethod
    def from_state(cls, state, dim_y, dim_u):
        """The :class:`Scaling` of a model file's extra state ``state`` (a dict), whose ``scaling_*`` entries are
        taken out of it; None when it has none; ValueError when they do not fit a model of ``dim_y`` outputs and
        ``dim_u`` inputs. The entries ``y_mean``, ``y_std`` of files written before ``standardize`` existed
        (``set_output_scaling``, which only labelled forecasts; the model worked in the units it was fitted on, as it
        does now without them) are dropped with a logged note."""
        if "y_mean" in state or "y_std" in state:
            logger.warning("model file: its output scaling (y_mean, y_std; set_output_scaling, removed) is dropped: "
                           "the model takes and returns the units it was fitted on")
            for name in ("y_mean", "y_std"):
                state.pop(name, None)
        entries = {key: state.pop(key) for key in ["scaling_" + name for name in SCALING_FIELDS] if key in state}
        if not entries:
            return None
        scaling = cls.from_arrays(entries)
        if scaling.y_mean.shape != (dim_y,) or scaling.u_mean.shape != (dim_u,):
            raise ValueError(f"state: a scaling of {scaling.y_mean.shape[0]} outputs and {scaling.u_mean.shape[0]} "
                             f"inputs, the model has dim_y = {dim_y}, dim_u = {dim_u}")
        return scaling


def constant_columns(a, std):
    """Whether each column of ``a`` (T, d), whose population stds are ``std`` (d,), is constant: its std at most
    :data:`CONSTANT_RTOL` times its largest magnitude (an all-zero column included)."""
    return std <= CONSTANT_RTOL * np.abs(a).max(axis=0, initial=0.0)


def _statistics(a):
    """(mean, std) of the columns of ``a`` (T, d) as :meth:`Scaling.of` takes them."""
    mean, std = a.mean(axis=0), a.std(axis=0)
    std = np.where(constant_columns(a, std), 1.0, std)  # a constant column: shifted, not scaled
    mean = np.where(np.abs(mean) <= SNAP * std, 0.0, mean)
    std = np.where(np.abs(std - 1.0) <= SNAP, 1.0, std)
    return mean, std
