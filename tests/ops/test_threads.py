"""ops/threads.py's run_tasks: independent tasks side by side, one kernel thread each, results in task order, and a
default fit whose lockstep fold runs it trains gives the bits of the same fit on one thread; and the hand-out of work
to the threads (_hand_out) when the calling thread is interrupted."""
import threading
import time

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np._config import CPU_COUNT
from gpssm_np.ops.threads import kernel_threads, run_tasks, use_threads

from tests.test_floor import noiseless_plant

two_cores = pytest.mark.skipif(CPU_COUNT < 2, reason="needs two cores to run two tasks side by side")


def test_results_come_back_in_task_order():
    def task(k):  # the later tasks finish first
        time.sleep(0.01 * (7 - k))
        return k * k

    with use_threads(2):
        assert run_tasks([lambda k=k: task(k) for k in range(7)]) == [k * k for k in range(7)]
    assert run_tasks([]) == []


@two_cores
def test_tasks_run_side_by_side_each_with_one_kernel_thread():
    # two tasks that each wait for the other: they finish only when they run at the same time
    barrier = threading.Barrier(2, timeout=20)
    seen = []

    def task():
        seen.append(kernel_threads())
        barrier.wait()
        return threading.get_ident()

    with use_threads(2):
        idents = run_tasks([task, task])
        assert kernel_threads() == 2  # the calling thread's own setting is back
    assert len(set(idents)) == 2 and seen == [1, 1]


def test_one_kernel_thread_runs_the_tasks_in_turn_in_the_calling_thread():
    with use_threads(1):
        assert set(run_tasks([threading.get_ident] * 3)) == {threading.get_ident()}


@two_cores
def test_the_first_failing_task_raises_after_every_task_ran():
    done = []

    def fails(k):
        def task():
            done.append(k)
            if k in (1, 2):
                raise ValueError(f"task {k}")
            return k
        return task

    with use_threads(2), pytest.raises(ValueError, match="task 1"):
        run_tasks([fails(k) for k in range(5)])
    assert sorted(done) == list(range(5))


@two_cores
def test_a_default_fit_gives_the_same_bits_on_one_and_on_two_threads():
    y, u = noiseless_plant()
    fits = []
    for threads in (1, 2):
        with use_threads(threads):
            fits.append(gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=20, plan={"eval_every": 10}))
    one, two = fits
    assert one.selection_["record"] == two.selection_["record"]
    assert len(one.selection_["record"][0]["windows"]) == 2  # two step-size candidates: four runs, two at a time
    for name, value in one.get_learned_params().items():
        np.testing.assert_array_equal(value, two.get_learned_params()[name])


@two_cores
def test_an_lgssms_order_selection_runs_its_candidates_side_by_side_with_the_bits_of_one_thread(monkeypatch):
    """``lgssm_order.cross_validation_errors`` scores its candidate d_x as tasks of ``run_tasks``: on two threads
    the same fitted model and scores as on one, and each candidate's errors those it has when scored alone."""
    from gpssm_np.baselines import lgssm_order
    rng = np.random.default_rng(0)
    u = rng.normal(size=(300, 1))
    y = np.zeros((300, 1))
    for k in range(2, 300):
        y[k] = 1.2 * y[k - 1] - 0.5 * y[k - 2] + 0.4 * u[k - 1] + 0.05 * rng.normal()
    calls, tasks_of = [], lgssm_order.run_tasks
    monkeypatch.setattr(lgssm_order, "run_tasks", lambda tasks: calls.append(len(tasks)) or tasks_of(tasks))
    fits = []
    for threads in (1, 2):
        with use_threads(threads):
            fits.append(gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u))
    one, two = fits
    assert calls[0] == len(lgssm_order.dim_x_candidates(1)) > 1
    assert one.dim_x_scores_ == two.dim_x_scores_ and one.spec.dim_x == two.spec.dim_x
    for name, value in one.get_learned_params().items():
        np.testing.assert_array_equal(value, two.get_learned_params()[name])
    data = [((y - y.mean()) / y.std(), (u - u.mean()) / u.std())]
    with use_threads(2):
        every = lgssm_order.cross_validation_errors(data, one.fit_for_selection, [2, 3, 4, 5])
    for d_x, errors in every.items():
        assert errors == lgssm_order.cross_validation_errors(data, one.fit_for_selection, [d_x])[d_x]
    assert len({tuple(errors) for errors in every.values()}) == 4


@two_cores
def test_an_interrupted_calling_thread_stops_the_hand_out_and_waits_for_the_others():
    from gpssm_np.ops.threads import _hand_out

    class Interrupt(BaseException):  # as KeyboardInterrupt: not an Exception
        pass

    caller, done = threading.get_ident(), []

    def do(k):
        if threading.get_ident() == caller and k > 0:
            raise Interrupt
        time.sleep(0.02)
        done.append(k)

    with pytest.raises(Interrupt):
        _hand_out(200, 2, do)
    finished = len(done)
    time.sleep(0.1)
    assert len(done) == finished < 10  # the helper finished the k it held and took no more
