"""Wall time of a full training run with the authors' settings on the actuator data, one step's breakdown, and memory.

The run: ``ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=4, num_inducing=20, recognition="lstm",
kl_weighting="paper", settings="authors")`` fitted with ``fit(y_train, u_train, epochs=70, plan=dict(seq_len=50,
batch_size=16, lr=0.01, num_samples=50))`` (data from ``gpssm_np.datasets.load("actuator")``, directory
GPSSM_NP_DATA). Kernels are compiled first (``gpssm_np.warmup``, timed apart). During the run the jitted kernels,
the noise draws and the optimiser are timed by thin wrappers, so the mean step splits into:

* rollout: the fused rollout's forward and reverse kernels;
* recognition network: the LSTM's forward and reverse kernels;
* precompute: K(Z, Z) and the q(u) factors alpha, B (forward and reverse);
* noise: drawing the standard normals of the step;
* optimizer: the Adam update;
* Python overhead: the rest (autograd's graph and its NumPy operations, the likelihood, the KL terms, the heads of
  the recognition network, minibatch slicing).

Peak memory is the process's peak resident set (``resource.getrusage``), which includes the interpreter and the
libraries (their share is printed too, measured before the run). Usage::

    python bench/bench_fit.py [--json] [--small] [--epochs N] [--num-inducing M] [--train-points N]
"""
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import blas_threads, emit, parser, peak_rss_mb, versions  # noqa: E402

import gpssm_np as gp  # noqa: E402
from gpssm_np import optim  # noqa: E402
from gpssm_np.models import gpssm as gpssm_model  # noqa: E402
from gpssm_np.ops import conditional, kernels, lstm, rollout  # noqa: E402

PARTS = {
    "rollout": [(rollout, "run_blocks")],
    "recognition network": [(lstm, "run_blocks")],
    "precompute": [(conditional, "_factors"), (conditional, "_precompute_vjp"),
                   (kernels, "_kernel_matrix_fwd"), (kernels, "_kernel_matrix_vjp")],
    "noise": [(gpssm_model, "draw_noise")],
    "optimizer": [(optim.Adam, "step")],
}


def instrument(totals):
    """Wrap every function of PARTS so that its time adds to ``totals[part]``; returns an undo function."""
    undo = []
    for part, targets in PARTS.items():
        for owner, name in targets:
            original = getattr(owner, name)

            def timed(*args, _original=original, _part=part, **kwargs):
                start = time.perf_counter()
                try:
                    return _original(*args, **kwargs)
                finally:
                    totals[_part] += time.perf_counter() - start

            setattr(owner, name, timed)
            undo.append((owner, name, original))

    def restore():
        for owner, name, original in undo:
            setattr(owner, name, original)

    return restore


def main(argv=None):
    p = parser(__doc__.splitlines()[0], repeats=False)
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default 70; 1 with --small)")
    p.add_argument("--num-inducing", type=int, default=20)
    p.add_argument("--train-points", type=int, default=None, help="use only the first N training points")
    args = p.parse_args(argv)
    small = args.small
    epochs = (1 if small else 70) if args.epochs is None else args.epochs
    settings = dict(seq_len=10 if small else 50, batch_size=4 if small else 16, lr=0.01,
                    num_samples=5 if small else 50)
    train_points = args.train_points or (40 if small else None)

    ds = gp.datasets.load("actuator")
    y, u = ds.y_train[:train_points], ds.u_train[:train_points]
    model = gp.ODGPSSM(dim_x=4, dim_y=1, dim_u=1, num_latent=4, num_inducing=args.num_inducing, recognition="lstm",
                       kl_weighting="paper", settings="authors",
                       **({"recognition_options": {"hidden": 8}} if small else {}))
    compile_seconds = gp.warmup()
    rss_before = peak_rss_mb()
    totals = defaultdict(float)
    restore = instrument(totals)
    try:
        with blas_threads(args.blas_threads):
            start = time.perf_counter()
            model.fit(y, u, epochs=epochs, plan=settings)
            seconds = time.perf_counter() - start
    finally:
        restore()
    steps = len(model.history_)
    step = seconds / steps
    breakdown = {part: totals[part] / steps for part in PARTS}
    breakdown["Python overhead"] = step - sum(breakdown.values())
    peak = peak_rss_mb()  # read once: the printed and the saved number are the same
    report = {"settings": dict(settings, epochs=epochs, num_inducing=args.num_inducing, train_points=len(y)),
              "compile_or_cache_seconds": compile_seconds, "fit_seconds": seconds, "steps": steps,
              "step_seconds": step, "step_breakdown_seconds": breakdown, "peak_rss_mb": peak,
              "rss_before_fit_mb": rss_before, "final_loss": model.history_[-1], "versions": versions()}
    lines = [f"Training on actuator ({len(y)} points, M={args.num_inducing}, epochs={epochs}, seq_len="
             f"{settings['seq_len']}, batch={settings['batch_size']}, S={settings['num_samples']}, LSTM recognition)",
             f"warm-up (compile or load kernels): {compile_seconds:.2f} s",
             f"fit: {seconds:.2f} s for {steps} steps = {1e3 * step:.1f} ms per step; final loss "
             f"{model.history_[-1]:.4f}",
             "per step:"]
    for part, value in breakdown.items():
        lines.append(f"  {part:<20} {1e3 * value:>8.2f} ms  {value / step:>6.1%}")
    lines.append(f"peak memory (RSS): {peak:.0f} MiB (before the fit: {rss_before:.0f} MiB)")
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
