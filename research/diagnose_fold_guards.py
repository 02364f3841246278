"""Where stage 4's guards drop the refitted GP part, do the selection's fold models pass them? For each fit, the
guards' result of the refitted model beside that of every fold model of the chosen step-size candidate at s*
(trained on the data before its origin), each checked on the whole training record against the floor in the
model's form (``DefaultFit.guards``, the package's own). Training halves only (``defaults_check.dataset``); no test
half is read. One JSON line per fit on stdout. ``--refit-steps``: also the guards' result of the refit stopped at
each evaluation step before s* (``plan.eval_every``, 2 eval_every, ...; a prefix of the s*-step refit: its windows
grow at the same steps and its random numbers are the same): would an earlier stop have kept a part?

Run: python research/diagnose_fold_guards.py ballbeam --seeds 0 1 [--refit-steps]
This script is the research record's; nothing in the package imports it.
"""
import argparse
import copy
import json

import gpssm_np as gp
from gpssm_np.models import default_fit

from defaults_check import dataset

GUARDS = default_fit.DefaultFit.guards


def guards_with_folds(found, refit_steps=False):
    """``DefaultFit.guards`` that also appends, to ``found``, the same guards' result for every fold model (each put
    in the refitted model's place while they run) and, with ``refit_steps``, for the refit stopped at each
    evaluation step before s*."""
    def guards(self, floor, ys, us):
        result = GUARDS(self, floor, ys, us)
        earlier = []
        if refit_steps:
            final = copy.deepcopy(self.model.params)
            for step in range(self.plan.eval_every, self.accepted, self.plan.eval_every):
                self.refit(floor, ys, us, step)
                earlier.append(dict(GUARDS(self, floor, ys, us), step=step))
            self.model.params = final
        refitted, per = self.model, len(self.runs) // len(self.plan.lr_scales)
        folds = []
        for k in range(self.candidate * per, (self.candidate + 1) * per):
            self.model = self.runs[k][0]
            self.model.set_learned_params(self.kept[self.accepted][k])
            folds.append(GUARDS(self, floor, ys, us))
        self.model = refitted
        found.append({"kind": floor.kind, "step": self.accepted, "refit": result, "folds": folds,
                      **({"earlier_refits": earlier} if refit_steps else {})})
        return result
    return guards


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="+")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--refit-steps", action="store_true")
    args = parser.parse_args()
    for name in args.names:
        ds = dataset(name)
        for seed in args.seeds:
            found = []
            default_fit.DefaultFit.guards = guards_with_folds(found, args.refit_steps)
            gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed).fit(ds.y_train, ds.u_train)
            print(json.dumps({"data": name, "seed": seed, "guards": found}), flush=True)
