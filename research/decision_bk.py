"""Decision BK of research/ablation_plan.md (the GP part judged against the floor the fit would return): the 70/30 cuts
of the 24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 % under
causal and simulate, against decision BC's rows (``decision_bd.baseline``: the current default). One JSON line per
(cut, seed), variant "BK", appended (resumable), with the machine's CPU, the fit's training steps and "flipped": in how
many of the fit's acceptances (stage 3's of each pipeline run, stage 3b's comparison with the chosen floor) BK's
verdict differs from the default's on the same record (0: the fit is the default's, and its row must equal BC's);
two workers share the cells (``--worker k --workers 2``), the default's longest fits first.

Run: python research/decision_bk.py research/results/decision_bk.jsonl --worker 0 --workers 2; then the same with
``--defaults`` (the amendment of the plan: each flipped cell fitted again without the patch, variant "default-here");
then --decide.
Also ``--collinear``: the motivating two-output plant (module function :func:`collinear`), default and BK.
This script is the research record's; nothing in the package imports it.
"""
import copy
import os
import sys


import decision_av
from decision_am import run_variant
from cut_seeds import rows_of
from decision_bb import cells, decide_on_baseline, steps_rule
from decision_bd import as_default, baseline
from rows import worker_main

from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.test_floor import nearly_collinear  # noqa: E402

STEPS_RATIO = 1.10
FLIPPED = {"flipped": 0}


def floor_windows(fit):
    """The window errors (the fold runs' windows, fold by fold, as the record's) of each fold's floor with a zero GP
    residual: the model the fit returns without a GP part, forecast exactly (through the Kalman filter)."""
    if getattr(fit, "_floor_windows", None) is None:
        per_candidate = len(fit.runs) // len(fit.plan.lr_scales)
        errors = []
        for k in range(per_candidate):
            model, _, score = fit.runs[k]
            exact = copy.deepcopy(model)
            fold = fit.folds[k]
            exact.start_from_floor(fit.fold_floors[k], fold.ys, fold.us, fit.seed + k, gp_share=0.0)
            assert exact.linear_gaussian() is not None
            errors += score.window_scores(exact)
        fit._floor_windows = errors
    return fit._floor_windows


def patch():
    """BK's patch of ``DefaultFit.acceptance`` and ``DefaultFit.t_over``: the paired t against the exact floor's window
    errors (:func:`floor_windows`) where the default takes step 0's; counts the verdicts that differ from the
    default's ("flipped"). Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("acceptance", "t_over")}
    undo_counting = decision_av.counting()

    def acceptance(self, record):
        default = saved["acceptance"](self, record)
        if len(record) < 2:
            return default
        best, c = self.best_of(record)
        if best["step"] == 0:
            return default
        t = paired_t(floor_windows(self), best["windows"][c])
        mine = (best["step"], t, c) if t is not None and t > self.plan.switch_t else (0, t, 0)
        FLIPPED["flipped"] += int(bool(mine[0]) != bool(default[0]))
        print(f"BK acceptance: step {best['step']}, t over step 0 {default[1]}, over the exact floor {t}",
              file=sys.stderr, flush=True)
        return mine

    def t_over(self, first):
        default = saved["t_over"](self, first)
        if default is None:
            return None
        at = next(r for r in self.record if r["step"] == self.accepted)
        t = paired_t(floor_windows(first), at["windows"][self.candidate])
        switch = self.plan.switch_t
        FLIPPED["flipped"] += int((default > switch) != (t is not None and t > switch))
        return t

    cls.acceptance, cls.t_over = acceptance, t_over

    def undo():
        for name, value in saved.items():
            setattr(cls, name, value)
        undo_counting()
    return undo


def run(out, worker, workers, reverse=False, collinear_only=False, defaults=False):
    if collinear_only:
        collinear()
        return
    if defaults:  # the amendment: the default on this machine where BK's verdicts differ from it
        flipped = [cell for cell, r in sorted(rows_of(out, "BK").items()) if r["flipped"]]
        run_variant(out, "default-here", flipped[worker::workers], decision_av.counting, reverse=reverse,
                    extra=decision_av.step_extra())
        return
    extra = decision_av.step_extra() + (("flipped", decision_av.counted(FLIPPED, "flipped")),)
    run_variant(out, "BK", cells(baseline())[worker::workers], patch, reverse=reverse, extra=extra)


def collinear_data(seed=0, T=400, eps=1e-3):
    """Two outputs of one second-order linear plant, the second the first times 1 + eps plus white noise of eps: the
    case that motivated BK (research/ablation_plan.md); the plant of tests/test_floor.py's ``nearly_collinear``."""
    return nearly_collinear(seed, T, eps)


def collinear():
    """The default and BK on :func:`collinear_data`, 300 steps training and 100 scored under causal (seed 0)."""
    import gpssm_np as gp
    y, u = collinear_data()
    ds = gp.datasets.from_arrays(y, u, train_fraction=0.75, name="collinear")
    for variant in ("default", "BK"):
        undo = patch() if variant == "BK" else (lambda: None)
        try:
            m = gp.ODGPSSM(dim_y=2, dim_u=1, seed=0).fit(ds.y_train, ds.u_train, progress=False)
        finally:
            undo()
        print(variant, "GP part", m.selection_["gp_part"], "t", m.selection_["t"], "causal",
              gp.evaluate(m, ds, "causal", seed=0)["rmse"], flush=True)
    for linear in (gp.ARX(dim_y=2, dim_u=1), gp.LGSSM(dim_x="auto", dim_y=2, dim_u=1)):
        linear.fit(ds.y_train, ds.u_train)
        print(type(linear).__name__, "causal", gp.evaluate(linear, ds, "causal", seed=0)["rmse"], flush=True)


def add_arguments(parser):
    parser.add_argument("--collinear", dest="collinear_only", action="store_true", help="the motivating plant only")
    parser.add_argument("--defaults", action="store_true", help="the default fitted again on the flipped cells")


def decide(out, collinear_only=False, defaults=False):
    """The rule of the plan as amended: against the default on this machine (a cell not flipped is the default's fit;
    a flipped one against its "default-here" row); then, reported beside it, against decision BC's rows."""
    rows, here = rows_of(out, "BK"), rows_of(out, "default-here")
    flipped = sorted(cell for cell, r in rows.items() if r["flipped"])
    print(f"{len(rows)} BK rows; flipped cells: {flipped}")
    default = {cell: (here.get(cell) if r["flipped"] else r) for cell, r in rows.items()}
    lacking = [cell for cell, r in default.items() if r is None]
    if lacking:
        print(f"not decided: the default is not fitted again yet on {lacking}")
        return
    for cell in flipped:
        b, d = rows[cell], default[cell]
        print(f"  {cell}: BK GP part {b['gp_part']} t {b['t']}, default GP part {d['gp_part']} t {d['t']}; causal "
              f"{b['causal'] / d['causal']:.4f}, simulate {b['simulate'] / d['simulate']:.4f}")
    steps_rule("BK", rows, as_default(default), STEPS_RATIO)
    print("\nbeside it, deciding nothing: against decision BC's rows")
    decide_on_baseline(out, "BK", "flipped", "where BK's verdicts equal the default's", STEPS_RATIO,
                       default=baseline())


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide, add_arguments)
