"""A new user's first fit: the wall time of a one-step default fit in a fresh process with an empty Numba cache
(a temporary ``NUMBA_CACHE_DIR``), and the same fit again with that cache filled, so that the difference is the
compile time of the kernels a default fit needs (target: at most 25 s on the project's 2-core machine). The
default fit compiles its training objective's kernels and its scores' fused filter step in two child processes
meanwhile (``ops/compile_ahead.py``), so on two cores the wall time is about half the compile work rather than all
of it. The CPU seconds of all the processes are reported too: their difference is the compile work in all, which a
busy machine cannot run in parallel.

The fit is ``ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=1, plan={"eval_every": 1})`` on 200 steps of the
cascaded tanks (``datasets.cascaded_tanks``, seed 0): every stage of the default fit runs once (the floor's ARX and
LGSSM, the selection's training and scoring, the refit, the free-run guard, the calibration). Usage::

    python bench/bench_first_fit.py [--json]
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import TARGET_OUTCOMES, emit, parser, versions  # noqa: E402

TARGET_SECONDS = 25.0
CHILD = """
import gpssm_np as gp
y, u, _ = gp.datasets.cascaded_tanks(200, seed=0)
gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=1, plan={"eval_every": 1}, progress=False)
"""


def timed_child(env):
    """(wall seconds, CPU seconds) of one child running CHILD."""
    def cpu():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    start, start_cpu = time.perf_counter(), cpu()
    subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)
    return time.perf_counter() - start, cpu() - start_cpu


def main(argv=None):
    p = parser(__doc__.splitlines()[0], repeats=False)
    args = p.parse_args(argv)
    if args.small or args.blas_threads != p.get_default("blas_threads"):
        p.error("--small, --blas-threads: this benchmark times one fit with an empty kernel cache and one with it "
                "filled, at one size; it takes --json and --results-dir")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold, cold_cpu = timed_child(env)
        warm, warm_cpu = timed_child(env)
    report = {"cold_seconds": cold, "warm_seconds": warm, "compile_seconds": cold - warm,
              "cold_cpu_seconds": cold_cpu, "warm_cpu_seconds": warm_cpu, "compile_cpu_seconds": cold_cpu - warm_cpu,
              "target_seconds": TARGET_SECONDS, "target_met": cold - warm <= TARGET_SECONDS, "versions": versions()}
    lines = [f"first default fit, empty cache: {cold:.1f} s; the same with the cache filled: {warm:.1f} s",
             f"compile time {cold - warm:.1f} s (target {TARGET_SECONDS:.0f} s: "
             f"{TARGET_OUTCOMES[report['target_met']]}); CPU seconds: {cold_cpu:.1f} and {warm_cpu:.1f}, "
             f"difference {cold_cpu - warm_cpu:.1f}"]
    emit(args, report, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
