"""The floor's kind on the training halves where the folds chose the other linear model than the test half would:
does the LGSSM's fold score depend on the EM budget of its fold fits? ``LGSSM(dim_x="auto")`` is fitted with its
folds' fits at 20 EM iterations (``lgssm_order.SELECTION_ITERS``, the package's) and at 50 (the final fit's), beside
``ARX()``'s fold score; training halves only, no test half is read. Prints one JSON line per set: the chosen d_x,
the mean fold error and the seconds for each budget, and the ARX's orders and fold error.

Run: python research/diagnose_lgssm_em.py two_mass three_tanks reactor steamgen winding
This script is the research record's; nothing in the package imports it.
"""
import json
import sys
import time

import gpssm_np as gp
from gpssm_np.baselines import lgssm
from gpssm_np.datasets.folds import mean_error

from defaults_check import dataset

if __name__ == "__main__":
    for name in sys.argv[1:]:
        ds = dataset(name)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        row = {"data": name}
        for iters in (20, 50):
            lgssm.SELECTION_ITERS = iters  # read by LGSSM.fit_for_selection at each call
            start = time.perf_counter()
            model = gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
            row[f"lgssm_{iters}"] = [model.spec.dim_x, round(mean_error(model.fold_errors_), 4),
                                     round(time.perf_counter() - start, 1)]
        arx = gp.ARX(dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
        row["arx"] = [[arx.na_, arx.nb_], round(mean_error(arx.fold_errors_), 4)]
        print(json.dumps(row), flush=True)
