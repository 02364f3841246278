"""Decision AZ of research/ablation_plan.md (the LGSSM floor's lower states white on the training data, as decision Y
made the ARX floor's): the 70/30 cuts of the 24 training halves other than the steam generator, training seeds 1 and
2, scored on each cut's last 30 % under causal and simulate, against decision AX's rows (the current default's, on an
AMD EPYC). One JSON line per (cut, seed), variant "AZ", appended (resumable), each naming the machine's CPU and the
fit's training steps; two workers share the cells from both ends (``--worker 0``, and ``--worker 1 --reverse``).
The cells whose AX row chose the ARX floor and kept its GP part at stage 3 compute no LGSSM warm start and take AX's
rows (:data:`UNCHANGED`); the first of them is fitted under the patch as a check (``--check``).

Run: python research/decision_az.py research/results/decision_az.jsonl [--reverse]; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import os
import sys

import numpy as np
from scipy.linalg import eigh

import decision_av
from cut_seeds import rows_of, score_difference
from decision_ac import against_default, seconds_ratio, statistics
from decision_am import print_changed, run_variant
from decision_m import RESULTS, NAMES
from rows import worker_main

from gpssm_np.models import warm_start

SEEDS = (1, 2)
LEFT_OUT = "steamgen"
STEPS_RATIO = 1.25
CHECK = False  # set by --check: fit the first cell of UNCHANGED only
MEANS_AT_MOST = {"causal": 0.99, "simulate": 1.00}
#: The current default's rows (decision AX's), and their variant.
BASELINE = (os.path.join(RESULTS, "decision_ax.jsonl"), "AX")
#: Cells whose AX row chose the ARX floor and kept its GP part at stage 3 (no stage 3b): no LGSSM warm start there.
UNCHANGED = (("drive", 2), ("cd_player_arm", 1), ("cd_player_arm", 2), ("reactor", 1), ("reactor", 2),
             ("hammerstein", 2))


def white_emission_basis(H, Q_l, P):
    """E = [H; V^T N] (research/ablation_plan.md, decision AZ): H E^{-1} = [I, 0], E Q_l E^T block diagonal with a
    diagonal lower block, and the lower states' covariance V^T N P N^T V = I."""
    E = warm_start.emission_basis(H, Q_l)  # its checks, and E = H where d_x = d_y
    d_y = len(H)
    if len(E) == d_y:
        return E
    N = np.linalg.svd(H @ Q_l)[2][d_y:]
    _, V = eigh(N @ Q_l @ N.T, N @ P @ N.T)
    return np.concatenate([H, V.T @ N])


def white_lgssm_patch():
    """AZ's patch: an LGSSM floor's warm start (``_in_emission_basis`` given no basis) in :func:`white_emission_basis`
    with P its stationary prior P0; the training steps counted (``decision_av.counting``). Returns the undo."""
    saved = warm_start._in_emission_basis
    undo_counting = decision_av.counting()

    def in_basis(lgssm, ys, us, basis, driven, bias_input=False):
        if basis is None:
            p = lgssm.get_learned_params()
            basis = white_emission_basis(p["H"], p["Q"], p["P0"])
        return saved(lgssm, ys, us, basis, driven, bias_input)

    warm_start._in_emission_basis = in_basis

    def undo():
        warm_start._in_emission_basis = saved
        undo_counting()
    return undo


def cells():
    """The fitted cells, the default's longest fits first (the check cell apart)."""
    default = rows_of(*BASELINE)
    mine = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS if (n, s) not in UNCHANGED]
    return sorted(mine, key=lambda cell: -default[cell]["fit_seconds"])


def run(out, worker, workers, reverse=False):
    todo = [UNCHANGED[0]] if CHECK else cells()
    run_variant(out, "AZ", todo, white_lgssm_patch, reverse=reverse, extra=decision_av.step_extra())


def decide(out):
    rows, default = rows_of(out, "AZ"), rows_of(*BASELINE, seeds=SEEDS)
    check = UNCHANGED[0]
    if check in rows:
        rel = score_difference((rows[check], default[check]))
        print(f"check {check}: largest relative difference from AX's row {rel:.2e} (at most 1e-8 asked)")
        if rel <= 1e-8:
            rows.update({cell: default[cell] for cell in UNCHANGED[1:]})
    every = [(n, s) for n in NAMES if n != LEFT_OUT for s in SEEDS]
    pairs, missing = against_default("AZ", rows, default, every, SEEDS)
    if not pairs:
        print("no complete cut yet")
        return
    bounds, means = statistics("AZ over the default, seeds 1 and 2", pairs)
    print_changed(pairs, SEEDS)
    ratio = decision_av.training_steps_ratio("AZ", rows, default, pairs, SEEDS)
    seconds_ratio("AZ", rows, default, pairs)
    decision_av.steps_verdict("AZ", missing, bounds, means, ratio, STEPS_RATIO, MEANS_AT_MOST)


if __name__ == "__main__":
    CHECK = "--check" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--check"]
    worker_main(__doc__.splitlines()[0], run, decide)
