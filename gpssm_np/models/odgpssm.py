"""ODGPSSM: output-dependent GPSSM, Q latent GPs mixed by a learnable A (Lin et al., ICASSP 2023)."""
from .._config import JITTER
from ..params import GPSSMSpec, check_init_values
from .gpssm import GPSSM, parse_dim_x, resolve_settings, x0_covariance_of


class ODGPSSM(GPSSM):
    """Output-dependent GPSSM: f(x~) = mu(x_{t-1}) + A h(x~) with Q independent latent GPs h_q (paper Eq. (6)).

    Parameters
    ----------
    dim_x : int, "auto", list of int or None
        State dimension. ``"auto"`` (the default with a linear warm start): every ``fit`` takes it from the floor it
        chooses (``models/floor.py``: the ARX's max(na, nb) d_y states or the LGSSM's d_x, of either kind with
        ``init="linear"``, else of the kind named); an int: the floor has that d_x (the LGSSM with d_x states or
        the ARX of d_x / d_y lags); a list: the floor of the lowest fold error among those d_x (every regime of
        ``fit`` and ``initialise`` take it so). ``get_config`` then gives the chosen d_x.
        None: "auto" with a linear warm start, else max(4, dim_y) (the authors' 4). The outputs are the first
        states, so a nonlinear measurement must be carried by the transition in spare states
        (research/results_history.md, section 5.3, the Wiener system).
    dim_y, dim_u : int
        Output and input dimensions (default 1 each). dim_u defaults to 1 in every model of the package (ODGPSSM,
        PRSSM, DSSM, ARX, LGSSM): they identify input-output systems, as in the paper (d_u = 1 on its five data
        sets) and on every benchmark of ``gpssm_np.datasets``; give dim_u=0 for an autonomous system (no inputs).
    num_latent : int
        Q, the number of latent GPs (default: dim_x, as in the authors' code; with a linear ``init``, in every
        regime of ``fit``, min(d_x, max(5, 3 d_y)) of the floor's d_x, ``models/default_fit.num_latent_for``).
    num_inducing : int
        M inducing points per latent GP.
    kernel : {"matern52", "se"}
        Matern-5/2 (the authors' code) or squared exponential, ARD.
    shared_inducing : bool
        One set of inducing inputs Z for all latent GPs (the paper) or one per latent GP (the authors' code).
    whiten : bool
        Whitened q(u) (default, as the authors' code) or q(u) on the inducing outputs directly.
    mean_function : {"zero", "identity", "linear"}
        mu = 0 (authors' code), the identity (residual dynamics, PR-SSM) or mu = F x_{t-1} + G u_t + b with F, G, b
        learned (``gpssm_np.transition``).
    jitter : float
        Added to the diagonal of K(Z, Z) (default 1e-6); ``fit`` raises it tenfold when a Cholesky fails.
    settings : {"default", "authors"}
        "default": the package's recipe (mean_function="linear", init="linear", the default fit of
        ``models/default_fit.py``); "authors": the paper's code (mean_function="zero", init="random", 70
        epochs). Arguments given explicitly override the settings.
    init : {"lgssm", "arx", "linear", "random"}
        The linear floor every ``fit`` starts from (``models/floor.py``, ``models/warm_start.py``; needs
        mean_function="linear"): "lgssm": the linear-Gaussian state-space model ``LGSSM``; "arx": the ``ARX``,
        written as a state-space model of the recent past (``gpssm_np.baselines.arx_state_space``); each at the
        orders its own rolling-origin cross-validation chooses (or at the d_x given); "linear": whichever of the
        two forecasts better on those folds (``warm_start_`` says which); "random": the authors' initialisation.
        None: the settings'.
    seed, backend, kl_weighting, recognition, recognition_options, initial_state, objective, filter_method,
    standardize, **init_values
        See :class:`gpssm_np.models.GPSSM`.
    """

    def __init__(self, dim_x=None, dim_y=1, dim_u=1, num_latent=None, num_inducing=20, kernel="matern52",
                 shared_inducing=True, whiten=True, mean_function=None, seed=0, backend="fused",
                 kl_weighting="unbiased", recognition=None, recognition_options=None, jitter=JITTER, init=None,
                 settings="default", initial_state=None, objective=None, filter_method="particle",
                 standardize=True, **init_values):
        check_init_values(init_values, ODGPSSM.__init__)
        mean_function, init = resolve_settings(settings, mean_function, init)
        dim_x, dim_x_choice = parse_dim_x(dim_x, dim_y, init, recognition)
        spec = GPSSMSpec(dim_x=dim_x, dim_y=dim_y, dim_u=dim_u, num_latent=dim_x if num_latent is None else num_latent,
                         num_inducing=num_inducing, kernel=kernel, whiten=whiten,
                         mean_function=mean_function, shared_inducing=shared_inducing, independent=False,
                         free_x0=recognition is None, x0_covariance=x0_covariance_of(init), jitter=jitter)
        super().__init__(spec, seed=seed, backend=backend, kl_weighting=kl_weighting, recognition=recognition,
                         recognition_options=recognition_options, init=init, settings=settings,
                         initial_state=initial_state, objective=objective, filter_method=filter_method,
                         standardize=standardize, dim_x_choice=dim_x_choice,
                         latent_follows_dim_x=num_latent is None, **init_values)

