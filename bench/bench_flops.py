r"""FLOP rate of the fused ELBO + gradient against NumPy's dense matrix product on the same machine and run.

FLOP count of the fused rollout, forward and reverse, read off the loops of gpssm_np/ops/rollout.py (one multiply-add
counts 2, a division or square root 1, one ``exp_fast`` 34: its range reduction and degree-13 polynomial). Per step
t, latent GP q and particle n, with M inducing points and D = d_x + d_u inputs::

    forward, per inducing point j:
        r2 = sum_d ((x_d - z_jd) / l_d)^2                        4 D
        Matern-5/2 row: a = sqrt(5 r2), e = s2 exp(-a),
        k = (1 + a + a^2/3) e, dk/dr2 = -(5/6)(1 + a) e          45   (squared exponential: 36)
        (B_q k)_j  (BLAS)                                        2 M
        mean += k_j alpha_j, k^T B k += k_j (B k)_j              4
    forward, per (t, q, n): var, sqrt, h                           4
    reverse, per inducing point j:
        kbar, dalpha, ds2, varbar k, dL/dr2                      9
        per input d: diff, w, dx~, dZ, dl                        7 D
        dB_q -= varbar k k^T  (BLAS)                             2 M
    reverse, per (t, q, n): hbar, dA (4 d_x), varbar, ds2        4 d_x + 4
    per (t, n): x_t = A h + sqrt(q) eps (forward) and g, dsqrt(q) (reverse)    d_x (5 + 2 Q)
    reverse, per (t, n): d[F G] += g xt^T, db += g  (linear mean)             d_x (2 D + 1)

    FLOPs = T N [Q (M (4 M + 11 D + 58) + 4 d_x + 8) + d_x (6 + 2 Q + 2 D)],   N = B S,

for the zero mean function of the benchmarks (a nonzero one adds m = [F G] xt + b, d_x (2 D + 2), to the forward
pass and F^T g, 2 d_x^2, to the reverse).

The rest of the ELBO (K(Z, Z) and the q(u) factorisation, O(Q M^3); the likelihood, O(T N d_y)) is not counted:
the rate is given both against the rollout's own time and against the whole ELBO + gradient. The reference rate is
a dense float64 matrix product (n x n, n = 1000) through NumPy with BLAS at one thread (threadpoolctl; without it
OPENBLAS_NUM_THREADS=1 etc. are set before NumPy is imported), the kernels also running on one thread. Usage::

    python bench/bench_flops.py [--json] [--small] [--repeats N] [--inducing 20 128]
"""
import os
import sys

try:
    import threadpoolctl  # noqa: F401
except ImportError:  # no way to change BLAS threads later: fix them before NumPy loads BLAS
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import PAPER, SMALL, blas_threads, elbo_step, emit, measure, parser, rollout_step, versions  # noqa: E402

from gpssm_np.ops.threads import use_threads  # noqa: E402


def rollout_flops(cfg, kind="matern52"):
    """FLOPs of one fused rollout forward and reverse (formula in the module docstring)."""
    T, Q, M, dx = cfg["T"], cfg["Q"], cfg["M"], cfg["dim_x"]
    N, D = cfg["B"] * cfg["S"], cfg["dim_x"] + cfg["dim_u"]
    per_row = 4 * M + 11 * D + (58 if kind == "matern52" else 50)
    return T * N * (Q * (M * per_row + 4 * dx + 8) + dx * (6 + 2 * Q + 2 * D))


def matmul_rate(n, repeats):
    """FLOP/s of a dense n x n float64 product through NumPy (2 n^3 FLOPs)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    return 2.0 * n**3 / measure(lambda: a @ b, repeats=repeats)["median"]


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--inducing", nargs="+", type=int, default=None, help="values of M (default 20 128)")
    args = p.parse_args(argv)
    base = SMALL if args.small else PAPER
    inducing = args.inducing or ([5, 8] if args.small else [20, 128])
    n = 200 if args.small else 1000
    rows = []
    with blas_threads(args.blas_threads or 1), use_threads(1):
        dense = matmul_rate(n, args.repeats)
        for M in inducing:
            cfg = dict(base, M=M)
            flops = rollout_flops(cfg)
            rollout = measure(rollout_step(cfg), repeats=args.repeats)["median"]
            elbo = measure(elbo_step(cfg), repeats=args.repeats)["median"]
            rows.append({"M": M, "flops": flops, "rollout_seconds": rollout, "elbo_seconds": elbo,
                         "rollout_rate": flops / rollout, "elbo_rate": flops / elbo,
                         "rollout_fraction": flops / rollout / dense, "elbo_fraction": flops / elbo / dense})
    report = {"base_config": base, "dense_matmul": {"n": n, "flops_per_second": dense}, "results": rows,
              "versions": versions()}
    lines = [f"Dense {n}x{n} float64 matmul (NumPy, 1 BLAS thread): {dense / 1e9:.1f} GFLOP/s",
             f"{'M':>5} {'GFLOP':>8} {'rollout s':>10} {'GFLOP/s':>8} {'of matmul':>10} {'ELBO s':>8} {'GFLOP/s':>8} "
             f"{'of matmul':>10}"]
    for r in rows:
        lines.append(f"{r['M']:>5} {r['flops'] / 1e9:>8.3f} {r['rollout_seconds']:>10.4f} "
                     f"{r['rollout_rate'] / 1e9:>8.2f} {r['rollout_fraction']:>10.1%} {r['elbo_seconds']:>8.4f} "
                     f"{r['elbo_rate'] / 1e9:>8.2f} {r['elbo_fraction']:>10.1%}")
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
