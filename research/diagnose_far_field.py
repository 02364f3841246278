"""Diagnosis on the training data only: does the particle filter of a default fit's GP part recover from a start far
off the data? The default fit (DATA, SEED) runs with stage 4's guards recorded but bypassed, so that the refitted
GP part is kept; then the model and the floor (in the model's form) each filter the training record (300 particles)
from q(x0) with its mean displaced by 0, 5, 20 and 100 state standard deviations (the filtered states' spread plus
the spread of their means), and the root mean squared innovation over the record's second half is printed per
displacement (nan or huge: the filter never came back to the data). DATA: a set of research/defaults_check.py or a
plant of research/unseen_plants.py.

Run: python research/diagnose_far_field.py DATA SEED. This script is the research record's; nothing in the package
imports it.
"""
import copy
import os
import sys

import numpy as np

import gpssm_np as gp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpssm_np.models import default_fit as df
import unseen_plants as up
from defaults_check import dataset

name, seed = sys.argv[1], int(sys.argv[2])
if name in up.SYSTEMS:
    y, u = up.SYSTEMS[name](np.random.default_rng(2026))
    ds = gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)
else:
    ds = dataset(name)
kept = {}
orig = df.DefaultFit.guards
def guards(self, floor, ys, us):
    r = orig(self, floor, ys, us)
    as_floor = copy.deepcopy(self.model); self.start(as_floor, floor.model, ys, us, self.seed, gp_share=0.0)
    kept["model"], kept["floor"], kept["guard"] = copy.deepcopy(self.model), as_floor, r
    return dict(r, passed=True)
df.DefaultFit.guards = guards
m = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
m.fit(ds.y_train, ds.u_train, progress=False)
for who in ("model", "floor"):
    params = kept[who].params
    kept[who] = copy.deepcopy(m)
    kept[who].params = params
g = kept["guard"]
print(name, seed, "guard passed" if g["passed"] else "guard FAILED", {k: g[k] for k in ("model", "floor")},
      g["far_field"])
y, u = ds.y_train, ds.u_train
T = len(y)
for who in ("model", "floor"):
    mod = kept[who]
    mean0, var0 = mod.q_x0()
    base = mod.filter(y, u, num_particles=300, seed=0)
    sd = np.sqrt(np.diagonal(base.covs, axis1=1, axis2=2)).mean(0) + np.std(base.means, axis=0)
    out = []
    for k in (0, 5, 20, 100):
        f = mod.online_filter(num_particles=300, seed=0, x0=(mean0 + k * sd, var0))
        errs = []
        with np.errstate(all="ignore"):
            for t in range(T):
                f.update(y[t], u[t])
                errs.append(float(np.mean(f.innovation ** 2)))
        errs = np.array(errs)
        out.append((k, float(np.sqrt(np.mean(errs[T // 2:]))) if np.all(np.isfinite(errs)) else float("nan")))
    print(" ", who, "second-half innovation RMSE by displacement (in state sds):", out)
