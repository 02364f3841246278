"""Where a default fit's time goes: a profile of ``ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u)`` on the 500-step
series of bench/bench_default_fit.py (the cascaded tanks, seed 0, standardised).

Kernels are compiled (or loaded) first. The fit runs under cProfile, which sees the calling thread only: the
selection's fold runs go two at a time on the kernel threads (``ops.threads.run_tasks``), so the profile holds the
main thread's share of the selection (its runs' steps) and the whole refit, whose kernels the threads share. The
printed split is of the main thread's time: the stages (floor, selection, refit, the rest), and within the training
steps the ensemble-Kalman objective's forward and reverse kernels (``ops.enkf``), the standard normals
(``inference.draw_noise``) and the rest (autograd, the KL terms, Adam). Usage::

    python research/profile_default_fit.py [--max-steps 500] [--out profile.out]
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

import gpssm_np as gp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from bench_default_fit import series  # noqa: E402

#: (label, file suffix, function name) of the functions whose cumulative time the split reads.
PARTS = (("floor (stage 1)", "models/default_fit.py", "floor"),
         ("selection (stages 2-3)", "models/default_fit.py", "selection"),
         ("refit (stage 4)", "models/default_fit.py", "refit"),
         ("training steps", "training_loop.py", "train_step"),
         ("  ensemble Kalman forward kernel", "ops/enkf.py", "_fwd_blocks"),
         ("  ensemble Kalman reverse kernel", "ops/enkf.py", "_vjp_blocks"),
         ("  standard normals", "inference.py", "draw_noise"),
         ("fold scores (particle filters)", "models/default_fit.py", "evaluate"))


def cumulative(stats, suffix, name):
    """Cumulative seconds of the functions called ``name`` in files ending with ``suffix``."""
    return sum(row[3] for (path, _, func), row in stats.stats.items() if func == name and path.endswith(suffix))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-steps", type=int, default=None, help="the fit's step budget (default: the plan's)")
    p.add_argument("--out", default=None, help="write the raw profile here (pstats format)")
    args = p.parse_args(argv)
    gp.warmup()
    y, u = series(500)
    options = {} if args.max_steps is None else {"max_steps": args.max_steps}
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, progress=False, **options)
    profile.disable()
    seconds = time.perf_counter() - start
    if args.out:
        profile.dump_stats(args.out)
    stats = pstats.Stats(profile)
    sel = model.selection_
    print(f"fit: {seconds:.1f} s wall; selection to step {sel['record'][-1]['step']}, s* = {sel['step']}, "
          f"GP part kept: {sel['gp_part']}")
    steps = cumulative(stats, "training_loop.py", "train_step")
    for label, suffix, name in PARTS:
        value = cumulative(stats, suffix, name)
        share = f"{100 * value / steps:5.1f} % of the steps" if label.startswith("  ") else ""
        print(f"{label:<36} {value:7.1f} s  {share}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
