"""How much time the default fit saves by running its fold runs side by side (``ops.threads.run_tasks``) rather
than one after the other with every kernel on both threads: one default fit of the 500-step cascaded tanks
(bench/bench_default_fit.py's series) at ``max_steps`` 300, in a fresh process per call, with the selection's
``run_tasks`` as it is ("par") or replaced by a plain loop ("seq"). Prints the fit's seconds, the seconds of the
selection's training steps ("adv"), of its evaluations ("eval") and of the refit, and the best fold error (the
same in both modes: the bits do not depend on how the runs are scheduled). Alternate the modes in separate calls::

    for i in 1 2 3; do for mode in par seq; do python research/run_tasks_timing.py $mode; done; done
"""
import sys
import time

import gpssm_np as gp
from gpssm_np.models import default_fit


def main(mode, max_steps=300):
    gp.warmup()
    y, u, _ = gp.datasets.cascaded_tanks(500, seed=0)
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    seconds = {"adv": 0.0, "eval": 0.0, "refit": 0.0}
    schedule = default_fit.run_tasks if mode == "par" else (lambda tasks: [task() for task in tasks])

    def timed(key, call):
        def timed_call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                seconds[key] += time.perf_counter() - start
        return timed_call

    default_fit.run_tasks = timed("adv", schedule)
    for key, name in (("eval", "evaluate"), ("refit", "refit")):
        setattr(default_fit.DefaultFit, name, timed(key, getattr(default_fit.DefaultFit, name)))
    start = time.perf_counter()
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=max_steps)
    total = time.perf_counter() - start
    best = min(r["rmse"] for r in model.selection_["record"])
    print(mode, "fit", round(total, 2), {k: round(v, 2) for k, v in seconds.items()}, model.selection_["step"], best)


if __name__ == "__main__":
    main(sys.argv[1])
