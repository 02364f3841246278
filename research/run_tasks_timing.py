"""How much time the default fit saves by running its fold runs side by side (``ops.threads.run_tasks``: their
training steps and their evaluations) rather than one after the other with every kernel on both threads: one default
fit in a fresh process per call, with the selection's ``run_tasks`` as it is ("par") or replaced by a plain loop
("seq"). The series: bench/bench_default_fit.py's 500-step cascaded tanks, or a data set's training half (``DATA``,
GPSSM_NP_DATA set), at ``max_steps`` (default 300). Prints the fit's seconds, the seconds of the selection's training
steps ("adv"), of its evaluations ("eval", each call's in "eval_calls") and of the refit, and the best fold error (the
same in both modes: the bits do not depend on how the runs are scheduled). Alternate the modes in separate calls::

    for i in 1 2 3; do for mode in par seq; do python research/run_tasks_timing.py $mode [DATA [MAX_STEPS]]; done; done

This script is the research record's; nothing in the package imports it.
"""
import sys
import time

import gpssm_np as gp
from gpssm_np.models import default_fit


def main(mode, data=None, max_steps=300):
    if mode not in ("seq", "par"):
        raise ValueError(f"mode: expected seq or par, got {mode!r}")
    gp.warmup()
    if data is None:
        y, u, _ = gp.datasets.cascaded_tanks(500, seed=0)
        y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)
    else:
        ds = gp.datasets.load(data)
        y, u = ds.y_train, ds.u_train
    seconds, eval_calls = {"adv": 0.0, "eval": 0.0, "refit": 0.0}, []
    schedule = default_fit.run_tasks if mode == "par" else (lambda tasks: [task() for task in tasks])
    evaluate, refit = default_fit.DefaultFit.evaluate, default_fit.DefaultFit.refit
    in_evaluation = []

    def scheduled(tasks):  # the training steps' time; an evaluation's run_tasks call counts as the evaluation's
        start = time.perf_counter()
        try:
            return schedule(tasks)
        finally:
            if not in_evaluation:
                seconds["adv"] += time.perf_counter() - start

    def timed_evaluate(self, step):
        in_evaluation.append(step)
        start = time.perf_counter()
        try:
            return evaluate(self, step)
        finally:
            eval_calls.append(time.perf_counter() - start)
            seconds["eval"] += eval_calls[-1]
            in_evaluation.pop()

    def timed_refit(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return refit(self, *args, **kwargs)
        finally:
            seconds["refit"] += time.perf_counter() - start

    default_fit.run_tasks = scheduled
    default_fit.DefaultFit.evaluate, default_fit.DefaultFit.refit = timed_evaluate, timed_refit
    start = time.perf_counter()
    model = gp.ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=0).fit(y, u, max_steps=max_steps, progress=False)
    total = time.perf_counter() - start
    best = min(r["rmse"] for r in model.selection_["record"])
    print(mode, data or "tanks500", "fit", round(total, 2), {k: round(v, 2) for k, v in seconds.items()},
          "eval_calls", [round(s, 2) for s in eval_calls], model.selection_["step"], best)


if __name__ == "__main__":
    main(sys.argv[1], *(sys.argv[2:3]), *(int(a) for a in sys.argv[3:4]))
