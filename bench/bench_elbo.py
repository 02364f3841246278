"""One ELBO + gradient per backend at the paper's configuration, and the speed-up of the fused backend.

Paper configuration (docs/design.md, authors' code s12): B=16 windows, T=50, S=50 particles, Q=4 latent GPs,
M=20 inducing points, d_x=4, d_u=1, d_y=1, Matern-5/2. The fused rollout alone (forward and reverse) is timed
too, on the configured number of kernel threads (GPSSM_NP_THREADS) and on ``--threads`` if given. Usage::

    python bench/bench_elbo.py [--json] [--repeats N] [--small] [--backends fused ops reference] [--threads 2]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import PAPER, SMALL, blas_threads, elbo_step, emit, measure, parser, rollout_step, versions  # noqa: E402

from gpssm_np.ops.threads import kernel_threads, use_threads  # noqa: E402


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--backends", nargs="+", default=["fused", "ops", "reference"])
    p.add_argument("--threads", type=int, default=None, help="also time the fused backend on this many threads")
    args = p.parse_args(argv)
    cfg = SMALL if args.small else PAPER
    results = {}
    with blas_threads(args.blas_threads):
        for backend in args.backends:
            repeats = max(1, args.repeats // 2) if backend == "reference" else args.repeats
            results[backend] = measure(elbo_step(cfg, backend), repeats=repeats)
        rollout = {kernel_threads(): measure(rollout_step(cfg), repeats=args.repeats)}
        with use_threads(args.threads or kernel_threads()):
            threads = kernel_threads()  # at most Numba's pool (NUMBA_NUM_THREADS, the cores by default)
            if threads not in rollout:
                if "fused" in args.backends:
                    results[f"fused, {threads} thread(s)"] = measure(elbo_step(cfg), repeats=args.repeats)
                rollout[threads] = measure(rollout_step(cfg), repeats=args.repeats)
    report = {"config": cfg, "seconds": results, "rollout_seconds_by_threads": rollout, "versions": versions()}
    lines = [f"ELBO + gradient, B={cfg['B']} T={cfg['T']} S={cfg['S']} Q={cfg['Q']} M={cfg['M']} "
             f"d_x={cfg['dim_x']} d_u={cfg['dim_u']}  (kernel threads {kernel_threads()}, BLAS threads "
             f"{args.blas_threads or 'unchanged'})",
             f"{'backend':<24} {'median s':>10} {'iqr s':>9} {'first call s':>13} {'repeats':>8}"]
    for backend, r in results.items():
        lines.append(f"{backend:<24} {r['median']:>10.4f} {r['iqr']:>9.4f} {r['first_call']:>13.3f} "
                     f"{r['repeats']:>8d}")
    for threads, r in rollout.items():
        lines.append(f"{'rollout fwd+vjp, ' + str(threads) + ' thr':<24} {r['median']:>10.4f} {r['iqr']:>9.4f} "
                     f"{r['first_call']:>13.3f} {r['repeats']:>8d}")
    if "fused" in results:
        ratios = {b: results[b]["median"] / results["fused"]["median"] for b in results if b != "fused"}
        report["speedup_of_fused"] = ratios
        lines += [f"fused is {r:.1f}x faster than {b}" for b, r in ratios.items()]
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
