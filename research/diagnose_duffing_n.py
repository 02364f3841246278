"""Decision N's one large held-out loss, diagnosed (research/ablation_plan.md, decision N): the Duffing cut's default
fit (seed 0) scored under simulate with its full q(x0) and with the diagonal of the same q(x0), the model otherwise
the same, over the evaluation seeds 0-3 (the particle filter's and the forecast's random numbers). Prints the
scores; nothing is chosen from them. This script is the research record's; nothing in the package imports it.

Run: python research/diagnose_duffing_n.py
"""
import copy
from dataclasses import replace

import numpy as np

import gpssm_np as gp
from gpssm_np.transforms import positive_inverse

from decision_m import held_out_cut


def with_diagonal_q_x0(model):
    """A copy of ``model`` whose q(x0) is the diagonal of its full one."""
    diagonal = copy.deepcopy(model)
    diagonal.spec = replace(model.spec, x0_covariance="diagonal")
    params = dict(model.params)
    params.pop("x0_sqrt")
    params["x0_var"] = positive_inverse(np.diag(model.q_x0(full_cov=True)[1]))
    diagonal.params = params
    return diagonal


if __name__ == "__main__":
    ds = held_out_cut("duffing")
    full = gp.ODGPSSM(dim_y=1, dim_u=ds.u_train.shape[1], seed=0).fit(ds.y_train, ds.u_train, progress=False)
    diagonal = with_diagonal_q_x0(full)
    for seed in range(4):
        print(f"evaluation seed {seed}: simulate full {gp.evaluate(full, ds, 'simulate', seed=seed)['rmse']:.4f}, "
              f"diagonal {gp.evaluate(diagonal, ds, 'simulate', seed=seed)['rmse']:.4f}")
