"""PRSSM: the output-independent GPSSM baseline (Doerr et al., ICML 2018), i.e. ODGPSSM with A = I, Q = d_x."""
from .._config import JITTER
from ..params import GPSSMSpec, check_init_values
from .gpssm import GPSSM, parse_dim_x, resolve_settings, x0_covariance_of


class PRSSM(GPSSM):
    """Probabilistic recurrent state-space model: one independent sparse GP per state dimension.

    This is the "LMC off" variant of the authors' code (docs/design.md, authors' code s1-2), which is how the
    paper's PRSSM baseline is defined there. Parameters as :class:`gpssm_np.ODGPSSM` (``dim_x="auto"`` included),
    without num_latent (= dim_x) and A (= I).
    """

    def __init__(self, dim_x=None, dim_y=1, dim_u=1, num_inducing=20, kernel="matern52", shared_inducing=True,
                 whiten=True, mean_function=None, seed=0, backend="fused", kl_weighting="unbiased",
                 recognition=None, recognition_options=None, jitter=JITTER, init=None,
                 settings="default", initial_state=None, objective=None, filter_method="particle",
                 standardize=True, **init_values):
        check_init_values(init_values, PRSSM.__init__)
        mean_function, init = resolve_settings(settings, mean_function, init)
        dim_x, dim_x_choice = parse_dim_x(dim_x, dim_y, init, recognition)
        spec = GPSSMSpec(dim_x=dim_x, dim_y=dim_y, dim_u=dim_u, num_latent=dim_x, num_inducing=num_inducing,
                         kernel=kernel, whiten=whiten, mean_function=mean_function,
                         shared_inducing=shared_inducing, independent=True, free_x0=recognition is None,
                         x0_covariance=x0_covariance_of(init), jitter=jitter)
        super().__init__(spec, seed=seed, backend=backend, kl_weighting=kl_weighting, recognition=recognition,
                         recognition_options=recognition_options, init=init, settings=settings,
                         initial_state=initial_state, objective=objective, filter_method=filter_method,
                         standardize=standardize, dim_x_choice=dim_x_choice,
                         latent_follows_dim_x=True, **init_values)
