"""Shared benchmark harness: first call (JIT compile) timed apart, then repeats; median and spread; versions.

Every script in bench/ prints a human-readable table, or one JSON document with ``--json``.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time


def versions():
    import autograd
    import numba
    import numpy
    import scipy

    import gpssm_np

    info = {
        "python": platform.python_version(),
        "gpssm_np": gpssm_np.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "autograd": getattr(autograd, "__version__", "unknown"),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas_threads"] = [{"api": p.get("internal_api"), "threads": p.get("num_threads")}
                                for p in threadpool_info()]
    except ImportError:
        info["blas_threads"] = "threadpoolctl not installed"
    return info


def measure(fn, repeats=5, min_time=0.0):
    """Time ``fn()``: the first call separately (includes JIT compilation), then ``repeats`` calls (more while
    the total is under ``min_time`` seconds). Returns a dict of seconds."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times = []
    while len(times) < repeats or sum(times) < min_time:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    q1 = times[len(times) // 4]
    q3 = times[(3 * len(times)) // 4]
    return {"first_call": first, "median": statistics.median(times), "iqr": q3 - q1, "min": times[0],
            "repeats": len(times)}


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--repeats", type=int, default=5, help="timed calls after the first (default 5)")
    return p


def emit(args, report, table_lines):
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(table_lines) + "\n")
