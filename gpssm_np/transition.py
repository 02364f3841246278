r"""The sparse-GP transition of the model: the one place where it is assembled.

Transition equation (paper Eqs. (6), (9), (12), with a mean function mu added to the paper's zero mean)::

    x~_t = [x_{t-1}, u_t]                                      GP input, D = d_x + d_u
    h_q(x~_t) | q(u_q) ~ N(m_q, s_q)                           Q latent GPs, sparse-GP conditional
    x_t = mu(x_{t-1}, u_t) + A h(x~_t) + v_t,  v_t ~ N(0, diag q)

so that x_t | x_{t-1} ~ N(mu + A m_h, A diag(s_h) A^T + diag q) (paper Eq. (12)). The mean function is

    ``"zero"``      mu = 0                              (the paper and the authors' code)
    ``"identity"``  mu = x_{t-1}                        (residual dynamics, PR-SSM)
    ``"linear"``    mu = F x_{t-1} + G u_t + b          (a linear state-space model plus a GP residual)

with F (d_x, d_x), G (d_x, d_u), b (d_x,) learned parameters for ``"linear"`` and constants otherwise (F = 0 or I,
G = 0, b = 0). With the whitened parameterisation u_q = L_q v_q, L_q = chol(K_q(Z, Z)), q(v_q) = N(q_mu_q,
q_sqrt_q q_sqrt_q^T), the conditional moments at x~ are computed from the precompute (``ops.conditional``)::

    alpha_q = L_q^{-T} q_mu_q,   B_q = L_q^{-T} (I - S_q) L_q^{-1}
    m_q = k_q(Z, x~) . alpha_q,  s_q = k_q(x~, x~) - k_q^T B_q k_q

:class:`Transition` is built once per parameter set (K(Z, Z), its Cholesky factor and the precompute: O(Q M^3)) and
then gives

* :meth:`Transition.rollout`: particles x_{1:T} sampled through the latent GPs, by backend --
  ``"fused"`` one Numba primitive for the whole rollout (``ops.rollout.rollout``), ``"ops"`` a Python loop over
  time of the Numba primitives kernel_matrix, conditional_moments and lmc_mean (``ops.rollout.rollout_ops``),
  ``"reference"`` plain autograd.numpy (``ops.rollout.rollout_reference`` with the reference kernels and
  precompute);
* :meth:`Transition.enkf_loglik`: the ensemble Kalman filter through the same transition and its predictive
  log-likelihood (``ops.enkf``; the data term of the ``"enkf"`` objective), by backend as the rollout;
* :meth:`Transition.gp_moments` and :meth:`Transition.moments`: the one-step Gaussian moments, for the regression
  ELBO of pre-training (``full_cov=False``) and as the Python reference the fused kernels that the filters run
  (``ops.rollout.transition_moments``, ``ops.adapted_step``) are tested against;
* :meth:`Transition.filter_function`: the same moments as a function for the particle filter (a
  :class:`FilterTransition`), whose fully adapted step then runs fused with the particles' Kalman update
  (``ops.adapted_step``);
* :meth:`Transition.far_field`: the linear transition the model becomes far from its inducing inputs, where the
  stationary kernels vanish, k_q(x~, Z) -> 0: x_t | x_{t-1} ~ N(F x_{t-1} + G u_t + b, A diag(s2) A^T + diag q);
* :attr:`Transition.kl_inducing`: KL(q(u) || p(u)) (paper Eq. (11), second term).

Everything is autograd-differentiable with respect to the constrained parameters it is built from.
"""
import autograd.numpy as anp
import numpy as np

from .gp import inducing_gram, kl_inducing
from .ops.adapted_step import gp_arrays, propagate
from .ops.conditional import conditional_moments, conditional_precompute, conditional_precompute_reference
from .ops.enkf import enkf_loglik, enkf_loglik_ops, enkf_loglik_reference
from .ops.kernels import kernel_matrix, kernel_matrix_reference
from .ops.lmc import lmc_cov, lmc_mean
from .ops.rollout import rollout, rollout_ops, rollout_reference, transition_moments

BACKENDS = ("fused", "ops", "reference")


def check_backend(backend):
    """``backend`` if it names a backend, else ValueError."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    return backend


def linear_mean_coefficients(p, spec):
    """(F, G, b) of mu(x, u) = F x + G u + b: learned for ``"linear"``, constants for ``"zero"`` and ``"identity"``."""
    if spec.mean_function == "linear":
        return p["F"], p["G"], p["b"]
    F = np.eye(spec.dim_x) if spec.mean_function == "identity" else np.zeros((spec.dim_x, spec.dim_x))
    return F, np.zeros((spec.dim_x, spec.dim_u)), np.zeros(spec.dim_x)


def _kernel_diagonal(variance, N):
    """k_q(x, x) = s2_q for every point (stationary kernels): (Q, N)."""
    return anp.outer(variance, np.ones(N))


_BACKEND_FUNCTIONS = {
    # backend: (kernel matrix, (alpha, B) precompute, rollout, ensemble Kalman filter log-likelihood)
    "fused": (kernel_matrix, conditional_precompute, rollout, enkf_loglik),
    "ops": (kernel_matrix, conditional_precompute, rollout_ops, enkf_loglik_ops),
    "reference": (kernel_matrix_reference, conditional_precompute_reference, rollout_reference, enkf_loglik_reference),
}


class Transition:
    """The transition x_t | x_{t-1}, u_t of a sparse-GP state-space model for one set of parameters.

    Parameters
    ----------
    p : dict
        Constrained parameters (``params.constrain``): Z (Q, M, D), lengthscale (Q, D), variance (Q,), q_mu (Q, M),
        q_sqrt (Q, M, M), A (d_x, Q), process_var (d_x,), and F, G, b for the linear mean.
    spec : GPSSMSpec
    backend : {"fused", "ops", "reference"}
        How :meth:`rollout` and K(Z, Z) with its precompute are computed; all give the same numbers.

    Attributes
    ----------
    alpha, B : (Q, M), (Q, M, M)
        The conditional's precompute (module docstring).
    F, G, b : the mean function's coefficients (module docstring).
    kl_inducing : scalar
        KL(q(u) || p(u)), whitened or not as ``spec.whiten``.
    """

    def __init__(self, p, spec, backend="fused"):
        self.spec = spec
        self.p = p
        self.backend = check_backend(backend)
        kernel_fn, precompute_fn, self._rollout_fn, self._enkf_fn = _BACKEND_FUNCTIONS[backend]
        Kzz = inducing_gram(p, spec, kernel_fn)  # (Q, M, M)
        self.alpha, self.B = precompute_fn(Kzz, p["q_mu"], p["q_sqrt"], spec.whiten)
        self.kl_inducing = kl_inducing(p["q_mu"], p["q_sqrt"], None if spec.whiten else Kzz)
        self.F, self.G, self.b = linear_mean_coefficients(p, spec)
        self.A = p["A"]
        self.process_var = p["process_var"]

    def mean_function(self, x_prev, u):
        """mu(x_{t-1}, u_t) for rows x_prev (N, d_x), u (N, d_u)."""
        mf = self.spec.mean_function
        if mf == "zero":
            return 0.0
        if mf == "identity":
            return x_prev
        return anp.dot(x_prev, self.F.T) + anp.dot(u, self.G.T) + self.b

    def rollout(self, x0, U, eps_h, eps_x):
        """Particles x_{1:T}: (T, N, d_x) from x0 (N, d_x), inputs U (B, T, d_u) (particle n reads sequence
        n // (N / B)) and standard-normal noise eps_h (T, N, Q), eps_x (T, N, d_x) (``ops.rollout``)."""
        p = self.p
        return self._rollout_fn(x0, U, p["Z"], p["lengthscale"], p["variance"], self.alpha, self.B, self.A,
                                anp.sqrt(self.process_var), eps_h, eps_x, self.F, self.G, self.b, self.spec.kernel)

    def enkf_loglik(self, x0, U, Y, obs_var, eps_h, eps_x, eps_y):
        """sum_t log N(y_t | C mbar_t, S_t) (B,) of B ensembles of N / B members filtered through the transition
        by the perturbed-observation ensemble Kalman filter (``ops.enkf``): x0 (N, d_x), inputs U (B, T, d_u),
        outputs Y (B, T, d_y), obs_var (d_y,), standard-normal noise eps_h (T, N, Q), eps_x (T, N, d_x) of the
        transition and eps_y (T, N, d_y) of the perturbed observations."""
        p = self.p
        return self._enkf_fn(x0, U, Y, p["Z"], p["lengthscale"], p["variance"], self.alpha, self.B, self.A,
                             anp.sqrt(self.process_var), eps_h, eps_x, self.F, self.G, self.b, obs_var, eps_y,
                             self.spec.kernel)

    def gp_moments(self, x_prev, u):
        """Moments of the latent GPs h at x~ = [x_prev, u]: m_h, s_h, each (N, Q); x_prev (N, d_x), u (N, d_u)."""
        p = self.p
        xt = anp.concatenate([x_prev, u], axis=1)  # (N, D)
        Kxz = kernel_matrix(xt, p["Z"], p["lengthscale"], p["variance"], self.spec.kernel)  # (Q, N, M)
        m_h, s_h = conditional_moments(Kxz, _kernel_diagonal(p["variance"], xt.shape[0]), self.alpha, self.B)
        return anp.transpose(m_h), anp.transpose(s_h)

    def moments(self, x_prev, u, full_cov=True):
        """x_t | x_{t-1} ~ N(mean, cov) (paper Eq. (12)) for rows x_prev (N, d_x), u (N, d_u): the one place the
        Python layer assembles the one-step moments from the latent GPs' (the fused kernels of ``ops.rollout`` and
        ``ops.enkf`` are their compiled twin, and tests/test_filtering.py checks ``moments_function`` against this).

        ``full_cov=True``: mean (N, d_x) = mu + A m_h and cov (N, d_x, d_x) = A diag(s_h) A^T + diag q, by the LMC
        primitives. ``full_cov=False``: the mean and the variances (N, d_x) of f = mu + A h, the transition without
        its process noise (diag(A diag(s_h) A^T)), in autograd.numpy: what the regression ELBO of pre-training
        (``inference.transition_regression_elbo``) reads beside q."""
        m_h, s_h = self.gp_moments(x_prev, u)
        if not full_cov:
            return anp.dot(m_h, self.A.T) + self.mean_function(x_prev, u), anp.dot(s_h, (self.A**2).T)
        A = None if self.spec.independent else self.A
        return lmc_mean(m_h, A) + self.mean_function(x_prev, u), lmc_cov(s_h, A, self.process_var)

    def far_field(self):
        """(F (d_x, d_x), P (d_x, d_x)): the transition far from the inducing inputs, x_t | x_{t-1} ~ N(F x_{t-1} +
        G u_t + b, P). There k_q(x~, Z) -> 0 for the stationary kernels (``ops.kernels``), so m_h -> 0 and s_h -> the
        kernel variances s2, and Eq. (12) becomes linear with P = A diag(s2) A^T + diag q (diag(s2 + q) for
        independent GPs)."""
        A = None if self.spec.independent else np.asarray(self.A, dtype=np.float64)
        s2 = np.asarray(self.p["variance"], dtype=np.float64)[None, :]
        P = lmc_cov(s2, A, np.asarray(self.process_var, dtype=np.float64))[0]
        return np.asarray(self.F, dtype=np.float64), np.asarray(P, dtype=np.float64)

    def moments_function(self):
        """The transition as ``filtering.particle_filter`` takes it: ``transition(x_prev (N, d_x), u_t (d_u,) or
        None, k) -> (mean (N, d_x), cov (N, d_x, d_x))`` in plain NumPy (u_t None only when d_u = 0): the moments of
        :meth:`moments`, computed by one noise-free step of the fused rollout kernel (``ops.rollout.
        transition_moments``), which filters call at every step."""
        d_x, d_u = self.spec.dim_x, self.spec.dim_u
        p = self.p
        arrays = [np.asarray(a, dtype=np.float64) for a in (p["Z"], p["lengthscale"], p["variance"], self.alpha,
                                                             self.B, self.A, self.F, self.G, self.b)]
        A_cov = None if self.spec.independent else arrays[5]
        q = np.asarray(self.process_var, dtype=np.float64)

        def transition(x_prev, u_t, k=None):
            x_prev = np.asarray(x_prev, dtype=np.float64)
            if x_prev.ndim != 2 or x_prev.shape[1] != d_x:
                raise ValueError(f"x_prev: expected shape (N, {d_x}), got {np.shape(x_prev)}")
            if u_t is None:
                if d_u > 0:
                    raise ValueError(f"u_t: the model has dim_u = {d_u} inputs, got None")
                u_t = np.zeros(0)
            u_t = np.asarray(u_t, dtype=np.float64)
            if u_t.shape != (d_u,):
                raise ValueError(f"u_t: expected shape ({d_u},), got {u_t.shape}")
            _, s_h, mean = transition_moments(x_prev, u_t, *arrays, kind=self.spec.kernel)
            return mean, np.asarray(lmc_cov(s_h, A_cov, q), dtype=np.float64)

        return transition

    def filter_function(self):
        """The transition for the particle filter: a :class:`FilterTransition`, :meth:`moments_function` with the
        fused step of the fully adapted proposal."""
        return FilterTransition(self)


class FilterTransition:
    """A :class:`Transition` as ``filtering.particle_filter`` and its online filter take it: called, the function of
    :meth:`Transition.moments_function`; :meth:`propagate`, the transition moments, the predicted output and the
    Kalman update of every particle in one Numba call (``ops.adapted_step``), which the filter's fully adapted step
    runs instead (``filtering``'s module docstring). The arrays are prepared once."""

    def __init__(self, transition):
        spec, p = transition.spec, transition.p
        self._moments = transition.moments_function()
        self._dim_u = spec.dim_u
        self._gp = gp_arrays(p["Z"], p["lengthscale"], p["variance"], transition.alpha, transition.B, transition.A,
                             transition.F, transition.G, transition.b, transition.process_var, spec.kernel)

    def __call__(self, x_prev, u_t, k=None):
        return self._moments(x_prev, u_t, k)

    def propagate(self, x, log_w, u_t, C, r, y):
        """``ops.adapted_step.propagate`` for particles x (N, d_x) with normalised log-weights (N,) under the input
        u_t (d_u,) (None when d_u = 0), the emission C (d_y, d_x) with R = diag(r) and the output y (d_y,), NaN where
        missing."""
        if u_t is None:
            if self._dim_u > 0:
                raise ValueError(f"u_t: the model has dim_u = {self._dim_u} inputs, got None")
            u_t = np.zeros(0)
        return propagate(x, log_w, u_t, self._gp, C, r, y)
