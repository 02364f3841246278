r"""Model configuration, parameter initialisation and the constrained view of the parameters.

Unconstrained parameters (the dict that ``get_learned_params`` returns and the optimiser moves). Q latent GPs, M
inducing points, D = d_x + d_u GP input dimension:

==============  =======================  ==========================================================
name            shape                    meaning (constrained value)
==============  =======================  ==========================================================
Z               (M, D) or (Q, M, D)      inducing inputs, shared by the Q GPs (paper) or one set each
lengthscale     (Q, D)                   ARD lengthscales l_q = positive(raw)
variance        (Q,)                     kernel variances s2_q = positive(raw)
q_mu            (Q, M)                   mean of q(v_q) (whitened) or q(u_q)
q_sqrt          (Q, M, M)                its Cholesky factor; only the lower triangle is used
A               (d_x, Q)                 LMC mixing matrix (ODGPSSM only; PRSSM has A = I)
process_noise   (d_x,)                   process-noise variances q = positive(raw)
obs_noise       (d_y,)                   observation-noise variances r = positive(raw)
x0_mean         (d_x,)                   mean of the free Gaussian q(x0) (absent with a recognition network)
x0_var          (d_x,)                   its diagonal covariance = positive(raw) (``x0_covariance="diagonal"``)
x0_sqrt         (d_x, d_x)               or its covariance's Cholesky factor (``"full"``; lower triangle used)
F               (d_x, d_x)               linear mean mu = F x + G u + b (mean_function="linear" only)
G               (d_x, d_u)               its input matrix
b               (d_x,)                   its offset
==============  =======================  ==========================================================

positive(raw) = softplus(raw) + 1e-6 (``transforms.positive``). A recognition network for q(x0) adds its own
``rec_*`` parameters (``recognition.py``).
"""
import numbers
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np

from . import _validation as check
from ._config import JITTER, POSITIVE_FLOOR
from .gp import inducing_gram
from .ops.kernels import kernel_code
from .transforms import lower_triangle, positive, positive_inverse

#: Mean functions of the transition (``transition.py``): mu = 0, mu = x_{t-1}, mu = F x_{t-1} + G u_t + b.
MEAN_FUNCTIONS = ("zero", "identity", "linear")


def check_mean_function(mean_function):
    """``mean_function`` if it names a mean function, else ValueError."""
    if mean_function not in MEAN_FUNCTIONS:
        raise ValueError(f"mean_function: expected one of {MEAN_FUNCTIONS}, got {mean_function!r}")
    return mean_function


#: Covariances of the free Gaussian q(x0) (:class:`GPSSMSpec`): diagonal (the authors'), or full, which a linear warm
#: start needs to hold its stationary prior exactly (``models/warm_start.py``, step 4).
X0_COVARIANCES = ("diagonal", "full")


#: Initial values of the authors' code, as it behaves (docs/design.md, authors' code s3-4, s12): GPyTorch's raw
#: zeros give softplus(0) = 0.693 for lengthscales, variances and the per-task noises; R adds the global noise 1.
AUTHORS_INIT = {
    "lengthscale": float(np.log(2.0)),
    "variance": float(np.log(2.0)),
    "process_noise": float(np.log(2.0)),
    "obs_noise": 1.0 + float(np.log(2.0)),
    "x0_var": 1.0,
}


@dataclass(frozen=True)
class GPSSMSpec:
    """Static configuration of a sparse-GP state-space model (everything that is not a learned array)."""

    dim_x: int
    dim_y: int
    dim_u: int
    num_latent: int
    num_inducing: int
    kernel: str = "matern52"
    whiten: bool = True
    mean_function: str = "zero"  # "zero", "identity" or "linear" (transition.py)
    shared_inducing: bool = True
    independent: bool = False  # A = I, Q = d_x (PRSSM)
    free_x0: bool = True  # q(x0) a free Gaussian (x0_mean and x0_var or x0_sqrt); False for a recognition network
    x0_covariance: str = "diagonal"  # of the free q(x0): "diagonal" (x0_var) or "full" (x0_sqrt)
    jitter: float = JITTER  # added to the diagonal of K(Z, Z); raised adaptively by fit on a failed Cholesky

    def __post_init__(self):
        # each stored as the Python int it was checked to be: a NumPy integer (np.arange gives them) is no JSON type
        for name in ("dim_x", "dim_y", "num_latent", "num_inducing"):  # a bool is refused, though Python counts it
            object.__setattr__(self, name, check.positive_int(getattr(self, name), name))  # an int
        object.__setattr__(self, "dim_u", check.non_negative_int(self.dim_u, "dim_u"))
        for name in ("whiten", "shared_inducing", "independent", "free_x0"):
            check.boolean(getattr(self, name), name)  # a truthy string would silently read as True
        if self.dim_y > self.dim_x:
            raise ValueError(f"dim_y: the emission C = [I, 0] needs dim_y <= dim_x, got {self.dim_y} > {self.dim_x}")
        object.__setattr__(self, "jitter", check.fraction(self.jitter, "jitter"))
        if self.independent and self.num_latent != self.dim_x:
            raise ValueError(f"num_latent: independent GPs need num_latent == dim_x, got {self.num_latent}")
        if self.x0_covariance not in X0_COVARIANCES:
            raise ValueError(f"x0_covariance: expected one of {X0_COVARIANCES}, got {self.x0_covariance!r}")
        kernel_code(self.kernel)
        check_mean_function(self.mean_function)

    @property
    def dim_in(self):
        """GP input dimension D = d_x + d_u."""
        return self.dim_x + self.dim_u

    def param_shapes(self):
        """Name -> shape of every unconstrained parameter."""
        Q, M, D = self.num_latent, self.num_inducing, self.dim_in
        shapes = {
            "Z": (M, D) if self.shared_inducing else (Q, M, D),
            "lengthscale": (Q, D),
            "variance": (Q,),
            "q_mu": (Q, M),
            "q_sqrt": (Q, M, M),
            "process_noise": (self.dim_x,),
            "obs_noise": (self.dim_y,),
        }
        if self.free_x0:
            shapes["x0_mean"] = (self.dim_x,)
            if self.x0_covariance == "full":
                shapes["x0_sqrt"] = (self.dim_x, self.dim_x)
            else:
                shapes["x0_var"] = (self.dim_x,)
        if not self.independent:
            shapes["A"] = (self.dim_x, Q)
        if self.mean_function == "linear":
            shapes["F"] = (self.dim_x, self.dim_x)
            shapes["G"] = (self.dim_x, self.dim_u)
            shapes["b"] = (self.dim_x,)
        return shapes


#: The initial values the GP models' constructors take as keyword arguments and pass to :func:`init_params`.
INIT_VALUES = ("lengthscale", "variance", "process_noise", "obs_noise", "x0_var", "inducing_range")


def check_init_values(values, constructor=None):
    """``values`` (keyword arguments) if each is named in :data:`INIT_VALUES`; else ValueError naming the unknown
    ones and the valid ones: those and, when given, the named parameters of ``constructor`` (a model's
    ``__init__``, whose other arguments end up in ``values``; ``_validation.keywords``). A numeric value beyond
    ``_validation.LARGEST_VALUE`` is a ValueError naming it too (a model file refuses such parameters)."""
    check.keywords(values, constructor, INIT_VALUES, owner=None if constructor else "init_params")
    for name, value in values.items():
        array = np.asarray(value) if isinstance(value, (numbers.Real, np.ndarray, list, tuple)) else None
        if array is not None and array.dtype.kind in "biuf":
            check.bounded(array.astype(np.float64), name)
    return values


def prior_q_sqrt(spec):
    """The whitened q(u)'s square root at the prior, q_sqrt = I (M, M) for each of the Q latent GPs: (Q, M, M)."""
    return np.tile(np.eye(spec.num_inducing), (spec.num_latent, 1, 1))


def init_params(spec, rng, lengthscale=None, variance=None, process_noise=None, obs_noise=None, x0_var=None,
                inducing_range=2.0, **unknown):
    """Initial unconstrained parameters, following the authors' code unless told otherwise.

    Z ~ U[-inducing_range, inducing_range]; q_mu ~ 1e-3 N(0, 1) and q_sqrt = I (GPyTorch's first-call
    initialisation of a whitened q(u)); unwhitened q(u) starts at the prior, q_sqrt = chol(K(Z, Z)); A ~ N(0, 1);
    q(x0) = N(0, x0_var I) (x0_sqrt = sqrt(x0_var) I for a full q(x0)); the linear mean starts as the identity
    (F = I, G = 0, b = 0), i.e. as PR-SSM's residual dynamics, until a warm start (``models/warm_start.py``) sets
    it. Scalars given for lengthscale, variance, process_noise, obs_noise, x0_var override :data:`AUTHORS_INIT`.
    Any other keyword, and a value beyond ``_validation.LARGEST_VALUE``, is a ValueError (:func:`check_init_values`).
    """
    given = {"lengthscale": lengthscale, "variance": variance, "process_noise": process_noise, "obs_noise": obs_noise,
             "x0_var": x0_var}
    check_init_values(dict(unknown, inducing_range=inducing_range,
                           **{name: value for name, value in given.items() if value is not None}))
    if (isinstance(inducing_range, (bool, np.bool_)) or not isinstance(inducing_range, (int, float, np.integer,
                                                                                         np.floating))
            or not (np.isfinite(inducing_range) and inducing_range > 0)):
        raise ValueError(f"inducing_range: expected a positive finite number r (Z ~ U[-r, r]), got {inducing_range!r}")
    values = dict(AUTHORS_INIT)
    shapes = spec.param_shapes()
    for name, value in given.items():
        if value is not None:
            array = np.asarray(value)
            if array.dtype.kind not in "biuf" or not np.all(np.isfinite(array)) or np.any(array <= POSITIVE_FLOOR):
                raise ValueError(f"{name}: expected positive finite values (above {POSITIVE_FLOOR}), got {value!r}")
            shape = shapes.get(name, (spec.dim_x,))  # x0_var also sets a full q(x0)'s diagonal
            try:
                np.broadcast_to(array, shape)
            except ValueError:
                raise ValueError(f"{name}: expected a number or an array that broadcasts to shape {shape}, got shape "
                                 f"{array.shape}") from None
            values[name] = value
    params = {
        "Z": rng.uniform(-inducing_range, inducing_range, size=shapes["Z"]),
        "q_mu": 1e-3 * rng.normal(size=shapes["q_mu"]),
        "q_sqrt": prior_q_sqrt(spec),
    }
    if spec.free_x0:
        params["x0_mean"] = np.zeros(spec.dim_x)
        if spec.x0_covariance == "full":
            params["x0_sqrt"] = np.sqrt(values["x0_var"]) * np.eye(spec.dim_x)
    if not spec.independent:
        params["A"] = rng.normal(size=shapes["A"])
    if spec.mean_function == "linear":
        params.update(F=np.eye(spec.dim_x), G=np.zeros(shapes["G"]), b=np.zeros(spec.dim_x))
    for name in ("lengthscale", "variance", "process_noise", "obs_noise", "x0_var"):
        if name in shapes:
            params[name] = np.broadcast_to(positive_inverse(values[name]), shapes[name]).copy()
    if not spec.whiten:
        Kzz = inducing_gram(constrain(params, spec), spec)
        params["q_sqrt"] = np.linalg.cholesky(Kzz)
    return params


def constrain(params, spec):
    """The constrained values used by the model (autograd-differentiable). Z is always (Q, M, D); A is the
    identity for independent GPs."""
    Z = params["Z"]
    if spec.shared_inducing:
        Z = Z[None] + anp.zeros((spec.num_latent, 1, 1))  # (Q, M, D), gradients summed over q
    constrained = {
        "Z": Z,
        "lengthscale": positive(params["lengthscale"]),
        "variance": positive(params["variance"]),
        "q_mu": params["q_mu"],
        "q_sqrt": lower_triangle(params["q_sqrt"]),
        "A": np.eye(spec.dim_x) if spec.independent else params["A"],
        "process_var": positive(params["process_noise"]),
        "obs_var": positive(params["obs_noise"]),
    }
    if spec.free_x0:
        constrained["x0_mean"] = params["x0_mean"]
        if spec.x0_covariance == "full":
            constrained["x0_sqrt"] = lower_triangle(params["x0_sqrt"])
        else:
            constrained["x0_var"] = positive(params["x0_var"])
    if spec.mean_function == "linear":
        constrained.update(F=params["F"], G=params["G"], b=params["b"])
    return constrained
