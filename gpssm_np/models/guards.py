"""Stage 4's guards of the default fit (``models/default_fit.py``): the refitted GP model is compared with its floor in
the same form, on the training record's long free runs (:func:`free_run_check`) and off the data, where the GP
part is the linear transition of ``Transition.far_field`` (:func:`far_field_check`); the GP part is dropped where
either fails. Both detect divergence; neither selects (the rolling-origin folds do).
"""
import numpy as np

from ..metrics import rmse
from ..protocols import N_INIT, simulation


def free_run_check(model, floor, ys, us, factor, seed, num_samples, num_particles):
    """A guard against a transition whose long free runs leave the data: each training sequence of ``ys``, ``us``
    is simulated from its first :data:`N_INIT` outputs over all the rest (the simulate protocol on the training
    data) by ``model`` and by ``floor``; passed when the model's RMSE is at most ``factor`` times the floor's
    (summed over sequences; an inf or NaN error fails; the default fit's ``Plan.free_run_factor``), the forecasts
    drawn from ``seed`` with ``num_samples`` runs and ``num_particles`` filter particles. A detector of divergence, not
    a second selection (the folds select): in-sample errors on the training record say little about finer
    differences. Returns {"model": RMSE, "floor": RMSE, "passed": bool}."""
    errors = {"model": 0.0, "floor": 0.0}
    for y, u in zip(ys, us):
        if len(y) <= 2 * N_INIT:
            continue
        for name, m in (("model", model), ("floor", floor)):
            mean = simulation(m, y, u, N_INIT, num_samples, seed, num_particles).mean
            with np.errstate(over="ignore", invalid="ignore"):
                errors[name] += rmse(y[N_INIT:], mean)
    return dict(errors, passed=free_run_passes(errors["model"], errors["floor"], factor))


def free_run_passes(model_error, floor_error, factor):
    """The rule of :func:`free_run_check` on the two errors: the model's at most ``factor`` times the floor's (False
    for an inf or NaN error)."""
    return bool(model_error <= factor * floor_error)


def far_field_radii(model):
    """Where the state leaves the data, a GP model is the linear transition (F, P) of ``Transition.far_field``: the
    spectral radii of F (its free run: stable below 1) and of (I - K C) F with K = P C^T (C P C^T + R)^-1 (the
    error dynamics of its particle filter there: each particle of the fully adapted proposal moves to F x + K (y -
    C F x) + noise; above 1 the filter's states grow while its outputs follow the data). Returns {"run": float,
    "filter": float}."""
    F, P = model.transition().far_field()
    C, r = model.emission()
    K = np.linalg.solve(C @ P @ C.T + np.diag(r), C @ P).T
    radius = lambda M: float(np.max(np.abs(np.linalg.eigvals(M))))  # noqa: E731
    return {"run": radius(F), "filter": radius((np.eye(len(F)) - K @ C) @ F)}


def far_field_check(model, floor):
    """Stage 4's guard against divergence off the data: :func:`far_field_radii` of ``model`` and ``floor``;
    passed when each of the model's radii is below 1 or at most the floor's. Returns {"model": radii, "floor":
    radii, "passed": bool}."""
    radii = {"model": far_field_radii(model), "floor": far_field_radii(floor)}
    return dict(radii, passed=far_field_passes(radii["model"], radii["floor"]))


def far_field_passes(model_radii, floor_radii):
    """The rule of :func:`far_field_check` on radii (:func:`far_field_radii` of the model and of the floor)."""
    return all(model_radii[k] < 1.0 or model_radii[k] <= floor_radii[k] for k in model_radii)
