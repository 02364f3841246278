r"""Sparse-GP conditional for Q latent GPs with a full-covariance q(u) per latent GP, with hand-derived VJPs.

Maths (paper: the m_{h_t,q} and S_{h_t,q} equations after Eq. (12); the whitened form is that of
Hensman et al. 2015 and GPflow's ``base_conditional``). Per latent GP q, with K = Kzz[q] (symmetric positive
definite, jitter already added by the caller), L = chol(K), W = L^{-1}, R = tril(q_sqrt[q]) (only the lower
triangle, diagonal included, is read), S = R R^T and mu = q_mu[q]::

    whitened   (u = L v, q(v) = N(mu, S)):   alpha = L^{-T} mu,    B = L^{-T} (I - S) L^{-1}
    unwhitened (q(u) = N(mu, S)):            alpha = K^{-1} mu,    B = K^{-1} - K^{-1} S K^{-1}

Both are ``alpha = P^T mu`` and ``B = K^{-1} - V V^T`` with ``V = P^T R``, where P = W (whitened) or K^{-1}
(unwhitened). At a test input x with cross-covariance k = k_q(Z, x) (M,) and prior variance kxx = k_q(x, x)::

    mean = k . alpha
    var  = max(kxx - k^T B k, VAR_FLOOR)

First-order derivatives used by the VJPs (G = sym(dL/dB) = (gB + gB^T) / 2 since B is symmetric, ga = dL/dalpha,
gv = dL/dvar where var is not clamped and 0 where it is)::

    precompute, both forms:   dmu = P ga,    dR = tril(-2 P G P^T R)        (upper triangle of q_sqrt: 0)
    whitened:     dL  = tril(-(alpha ga^T + 2 B G) L^{-T}),  then the Cholesky VJP (Murray 2016,
                  arXiv:1602.07527, Sec. 3):  dK = sym(L^{-T} Phi(L^T dL) L^{-1}),
                  Phi(X) = lower triangle of X with its diagonal halved
    unwhitened:   dK = sym(-dmu alpha^T) - K^{-1} G B - B G K^{-1} + K^{-1} G K^{-1}
    moments:      dk = gmean alpha - 2 gv B k,   dkxx = gv,   dalpha = sum_n gmean k,   dB = -sum_n gv k k^T

The gradient w.r.t. Kzz is the SYMMETRIC one, sym(X) = (X + X^T) / 2, exactly what autograd's
``anp.linalg.cholesky`` VJP returns: Kzz comes from a symmetric kernel of Z, so the chain rule through K(Z, Z)
then gives the right total derivative. The VJPs are first order (no higher derivatives).

Shapes: Kzz (Q, M, M); q_mu (Q, M); q_sqrt (Q, M, M); alpha (Q, M); B (Q, M, M) symmetric;
Kxz (Q, N, M) = K(X, Z) as returned by ``kernel_matrix(X, Z, ...)`` (row n is the vector k of point n);
kxx (Q, N); mean and var (Q, N). Cost: precompute O(Q M^3), moments O(Q N M^2).
"""
import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from .._config import VAR_FLOOR
from ._blas import gemm, gemv
from ._compile import jit
from ._primitive import to_c_f64, vjp_all_argnums
from .triangular import solve_lower


def _require_shape(name, x, shape):
    if np.shape(x) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {np.shape(x)}")


def _check_precompute_shapes(Kzz, q_mu, q_sqrt):
    if np.ndim(q_mu) != 2:
        raise ValueError(f"q_mu: expected shape (Q, M), got {np.shape(q_mu)}")
    Q, M = np.shape(q_mu)
    _require_shape("Kzz", Kzz, (Q, M, M))
    _require_shape("q_sqrt", q_sqrt, (Q, M, M))


def _check_moments_shapes(Kxz, kxx, alpha, B):
    if np.ndim(Kxz) != 3:
        raise ValueError(f"Kxz: expected shape (Q, N, M), got {np.shape(Kxz)}")
    Q, N, M = np.shape(Kxz)
    _require_shape("kxx", kxx, (Q, N))
    _require_shape("alpha", alpha, (Q, M))
    _require_shape("B", B, (Q, M, M))


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy): the executable specification
# ---------------------------------------------------------------------------------------------------------------
def conditional_precompute_reference(Kzz, q_mu, q_sqrt, whiten=True):
    """(alpha, B) in plain autograd.numpy. Same arguments and result as :func:`conditional_precompute`."""
    _check_precompute_shapes(Kzz, q_mu, q_sqrt)
    Q, M = np.shape(q_mu)
    alphas, Bs = [], []
    for q in range(Q):
        L = anp.linalg.cholesky(Kzz[q])
        R = anp.tril(q_sqrt[q])
        Kinv = solve_lower(L, solve_lower(L, anp.eye(M)), "T")
        if whiten:
            alpha = solve_lower(L, q_mu[q], "T")  # L^{-T} mu
            V = solve_lower(L, R, "T")  # L^{-T} R
        else:
            alpha = anp.dot(Kinv, q_mu[q])  # K^{-1} mu
            V = anp.dot(Kinv, R)  # K^{-1} R
        alphas.append(alpha)
        Bs.append(Kinv - anp.dot(V, V.T))
    return anp.stack(alphas), anp.stack(Bs)


def conditional_moments_reference(Kxz, kxx, alpha, B):
    """(mean, var) in plain autograd.numpy. Same arguments and result as :func:`conditional_moments`."""
    _check_moments_shapes(Kxz, kxx, alpha, B)
    mean = anp.einsum("qnm,qm->qn", Kxz, alpha)
    BK = anp.einsum("qmj,qnj->qnm", B, Kxz)  # (Q, N, M): row n is B k_n
    var = anp.maximum(kxx - anp.sum(Kxz * BK, axis=-1), VAR_FLOOR)
    return mean, var


# ---------------------------------------------------------------------------------------------------------------
# Jitted building blocks, forward and VJP
# ---------------------------------------------------------------------------------------------------------------
@jit
def _factors(Kzz, q_mu, q_sqrt, whiten):
    # For every latent GP q: L = chol(K), W = L^{-1}, K^{-1} = sym(W^T W), alpha = P^T mu and B = sym(K^{-1} - V V^T)
    # with V = P^T R, R = tril(q_sqrt), P = W (whitened) or K^{-1}; stacks (Q, M, M) and alpha (Q, M). One kernel
    # with loops and BLAS calls (the calls np.dot makes) but no array expressions: Numba compiles their broadcasting
    # and error checks slowly.
    Q, M = q_mu.shape
    L, W, Kinv = np.empty((Q, M, M)), np.empty((Q, M, M)), np.empty((Q, M, M))
    alpha, B = np.empty((Q, M)), np.empty((Q, M, M))
    R, V, T = np.empty((M, M)), np.empty((M, M)), np.empty((M, M))
    P = W if whiten else Kinv
    for q in range(Q):
        o = q * M * M
        chol = np.linalg.cholesky(Kzz[q])
        for i in range(M):
            for j in range(M):
                L[q, i, j] = chol[i, j]
        for j in range(M):  # W: forward substitution L W = I, column by column, O(M^3 / 3)
            for i in range(j):
                W[q, i, j] = 0.0
            W[q, j, j] = 1.0 / L[q, j, j]
            for i in range(j + 1, M):
                s = 0.0
                for k in range(j, i):
                    s += L[q, i, k] * W[q, k, j]
                W[q, i, j] = -s / L[q, i, i]
        gemm(True, False, M, M, M, 1.0, W, o, M, W, o, M, 0.0, T, 0, M)  # W^T W
        for i in range(M):
            for j in range(M):
                Kinv[q, i, j] = 0.5 * (T[i, j] + T[j, i])
                R[i, j] = q_sqrt[q, i, j] if j <= i else 0.0
        gemm(True, False, M, M, M, 1.0, P, o, M, R, 0, M, 0.0, V, 0, M)  # V = P^T R
        gemv(True, M, M, 1.0, P, o, M, q_mu, q * M, 0.0, alpha, q * M)  # alpha = P^T mu
        gemm(False, True, M, M, M, 1.0, V, 0, M, V, 0, M, 0.0, T, 0, M)  # V V^T
        for i in range(M):
            for j in range(M):
                B[q, i, j] = 0.5 * ((Kinv[q, i, j] - T[i, j]) + (Kinv[q, j, i] - T[j, i]))
    return L, W, Kinv, alpha, B


@jit
def _precompute_vjp(g_alpha, g_B, L, W, Kinv, alpha, B, q_sqrt, whiten):
    # dL/dKzz (symmetric), dL/dq_mu, dL/dq_sqrt (zero strictly above the diagonal) from the factors of _factors
    # (module docstring; the whitened dK is the Cholesky VJP of dL, with Phi(X) = tril(X), diagonal halved).
    Q, M = alpha.shape
    gK, gmu, gR = np.empty((Q, M, M)), np.empty((Q, M)), np.empty((Q, M, M))
    R, G, T1, T2, T3 = np.empty((M, M)), np.empty((M, M)), np.empty((M, M)), np.empty((M, M)), np.empty((M, M))
    P = W if whiten else Kinv
    for q in range(Q):
        o = q * M * M
        for i in range(M):
            for j in range(M):
                R[i, j] = q_sqrt[q, i, j] if j <= i else 0.0
                G[i, j] = 0.5 * (g_B[q, i, j] + g_B[q, j, i])
        gemv(False, M, M, 1.0, P, o, M, g_alpha, q * M, 0.0, gmu, q * M)  # dmu = P ga
        gemm(False, False, M, M, M, 1.0, P, o, M, G, 0, M, 0.0, T1, 0, M)  # dR = tril(-2 P G P^T R)
        gemm(False, True, M, M, M, 1.0, T1, 0, M, P, o, M, 0.0, T2, 0, M)
        gemm(False, False, M, M, M, 1.0, T2, 0, M, R, 0, M, 0.0, T3, 0, M)
        for i in range(M):
            for j in range(M):
                gR[q, i, j] = -2.0 * T3[i, j] if j <= i else 0.0
        if whiten:
            gemm(False, False, M, M, M, 1.0, B, o, M, G, 0, M, 0.0, T1, 0, M)  # dL = -(alpha ga^T + 2 B G) W^T
            for i in range(M):
                for j in range(M):
                    T2[i, j] = alpha[q, i] * g_alpha[q, j] + 2.0 * T1[i, j]
            gemm(False, True, M, M, M, 1.0, T2, 0, M, W, o, M, 0.0, T3, 0, M)
            for i in range(M):
                for j in range(M):
                    T1[i, j] = -T3[i, j] if j <= i else 0.0  # tril(dL)
            gemm(True, False, M, M, M, 1.0, L, o, M, T1, 0, M, 0.0, T2, 0, M)  # Phi(L^T tril(dL))
            for i in range(M):
                for j in range(M):
                    T1[i, j] = T2[i, j] if j < i else (T2[i, i] * 0.5 if j == i else 0.0)
            gemm(True, False, M, M, M, 1.0, W, o, M, T1, 0, M, 0.0, T2, 0, M)  # dK = sym(L^{-T} Phi L^{-1})
            gemm(False, False, M, M, M, 1.0, T2, 0, M, W, o, M, 0.0, T3, 0, M)
        else:
            gemm(False, False, M, M, M, 1.0, Kinv, o, M, G, 0, M, 0.0, T1, 0, M)  # K^{-1} G
            gemm(False, False, M, M, M, 1.0, T1, 0, M, B, o, M, 0.0, T2, 0, M)  # K^{-1} G B
            gemm(False, False, M, M, M, 1.0, T1, 0, M, Kinv, o, M, 0.0, T3, 0, M)  # K^{-1} G K^{-1}
            for i in range(M):  # dK = sym(-dmu alpha^T - 2 K^{-1} G B + K^{-1} G K^{-1})
                for j in range(M):
                    T3[i, j] = -(gmu[q, i] * alpha[q, j]) - 2.0 * T2[i, j] + T3[i, j]
        for i in range(M):
            for j in range(M):
                gK[q, i, j] = 0.5 * (T3[i, j] + T3[j, i])
    return gK, gmu, gR


@jit
def _moments_fwd(Kxz, kxx, alpha, B, var_floor):
    Q, N, M = Kxz.shape
    mean = np.empty((Q, N))
    var = np.empty((Q, N))
    for q in range(Q):
        BK = np.dot(Kxz[q], B[q])  # (N, M): row n is (B k_n)^T = k_n^T B, B symmetric
        mean[q] = np.dot(Kxz[q], alpha[q])
        for n in range(N):
            s = 0.0
            for j in range(M):
                s += Kxz[q, n, j] * BK[n, j]
            var[q, n] = max(kxx[q, n] - s, var_floor)
    return mean, var


@jit
def _moments_vjp(g_mean, g_var, var, Kxz, alpha, B, var_floor):
    # Returns dL/dKxz, dL/dkxx, dL/dalpha, dL/dB (module docstring); no gradient where var was clamped.
    Q, N, M = Kxz.shape
    gKxz = np.empty(Kxz.shape)
    gkxx = np.where(var > var_floor, g_var, 0.0)
    galpha = np.empty(alpha.shape)
    gB = np.empty(B.shape)
    for q in range(Q):
        BK = np.dot(Kxz[q], B[q])
        for n in range(N):
            for j in range(M):
                gKxz[q, n, j] = g_mean[q, n] * alpha[q, j] - 2.0 * gkxx[q, n] * BK[n, j]
        galpha[q] = np.dot(Kxz[q].T, g_mean[q])
        gB[q] = -np.dot(Kxz[q].T * gkxx[q], Kxz[q])
    return gKxz, gkxx, galpha, gB


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitives
# ---------------------------------------------------------------------------------------------------------------
def _not_positive_definite(Kzz, err):
    """A LinAlgError naming the first latent GP whose Kzz has no Cholesky factor, with advice."""
    Kzz = np.asarray(Kzz, dtype=np.float64)
    if not np.all(np.isfinite(Kzz)):
        return np.linalg.LinAlgError("conditional_precompute: Kzz contains NaN or inf values")
    for q in range(Kzz.shape[0]):
        try:
            np.linalg.cholesky(Kzz[q])
        except np.linalg.LinAlgError:
            lam = np.linalg.eigvalsh(0.5 * (Kzz[q] + Kzz[q].T)).min()
            return np.linalg.LinAlgError(
                f"conditional_precompute: Kzz[{q}] is not positive definite (smallest eigenvalue {lam:.3e}); "
                "add a larger jitter to the diagonal of K(Z, Z) (default gpssm_np._config.JITTER), or spread out "
                "coincident inducing inputs"
            )
    return np.linalg.LinAlgError(f"conditional_precompute: Cholesky factorisation of Kzz failed ({err})")


def _precompute_args(Kzz, q_mu, q_sqrt, whiten):
    _check_precompute_shapes(Kzz, q_mu, q_sqrt)
    Kzz = to_c_f64(Kzz)
    if not np.all(np.isfinite(Kzz)):
        raise _not_positive_definite(Kzz, None)
    return Kzz, to_c_f64(q_mu), to_c_f64(q_sqrt), bool(whiten)


@primitive
def conditional_precompute(Kzz, q_mu, q_sqrt, whiten=True):
    """(alpha, B) of the sparse-GP conditional for every latent GP (formulas in the module docstring).

    Parameters
    ----------
    Kzz : array (Q, M, M)
        K_q(Z, Z) + jitter I, symmetric positive definite. Only its lower triangle is read; its gradient is the
        symmetric one (as autograd's ``anp.linalg.cholesky``).
    q_mu : array (Q, M)
        Mean of q(v_q) (whitened) or q(u_q) (unwhitened).
    q_sqrt : array (Q, M, M)
        Square root of the covariance of q(v_q) / q(u_q): only tril(q_sqrt[q]) is used; the gradient is zero
        strictly above the diagonal.
    whiten : bool
        Whitened (u_q = L_q v_q) or unwhitened parametrisation; not differentiable.

    Returns
    -------
    alpha : array (Q, M)
    B : array (Q, M, M), symmetric

    Raises
    ------
    numpy.linalg.LinAlgError
        If some Kzz[q] is not positive definite (the message suggests a larger jitter).
    """
    args = _precompute_args(Kzz, q_mu, q_sqrt, whiten)
    try:
        return _factors(*args)[3:]
    except np.linalg.LinAlgError as err:
        raise _not_positive_definite(args[0], err) from None


def _conditional_precompute_make_vjp(ans, Kzz, q_mu, q_sqrt, whiten=True):
    args = _precompute_args(Kzz, q_mu, q_sqrt, whiten)

    def vjp(g):
        g_alpha, g_B = g
        return _precompute_vjp(to_c_f64(g_alpha), to_c_f64(g_B), *_factors(*args), args[2], args[3])

    return vjp


defvjp_argnums(conditional_precompute, vjp_all_argnums(_conditional_precompute_make_vjp))


@primitive
def conditional_moments(Kxz, kxx, alpha, B):
    """Marginal mean and variance of each latent GP at N points, given (alpha, B) from
    :func:`conditional_precompute`.

    Parameters
    ----------
    Kxz : array (Q, N, M)
        K_q(X, Z) as returned by ``kernel_matrix(X, Z, ...)``; row n is k_q(Z, x_n).
    kxx : array (Q, N)
        Prior variances k_q(x_n, x_n).
    alpha : array (Q, M)
    B : array (Q, M, M)
        Must be symmetric (the VJP w.r.t. Kxz uses B k = B^T k).

    Returns
    -------
    mean : array (Q, N)
        mean[q, n] = Kxz[q, n] . alpha[q]
    var : array (Q, N)
        var[q, n] = max(kxx[q, n] - Kxz[q, n] B[q] Kxz[q, n], VAR_FLOOR); no gradient flows where it is clamped.
    """
    _check_moments_shapes(Kxz, kxx, alpha, B)
    return _moments_fwd(to_c_f64(Kxz), to_c_f64(kxx), to_c_f64(alpha), to_c_f64(B), VAR_FLOOR)


def _conditional_moments_make_vjp(ans, Kxz, kxx, alpha, B):
    def vjp(g):
        g_mean, g_var = g
        return _moments_vjp(
            to_c_f64(g_mean), to_c_f64(g_var), ans[1], to_c_f64(Kxz), to_c_f64(alpha), to_c_f64(B), VAR_FLOOR
        )

    return vjp


defvjp_argnums(conditional_moments, vjp_all_argnums(_conditional_moments_make_vjp))


def conditional(Kxz, kxx, Kzz, q_mu, q_sqrt, whiten=True):
    """Sparse-GP marginal conditional q(h_q(x_n)) = N(mean[q, n], var[q, n]) for every latent GP and point.

    The paper's m_{h_t,q} and S_{h_t,q} (equations after Eq. (12)); whitened form as in
    Hensman et al. 2015 / GPflow's ``base_conditional``. Plain composition of :func:`conditional_precompute`
    (O(Q M^3)) and :func:`conditional_moments` (O(Q N M^2)); when the same q(u) is evaluated at many batches of
    points, call the two separately and reuse (alpha, B).

    Shapes: Kxz (Q, N, M), kxx (Q, N), Kzz (Q, M, M), q_mu (Q, M), q_sqrt (Q, M, M) -> mean, var (Q, N).
    """
    alpha, B = conditional_precompute(Kzz, q_mu, q_sqrt, whiten)
    return conditional_moments(Kxz, kxx, alpha, B)


def conditional_precompute_example(rng):
    """Small valid arguments (Kzz, q_mu, q_sqrt) with Q=2, M=4: Kzz well-conditioned SPD, q_sqrt with a nonzero
    (ignored) upper triangle."""
    Q, M = 2, 4
    F = rng.normal(size=(Q, M, M))
    Kzz = np.einsum("qij,qkj->qik", F, F) / M + 0.5 * np.eye(M)
    q_sqrt = 0.3 * rng.normal(size=(Q, M, M)) + np.eye(M)
    return Kzz, rng.normal(size=(Q, M)), q_sqrt


def conditional_moments_example(rng):
    """Small valid arguments (Kxz, kxx, alpha, B) with Q=2, N=5, M=4: B symmetric and kxx chosen so that every
    variance is at least 0.1 above the floor (so no clamping)."""
    Q, N, M = 2, 5, 4
    Kxz = rng.normal(size=(Q, N, M))
    F = rng.normal(size=(Q, M, M))
    B = 0.3 * (F + np.transpose(F, (0, 2, 1)))
    quad = np.einsum("qnm,qmj,qnj->qn", Kxz, B, Kxz)
    kxx = quad + rng.uniform(0.1, 1.0, size=(Q, N))
    return Kxz, kxx, rng.normal(size=(Q, M)), B
