"""Decision T of research/ablation_plan.md (the floor's step 0 of the selection forecast exactly), on training data
only, by the held-out rule of decisions M and N: on the 70/30 cuts of the 25 training halves, seed 0, the current
default fit and the default fit with T (every GP residual at its prior with zero mean taken for the linear Gaussian
model it is, :func:`linear_gaussian_t`), each scored on the last 30 % under causal and simulate. One JSON line per
cut and variant, appended (resumable; two workers can share the file with disjoint ``--variant``s).

Run: python research/decision_t.py research/results/decision_t.jsonl --variant default|T [--data name ...]; then
python research/decision_t.py research/results/decision_t.jsonl --decide. This script is the research record's;
nothing in the package imports it.
"""
import json

import numpy as np

from gpssm_np.models.gpssm import GPSSM
from gpssm_np.params import constrain, prior_q_sqrt

from decision_m import NAMES, held_out_row, held_out_rule
from defaults_check import decision_cli
from rows import done_keys

PACKAGE_RULE = GPSSM.linear_gaussian


def linear_gaussian_t(self):
    """T's rule: the package's, and besides it every GP residual at its whitened prior with zero mean (q_mu = 0,
    q_sqrt = I): the residual adds N(0, s2_q) per latent GP at every input (stationary kernels), so the transition
    covariance is A diag(s2) A^T + diag(q) (A = I for PRSSM)."""
    found = PACKAGE_RULE(self)
    spec, params = self.spec, self.params
    if found is not None or spec.mean_function != "linear" or self.recognition is not None or not spec.whiten:
        return found
    if np.any(params["q_mu"] != 0) or not np.array_equal(params["q_sqrt"], prior_q_sqrt(spec)):
        return None
    p = constrain(params, spec)
    A = np.eye(spec.dim_x) if spec.independent else np.asarray(p["A"])
    s2 = np.broadcast_to(np.asarray(p["variance"]), (A.shape[1],))
    return {"F": np.asarray(p["F"]), "G": np.asarray(p["G"]), "b": np.asarray(p["b"]),
            "H": np.eye(spec.dim_y, spec.dim_x), "Q": (A * s2) @ A.T + np.diag(np.asarray(p["process_var"])),
            "R": np.diag(np.asarray(p["obs_var"]))}


def run(out, names, variant):
    done = done_keys(out, "data", "variant")
    GPSSM.linear_gaussian = linear_gaussian_t if variant == "T" else PACKAGE_RULE
    for name in names:
        if (name, variant) in done:
            continue
        held_out_row(out, name, variant)


def decide(out):
    """T's rule (research/ablation_plan.md): over the 25 cuts, the geometric mean of T's RMSE over the default's at
    most 1.00 under causal and under simulate, and no cut more than 5 % worse under causal."""
    rows = {(r["data"], r["variant"]): r for r in map(json.loads, open(out))}
    missing = [n for n in NAMES if (n, "default") not in rows or (n, "T") not in rows]
    pairs = [(n, rows[n, "default"], rows[n, "T"]) for n in NAMES if n not in missing]
    held_out_rule(pairs, "T", 1.0, 1.0, missing, "step 0 stays the particle forecast")

if __name__ == "__main__":
    decision_cli(run, decide, NAMES, variants=("default", "T"))
