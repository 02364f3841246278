r"""Moments of the linear model of coregionalization (LMC) transition, with hand-derived VJPs.

Maths (paper Eq. (12)): given the marginal moments of the Q latent GPs at a point, h ~ N(m_h,
diag(s_h)) (independent across q), the state x = A h + v, v ~ N(0, diag(q)), has::

    m_{t|t-1} = A m_h                                       lmc_mean
    S_{t|t-1} = A diag(s_h) A^T + diag(q)
              = sum_q s_h[q] a_q a_q^T + diag(q)            lmc_cov   (a_q = column q of A)

First-order derivatives used by the VJPs (G_n = dL/dcov[n], g = dL/dmean)::

    lmc_mean:  dh = g A,   dA = g^T h
    lmc_cov:   ds_h[n, q] = a_q^T G_n a_q,   dq = sum_n diag(G_n),   dA = sum_n (G_n + G_n^T) A diag(s_h[n])

dA is the full (unconstrained) gradient, which is what autograd returns for the reference; it already takes
both A factors of A diag(s) A^T into account, so no symmetrisation convention is needed for A. G_n need not be
symmetric.

Independent outputs (PRSSM, Q = d_x): ``A=None`` is a non-differentiable constant meaning A = I. Then
``lmc_mean(h, None)`` returns h itself and ``lmc_cov(s_h, None, q_diag)`` returns diag(s_h[n] + q_diag), written
in plain autograd.numpy (autograd differentiates it; no primitive), so the identity case costs O(N d_x^2) for the
output and nothing for A.

Shapes: h, s_h (N, Q); A (d_x, Q) or None (then Q = d_x); q_diag (d_x,); mean (N, d_x); cov (N, d_x, d_x).
Cost: lmc_mean O(N Q d_x), lmc_cov O(N Q d_x^2) forward and reverse.
"""
import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from ._compile import jit
from ._primitive import to_c_f64, vjp_all_argnums


def _check_shapes(name, h, A, q_diag=None):
    """(N, Q, d_x) from the shapes of h (named ``name``), A and q_diag, or a ValueError naming the argument."""
    if np.ndim(h) != 2:
        raise ValueError(f"{name}: expected shape (N, Q), got {np.shape(h)}")
    N, Q = np.shape(h)
    if A is None:
        d_x = Q
    elif np.ndim(A) != 2 or np.shape(A)[1] != Q:
        raise ValueError(f"A: expected shape (d_x, {Q}) to match {name} {np.shape(h)}, got {np.shape(A)}")
    else:
        d_x = np.shape(A)[0]
    if q_diag is not None and np.shape(q_diag) != (d_x,):
        what = f"{name} {np.shape(h)} with A=None" if A is None else f"A {np.shape(A)}"
        raise ValueError(f"q_diag: expected shape ({d_x},) to match {what}, got {np.shape(q_diag)}")
    return N, Q, d_x


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy): the executable specification
# ---------------------------------------------------------------------------------------------------------------
def lmc_mean_reference(h, A):
    """A h[n] for every n, in plain autograd.numpy (A=None means the identity). Same as :func:`lmc_mean`."""
    N, Q, d_x = _check_shapes("h", h, A)
    return anp.dot(h, anp.eye(Q) if A is None else anp.transpose(A))


def lmc_cov_reference(s_h, A, q_diag):
    """A diag(s_h[n]) A^T + diag(q_diag), in plain autograd.numpy (A=None means the identity). Same as
    :func:`lmc_cov`."""
    N, Q, d_x = _check_shapes("s_h", s_h, A, q_diag)
    A = anp.eye(Q) if A is None else A
    return anp.einsum("iq,nq,jq->nij", A, s_h, A) + anp.diag(q_diag)


# ---------------------------------------------------------------------------------------------------------------
# Jitted forward and VJP
# ---------------------------------------------------------------------------------------------------------------
@jit
def _lmc_mean_fwd(h, A):
    return np.dot(h, A.T)  # (N, d_x)


@jit
def _lmc_mean_vjp(G, h, A):
    return np.dot(G, A), np.dot(G.T, h)


@jit
def _lmc_cov_fwd(s_h, A, q_diag):
    N, Q = s_h.shape
    d_x = A.shape[0]
    cov = np.empty((N, d_x, d_x))
    for n in range(N):
        for i in range(d_x):
            for j in range(i + 1):
                c = 0.0
                for q in range(Q):
                    c += A[i, q] * s_h[n, q] * A[j, q]
                cov[n, i, j] = c
                cov[n, j, i] = c
            cov[n, i, i] += q_diag[i]
    return cov


@jit
def _lmc_cov_vjp(G, s_h, A):
    # Returns dL/ds_h, dL/dA, dL/dq_diag (module docstring).
    N, Q = s_h.shape
    d_x = A.shape[0]
    gs = np.empty((N, Q))
    gA = np.zeros((d_x, Q))
    gq = np.zeros(d_x)
    T = np.empty((d_x, Q))  # (G_n + G_n^T) A
    for n in range(N):
        for i in range(d_x):
            gq[i] += G[n, i, i]
            for q in range(Q):
                t = 0.0
                for j in range(d_x):
                    t += (G[n, i, j] + G[n, j, i]) * A[j, q]
                T[i, q] = t
        for q in range(Q):
            quad = 0.0
            for i in range(d_x):
                quad += A[i, q] * T[i, q]
                gA[i, q] += T[i, q] * s_h[n, q]
            gs[n, q] = 0.5 * quad  # a_q^T G_n a_q = a_q^T (G_n + G_n^T) a_q / 2
    return gs, gA, gq


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitives (A a matrix) and the public functions, which route A=None to the identity case
# ---------------------------------------------------------------------------------------------------------------
@primitive
def _lmc_mean_dense(h, A):
    return _lmc_mean_fwd(to_c_f64(h), to_c_f64(A))


def _lmc_mean_dense_make_vjp(ans, h, A):
    def vjp(G):
        return _lmc_mean_vjp(to_c_f64(G), to_c_f64(h), to_c_f64(A))

    return vjp


defvjp_argnums(_lmc_mean_dense, vjp_all_argnums(_lmc_mean_dense_make_vjp))


@primitive
def _lmc_cov_dense(s_h, A, q_diag):
    return _lmc_cov_fwd(to_c_f64(s_h), to_c_f64(A), to_c_f64(q_diag))


def _lmc_cov_dense_make_vjp(ans, s_h, A, q_diag):
    def vjp(G):
        return _lmc_cov_vjp(to_c_f64(G), to_c_f64(s_h), to_c_f64(A))

    return vjp


defvjp_argnums(_lmc_cov_dense, vjp_all_argnums(_lmc_cov_dense_make_vjp))


def lmc_mean(h, A):
    """LMC mean m_{t|t-1}[n] = A h[n] for every point n (paper Eq. (12)).

    Parameters
    ----------
    h : array (N, Q)
        Latent GP values or means, one row per point.
    A : array (d_x, Q), or None
        Mixing matrix; None means the identity (independent outputs, Q = d_x) and returns ``h`` unchanged.

    Returns
    -------
    mean : array (N, d_x)
    """
    _check_shapes("h", h, A)
    if A is None:
        return h
    return _lmc_mean_dense(h, A)


def lmc_cov(s_h, A, q_diag):
    """LMC covariance S_{t|t-1}[n] = A diag(s_h[n]) A^T + diag(q_diag) for every point n (paper Eq. (12));
    symmetric positive semi-definite (definite when q_diag > 0).

    Parameters
    ----------
    s_h : array (N, Q)
        Marginal variances of the Q latent GPs at each point.
    A : array (d_x, Q), or None
        Mixing matrix; None means the identity (Q = d_x): the result is diag(s_h[n] + q_diag), computed in
        autograd.numpy.
    q_diag : array (d_x,)
        Process-noise variances q.

    Returns
    -------
    cov : array (N, d_x, d_x)
    """
    N, Q, d_x = _check_shapes("s_h", s_h, A, q_diag)
    if A is None:
        return (s_h + q_diag)[:, :, None] * np.eye(d_x)  # (N, d_x, d_x), diagonal
    return _lmc_cov_dense(s_h, A, q_diag)


def lmc_mean_example(rng):
    """Small valid arguments (h, A) with N=5, Q=2, d_x=3."""
    N, Q, d_x = 5, 2, 3
    return rng.normal(size=(N, Q)), rng.normal(size=(d_x, Q))


def lmc_cov_example(rng):
    """Small valid arguments (s_h, A, q_diag) with N=5, Q=2, d_x=3: positive variances."""
    N, Q, d_x = 5, 2, 3
    return rng.uniform(0.1, 2.0, size=(N, Q)), rng.normal(size=(d_x, Q)), rng.uniform(0.01, 0.5, size=d_x)
