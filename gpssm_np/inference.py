r"""The ELBO of the paper (Eq. (11)), reparameterised, and EnVI's ensemble-Kalman objective, with three
interchangeable backends.

For B sequences y^(i)_{1:T} with inputs u^(i)_{1:T} and S particles each, the ``"prior"`` objective (the paper's)::

    L = c_data * sum_i [sum_t mean_s log N(y_t^i | C x_t^(i,s), diag r) - KL(q(x0) || p(x0))]
        - c_inducing * KL(q(u) || p(u))

with C = [I_{d_y}, 0], p(x0) = N(0, I), u the inducing outputs (not the inputs), and the particles x^(i,s)_{1:T}
drawn from q(x_t | x_{t-1}) (paper Eq. (12)) by ``ops.rollout``: they never see the outputs. The ``"enkf"``
objective (EnVI, Lin et al., IEEE TSP 2024, Eq. (23)) filters each window's S particles with a perturbed-observation
ensemble Kalman filter through the same transition and scores each output under the ensemble's one-step predictive
(EnVI Eq. (27))::

    L = c_data * sum_i [sum_t log N(y_t^i | C mbar_t^i, C Pbar_t^i C^T + diag r) - KL(q(x0) || p(x0))]
        - c_inducing * KL(q(u) || p(u))

with mbar, Pbar the predicted ensemble's mean and covariance (``ops.enkf``, which has the update's equations).
Same windows, q(x0) options and weightings; EnVI's code instead divides the data term by d_y and KL(q(u)) by T B,
which the ``"paper"`` weighting approximates. The KL weighting (c_data, c_inducing) is selectable:

* ``"unbiased"``: c_data = num_windows / B, c_inducing = 1. With num_windows the number of windows in the whole
  data set (B when the sequences given are all the data) this is an unbiased estimate of the full-data ELBO.
* ``"paper"``: c_data = 1 / B, c_inducing = 1 / T (the authors' code: data term averaged over the batch,
  KL(q(u)||p(u)) divided by the window length; docs/design.md, authors' code s6).

Backends (identical value and gradient for the same parameters and noise):

* ``"fused"``: ``ops.rollout`` (``ops.enkf``), one Numba primitive for the whole (B, S, T) rollout (filter);
* ``"ops"``: a Python loop over time built from the Numba primitives kernel_matrix, conditional_moments, lmc_mean;
* ``"reference"``: plain autograd.numpy, no Numba.

The transition itself (mean function, K(Z, Z), precompute, rollout by backend, KL(q(u) || p(u))) is
``transition.Transition``; this module adds q(x0), the likelihood and the weighting.

All noise is drawn by :func:`draw_noise` outside the differentiated function, so for fixed noise the ELBO is a
deterministic function of the parameters.
"""
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np

from .gp import kl_diag_standard_normal, kl_inducing
from .ops.threads import run_blocks
from .ops.likelihood import expected_log_lik, expected_log_lik_reference
from .params import constrain
from .transition import Transition

KL_WEIGHTINGS = ("unbiased", "paper")
OBJECTIVES = ("prior", "enkf")


def check_objective(objective):
    """``objective`` if it names an objective, else ValueError."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {OBJECTIVES}, got {objective!r}")
    return objective


@dataclass(frozen=True)
class Noise:
    """Standard-normal draws for one ELBO evaluation: eps0 (N, d_x), eps_h (T, N, Q), eps_x (T, N, d_x), and for
    the ensemble Kalman objective the observation perturbations eps_y (T, N, d_y) (None otherwise); particle n
    belongs to sequence n // S."""

    eps0: np.ndarray
    eps_h: np.ndarray
    eps_x: np.ndarray
    eps_y: np.ndarray = None


#: The noise of one ELBO is drawn in this many fixed chunks, each from its own generator, so that kernel threads can
#: draw them in parallel while the numbers depend only on the seed (not on the thread count).
NOISE_CHUNKS = 4


def _fill_chunks(first, last, generators, chunks):
    for k in range(first, last):
        generators[k].standard_normal(out=chunks[k])


def _fill_standard_normal(buffer, entropy):
    """Fill ``buffer`` with standard normals from NOISE_CHUNKS SFC64 generators seeded by SeedSequence(entropy),
    the chunks handed to the kernel threads like the kernels' blocks (NumPy releases the GIL while it fills)."""
    generators = [np.random.Generator(np.random.SFC64(seq))
                  for seq in np.random.SeedSequence(entropy).spawn(NOISE_CHUNKS)]
    run_blocks(_fill_chunks, NOISE_CHUNKS, generators, np.array_split(buffer, NOISE_CHUNKS))


def draw_noise(rng, num_sequences, num_samples, T, dim_x, num_latent, dim_y=0):
    """Draw :class:`Noise` for B = num_sequences sequences of length T with S = num_samples particles each, with
    observation perturbations eps_y when ``dim_y`` > 0 (the ensemble Kalman objective).

    One 63-bit integer is taken from ``rng`` (a second one for eps_y); it seeds the generators that draw all the
    normals (see :data:`NOISE_CHUNKS`), so the noise is a function of ``rng``'s state alone, with any number of
    threads, and eps0, eps_h, eps_x do not depend on ``dim_y``."""
    N = num_sequences * num_samples
    sizes = (N * dim_x, T * N * num_latent, T * N * dim_x)
    buffer = np.empty(sum(sizes))
    _fill_standard_normal(buffer, int(rng.integers(0, 2**63)))
    eps0, eps_h, eps_x = np.split(buffer, np.cumsum(sizes)[:2])
    eps_y = None
    if dim_y:
        eps_y = np.empty((T, N, dim_y))
        _fill_standard_normal(eps_y.reshape(-1), int(rng.integers(0, 2**63)))
    return Noise(eps0.reshape(N, dim_x), eps_h.reshape(T, N, num_latent), eps_x.reshape(T, N, dim_x), eps_y)


def kl_weights(kl_weighting, num_sequences, T, num_windows=None):
    """(c_data, c_inducing) of the module docstring."""
    if kl_weighting == "unbiased":
        total = num_sequences if num_windows is None else num_windows
        return total / num_sequences, 1.0
    if kl_weighting == "paper":
        return 1.0 / num_sequences, 1.0 / T
    raise ValueError(f"kl_weighting: expected one of {KL_WEIGHTINGS}, got {kl_weighting!r}")


def q_x0(params, spec, y, u, backend="fused", recognition=None):
    """q(x0) for each of the B sequences: (mean, var), each (B, d_x) or (1, d_x) for the free Gaussian; for a free
    Gaussian with a full covariance (``spec.x0_covariance == "full"``), (mean (1, d_x), its Cholesky factor
    (1, d_x, d_x))."""
    if recognition is not None:
        return recognition.q_x0(params, y, u, backend)
    p = constrain(params, spec)
    return p["x0_mean"][None], p["x0_sqrt" if spec.x0_covariance == "full" else "x0_var"][None]


def initial_particles(m0, spread, eps0, num_sequences):
    """x0 draws (N, d_x) from q(x0) = N(m0, diag v0) per sequence (``spread`` v0 (B or 1, d_x)) or N(m0, L L^T)
    (``spread`` L (1, d_x, d_x)), with the standard normals ``eps0`` (N, d_x), and KL(q(x0) || N(0, I)) ((B,) or
    (1,)). Particle n belongs to sequence n // S."""
    repeats = eps0.shape[0] // m0.shape[0] if m0.shape[0] == num_sequences else eps0.shape[0]
    if spread.ndim == 3:  # a full covariance, the same for every sequence
        return m0 + eps0 @ spread[0].T, anp.reshape(kl_inducing(m0, spread), (1,))
    x0 = anp.repeat(m0, repeats, axis=0) + anp.sqrt(anp.repeat(spread, repeats, axis=0)) * eps0
    return x0, kl_diag_standard_normal(m0, spread)


def elbo(params, spec, y, u, noise, backend="fused", kl_weighting="unbiased", num_windows=None, recognition=None,
         x0=None, objective="prior"):
    """ELBO of B sequences under ``objective`` ("prior" or "enkf"; see the module docstring).

    Parameters
    ----------
    params : dict
        Unconstrained parameters (``params.GPSSMSpec.param_shapes``).
    spec : GPSSMSpec
    y : array (B, T, d_y)
    u : array (B, T, d_u)
        d_u may be 0.
    noise : Noise
        From :func:`draw_noise` with the same B and T (and ``dim_y`` for the "enkf" objective).
    recognition : recognition network or None
        Gives q(x0) from each window (``recognition.py``); None for the free Gaussian q(x0) of ``params``.
    x0 : (mean (B, d_x), var (B, d_x)) or None
        A fixed q(x0) for each window (e.g. the warm start's smoothed states, ``warm_start.py``); overrides the two
        above.
    """
    p = constrain(params, spec)
    transition = Transition(p, spec, backend)
    nseq, T = y.shape[:2]

    m0, spread = q_x0(params, spec, y, u, backend, recognition) if x0 is None else x0
    x0, kl_x0 = initial_particles(m0, spread, noise.eps0, nseq)  # (N, d_x); (B,) or (1,)

    if check_objective(objective) == "enkf":
        if noise.eps_y is None:
            raise ValueError("noise: the 'enkf' objective needs observation perturbations (draw_noise(..., dim_y))")
        data = transition.enkf_loglik(x0, u, y, p["obs_var"], noise.eps_h, noise.eps_x, noise.eps_y)  # (B,)
    else:
        X = transition.rollout(x0, u, noise.eps_h, noise.eps_x)  # (T, N, d_x)
        # E_q log N(y_t | C x_t, diag r), C = [I, 0]: mean over particles, sum over time and output dimensions
        log_lik_fn = expected_log_lik_reference if backend == "reference" else expected_log_lik
        data = log_lik_fn(X, y, p["obs_var"])  # (B,)

    c_data, c_inducing = kl_weights(kl_weighting, nseq, T, num_windows)
    return c_data * anp.sum(data - kl_x0) - c_inducing * transition.kl_inducing


def transition_regression_elbo(params, spec, x_prev, u, x_next):
    """Sparse-GP regression ELBO of observed state pairs, used to pre-train the transition (paper Section 4.1).

    For P pairs (x_prev[p], x_next[p]) with GP inputs x~ = [x_prev, u]::

        L = sum_{p,d} E_{h ~ q(h | x~_p)} log N(x_next[p,d] | mu(x_prev[p], u[p])_d + (A h)_d, q_d) - KL(q(u) || p(u))
          = sum_{p,d} [log N(x_next[p,d] | mu_d + (A m_h)_d, q_d) - 1/2 sum_q A_dq^2 var_q / q_d] - KL(q(u) || p(u))

    closed form because q(h | x~) = N(m_h, diag var) (Titsias 2009 / Hensman et al. 2013 style bound).
    Shapes: x_prev, x_next (P, d_x); u (P, d_u) (d_u may be 0).
    """
    transition = Transition(constrain(params, spec), spec, "fused")
    f_mean, f_var = transition.moments(x_prev, u, full_cov=False)  # (P, d_x) each
    q = transition.process_var
    ell = -0.5 * anp.sum(anp.log(2 * np.pi * q) + ((x_next - f_mean) ** 2 + f_var) / q)
    return ell - transition.kl_inducing


def finite_elbo(value, y=None, u=None):
    """``value`` if finite; otherwise the data are far outside the model's scale (values beyond 1e150 are refused
    before, ``_validation.finite_array``; from about 1e100 the squared residuals or the kernel distances can
    overflow, by the lengthscales and noise): say so, naming the argument that holds such values (both when neither
    does), instead of returning a NaN or an infinity."""
    if not np.isfinite(value):
        huge = [name for name, a in (("y", y), ("u", u))
                if a is not None and np.size(a) and np.max(np.abs(np.asarray(a, dtype=np.float64))) > 1e100]
        raise ValueError(f"{', '.join(huge) or 'y, u'}: the ELBO is not finite ({value}) for these data; standardise "
                         "y and u (gpssm_np.datasets does) so that their values are of order one")
    return value
