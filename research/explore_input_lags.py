"""Exploration for docs/results.md 6.19 and amendment 17 of research/ablation_plan.md (no default depends on it): the GP
model given lagged inputs.

The ARX wins dryer2 with nb = 10 input lags, which a state-space model would have to carry as states. Here the
inputs themselves are augmented, u~_t = [u_t, u_{t-1}, ..., u_{t-k}] (zeros before the start; k = nb - 1 with nb
the ARX's own choice on the fitted part), and the default ODGPSSM (``init`` as given) is fitted to the first 80 %
of a training half and scored on the held-out rest as the ablation's cells are (``ablation.held_out_metrics``).
Only training halves are read.

Run: ``GPSSM_NP_DATA=../shared/data python research/explore_input_lags.py dryer2 0 arx`` (data set, seed, init); one
JSON line per run on stdout.

``python research/explore_input_lags.py dryer2 choice``: what a choice on the training part would see, without any GP
training: on the data the default fit chooses its warm start from (the fitted part in model units, less its
validation block), the warm start's cross-validation scores (``warm_start.choose_warm_start``, both kinds, every
candidate d_x) without lags and with k = nb - 1 lags, nb the ARX's selection on the same data.
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ablation import held_out_metrics, held_out_start, training_half  # noqa: E402 (research/ablation.py)
from gpssm_np import ODGPSSM  # noqa: E402
from gpssm_np.baselines import ARX  # noqa: E402
from gpssm_np.models.training import split_validation  # noqa: E402
from gpssm_np.models.warm_start import WARM_START_KINDS, choose_warm_start  # noqa: E402
from gpssm_np.ops.threads import use_threads  # noqa: E402
from gpssm_np.units import Scaling  # noqa: E402


def lagged(u, k):
    """[u_t, u_{t-1}, ..., u_{t-k}] (T, (k + 1) d_u), zeros before the start."""
    return np.concatenate([np.vstack([np.zeros((j, u.shape[1])), u[:len(u) - j]]) for j in range(k + 1)], axis=1)


def main(name, seed, init):
    y, u = training_half(name, os.environ.get("GPSSM_NP_DATA"))
    cut = held_out_start(len(y), 0.2)
    nb = len(ARX(dim_y=y.shape[1], dim_u=u.shape[1]).fit(y[:cut], u[:cut]).get_learned_params()["b"])
    ua = lagged(u, max(nb - 1, 0))
    start = time.time()
    with use_threads(1):
        model = ODGPSSM(dim_y=y.shape[1], dim_u=ua.shape[1], seed=seed, init=init).fit(y[:cut], ua[:cut])
        row = held_out_metrics(model, y, ua, cut)
    scores = [r["rmse"] for r in model.validation_ if r["rmse"] is not None]
    return {"dataset": name, "seed": seed, "init": init, "nb": nb, "dim_u": ua.shape[1], "dim_x": model.spec.dim_x,
            "warm_start": model.warm_start_, "initial": scores[0], "selected": min(scores),
            "seconds": time.time() - start, **row}


def choice(name):
    """The warm start's cross-validation with and without lagged inputs (module docstring); training data only."""
    y, u = training_half(name, os.environ.get("GPSSM_NP_DATA"))
    cut = held_out_start(len(y), 0.2)
    [(y, u)] = Scaling.of([y[:cut]], [u[:cut]]).to_model([(y[:cut], u[:cut])])  # the fit's own standardisation
    (y,), (u,), _ = split_validation([y], [u], 0.2)
    with use_threads(1):
        nb = len(ARX(dim_y=y.shape[1], dim_u=u.shape[1]).fit(y, u).get_learned_params()["b"])
        row = {"dataset": name, "nb": nb}
        for k in sorted({0, max(nb - 1, 0)}):
            kind, d_x, scores = choose_warm_start([y], [lagged(u, k)], WARM_START_KINDS)
            row[f"lags_{k}"] = {"kind": kind, "dim_x": d_x, "score": scores[kind][d_x],
                                "scores": {kk: {str(d): v for d, v in s.items()} for kk, s in scores.items()}}
    return row


if __name__ == "__main__":
    if sys.argv[2] == "choice":
        print(json.dumps(choice(sys.argv[1])))
    else:
        print(json.dumps(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "linear")))
