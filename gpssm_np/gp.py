r"""Sparse-GP pieces evaluated once per iteration: K(Z, Z), and the KL divergences of the ELBO.

KL terms (paper Eq. (11)), per latent GP q with M inducing outputs, S_q = L_S L_S^T:

    whitened   KL(N(mu, S) || N(0, I))   = 1/2 [tr S + mu^T mu - M - log|S|]
    unwhitened KL(N(mu, S) || N(0, Kzz)) = 1/2 [tr(Kzz^{-1} S) + mu^T Kzz^{-1} mu - M + log|Kzz| - log|S|]
    q(x0)      KL(N(m, diag v) || N(0, I)) = 1/2 sum_d [v_d + m_d^2 - 1 - log v_d]; a full q(x0) = N(m, L L^T) has
               the whitened formula's (:func:`kl_inducing` with Q = 1)

All in autograd.numpy: O(Q M^3), negligible next to the rollout.
"""
import autograd.numpy as anp

from .ops.kernels import kernel_matrix
from .ops.triangular import solve_lower


def inducing_gram(p, spec, kernel_fn=kernel_matrix):
    """K_q(Z_q, Z_q) + jitter I for every latent GP, (Q, M, M); ``p`` holds constrained parameters."""
    Z = p["Z"]
    return kernel_fn(Z, Z, p["lengthscale"], p["variance"], spec.kernel) + spec.jitter * anp.eye(spec.num_inducing)


def kl_inducing(q_mu, q_sqrt, Kzz=None):
    """sum_q KL(q(u_q) || p(u_q)); whitened when Kzz is None. q_sqrt (Q, M, M) lower triangular."""
    M = q_mu.shape[1]
    diag = anp.diagonal(q_sqrt, axis1=-1, axis2=-2)  # the axis order autograd differentiates
    logdet_S = 2.0 * anp.sum(anp.log(anp.abs(diag)))
    if Kzz is None:
        return 0.5 * (anp.sum(q_sqrt**2) + anp.sum(q_mu**2) - q_mu.size - logdet_S)
    total = 0.0
    for q in range(q_mu.shape[0]):
        L = anp.linalg.cholesky(Kzz[q])
        a = solve_lower(L, q_mu[q])  # L^{-1} mu
        W = solve_lower(L, q_sqrt[q])  # L^{-1} L_S
        logdet_K = 2.0 * anp.sum(anp.log(anp.diag(L)))
        total = total + anp.sum(W**2) + anp.sum(a**2) - M + logdet_K
    return 0.5 * (total - logdet_S)


def kl_diag_standard_normal(mean, var):
    """KL(N(mean, diag var) || N(0, I)) summed over the last axis."""
    return 0.5 * anp.sum(var + mean**2 - 1.0 - anp.log(var), axis=-1)
