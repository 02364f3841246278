"""Decision AS of research/ablation_plan.md (the GP residual's mean shrunk toward the floor by a factor chosen on the
folds), on training data only: the 70/30 cuts of the 24 training halves other than the steam generator, training
seeds 1-4, scored on each cut's last 30 % under causal and simulate, against the default's rows of this machine
(decision AM's "default" rows for seeds 1 and 2, research/results/default_seeds34.jsonl for seeds 3 and 4). One JSON
line per (cut, seed), variant "AS", appended (resumable). The cells are ordered by the default's fit seconds, the
longest first; two workers share them from both ends (``--worker 0`` from the front, ``--worker 1 --reverse`` from
the back; ``--workers`` is not used). ``--steamgen`` runs the steam generator's seeds 2 and 1 afterwards (reported,
deciding nothing).

Run: python research/decision_as.py research/results/decision_as.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os
import sys

import numpy as np

from cut_seeds import rows_of
from decision_ac import against_default, meets_rule, seconds_ratio, statistics
from decision_am import print_changed
from decision_m import NAMES, RESULTS, held_out_row
from rows import pending, worker_main

from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

SEEDS = (1, 2, 3, 4)
SCALES = (0.25, 0.5, 0.75, 1.0)  # the factors on the GP residual's mean, alpha; 1.0 is the default's model
LEFT_OUT = "steamgen"
STEAMGEN = False  # set by --steamgen


def default_rows():
    """{(cut, seed): row} of the default fitted on this machine, seeds 1-4."""
    return {**rows_of(os.path.join(RESULTS, "decision_am.jsonl"), "default", (1, 2)),
            **rows_of(os.path.join(RESULTS, "default_seeds34.jsonl"), "default", (3, 4))}


def cells():
    """The decision's (cut, seed) cells, the default's longest fits first."""
    seconds = default_rows()
    mine = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    return sorted(mine, key=lambda cell: -seconds[cell]["fit_seconds"])


def shrunk(params, alpha):
    """``params`` (unconstrained) with q_mu times ``alpha``: the residual's mean m_q = k_q(Z, x~) L_q^{-T} q_mu_q (or
    k_q K_q^{-1} q_mu_q unwhitened) is linear in q_mu, so this is alpha times the GP residual's mean, its variance
    and everything else unchanged."""
    return dict(params, q_mu=alpha * params["q_mu"])


def shrinkage():
    """AS's patch of ``default_fit.DefaultFit``: stage 3 scores the fold runs of the chosen candidate at s* with the
    residual's mean times each alpha of :data:`SCALES`, takes the alpha of the lowest mean window error (ties to the
    larger), and tests that against step 0; the refit's model, the guards, the calibration and stage 3b's
    comparison use that alpha. Returns the undo."""
    cls = default_fit.DefaultFit
    saved = {name: getattr(cls, name) for name in ("acceptance", "refit", "calibration", "t_over", "run")}

    def scaled_windows(self, step, c, alpha):
        per = len(self.runs) // len(self.plan.lr_scales)
        errors = []
        for (model, _, score), params in zip(self.runs[c * per:(c + 1) * per], self.kept[step][c * per:(c + 1) * per]):
            iterate = model.get_learned_params()
            model.set_learned_params(shrunk(params, alpha))
            errors += score.window_scores(model)
            model.set_learned_params(iterate)
        return errors

    def acceptance(self, record):
        self.alpha, self.alpha_windows, self.alpha_means = 1.0, None, None
        if len(record) < 2:
            return 0, None, 0
        best, c = self.best_of(record)
        if best["step"] == 0:
            return 0, 0.0, 0
        step = best["step"]
        windows = {a: scaled_windows(self, step, c, a) for a in SCALES}
        if not np.allclose(windows[1.0], best["windows"][c], rtol=1e-12, atol=0):
            raise RuntimeError("alpha = 1 does not repeat the selection's window errors")
        means = {a: float(np.mean(w)) if np.all(np.isfinite(w)) else np.inf for a, w in windows.items()}
        alpha = min(SCALES, key=lambda a: (means[a], -a))
        self.alpha, self.alpha_windows, self.alpha_means = alpha, windows[alpha], means
        t = paired_t(record[0]["windows"][c], windows[alpha])
        return (step, t, c) if t is not None and t > self.plan.switch_t else (0, t, 0)

    def refit(self, floor, ys, us, steps, saved_state=None):
        saved["refit"](self, floor, ys, us, steps, saved_state)
        if steps:
            self.model.set_learned_params(shrunk(self.model.get_learned_params(), self.alpha))

    def calibration(self, runs, step):
        if not runs or not step:
            return saved["calibration"](self, runs, step)
        kept = self.kept[step]
        self.kept[step] = [shrunk(p, self.alpha) for p in kept]
        try:
            return saved["calibration"](self, runs, step)
        finally:
            self.kept[step] = kept

    def t_over(self, first):
        if not self.accepted or self.free_run is None or not self.free_run["passed"]:
            return None
        return paired_t(first.record[0]["windows"][0], self.alpha_windows)

    def run(self, ys, us):
        selection = saved["run"](self, ys, us)
        return dict(selection, alpha=self.alpha if selection["step"] else None, alpha_means=self.alpha_means)

    for name, f in (("acceptance", acceptance), ("refit", refit), ("calibration", calibration), ("t_over", t_over),
                    ("run", run)):
        setattr(cls, name, f)

    def undo():
        for name, f in saved.items():
            setattr(cls, name, f)
    return undo


EXTRA = (("alpha", lambda m: m.selection_.get("alpha")), ("alpha_means", lambda m: m.selection_.get("alpha_means")))


def run(out, worker, workers, reverse=False):
    mine = [(LEFT_OUT, 2), (LEFT_OUT, 1)] if STEAMGEN else cells()
    undo = shrinkage()
    try:
        for name, seed in pending(out, mine, lambda cell: (cell[0], "AS", cell[1]), reverse):
            held_out_row(out, name, "AS", extra=EXTRA, seed=seed)
    finally:
        undo()


def decide(out):
    rows, default = rows_of(out, "AS"), default_rows()
    mine = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    pairs, missing = against_default("AS", rows, default, mine, SEEDS)
    pairs.pop(LEFT_OUT, None)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, geo = statistics("AS over the default, seeds 1-4", pairs)
    print_changed(pairs, SEEDS)
    shrunk_cells = sorted((n, s, r["alpha"]) for (n, s), r in rows.items() if r.get("alpha") not in (None, 1.0))
    print(f"  cells whose model has alpha < 1: {len(shrunk_cells)}: {shrunk_cells}")
    ratio = seconds_ratio("AS", {k: r for k, r in rows.items() if k in mine}, default, pairs)
    for s in ((1, 2), (3, 4)):
        statistics(f"AS over the default, seeds {s}", {n: [p[k] for k in range(4) if SEEDS[k] in s]
                                                       for n, p in pairs.items()})
    extra = {k: r for k, r in rows.items() if k[0] == LEFT_OUT}
    for (n, s), r in sorted(extra.items()):
        d = default[n, s]
        print(f"  {n} seed {s} (deciding nothing): causal {r['causal'] / d['causal']:.3f}, simulate "
              f"{r['simulate'] / d['simulate']:.3f}, alpha {r['alpha']}")
    adopted = not missing and meets_rule(geo, bounds) and ratio <= 1.10
    if missing:
        print(f"not run yet: {len(missing)} cells")
    print("AS adopted" if adopted else "AS not adopted")


if __name__ == "__main__":
    STEAMGEN = "--steamgen" in sys.argv
    if STEAMGEN:
        sys.argv.remove("--steamgen")
    worker_main(__doc__.splitlines()[0], run, decide)
