"""One ELBO + gradient per backend at the paper's configuration, and the speed-up of the fused backend.

Paper configuration (research/odgpssm_reference.md s12): B=16 windows, T=50, S=50 particles, Q=4 latent GPs,
M=20 inducing points, d_x=4, d_u=1, d_y=1, Matern-5/2. Usage::

    python bench/bench_elbo.py [--json] [--repeats N] [--small]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import emit, measure, parser, versions  # noqa: E402

import gpssm_np as gp  # noqa: E402

PAPER = dict(B=16, T=50, S=50, Q=4, M=20, dim_x=4, dim_u=1, dim_y=1)
SMALL = dict(B=2, T=10, S=5, Q=2, M=5, dim_x=2, dim_u=1, dim_y=1)


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="a tiny configuration (smoke test)")
    p.add_argument("--backends", nargs="+", default=["fused", "ops", "reference"])
    args = p.parse_args(argv)
    cfg = SMALL if args.small else PAPER
    rng = np.random.default_rng(0)
    y = rng.normal(size=(cfg["B"], cfg["T"], cfg["dim_y"]))
    u = rng.normal(size=(cfg["B"], cfg["T"], cfg["dim_u"]))
    model = gp.ODGPSSM(dim_x=cfg["dim_x"], dim_y=cfg["dim_y"], dim_u=cfg["dim_u"], num_latent=cfg["Q"],
                       num_inducing=cfg["M"], seed=0)
    results = {}
    for backend in args.backends:
        repeats = max(1, args.repeats // 2) if backend == "reference" else args.repeats
        results[backend] = measure(
            lambda: model.elbo_and_grad(y, u, num_samples=cfg["S"], seed=0, backend=backend), repeats=repeats)
    report = {"config": cfg, "seconds": results, "versions": versions()}
    lines = [f"ELBO + gradient, B={cfg['B']} T={cfg['T']} S={cfg['S']} Q={cfg['Q']} M={cfg['M']} "
             f"d_x={cfg['dim_x']} d_u={cfg['dim_u']}",
             f"{'backend':<10} {'median s':>10} {'iqr s':>9} {'first call s':>13} {'repeats':>8}"]
    for backend, r in results.items():
        lines.append(f"{backend:<10} {r['median']:>10.4f} {r['iqr']:>9.4f} {r['first_call']:>13.3f} {r['repeats']:>8d}")
    if "fused" in results:
        ratios = {b: results[b]["median"] / results["fused"]["median"] for b in results if b != "fused"}
        report["speedup_of_fused"] = ratios
        lines += [f"fused is {r:.1f}x faster than {b}" for b, r in ratios.items()]
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
