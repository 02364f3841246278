"""Numerical constants and environment switches shared by the whole package.

Everything is float64. The constants are documented here once; modules import them by name.
"""
import os

#: Jitter added to the diagonal of K(Z, Z) before its Cholesky factorisation.
JITTER = 1e-6

#: When a Cholesky factorisation fails during training, the jitter is multiplied by 10, at most up to MAX_JITTER.
MAX_JITTER = 1e-2

#: Training stops with an error after this many consecutive rejected (non-finite) steps.
MAX_REJECTIONS = 10

#: Floor on the conditional variance of a latent GP, var_q(x) = k(x, x) - k^T B k >= VAR_FLOOR.
#: Rounding can push the difference slightly below zero when x sits on an inducing input.
VAR_FLOOR = 1e-10

#: Floor added to every positive parameter: value = softplus(raw) + POSITIVE_FLOOR.
POSITIVE_FLOOR = 1e-6

def _switch_from_env(name, default):
    """The on/off environment variable ``name``: 1, true, yes, on (any case) or 0, false, no, off; unset or empty
    ``default``; another value a ValueError naming it."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}: expected 1, true, yes, on or 0, false, no, off, got {value!r}")


def _mebibytes_from_env(name, default):
    """Bytes of the environment variable ``name`` in MiB (a non-negative integer; unset: ``default``); another value
    a ValueError naming it."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default * 2**20
    if not value.isdigit():
        raise ValueError(f"{name}: expected a non-negative integer number of MiB, got {value!r}")
    return int(value) * 2**20


#: Set GPSSM_NP_NUMBA_CACHE=0 (or false, no, off) to compile every kernel afresh in each process.
NUMBA_CACHE = _switch_from_env("GPSSM_NP_NUMBA_CACHE", True)


#: Cores of this machine (os.cpu_count() reads /proc each time: ~0.1 ms, too slow to ask per kernel call).
CPU_COUNT = os.cpu_count() or 1


def _threads_from_env(value):
    value = value.strip().lower()
    if value in ("", "auto", "0"):
        return CPU_COUNT
    if value.isdigit():
        return int(value)
    raise ValueError(f"GPSSM_NP_THREADS: expected a positive integer, or 'auto' (or 0) for one per core, got "
                     f"{value!r}")


#: Threads of the fused Numba kernels (rollout forward and reverse), split over blocks of particles. The result is
#: bit-identical for every thread count (the blocks and the order their gradients are summed in do not depend on it).
#: GPSSM_NP_THREADS=N, or "auto" (the default; also 0) for one per core; 1 runs them in the calling thread only,
#: which measured faster on machines whose cores are busy with other work (bench/README.md). The sweeps of
#: ``experiments.table1`` give each of their ``jobs`` processes cores // jobs threads.
NUM_THREADS = _threads_from_env(os.environ.get("GPSSM_NP_THREADS", "auto"))

#: LLVM fast-math flags of the hot Numba kernels: "contract" (fused multiply-add) only, which changes results by
#: rounding alone. Flags that assume no NaN/inf, or approximate functions, are never used.
FASTMATH = frozenset({"contract"})

#: Fast-math flags of kernels whose hot loops also sum over particles: "reassoc" in addition lets LLVM split those
#: sums into vector lanes (a fixed order for a given build, so results stay deterministic). The tests check both
#: flag sets against the plain NumPy reference at 1e-10 relative.
FASTMATH_SUMS = frozenset({"contract", "reassoc"})

#: Memory budget of the rollout's tape (what its forward pass keeps for the reverse pass): past it, parts of the tape
#: are recomputed in the reverse pass instead of stored (ops/rollout.py). GPSSM_NP_TAPE_MB, in MiB.
TAPE_BYTES = _mebibytes_from_env("GPSSM_NP_TAPE_MB", 512)

#: Bytes of freed tapes (rollout, LSTM) kept for reuse by later calls (of the same or smaller sizes).
#: GPSSM_NP_TAPE_POOL_MB, in MiB.
TAPE_POOL_BYTES = _mebibytes_from_env("GPSSM_NP_TAPE_POOL_MB", 512)
