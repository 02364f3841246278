"""How one ELBO + gradient (fused backend) scales with T, M, Q, d_x and S, one at a time from the paper's setting;
also with d_x and Q together (the default ODGPSSM has Q = d_x) and with d_y (at d_x = 16, C = [I, 0]), the sizes
that grow on multi-output plants.

For each sweep the time of one ELBO + gradient, and of the fused rollout alone (forward and reverse), is measured
at every point; a straight line through log(time) against log(size) gives the measured exponent. Next to it:

* the exponent of the cost formula of the fused rollout, O(B S T (Q M^2 + Q M D + Q d_x)) with D = d_x + d_u,
  fitted over the same points (so it includes the lower-order terms at these sizes), and
* the exponent of the FLOP count of bench_flops.py (the same terms with the constants read off the loops: about 50
  FLOPs per kernel entry, with its sqrt and exp, against 4 M per entry for the two O(M^2) products), and
* its asymptotic exponent (T, S, Q, d_x: 1; M: 2; d_x = Q: 2, from Q d_x; d_y: 0, the rollout does not depend on
  it).

The LMC costs O(d_x Q) per particle and step, not the O(Q^2 d_x) of forming A S_h A^T: the rollout samples the
latent GPs and mixes the samples, so the d_x x d_x covariance is never formed.

The ELBO adds O(Q M^3) (K(Z, Z), its Cholesky and the KL of q(u)) and O(B S T d_y) (the likelihood) to the
rollout; these show at large M and small everything else. "upper" slopes are fitted over the three largest values
only (the asymptotic regime the complexity claim is about: "M at large M"). The kernels run on ``--threads``
threads (default 1: the sweep measures work; with more threads small sizes leave threads idle, since particles
are split into blocks of 400, which bends the curves). Writes a PNG of the curves (matplotlib, Agg). Usage::

    python bench/bench_scaling.py [--json] [--small] [--repeats N] [--threads N] [--sweeps T M Q d_x S d_x=Q d_y]
                                  [--out bench/scaling.png]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import PAPER, SMALL, blas_threads, elbo_step, emit, measure, parser, rollout_step, versions  # noqa: E402
from bench_flops import rollout_flops  # noqa: E402

from gpssm_np.ops.threads import use_threads  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
#: What each sweep varies (configuration keys set to the value; "d_y" also sets d_x to 16, or 3 when --small).
KEYS = {"T": ("T",), "M": ("M",), "Q": ("Q",), "d_x": ("dim_x",), "S": ("S",), "d_x=Q": ("dim_x", "Q"),
        "d_y": ("dim_y",)}
SWEEPS = {"T": [50, 100, 200, 400, 800, 1600], "M": [16, 32, 64, 128, 256], "Q": [1, 2, 4, 8, 16],
          "d_x": [2, 4, 8, 16, 32], "S": [10, 25, 50, 100, 200], "d_x=Q": [2, 4, 8, 16, 32], "d_y": [1, 2, 4, 8, 16]}
SMALL_SWEEPS = {"T": [5, 10, 20], "M": [4, 8], "Q": [1, 2], "d_x": [2, 3], "S": [2, 4], "d_x=Q": [2, 3],
                "d_y": [1, 2, 3]}
ASYMPTOTIC = {"T": 1.0, "M": 2.0, "Q": 1.0, "d_x": 1.0, "S": 1.0, "d_x=Q": 2.0, "d_y": 0.0}


def sweep_config(base, name, value, small=False):
    """The configuration of one point of sweep ``name``."""
    cfg = dict(base, **{key: value for key in KEYS[name]})
    if name == "d_y":
        cfg["dim_x"] = 3 if small else 16
    return cfg


def formula_cost(cfg):
    """Operation count of the fused rollout up to a constant: B S T (Q M^2 + Q M D + Q d_x)."""
    Q, M, dx = cfg["Q"], cfg["M"], cfg["dim_x"]
    D = dx + cfg["dim_u"]
    return cfg["B"] * cfg["S"] * cfg["T"] * (Q * M * M + Q * M * D + Q * dx)


def slope(xs, ys):
    """Least-squares slope of log(ys) against log(xs)."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(results))
    rows = -(-len(results) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    for ax in axes.flat[len(results):]:
        ax.set_visible(False)
    for ax, (name, r) in zip(axes.flat, results.items()):
        xs = np.array(r["values"], dtype=float)
        ax.loglog(xs, r["elbo_seconds"], "o-", label=f"ELBO+grad (slope {r['elbo_slope']:.2f})")
        ax.loglog(xs, r["rollout_seconds"], "s-", label=f"rollout (slope {r['rollout_slope']:.2f})")
        for key, style, label in (("formula_cost", "k--", "formula"), ("flops", "k:", "FLOP count")):
            cost = np.array(r[key], dtype=float)
            ax.loglog(xs, cost / cost[0] * r["rollout_seconds"][0], style, lw=1,
                      label=f"{label} (slope {r[key.replace('_cost', '') + '_slope']:.2f})")
        ax.set_xticks(xs, [f"{v:g}" for v in xs], minor=False)
        ax.set_xticks([], minor=True)
        ax.set_xlabel(name)
        ax.set_ylabel("seconds")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("gpssm_np fused backend: one ELBO + gradient, one size varied from the paper's setting")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(repeats=3)
    p.add_argument("--threads", type=int, default=1, help="kernel threads while measuring (default 1)")
    p.add_argument("--sweeps", nargs="+", choices=list(SWEEPS), default=list(SWEEPS))
    p.add_argument("--out", default=None, help="PNG of the curves (default bench/scaling.png, the published one; with "
                   "--small none unless given; '' for none)")
    args = p.parse_args(argv)
    if args.out is None:  # a --small run never replaces the published figure
        args.out = "" if args.small else os.path.join(HERE, "scaling.png")
    base = SMALL if args.small else PAPER
    grid = SMALL_SWEEPS if args.small else SWEEPS
    results = {}
    with blas_threads(args.blas_threads), use_threads(args.threads):
        for name in args.sweeps:
            r = {"values": grid[name], "elbo_seconds": [], "rollout_seconds": [], "formula_cost": [], "flops": []}
            for value in grid[name]:
                cfg = sweep_config(base, name, value, args.small)
                r["elbo_seconds"].append(measure(elbo_step(cfg), repeats=args.repeats)["median"])
                r["rollout_seconds"].append(measure(rollout_step(cfg), repeats=args.repeats)["median"])
                r["formula_cost"].append(formula_cost(cfg))
                r["flops"].append(rollout_flops(cfg))
            for what in ("elbo", "rollout"):
                r[f"{what}_slope"] = slope(r["values"], r[f"{what}_seconds"])
                r[f"{what}_upper_slope"] = slope(r["values"][-3:], r[f"{what}_seconds"][-3:])
            r["formula_slope"] = slope(r["values"], r["formula_cost"])
            r["flops_slope"] = slope(r["values"], r["flops"])
            r["flops_upper_slope"] = slope(r["values"][-3:], r["flops"][-3:])
            r["asymptotic_slope"] = ASYMPTOTIC[name]
            results[name] = r
    if args.out:
        plot(results, args.out)
    report = {"base_config": base, "sweeps": results, "png": args.out or None, "versions": versions()}
    lines = [f"Scaling of one ELBO + gradient (fused) around B={base['B']} T={base['T']} S={base['S']} "
             f"Q={base['Q']} M={base['M']} d_x={base['dim_x']} d_u={base['dim_u']}",
             f"(kernel threads {args.threads})",
             f"{'size':<5} {'values':<28} {'ELBO slope':>10} {'(upper)':>8} {'rollout slope':>14} {'(upper)':>8} "
             f"{'formula':>8} {'FLOPs':>6} {'(upper)':>8} {'asymptotic':>10}"]
    for name, r in results.items():
        lines.append(f"{name:<5} {str(r['values']):<28} {r['elbo_slope']:>10.2f} {r['elbo_upper_slope']:>8.2f} "
                     f"{r['rollout_slope']:>14.2f} {r['rollout_upper_slope']:>8.2f} {r['formula_slope']:>8.2f} "
                     f"{r['flops_slope']:>6.2f} {r['flops_upper_slope']:>8.2f} {r['asymptotic_slope']:>10.1f}")
    for name, r in results.items():
        lines.append(f"  {name}: ELBO s " + " ".join(f"{t:.4f}" for t in r["elbo_seconds"])
                     + " | rollout s " + " ".join(f"{t:.4f}" for t in r["rollout_seconds"]))
    if args.out:
        lines.append(f"curves written to {args.out}")
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
