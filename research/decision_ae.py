"""Decision AE of research/ablation_plan.md (decision V, the latest fold's model at s* in place of stage 4's
refit, replicated on training seeds 1-4), on training data only: on the 70/30 cuts of the 25 training halves, the
default fit with V (variant "AE"), scored on the last 30 % under causal and simulate, against the default's rows
of the same cuts and seeds (``cut_seeds.default_rows``). One JSON line per (cut, seed), appended (resumable; two
workers can share the file with disjoint seeds).

Run: PYTHONPATH=/work/main:. python research/decision_ae.py research/results/decision_ae.jsonl --seed 1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import json

import numpy as np

from gpssm_np.models.default_fit import DefaultFit

from cut_seeds import default_rows
from decision_ac import print_cuts, seeded_cli, statistics
from decision_m import NAMES, held_out_row
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
    ae = {(r["data"], r["seed"]): r for r in map(json.loads, open(out))}
    default = default_rows()
    names = [n for n in NAMES if all((n, s) in ae for s in SEEDS)]
    missing = [(n, s) for n in NAMES for s in SEEDS if (n, s) not in ae]
    pairs = {n: [(ae[n, s], default[n, s]) for s in SEEDS] for n in names}
    print_cuts("AE", pairs, SEEDS)
    if not names:
        print("no complete cut yet")
        return
    bounds = statistics("AE over the default", pairs)
    statistics("AE over the default, seeds 1-2 alone", {n: p[:2] for n, p in pairs.items()})
    idle = [key for key, row in ae.items() if row["v_refits"] == 0]
    unequal = [key for key in idle if any(ae[key][p] != default[key][p] for p in PROTOCOLS)]
    print(f"AE acted on {len(ae) - len(idle)} of {len(ae)} fits; where it did not, rows equal to the default's on "
          f"{len(idle) - len(unequal)} of {len(idle)}" + (f" (not: {unequal})" if unequal else ""))
    seconds = [ae[key]["fit_seconds"] / default[key]["fit_seconds"] for key in ae if key in default]
    print(f"fit seconds, AE over the default: geometric mean {np.exp(np.mean(np.log(seconds))):.3f} (not a clean "
          "timing)")
    if missing:
        print(f"not run yet: {len(missing)} fits; nothing adopted")
    elif all(b <= BOUND for b in bounds.values()):
        print("AE adopted")
    else:
        print("AE not adopted: the refit stays")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
