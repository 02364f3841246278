"""Compile every Numba kernel of ``gpssm_np.ops`` once, ahead of the first real call: :func:`warmup`.

Kernels are compiled lazily on their first call (seconds each), and Numba's on-disk cache (``cache=True``, switched
off by ``GPSSM_NP_NUMBA_CACHE=0``) then serves later processes in a fraction of that. :func:`warmup` runs every
primitive forward and backward on tiny inputs of the same types as real calls (float64 arrays of the same numbers
of dimensions), so the compiled (or cached) code is the code the model then uses.
"""
import time

import numpy as np

from .ops import rollout as _rollout
from .ops.compile_ahead import compile_group, forward_and_back
from .ops.conditional import (conditional_moments, conditional_moments_example, conditional_precompute,
                              conditional_precompute_example)
from .ops.kernels import KERNELS, kernel_matrix, kernel_matrix_example
from .ops.lmc import lmc_cov, lmc_mean
from .ops.dmm import dmm_loop, dmm_loop_example
from .ops.gaussian_condition import condition_gaussians, condition_gaussians_example
from .ops.gaussian_sample import sample_gaussians, sample_gaussians_example
from .ops.kalman import kalman_example, kalman_forward, rts_backward
from .ops.likelihood import expected_log_lik, expected_log_lik_example
from .ops.lstm import lstm, lstm_example


def _rollout_args(rng, N, identity):
    """Arguments of ``ops.rollout`` with N particles (2 sequences), T=2, d_x=2, d_u=1, Q=2, M=3, and the identity
    or the zero mean function."""
    nseq, T, dx, du, Q, M = 2, 2, 2, 1, 2, 3
    W = rng.normal(size=(Q, M, M)) / M
    return (rng.normal(size=(N, dx)), rng.normal(size=(nseq, T, du)), rng.uniform(-1, 1, size=(Q, M, dx + du)),
            rng.uniform(0.7, 2.0, size=(Q, dx + du)), rng.uniform(0.5, 1.5, size=Q), rng.normal(size=(Q, M)),
            0.1 * (W + np.swapaxes(W, 1, 2)), rng.normal(size=(dx, Q)), rng.uniform(0.1, 0.5, size=dx),
            rng.normal(size=(T, N, Q)), rng.normal(size=(T, N, dx)), float(identity) * np.eye(dx),
            np.zeros((dx, du)), np.zeros(dx))


def warmup():
    """Compile (or load from Numba's cache) every kernel: kernel matrices, conditional, LMC, the fused rollout for
    both kernels and both mean functions (forward with and without a tape, and its reverse pass), the ensemble Kalman
    objective (forward and reverse, both kernels), the LSTM, the expected log-likelihood, the DSSM's loop, the
    particle filters' Gaussian conditioning and sampling and the LGSSM's Kalman filter and smoother, and the
    sparse-GP models' fused filter step.

    The same compiled kernels serve any number of kernel threads (``ops.threads.run_blocks``).

    Returns
    -------
    float
        Seconds taken (a few after a change of the package's Numba sources, well under one when cached).
    """
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    for kind in KERNELS:
        forward_and_back(kernel_matrix, kernel_matrix_example(rng), (0, 1, 2, 3), kind=kind)
    for whiten in (True, False):
        forward_and_back(conditional_precompute, conditional_precompute_example(rng), (0, 1, 2), whiten=whiten)
    forward_and_back(conditional_moments, conditional_moments_example(rng), (0, 1, 2, 3))
    h, s_h, A = rng.normal(size=(3, 2)), rng.uniform(0.1, 1.0, size=(3, 2)), rng.normal(size=(4, 2))
    forward_and_back(lmc_mean, (h, A), (0, 1))
    forward_and_back(lmc_cov, (s_h, A, rng.uniform(0.1, 1.0, size=4)), (0, 1, 2))
    differentiable = (0, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13)
    for kind in KERNELS:
        for identity in (False, True):
            args = _rollout_args(rng, 6, identity)
            forward_and_back(_rollout.rollout, args, differentiable, kind=kind)
            _rollout.rollout(*args, kind=kind)  # untraced: no tape
    compile_group("enkf")
    forward_and_back(lstm, lstm_example(rng), (0, 1))
    forward_and_back(expected_log_lik, expected_log_lik_example(rng), (0, 2))
    forward_and_back(dmm_loop, dmm_loop_example(rng), (0, 3, 4, 5))
    condition_gaussians(*condition_gaussians_example(rng))  # the particle filters' kernels (no gradient)
    sample_gaussians(*sample_gaussians_example(rng))
    F, H, Q, R, drive, y, m0, P0 = kalman_example(rng)  # the LGSSM's Kalman filter and smoother (no gradient)
    means, covs, pred_means, pred_covs, _, _ = kalman_forward(F, H, Q, R, drive, y, m0, P0)
    rts_backward(F, np.concatenate([m0[None], means]), np.concatenate([P0[None], covs]), pred_means, pred_covs)
    compile_group("filter")  # the fused filter step of model.filter, online_filter and forecasts from past data
    return time.perf_counter() - start
