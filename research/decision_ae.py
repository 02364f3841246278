"""Decision AE of research/ablation_plan.md (decision V, the latest fold's model at s* in place of stage 4's
refit, replicated on training seeds 1-4), on training data only: on the 70/30 cuts of the 25 training halves, the
default fit with V (variant "AE"), scored on the last 30 % under causal and simulate, against the default's rows
of the same cuts and seeds (``cut_seeds.default_rows``). One JSON line per (cut, seed), appended (resumable; two
workers can share the file with disjoint seeds).

Run: python research/decision_ae.py research/results/decision_ae.jsonl --seed 1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
from gpssm_np.models.default_fit import DefaultFit

from cut_seeds import against_default, rows_of
from decision_ac import fit_seconds, seeded_cli, verdict
from decision_m import held_out_row
from decision_v import V_REFITS, refit_v
from rows import done_keys

SEEDS = (1, 2, 3, 4)
BOUND = 1.02
PROTOCOLS = ("causal", "simulate")


def run(out, names, seed):
    """AE on every cut of ``names`` with training seed ``seed``; each row records how many stage-4 refits V replaced
    ("v_refits")."""
    DefaultFit.refit = refit_v
    done = done_keys(out, "data", "variant", "seed")
    for name in names:
        if (name, "AE", seed) not in done:
            V_REFITS[0] = 0
            held_out_row(out, name, "AE", [("v_refits", lambda model: V_REFITS[0])], seed=seed)


def decide(out):
    """AE's rule (research/ablation_plan.md): adopted if all 100 fits have rows and, under causal and under simulate,
    the upper bound of AE's geometric-mean ratio over the default is at most :data:`BOUND`; beside it, the check that
    rows where AE did not act equal the default's."""
    pairs, missing, bounds, _ = against_default("AE", rows_of(out), SEEDS)
    if bounds is None:
        return
    cells = [cell for p in pairs.values() for cell in p]
    idle = [(ae, default) for ae, default in cells if ae["v_refits"] == 0]
    unequal = [ae["data"] for ae, default in idle if any(ae[p] != default[p] for p in PROTOCOLS)]
    print(f"AE acted on {len(cells) - len(idle)} of {len(cells)} fits; where it did not, rows equal to the "
          f"default's on {len(idle) - len(unequal)} of {len(idle)}" + (f" (not: {unequal})" if unequal else ""))
    fit_seconds("AE", pairs)
    verdict("AE", missing, all(b <= BOUND for b in bounds.values()), "the refit stays")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
