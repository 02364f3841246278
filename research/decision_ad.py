"""Decision AD of research/ablation_plan.md (the warm start's ARD lengthscales at the spread of each GP input times
sqrt(D), D the GP's input dimension), on training data only: on the 70/30 cuts of the 25 training halves, training
seeds 1-4, the default fit with AD (variant "AD"), scored on the last 30 % under causal and simulate, against the
default's rows of the same cuts and seeds (decision AC's and research/cut_seeds.py's). One JSON line per (cut,
seed), appended (resumable; two workers can share the file with disjoint seeds).

Run: PYTHONPATH=/work/main:. python research/decision_ad.py research/results/decision_ad.jsonl --seed 1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import json

import numpy as np

from gpssm_np.models import default_fit
from gpssm_np.transforms import positive, positive_inverse

from cut_seeds import default_rows
from decision_ac import print_cuts, seeded_cli, statistics
from decision_m import NAMES, held_out_row
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
    ad = {(r["data"], r["seed"]): r for r in map(json.loads, open(out))}
    default = default_rows()
    names = [n for n in NAMES if all((n, s) in ad for s in SEEDS)]
    missing = [(n, s) for n in NAMES for s in SEEDS if (n, s) not in ad]
    pairs = {n: [(ad[n, s], default[n, s]) for s in SEEDS] for n in names}
    print_cuts("AD", pairs, SEEDS)
    if not names:
        print("no complete cut yet")
        return
    bounds = statistics("AD over the default", pairs)
    statistics("AD over the default, seeds 1-2 alone", {n: p[:2] for n, p in pairs.items()})
    kept = {label: sum(rows[n, s]["gp_part"] for n in names for s in SEEDS) for label, rows in
            (("default", default), ("AD", ad))}
    print(f"fits that kept a GP part: default {kept['default']}, AD {kept['AD']} of {len(names) * len(SEEDS)}")
    geo = {p: float(np.exp(np.mean([np.mean([np.log(a[p] / b[p]) for a, b in pairs[n]]) for n in names])))
           for p in ("causal", "simulate")}
    if missing:
        print(f"not run yet: {len(missing)} fits; nothing adopted")
    elif all(geo[p] < 1 and bounds[p] <= BOUND for p in geo):
        print("AD adopted")
    else:
        print("AD not adopted: the lengthscales stay at the spread")


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
