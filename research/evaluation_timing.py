"""The default fit's evaluations (``DefaultFit.evaluate``: every fold run's particle filters and forecasts) one after
the other (``seq``) or side by side on the cores (``par``, ``ops.threads.run_tasks``), timed in a ``max_steps=50`` fit
of a data set's training half (seed 0): one JSON line with the fit's seconds, each evaluation's seconds and the
record's candidate errors (the same in both modes, or the modes are not the same computation).

Run: python research/evaluation_timing.py seq|par DATA (GPSSM_NP_DATA set), the two modes in fresh processes one after
the other. This script is the research record's; nothing in the package imports it.
"""
import json
import sys
import time

import gpssm_np as gp
from gpssm_np.models import default_fit
from gpssm_np.ops import threads


def main(mode, name):
    gp.warmup()
    spent = []
    evaluate = default_fit.DefaultFit.evaluate

    side_by_side = default_fit.run_tasks

    def in_order(tasks):  # the tasks one after the other in the calling thread (its kernels on every thread)
        return [task() for task in tasks]

    def timed(self, step):
        default_fit.run_tasks = in_order if mode == "seq" else side_by_side  # the training steps are not changed
        start = time.perf_counter()
        try:
            return evaluate(self, step)
        finally:
            spent.append(time.perf_counter() - start)
            default_fit.run_tasks = side_by_side

    if mode not in ("seq", "par"):
        raise ValueError(f"mode: expected seq or par, got {mode!r}")
    default_fit.DefaultFit.evaluate = timed
    data = gp.datasets.load(name)
    start = time.perf_counter()
    model = gp.ODGPSSM(dim_y=data.y_train.shape[1], dim_u=data.u_train.shape[1], seed=0).fit(
        data.y_train, data.u_train, max_steps=50, progress=False)
    print(json.dumps({"mode": mode, "data": name, "threads": threads.kernel_threads(),
                      "fit_seconds": time.perf_counter() - start, "evaluate_seconds": spent,
                      "record": [r["candidates"] for r in model.selection_["record"]]}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
