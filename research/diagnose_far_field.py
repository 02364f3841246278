"""Diagnosis on the training data only: does the particle filter of a default fit's GP part recover from a start far
off the data? The default fit (DATA, SEED) runs with stage 4's guards recorded but bypassed, so that the refitted
GP part is kept; then the model and the floor (in the model's form) each filter the training record (300 particles)
from q(x0) with its mean displaced by 0, 5, 20 and 100 state standard deviations (the filtered states' spread plus
the spread of their means), and the root mean squared innovation over the record's second half is printed per
displacement (nan or huge: the filter never came back to the data). DATA: a set of research/defaults_check.py or a
plant of research/unseen_plants.py. Both steps are decision K's (research/decision_k.py).

Run: python research/diagnose_far_field.py DATA SEED. This script is the research record's; nothing in the package
imports it.
"""
import os
import sys

import numpy as np

import gpssm_np as gp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unseen_plants as up  # noqa: E402
from decision_k import fit_bypassing_guards, innovation_scores  # noqa: E402
from defaults_check import dataset  # noqa: E402

DISPLACEMENTS = (0, 5, 20, 100)

name, seed = sys.argv[1], int(sys.argv[2])
if name in up.SYSTEMS:
    y, u = up.SYSTEMS[name](np.random.default_rng(2026))
    ds = gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)
else:
    ds = dataset(name)
model, floor_model, g, _ = fit_bypassing_guards(ds, seed)
if g is None:
    sys.exit(f"{name} {seed}: the selection kept no GP part, so stage 4 did not run")
print(name, seed, "guard passed" if g["passed"] else "guard FAILED", {k: g[k] for k in ("model", "floor")},
      g["far_field"])
for who, m in (("model", model), ("floor", floor_model)):
    scores = innovation_scores(m, ds.y_train, ds.u_train, 300, 0, DISPLACEMENTS)
    print(" ", who, "second-half innovation RMSE by displacement (in state sds):", list(scores.items()))
