"""Shared benchmark harness: first call (JIT compile) timed apart, then repeats; median and spread; versions;
the paper's problem; BLAS thread control; peak memory.

Every script in bench/ prints a human-readable table, or one JSON document with ``--json``; ``--small`` runs a
tiny configuration (smoke test). Each run also writes its numbers with their provenance (script, options, date,
git commit, machine, versions, load average) to ``bench/results/<script>.json`` (``--results-dir`` elsewhere, ``''``
for none; :func:`save_result`); ``bench/build_readme.py`` renders those files into bench/README.md. BLAS is held
at one thread while a script measures (``--blas-threads`` changes that; 0 leaves BLAS as it is): on shared
machines a multi-threaded BLAS competing with other processes costs far more than it saves on the small matrices
of these models (docs/design.md).
"""
import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np

from gpssm_np.experiments import runs

#: The code version (``runs.code_version``) when the script imported this harness, before it measured anything: the
#: result file names the code that ran, not the working tree when the run ended.
CODE_AT_START = runs.code_version()
#: The paper's configuration (docs/design.md, authors' code s12): B windows of T steps, S particles, Q latent GPs,
#: M inducing points, Matern-5/2.
PAPER = dict(B=16, T=50, S=50, Q=4, M=20, dim_x=4, dim_u=1, dim_y=1)
#: A tiny configuration for smoke tests.
SMALL = dict(B=2, T=10, S=5, Q=2, M=5, dim_x=2, dim_u=1, dim_y=1)
#: The words for a result file's "target_met" (None: a run at a size the target is not set for), printed by the
#: scripts and rendered by build_readme.py alike.
TARGET_OUTCOMES = {True: "met", False: "not met", None: "not judged at this number of particles"}


def versions():
    """The package's versions (``gpssm-np info``: numpy, scipy, numba, autograd, ...) with what a timing also
    depends on: the machine's load, the thread settings and the BLAS pools."""
    import numba

    from gpssm_np._versions import versions as package_versions

    info = dict(package_versions(), machine=platform.machine(),
                load_average=os.getloadavg() if hasattr(os, "getloadavg") else None,
                numba_threads=numba.config.NUMBA_NUM_THREADS,
                env_threads={k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                             "MKL_NUM_THREADS", "GPSSM_NP_THREADS")})
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


def parser(description, repeats=True):
    """The options every benchmark takes; ``--repeats`` only where ``repeats`` (a script that times one run of a
    whole fit or a stream of updates has no repeated calls to set)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    if repeats:
        p.add_argument("--repeats", type=int, default=5, help="timed calls after the first (default 5)")
    p.add_argument("--small", action="store_true", help="a tiny configuration (smoke test)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads while measuring (default 1; 0 leaves BLAS's own setting)")
    p.add_argument("--results-dir", default=None,
                   help="folder of the result file <script>.json (default bench/results, and none with --small, whose "
                        "smoke-test numbers must not replace the published ones; '' writes none)")
    return p


#: Where each script writes ``<script>.json`` (rendered into bench/README.md by bench/build_readme.py).
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def emit(args, report, table_lines):
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(table_lines) + "\n")
    folder = getattr(args, "results_dir", "")
    if folder is None:
        folder = "" if getattr(args, "small", False) else RESULTS_DIR
    if folder and "skipped" not in report:
        save_result(folder, report)


def save_result(folder, report, script=None, argv=None):
    """Write ``report`` with its provenance to ``folder/<script>.json`` (atomically); returns the path. The
    document: script, argv (the options of the run), date (UTC), code (git commit, with a hash of uncommitted
    changes; :data:`CODE_AT_START`), machine, versions and the report itself."""
    script = script or os.path.splitext(os.path.basename(sys.argv[0]))[0]
    document = {"script": script, "argv": list(sys.argv[1:] if argv is None else argv),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "code": CODE_AT_START, "machine": runs.machine(), "versions": versions(),
                "report": report}
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{script}.json")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        json.dump(document, fh, indent=1, default=float)
        fh.write("\n")
    os.replace(tmp, path)
    return path


@contextlib.contextmanager
def blas_threads(n):
    """Every loaded BLAS at ``n`` threads for the body (threadpoolctl); a no-op for n = 0 or without threadpoolctl."""
    if not n:
        yield
        return
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (the BLAS Numba calls: load it so that it is limited too)
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield


def peak_rss_mb():
    """Peak resident memory of this process so far, MiB (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def problem(cfg, seed=0, **model_options):
    """(model, y, u) for a configuration dict like :data:`PAPER`: an ODGPSSM and random data of B windows. The
    model's objective is the paper's ("prior", the ELBO the scripts call "the paper's configuration") unless
    ``model_options`` names one: the package's default objective is EnVI's ("enkf")."""
    import gpssm_np as gp

    rng = np.random.default_rng(seed)
    y = rng.normal(size=(cfg["B"], cfg["T"], cfg["dim_y"]))
    u = rng.normal(size=(cfg["B"], cfg["T"], cfg["dim_u"]))
    model = gp.ODGPSSM(dim_x=cfg["dim_x"], dim_y=cfg["dim_y"], dim_u=cfg["dim_u"], num_latent=cfg["Q"],
                       num_inducing=cfg["M"], seed=seed, **dict({"objective": "prior"}, **model_options))
    return model, y, u


def elbo_step(cfg, backend="fused", seed=0, **model_options):
    """A function that evaluates one ELBO and its gradient of the configuration's problem (``model_options`` go to
    the ODGPSSM, e.g. objective="enkf")."""
    model, y, u = problem(cfg, seed, **model_options)
    return lambda: model.elbo_and_grad(y, u, num_samples=cfg["S"], seed=seed, backend=backend)


def rollout_step(cfg, seed=0, kind="matern52"):
    """A function that runs the fused rollout forward and backward alone (through autograd, as the ELBO does) on
    random arguments of the configuration's sizes."""
    import autograd.numpy as anp
    from autograd import grad

    from gpssm_np.ops.rollout import rollout

    rng = np.random.default_rng(seed)
    nseq, S, T, Q, M = cfg["B"], cfg["S"], cfg["T"], cfg["Q"], cfg["M"]
    dx, du = cfg["dim_x"], cfg["dim_u"]
    N, D = nseq * S, dx + du
    W = rng.normal(size=(Q, M, M)) / M
    args = (rng.normal(size=(N, dx)), rng.normal(size=(nseq, T, du)), rng.uniform(-2, 2, size=(Q, M, D)),
            rng.uniform(0.7, 2.0, size=(Q, D)), rng.uniform(0.5, 1.5, size=Q), rng.normal(size=(Q, M)),
            0.1 * (W + np.swapaxes(W, 1, 2)), 0.3 * rng.normal(size=(dx, Q)), rng.uniform(0.1, 0.5, size=dx),
            rng.normal(size=(T, N, Q)), rng.normal(size=(T, N, dx)), np.zeros((dx, dx)), np.zeros((dx, du)),
            np.zeros(dx))  # zero mean function
    weights = rng.normal(size=(T, N, dx))
    gradient = grad(lambda *a: anp.sum(rollout(*a, kind=kind) * weights), [0, 2, 3, 4, 5, 6, 7, 8])
    return lambda: gradient(*args)
