"""ODGPSSM: output-dependent GPSSM, Q latent GPs mixed by a learnable A (Lin et al., ICASSP 2023)."""
from .._config import JITTER
from ..params import GPSSMSpec
from .gpssm import GPSSM


class ODGPSSM(GPSSM):
    """Output-dependent GPSSM: f(x~) = mu(x_{t-1}) + A h(x~) with Q independent latent GPs h_q (paper Eq. MOGP_LMC).

    Parameters
    ----------
    dim_x, dim_y, dim_u : int
        State, output and input dimensions (dim_u = 0 for an autonomous system).
    num_latent : int
        Q, the number of latent GPs (default: dim_x, as in the authors' code).
    num_inducing : int
        M inducing points per latent GP.
    kernel : {"matern52", "se"}
        Matern-5/2 (the authors' code) or squared exponential, ARD.
    shared_inducing : bool
        One set of inducing inputs Z for all latent GPs (the paper) or one per latent GP (the authors' code).
    whiten : bool
        Whitened q(u) (default, as the authors' code) or q(u) on the inducing outputs directly.
    mean_function : {"zero", "identity"}
        mu = 0 (authors' code) or the identity (residual dynamics, PR-SSM).
    jitter : float
        Added to the diagonal of K(Z, Z) (default 1e-6); ``fit`` raises it tenfold when a Cholesky fails.
    seed, backend, kl_weighting, recognition, recognition_options, **init
        See :class:`gpssm_np.models.GPSSM`.
    """

    def __init__(self, dim_x, dim_y, dim_u=0, num_latent=None, num_inducing=20, kernel="matern52",
                 shared_inducing=True, whiten=True, mean_function="zero", seed=0, backend="fused",
                 kl_weighting="unbiased", recognition=None, recognition_options=None, jitter=JITTER, **init):
        spec = GPSSMSpec(dim_x=dim_x, dim_y=dim_y, dim_u=dim_u, num_latent=dim_x if num_latent is None else num_latent,
                         num_inducing=num_inducing, kernel=kernel, whiten=whiten,
                         residual=residual_flag(mean_function), shared_inducing=shared_inducing, independent=False,
                         free_x0=recognition is None, jitter=jitter)
        super().__init__(spec, seed=seed, backend=backend, kl_weighting=kl_weighting, recognition=recognition,
                         recognition_options=recognition_options, **init)


def residual_flag(mean_function):
    """True for the identity mean function (residual dynamics), False for zero; ValueError otherwise."""
    if mean_function not in ("zero", "identity"):
        raise ValueError(f"mean_function: expected 'zero' or 'identity', got {mean_function!r}")
    return mean_function == "identity"
