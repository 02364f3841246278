"""Decision AD of research/ablation_plan.md (the warm start's ARD lengthscales at the spread of each GP input times
sqrt(D), D the GP's input dimension), on training data only: on the 70/30 cuts of the 25 training halves, training
seeds 1-4, the default fit with AD (variant "AD"), scored on the last 30 % under causal and simulate, against the
default's rows of the same cuts and seeds (decision AC's and research/cut_seeds.py's). One JSON line per (cut,
seed), appended (resumable; two workers can share the file with disjoint seeds).

Run: python research/decision_ad.py research/results/decision_ad.jsonl --seed 1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import numpy as np

from gpssm_np.models import default_fit
from gpssm_np.transforms import positive, positive_inverse

from cut_seeds import against_default, rows_of
from decision_ac import seeded_cli, verdict
from decision_m import held_out_row
from rows import done_keys

SEEDS = (1, 2, 3, 4)
BOUND = 1.02
PACKAGE_INITIAL_PARAMS = default_fit.initial_params


def initial_params_ad(spec, params, start, us, rng, **kwargs):
    """The package's warm start with every ARD lengthscale multiplied by sqrt(D), D = d_x + d_u (its last axis)."""
    new = PACKAGE_INITIAL_PARAMS(spec, params, start, us, rng, **kwargs)
    lengthscale = positive(new["lengthscale"])
    new["lengthscale"] = positive_inverse(lengthscale * np.sqrt(lengthscale.shape[-1]))
    return new


def run(out, names, seed):
    """AD on every cut of ``names`` with training seed ``seed``."""
    default_fit.initial_params = initial_params_ad
    done = done_keys(out, "data", "variant", "seed")
    for name in names:
        if (name, "AD", seed) not in done:
            held_out_row(out, name, "AD", seed=seed)


def decide(out):
    """AD's rule (research/ablation_plan.md): adopted if all 100 fits have rows and, under causal and under
    simulate, the geometric-mean ratio of AD over the default is below 1 and its upper bound at most :data:`BOUND`."""
    pairs, missing, bounds, geo = against_default("AD", rows_of(out), SEEDS)
    if bounds is None:
        return
    cells = [cell for p in pairs.values() for cell in p]
    print(f"fits that kept a GP part: default {sum(d['gp_part'] for _, d in cells)}, AD "
          f"{sum(a['gp_part'] for a, _ in cells)} of {len(cells)}")
    verdict("AD", missing, all(geo[p] < 1 and bounds[p] <= BOUND for p in geo),
            "the lengthscales stay at the spread")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
