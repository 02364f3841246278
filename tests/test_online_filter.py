"""The step-by-step filter (``model.online_filter``): it reproduces the batch filter bit for bit, serialises and
restores its state, forecasts without disturbing itself, and works in the units of the data."""
import inspect
import json

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.filtering import particle_filter

from tests.test_units import SCALE, SHIFT, U_SCALE, U_SHIFT, linear_plant

N, SEED = 300, 5
#: The batch filter's default resampling threshold, which the online filters take by default too.
BATCH_ESS_THRESHOLD = inspect.signature(particle_filter).parameters["ess_threshold"].default


def plant(T=160, seed=0):
    """A linear plant in raw units (outputs about 300 +- 50)."""
    y, u = linear_plant(T, seed)
    return SCALE * y + SHIFT, U_SCALE * u + U_SHIFT


@pytest.fixture(scope="module")
def fitted():
    y, u = plant()
    models = {"odgpssm": gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=8, seed=0),
              "prssm": gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, seed=1)}
    # switch_t 0: a GP part that beats the floor on the folds at all is kept, so that these are particle filters
    fits = {name: m.fit(y[:100], u[:100], max_steps=10, plan=dict(eval_every=5, switch_t=0.0))
            for name, m in models.items()}
    assert all(m.selection_["gp_part"] for m in fits.values())
    return fits


def with_gaps(y):
    y = y.copy()
    y[[4, 50, 51]] = np.nan
    return y


def run_online(f, y, u):
    """The per-step outputs of f.update over y, u, stacked like the batch filter's fields."""
    steps = []
    for y_t, u_t in zip(y, u):
        mean, var = f.update(y_t, u_t)
        steps.append((mean, var, f.predicted_mean, f.predicted_var, f.innovation))
    return [np.array(column) for column in zip(*steps)]


FIELDS = ("output_means", "output_vars", "predicted_output_means", "predicted_output_vars", "innovations")


def assert_same_as_batch(columns, result, rows=slice(None)):
    for field, column in zip(FIELDS, columns):
        assert np.array_equal(column, getattr(result, field)[rows], equal_nan=True), field


@pytest.mark.parametrize("proposal", ["adapted", "bootstrap", "enkf"])
@pytest.mark.parametrize("name", ["odgpssm", "prssm"])
def test_updates_reproduce_the_batch_filter_bit_for_bit(fitted, name, proposal):
    model = fitted[name]
    y, u = plant()
    y = with_gaps(y[100:])
    u = u[100:]
    batch = model.filter(y, u, num_particles=N, seed=SEED, proposal=proposal)
    f = model.online_filter(num_particles=N, seed=SEED, proposal=proposal)
    assert_same_as_batch(run_online(f, y, u), batch)
    assert np.array_equal(f.state()["particles"], batch.particles)
    assert np.array_equal(f.state()["log_weights"], batch.log_weights)
    assert f.step == len(y)
    assert np.isnan(batch.innovations[4, 0]) and abs(np.nanmean(batch.output_means) - 300.0) < 100.0  # raw units


def test_the_default_proposal_follows_filter_method(fitted):
    model = fitted["odgpssm"]
    y, u = plant()
    y, u = y[100:130], u[100:130]
    model.filter_method = "enkf"
    try:
        batch = model.filter(y, u, num_particles=N, seed=SEED)
        f = model.online_filter(num_particles=N, seed=SEED)
        assert f.state()["proposal"] == "enkf"
        # the other option as filter takes it too: its default resampling threshold
        assert f.state()["ess_threshold"] == BATCH_ESS_THRESHOLD
        assert_same_as_batch(run_online(f, y, u), batch)
    finally:
        model.filter_method = "particle"


def test_state_round_trips_through_json_and_a_model_file(fitted, tmp_path):
    model = fitted["odgpssm"]
    y, u = plant()
    y, u = with_gaps(y[100:]), u[100:]
    batch = model.filter(y, u, num_particles=N, seed=SEED)
    f = model.online_filter(num_particles=N, seed=SEED)
    first = run_online(f, y[:30], u[:30])
    text = json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in f.state().items()})
    loaded = gp.load(gp.save(model, tmp_path / "m.npz"))  # all an embedded controller needs, with the state
    g = loaded.online_filter(state=json.loads(text))
    assert g.step == f.step == 30  # the step count goes on from the state
    rest = run_online(g, y[30:], u[30:])
    assert g.step == len(y)
    assert_same_as_batch(first, batch, slice(0, 30))
    assert_same_as_batch(rest, batch, slice(30, None))
    assert np.array_equal(g.state()["particles"], batch.particles)


def test_predict_forecasts_from_the_current_state_without_disturbing_it(fitted):
    model = fitted["odgpssm"]
    y, u = plant()
    y, u = y[100:], u[100:]
    batch = model.filter(y, u, num_particles=N, seed=SEED)
    f = model.online_filter(num_particles=N, seed=SEED)
    first = run_online(f, y[:40], u[:40])
    fc = f.predict(u[40:60], num_samples=30, seed=1)
    assert fc.origin == "online filter" and fc.mean.shape == (20, 1) and fc.y_mean is None
    assert np.sqrt(np.mean((fc.mean - y[40:60]) ** 2)) < 3 * np.std(y)  # raw units
    in_model_units = f.predict(u[40:60], num_samples=30, seed=1, units="model")
    np.testing.assert_array_equal(in_model_units.in_original_units().mean, fc.mean)
    rest = run_online(f, y[40:], u[40:])
    assert_same_as_batch(first, batch, slice(0, 40))
    assert_same_as_batch(rest, batch, slice(40, None))  # predict used its own generator


def test_online_filter_rejects_bad_input(fitted):
    model = fitted["odgpssm"]
    f = model.online_filter(num_particles=20)
    with pytest.raises(ValueError, match="y_t"):
        f.update(np.ones(2), np.ones(1))
    with pytest.raises(ValueError, match="y_t"):
        f.update(np.array([np.inf]), np.ones(1))
    with pytest.raises(ValueError, match="u_t"):
        f.update(np.ones(1))
    with pytest.raises(ValueError, match="u_t"):
        f.update(np.ones(1), np.ones(3))
    with pytest.raises(ValueError, match="u_t: expected 1 finite"):
        f.update(np.ones(1), np.array([np.nan]))  # NaN marks a missing output, never an input
    with pytest.raises(ValueError, match="u_t: expected 1 real"):
        f.update(np.ones(1), ["a"])
    with pytest.raises(ValueError, match="y_t: values up to 1e\\+200 in magnitude; beyond 1e\\+150"):  # as in batch
        f.update(np.array([1e200]), np.ones(1))
    f.update(np.array([np.nan]), np.ones(1))  # a missing output is read as such
    with pytest.raises(ValueError, match="state"):
        model.online_filter(state={"particles": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="state"):
        model.online_filter(state=dict(f.state(), rng={"bit_generator": "MT19937"}))
    with pytest.raises(ValueError, match="particles"):
        model.online_filter(state=dict(f.state(), particles=np.zeros((20, 2))))
    with pytest.raises(ValueError, match="proposal"):
        model.online_filter(proposal="optimal")
    with pytest.raises(ValueError, match="num_particles"):
        model.online_filter(num_particles=0)


@pytest.mark.parametrize("make", [lambda: gp.LGSSM(dim_x=2, num_iters=3), lambda: gp.ARX(na=2, nb=2)])
def test_an_exact_online_filter_checks_the_particle_options_it_does_not_use(make):
    y, u = plant(120)
    model = make().fit(y, u)
    with pytest.raises(ValueError, match="num_particles: expected a positive integer"):
        model.online_filter(num_particles=-7)
    with pytest.raises(ValueError, match="seed"):
        model.online_filter(seed=-1)
    model.online_filter(num_particles=None)  # None: the exact filter's own default


def test_a_model_with_a_recognition_network_starts_from_its_prior():
    """DSSM: q(x0) needs a window of data, so the online filter starts from p(x0) = N(0, I) (or a given x0)."""
    y, u = plant(60)
    model = gp.DSSM(dim_x=2, dim_y=1, dim_u=1, hidden=4, rnn_hidden=4).fit(y, u, epochs=1,
                                                                          plan=dict(seq_len=20, num_samples=3))
    f = model.online_filter(num_particles=50, seed=0)
    assert np.allclose(f.state()["particles"].mean(axis=0), 0.0, atol=0.5)
    assert f.state()["ess_threshold"] == BATCH_ESS_THRESHOLD
    mean, var = f.update(y[0], u[0])
    assert mean.shape == (1,) and var.shape == (1,) and np.all(var > 0)
    g = model.online_filter(num_particles=50, seed=0, x0=(np.full(2, 3.0), np.full(2, 1e-6)))
    np.testing.assert_allclose(g.state()["particles"], 3.0, atol=0.01)


@pytest.mark.parametrize("dim_u", [1, 2])
def test_the_lgssm_offers_the_same_surface_with_its_kalman_filter(dim_u, tmp_path):
    y, u = plant(200)
    if dim_u == 2:
        u = np.hstack([u, np.cos(np.arange(200) / 5.0)[:, None]])
    model = gp.LGSSM(dim_x=2, dim_u=dim_u, num_iters=5).fit(y[:100], u[:100])
    y, u = with_gaps(y[100:]), u[100:]
    batch = model.filter(y, u)
    f = model.online_filter()
    means, outputs = [], []
    for t in range(len(y)):
        outputs.append(f.update(y[t], u[t])[0])
        means.append(f.state()["mean"])
        if t == 60:  # continue from the state, through JSON and the model file
            text = json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in f.state().items()})
            f = gp.load(gp.save(model, tmp_path / "m.npz")).online_filter(state=json.loads(text))
    if dim_u == 1:
        assert np.array_equal(np.array(means), batch.means)
    else:  # the batch filter's u @ G.T rounds differently from one product per step
        np.testing.assert_allclose(np.array(means), batch.means, rtol=1e-12, atol=1e-12)
    H = model.params_["H"]
    np.testing.assert_allclose(np.array(outputs)[:, 0], model.scaling_.y_to_original(batch.means @ H.T)[:, 0],
                               rtol=1e-12)
    assert f.step == len(y) and np.all(np.isfinite(f.innovation))
    fc = f.predict(u[:5], num_samples=10, seed=0)
    assert fc.mean.shape == (5, 1) and abs(fc.mean.mean() - 300.0) < 150.0  # raw units
    assert fc.origin == "online filter"  # as every model's online filter says
    with pytest.raises(ValueError, match="state"):
        model.online_filter(state={"mean": np.zeros(2)})
    with pytest.raises(ValueError, match="state"):
        model.online_filter(state={"mean": np.zeros(3), "cov": np.eye(3), "step": 0})
    with pytest.raises(ValueError, match="state: expected a mean"):  # the mean right, the covariance not
        model.online_filter(state={"mean": np.zeros(2), "cov": np.eye(3), "step": 0})


def test_a_state_of_another_model_class_is_refused():
    """online_filter(state=...) takes the state of its own class's filters only (its "model" entry): a state of
    another class with the same dimensions was taken and meant something else; a state without the entry (an
    earlier version's) is taken."""
    kwargs = dict(dim_y=1, dim_u=1, dim_x=3, init="random", num_inducing=4)
    state = gp.ODGPSSM(**kwargs).online_filter(num_particles=20).state()
    assert state["model"] == "ODGPSSM"
    for other in (gp.PRSSM(**kwargs), gp.DSSM(dim_y=1, dim_u=1, dim_x=3)):
        with pytest.raises(ValueError, match=f"state: written by the online filter of a ODGPSSM, not of a "
                                             f"{type(other).__name__}"):
            other.online_filter(state=state)
    del state["model"]
    gp.PRSSM(**kwargs).online_filter(state=state)
