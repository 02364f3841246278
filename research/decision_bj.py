"""Decision BJ of research/ablation_plan.md (an ARX floor's linear part keeps the ARX's form): the 70/30 cuts of the
24 training halves other than the steam generator, training seeds 1-4, against decision BC's rows
(``decision_bd.baseline``). The 46 cells whose BC row shows an LGSSM floor and no stage 3b train no run from an ARX
floor, so BJ is the default there: their rows are BC's, copied with variant "BJ" and "copied" true (``--copy``); the
two shortest of them are also fitted (variant "BJ-control"). The other 50 cells are fitted with :func:`patch`. One JSON
line per (cut, seed), appended (resumable), with the machine's CPU, the training steps and "touched" (the training
steps whose parameters were projected); two workers share the cells.

Run: python research/decision_bj.py research/results/decision_bj.jsonl --worker 0 --workers 2; once, --copy; then
--decide. This script is the research record's; nothing in the package imports it.
"""
import numpy as np

import decision_av
from decision_bh import add_arguments, decide_split, run_split
from gpssm_np.models import gpssm
from rows import worker_main

VARIANT, CONTROL = "BJ", "BJ-control"
STEPS_RATIO = 1.25
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
TOUCHED = {"touched": 0}


def arx_form(model, floor, start):
    """What :func:`project` needs to hold ``model``'s F, G and b to the observer form of the ARX ``floor`` (na, nb)
    in the basis E of the warm start ``start`` (x' = E x): E, E^-1, the masks of the free entries in observer
    coordinates (F: the first d_y columns of the first na blocks of rows, the ARX's a_1..a_na; G: the first nb blocks of
    rows, its b_0..b_{nb-1}; b: the first block, its intercept) and the start's values of all entries there. None
    where every entry is free (nothing to hold: n = 1 and nb = 1)."""
    E = start.basis
    E_inv = np.linalg.inv(E)
    dy, dx, du = model.spec.dim_y, model.spec.dim_x, model.spec.dim_u
    free_F = np.zeros((dx, dx), dtype=bool)
    free_F[:floor.na_ * dy, :dy] = True
    free_G = np.zeros((dx, du), dtype=bool)
    free_G[:floor.nb_ * dy] = True
    free_b = np.arange(dx) < dy
    if free_F.all() and free_G.all() and free_b.all():
        return None
    p = model.params
    start_values = (E_inv @ np.asarray(p["F"]) @ E, E_inv @ np.asarray(p["G"]), E_inv @ np.asarray(p["b"]))
    return E, E_inv, (free_F, free_G, free_b), start_values


def project(params, form):
    """``params`` with F, G and b moved back to the ARX's form ``form`` (:func:`arx_form`): in observer coordinates
    the free entries as they are, the others at the start's values."""
    E, E_inv, (free_F, free_G, free_b), (F0, G0, b0) = form
    return dict(params, F=E @ np.where(free_F, E_inv @ params["F"] @ E, F0) @ E_inv,
                G=E @ np.where(free_G, E_inv @ params["G"], G0), b=E @ np.where(free_b, E_inv @ params["b"], b0))


def patch():
    """BJ's patch: ``GPSSM.start_from_floor`` records the ARX form on the model (None for an LGSSM floor, or where
    nothing is held) and ``GPSSM.train_step`` projects F, G and b back to it after every accepted Adam step, in every
    training run of the default fit (the selection's fold runs, stage 3b's, the refit); the training steps counted
    (``decision_av.counting``). Returns the undo."""
    cls = gpssm.GPSSM
    saved = {name: cls.__dict__.get(name) for name in ("start_from_floor", "train_step")}
    start_from_floor, train_step = cls.start_from_floor, cls.train_step
    undo_counting = decision_av.counting()

    def start(self, floor_model, ys, us, seed, gp_share=gpssm.GP_SHARE):
        warm = start_from_floor(self, floor_model, ys, us, seed, gp_share)
        self._arx_form = arx_form(self, floor_model, warm) if hasattr(floor_model, "coefficients") else None
        return warm

    def step(self, *args, **kwargs):
        train_step(self, *args, **kwargs)
        form = getattr(self, "_arx_form", None)
        if form is not None:
            self.params = project(self.params, form)
            TOUCHED["touched"] += 1

    cls.start_from_floor, cls.train_step = start, step

    def undo():
        for name, value in saved.items():
            if value is None:
                delattr(cls, name)
            else:
                setattr(cls, name, value)
        undo_counting()
    return undo


def lgssm_only(row):
    """Whether a BC row's fit trained from an LGSSM floor only (no stage 3b): BJ computes the default there."""
    return row["floor"] == "lgssm" and row["other_floor"] is None


def run(out, worker, workers, reverse=False, copy_rows=False):
    run_split(out, worker, workers, reverse, copy_rows, lgssm_only, VARIANT, CONTROL, patch, TOUCHED)


def decide(out, copy_rows=False):
    """The rule of research/ablation_plan.md, decision BJ, after the controls' differences from the BC rows."""
    decide_split(out, VARIANT, CONTROL, "trained no run from an ARX floor with a form to hold", STEPS_RATIO,
                 MEANS_AT_MOST)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
