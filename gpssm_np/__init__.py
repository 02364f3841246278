"""gpssm_np: Gaussian process state-space models (ODGPSSM, PRSSM, their base GPSSM) in NumPy and Numba, beside the
deep state-space model DSSM and the linear models ARX and LGSSM.

Public API::

    import gpssm_np as gp
    m = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=4, num_inducing=20, seed=0)
    value, grad = m.elbo_and_grad(y, u, num_samples=50, seed=0)
"""
import logging

from . import datasets, plotting  # plotting imports matplotlib only when it draws
from .io import load, save
from .baselines import ARX, LGSSM
from .models import DSSM, GPSSM, ODGPSSM, PRSSM, BlockPlan, EpochPlan, Plan
from .protocols import evaluate
from ._version import __version__
from ._warmup import warmup

__all__ = ["ARX", "DSSM", "GPSSM", "LGSSM", "ODGPSSM", "PRSSM", "Plan", "BlockPlan", "EpochPlan", "datasets",
           "evaluate", "load", "plotting", "save", "warmup", "__version__"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
