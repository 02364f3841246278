"""The default fit's training windows (models/default_fit.py, stage 2): they grow with the step count, each starts
from the floor's filtered state (warm_start.WarmStart.filtered_states), and a run resumed from its state continues
on the windows it had (training_loop.GrowingRun)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets.windowing import window_starts
from gpssm_np.models.default_fit import DefaultFit, Plan
from gpssm_np.models.warm_start import floor_warm_start


def data(T=240):
    y, u, _ = gp.datasets.cascaded_tanks(T, seed=1)
    return [(y - y.mean(0)) / y.std(0)], [(u - u.mean(0)) / u.std(0)]


def test_filtered_states_are_the_floors_kalman_filter_given_the_past_only():
    ys, us = data()
    for floor in (gp.ARX(dim_y=1, dim_u=1, standardize=False).fit(ys[0], us[0]),
                  gp.LGSSM(dim_x=3, dim_y=1, dim_u=1, standardize=False).fit(ys[0], us[0])):
        warm = floor_warm_start(floor, ys, us)
        form, E = warm.lgssm, warm.basis
        u1 = us[0] if form.spec.dim_u == 1 else np.concatenate([us[0], np.ones((len(us[0]), 1))], axis=1)
        p = form.get_learned_params()
        means, variances = warm.filtered_states(0, np.array([0, 1, 57, len(ys[0])]))
        np.testing.assert_allclose(means[0], E @ p["m0"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(variances[0], np.diag(E @ p["P0"] @ E.T), rtol=1e-12, atol=1e-12)
        for row, s in ((1, 1), (2, 57), (3, len(ys[0]))):
            f = form.filter(ys[0][:s], u1[:s])  # y[:s] only: nothing of the window itself
            np.testing.assert_allclose(means[row], E @ f.means[-1], rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(variances[row], np.diag(E @ f.covs[-1] @ E.T), rtol=1e-9, atol=1e-12)
        # the filter is not the smoother: the state before a window is not read from the window's outputs
        assert not np.allclose(means[2], warm.initial_states(0, np.array([57]))[0][0])


def test_windows_grow_at_equal_shares_of_the_budget_and_start_from_the_filtered_state():
    ys, us = data()
    plan = Plan(max_steps=9, seq_lens=(5, 10, 300), batch_size=4, num_samples=4)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
    fit = DefaultFit(model, plan)
    floor = fit.floor(ys, us)
    warm = model.start_from_floor(floor.model, ys, us, 0)
    run = fit.training_run(model, warm, ys, us, 0, {})
    seen = []
    for _ in range(9):
        run.step()
        seen.append(run.Y.shape[1])
        starts = window_starts(len(ys[0]), run.Y.shape[1], 1)
        np.testing.assert_array_equal(run.Y[:, :, 0], np.stack([ys[0][s:s + run.Y.shape[1], 0] for s in starts]))
        for got, expected in zip(run.x0, warm.filtered_states(0, starts)):
            np.testing.assert_array_equal(got, expected)
    assert seen == [5, 5, 5, 10, 10, 10, 240, 240, 240]  # at most the sequence's length


def test_a_resumed_run_continues_on_the_windows_it_had():
    ys, us = data()
    plan = Plan(max_steps=8, seq_lens=(5, 10), batch_size=4, num_samples=4)

    def fresh():
        model = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0)
        fit = DefaultFit(model, plan)
        warm = model.start_from_floor(fit.floor(ys, us).model, ys, us, 0)
        return model, fit.training_run(model, warm, ys, us, 0, {})

    model, run = fresh()
    run.advance(8)
    for stop in (3, 4, 5):  # before, at and after the switch at step 4
        stopped_model, stopped = fresh()
        stopped.advance(stop)
        info, arrays = stopped.state()
        params = {k: v.copy() for k, v in stopped_model.params.items()}
        resumed_model, resumed = fresh()
        resumed_model.params = params
        resumed.load_state(info, arrays)
        assert resumed.Y.shape[1] == (5 if stop <= 4 else 10)
        resumed.advance(8 - stop)
        for name in model.params:
            np.testing.assert_array_equal(resumed_model.params[name], model.params[name], err_msg=f"{stop} {name}")


def test_bad_window_lengths_are_named():
    model = gp.ODGPSSM(dim_y=1, dim_u=1)
    assert model.training_plan({"seq_lens": [30, 60]}, None, None).seq_lens == (30, 60)
    for bad in (20, (), (0, 40), ("a",)):
        with pytest.raises(ValueError, match="seq_lens"):
            model.training_plan({"seq_lens": bad}, None, None)


class _Recorder:
    """A stand-in model that records which windows each step trains on (window w holds w at its first entry)."""

    params = {"w": np.zeros(1)}

    def __init__(self):
        self.batches = []

    def get_learned_params(self):
        return {"w": np.zeros(1)}

    def train_step(self, Y, U, rng, num_samples, num_windows, optimizer, frozen, max_rejections, x0):
        self.batches.append(sorted(int(w) for w in Y[:, 0, 0]))


@pytest.mark.parametrize("num_windows", [8, 10])
def test_each_pass_trains_on_every_window_once(num_windows):
    """An AdamRun's pass is one permutation of the windows in minibatches of batch_size (the last one shorter where
    they do not divide): every window once per pass, a new permutation as the next begins."""
    from gpssm_np.training_loop import AdamRun
    model = _Recorder()
    Y = np.arange(num_windows, dtype=float)[:, None, None] * np.ones((1, 3, 1))
    run = AdamRun(model, Y, np.zeros((num_windows, 3, 0)), None, np.random.default_rng(0), gp.optim.Adam(), (),
                  batch_size=4, num_samples=1, max_rejections=1)
    per_pass = -(-num_windows // 4)
    run.advance(2 * per_pass)
    assert [len(b) for b in model.batches] == ([4] * (num_windows // 4) + [num_windows % 4] * (num_windows % 4 > 0)) * 2
    for k in range(2):
        assert sorted(sum(model.batches[k * per_pass:(k + 1) * per_pass], [])) == list(range(num_windows))
    assert model.batches[:per_pass] != model.batches[per_pass:]  # a new permutation
