"""The ensemble Kalman objective (objective="enkf") against the paper's prior objective: one ELBO + gradient each.

Paper configuration (B=16 windows, T=50, N=S=50 members per window, Q=4, M=20, d_x=4, d_u=1, d_y=1, Matern-5/2).
The two fused objectives are timed in alternation (prior, enkf, prior, ...), so that a change of the machine's
load during the run falls on both alike; the enkf objective's ops and reference backends are timed after them.
Issue #13's targets: fused enkf at most 1.5x the fused prior objective, at least 30x faster than its reference
backend. Usage::

    python bench/bench_enkf.py [--json] [--repeats N] [--small] [--backends ops reference]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import PAPER, SMALL, blas_threads, elbo_step, emit, measure, parser, versions  # noqa: E402

from gpssm_np.ops.threads import kernel_threads  # noqa: E402


def alternating(functions, repeats):
    """Median seconds of each function, timed in turn ``repeats`` times after one untimed call each."""
    for fn in functions.values():
        fn()
    times = {name: [] for name in functions}
    for _ in range(repeats):
        for name, fn in functions.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: {"median": statistics.median(t), "min": min(t), "repeats": len(t)} for name, t in times.items()}


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--backends", nargs="+", default=["ops", "reference"], help="slower backends of the enkf objective")
    args = p.parse_args(argv)
    cfg = SMALL if args.small else PAPER
    with blas_threads(args.blas_threads):
        fused = alternating({"prior, fused": elbo_step(cfg), "enkf, fused": elbo_step(cfg, objective="enkf")},
                            max(3, 2 * args.repeats))
        others = {f"enkf, {b}": measure(elbo_step(cfg, b, objective="enkf"), repeats=max(1, args.repeats // 2))
                  for b in args.backends}
    seconds = dict(fused, **others)
    enkf = seconds["enkf, fused"]["median"]
    ratios = {"enkf / prior (fused)": enkf / seconds["prior, fused"]["median"]}
    ratios.update({f"enkf {b} / enkf fused": seconds[f"enkf, {b}"]["median"] / enkf for b in args.backends})
    report = {"config": cfg, "seconds": seconds, "ratios": ratios, "kernel_threads": kernel_threads(),
              "versions": versions()}
    lines = [f"ELBO + gradient, B={cfg['B']} T={cfg['T']} S={cfg['S']} Q={cfg['Q']} M={cfg['M']} d_x={cfg['dim_x']}"
             f" (kernel threads {kernel_threads()})", f"{'objective, backend':<22} {'median s':>10} {'repeats':>8}"]
    lines += [f"{name:<22} {r['median']:>10.4f} {r['repeats']:>8d}" for name, r in seconds.items()]
    lines += [f"{name}: {r:.2f}" for name, r in ratios.items()]
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
