"""Wall time of a default fit, ``ODGPSSM(dim_y=1, dim_u=1).fit(y, u)`` with nothing else set, on a 500-step and a
2000-step single-output series (targets: within 60 s and within 3 minutes on the project's 2-core machine), and
optionally on data sets' training halves.

The series are the cascaded tanks (``gpssm_np.datasets.cascaded_tanks``, seed 0), standardised, so the benchmark needs
no data files. Kernels are compiled (or loaded from the cache) first and timed apart. Reported per length: fit seconds,
the linear floor chosen (``models/floor.py``), the gradient steps of each run of the selection and how many runs (folds
x step-size candidates, ``models/default_fit.py``), the fold RMSE of the floor and of the best step, whether the GP part
was kept, the whole fit's seconds over the steps of one fold run ("seconds_per_step": the floor, every fold run, the
refit and the guards included), and stage 3b's record (None where the first selection kept a GP part; otherwise the fit
ran the pipeline a second time, from the other linear kind's floor, and the seconds include it). Usage::

    python bench/bench_default_fit.py [--json] [--small] [--lengths 500 2000] [--datasets steamgen]
                                      [--max-steps 500 ...]

``--max-steps`` fits every series again with each smaller step budget given (``fit(y, u, max_steps=N)``, the
selection's and so the refit's at most N steps): what a user trades in fold error for time.

``--datasets`` adds the default fit of a data set's training half (``gpssm_np.datasets.load``, needs
GPSSM_NP_DATA) with as many inputs and outputs as it has (the steam generator's 4 800 training steps: within 10
minutes).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import blas_threads, emit, parser, versions  # noqa: E402

import gpssm_np as gp  # noqa: E402
from gpssm_np.models.default_fit import floor_rmse  # noqa: E402


def series(T):
    y, u, _ = gp.datasets.cascaded_tanks(T, seed=0)
    return (y - y.mean(axis=0)) / y.std(axis=0), (u - u.mean(axis=0)) / u.std(axis=0)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], repeats=False)
    p.add_argument("--lengths", type=int, nargs="+", default=None, help="series lengths (default 500 2000)")
    p.add_argument("--datasets", nargs="+", default=[], help="data sets whose training half is fitted too")
    p.add_argument("--max-steps", type=int, nargs="+", default=[],
                   help="step budgets each series is fitted with besides the default's")
    args = p.parse_args(argv)
    lengths = args.lengths or ([200] if args.small else [500, 2000])
    fit_options = {"max_steps": 20, "plan": {"eval_every": 10}} if args.small else {}
    budgets = [fit_options] + [dict(fit_options, max_steps=n) for n in args.max_steps]
    compile_seconds = gp.warmup()
    runs = []
    with blas_threads(args.blas_threads):
        problems = [(f"cascaded tanks, {T} steps", *series(T), {}) for T in lengths]
        problems += [(name, data.y_train, data.u_train, {}) for name, data in
                     ((name, gp.datasets.load(name)) for name in args.datasets)]
        for (name, y, u, dims), options in ((problem, options) for problem in problems for options in budgets):
            start = time.perf_counter()
            model = gp.ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=0, **dims).fit(y, u, **options)
            seconds = time.perf_counter() - start
            sel = model.selection_
            steps = sel["record"][-1]["step"]  # gradient steps of each fold run
            scores = [r["rmse"] for r in sel["record"]]
            budget = model.training_plan(options.get("plan"), options.get("max_steps")).max_steps
            runs.append({"data": name, "T": len(y), "max_steps": budget, "dim_x": model.spec.dim_x,
                         "fit_seconds": seconds, "steps": steps,
                         "seconds_per_step": seconds / max(steps, 1), "folds": len(sel["origins"]),
                         "candidates": len(sel["record"][0].get("candidates") or [None]),
                         "floor": sel["floor"]["kind"], "gp_part": sel["gp_part"], "s_star": sel["step"],
                         "refit_steps": sel["refit_steps"],
                         "floor_fold_rmse": floor_rmse(sel), "selected_fold_rmse": min(scores),
                         "stage_3b": sel.get("other_floor")})
    report = {"compile_or_cache_seconds": compile_seconds, "fit_options": fit_options, "runs": runs,
              "targets_seconds": {"500": 60, "2000": 180, "steamgen": 600}, "versions": versions()}
    lines = [f"warm-up (compile or load kernels): {compile_seconds:.1f} s",
             "   T   budget   d_x   fit s   steps   ms/step*  folds x candidates   fold RMSE (floor -> best)   GP part"
             "   data"]
    for r in runs:
        lines.append(f"{r['T']:>5} {r['max_steps']:>8d} {r['dim_x']:>5} {r['fit_seconds']:>7.1f} {r['steps']:>7d} "
                     f"{1e3 * r['seconds_per_step']:>9.1f} {r['folds']:>9d} x {r['candidates']:<8d}   "
                     f"{r['floor_fold_rmse']:.4f} -> {r['selected_fold_rmse']:.4f}   "
                     f"{'kept' if r['gp_part'] else 'floor':>7}   {r['data']}")
    lines.append("* the whole fit's milliseconds over the steps of one fold run (floor, every run, refit and guards)")
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
