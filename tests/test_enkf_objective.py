"""The ensemble Kalman objective (``objective="enkf"``) through the models, and the ensemble Kalman filter."""
import time

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.experiments import runs
from gpssm_np.filtering import particle_filter
from gpssm_np.inference import draw_noise
from gpssm_np.kalman import kalman_filter


def small_data(rng, T=30, d_y=1):
    u = rng.normal(size=(2, T, 1))
    y = np.cumsum(0.3 * rng.normal(size=(2, T, d_y)), axis=1) + 0.5 * u[..., :1]
    return y, u


@pytest.mark.parametrize("cls", [gp.ODGPSSM, gp.PRSSM])
def test_backends_agree_through_the_model(cls, rng):
    y, u = small_data(rng, T=12, d_y=2)
    grads = {}
    for backend in ("fused", "ops", "reference"):
        m = cls(dim_x=3, dim_y=2, dim_u=1, num_inducing=5, seed=1, backend=backend, objective="enkf",
                settings="authors")
        grads[backend] = m.elbo_and_grad(y, u, num_samples=4, seed=2)
    value, grad = grads["reference"]
    for backend in ("fused", "ops"):
        assert abs(grads[backend][0] - value) <= 1e-8 * abs(value)
        for name, g in grad.items():
            np.testing.assert_allclose(grads[backend][1][name], g, rtol=1e-8, atol=1e-10, err_msg=name)


def test_the_objectives_differ_and_the_prior_noise_is_unchanged(rng):
    y, u = small_data(rng)
    prior = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors")
    enkf = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, settings="authors", objective="enkf")
    assert prior.elbo(y, u, seed=0) != enkf.elbo(y, u, seed=0)
    a = draw_noise(np.random.default_rng(5), 2, 3, 7, 2, 2)
    b = draw_noise(np.random.default_rng(5), 2, 3, 7, 2, 2, dim_y=1)
    assert a.eps_y is None and b.eps_y.shape == (7, 6, 1)
    for name in ("eps0", "eps_h", "eps_x"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_bad_options_are_refused(rng):
    with pytest.raises(ValueError, match="objective"):
        gp.ODGPSSM(dim_x=2, dim_y=1, objective="ensemble")
    with pytest.raises(ValueError, match="filter_method"):
        gp.PRSSM(dim_x=2, dim_y=1, filter_method="kalman")
    y, u = small_data(rng)
    m = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, objective="enkf")
    with pytest.raises(ValueError, match="num_samples: expected at least 2 ensemble members per window"):
        m.elbo(y, u, num_samples=1)


def test_fit_improves_the_enkf_objective_and_saves(rng, tmp_path):
    y, u = small_data(rng, T=120)
    m = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=6, objective="enkf", filter_method="enkf",
                   settings="authors")
    before = m.elbo(y[0], u[0], num_samples=20, seed=0)
    m.fit(y[0], u[0], epochs=3, plan=dict(seq_len=20, stride=5, batch_size=8, num_samples=20))
    assert np.all(np.isfinite(m.history_))
    assert m.elbo(y[0], u[0], num_samples=20, seed=0) > before
    path = tmp_path / "m.npz"
    gp.save(m, path)
    loaded = gp.load(path)
    assert loaded.objective == "enkf" and loaded.filter_method == "enkf"
    assert loaded.elbo(y[0], u[0], seed=0) == m.elbo(y[0], u[0], seed=0)


def linear_model():
    F = np.array([[0.9, 0.2], [-0.1, 0.8]])
    G = np.array([[0.5], [0.2]])
    Q, R = np.diag([0.05, 0.03]), np.array([[0.1]])
    C = np.array([[1.0, 0.0]])

    def transition(x, u_t, k):
        return x @ F.T + u_t @ G.T, np.broadcast_to(Q, (x.shape[0], 2, 2))

    return F, G, Q, R, C, transition


def test_enkf_filter_approaches_the_kalman_filter(rng):
    F, G, Q, R, C, transition = linear_model()
    T = 40
    u = rng.normal(size=(T, 1))
    x, ys = np.zeros(2), []
    for t in range(T):
        x = F @ x + G @ u[t] + rng.multivariate_normal(np.zeros(2), Q)
        ys.append(C @ x + rng.normal(scale=np.sqrt(R[0, 0]), size=1))
    y = np.array(ys)
    exact = kalman_filter(dict(F=F, G=G, H=C, Q=Q, R=R), y, u, np.zeros(2), 0.5 * np.eye(2))
    result = particle_filter(transition, C, R, y, u, np.zeros(2), 0.5 * np.eye(2), num_particles=20_000, rng=0,
                             proposal="enkf")
    assert result.proposal == "enkf"
    assert np.all(result.ess == 20_000) and not result.resampled.any()
    np.testing.assert_allclose(result.means, exact.means, atol=0.03)
    np.testing.assert_allclose(result.covs, exact.covs, atol=0.01)
    assert abs(result.log_likelihood - exact.log_likelihood) < 0.2
    y[5] = np.nan  # a missing output: pure propagation, nothing added to the log-likelihood
    missing = particle_filter(transition, C, R, y, u, np.zeros(2), 0.5 * np.eye(2), num_particles=500, rng=0,
                              proposal="enkf")
    assert missing.log_likelihood_steps[5] == 0.0 and np.all(np.isfinite(missing.means))


def test_models_filter_with_their_filter_method(rng):
    y, u = small_data(rng, T=25)
    m = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, filter_method="enkf")
    result = m.filter(y[0], u[0], num_particles=50)
    assert result.proposal == "enkf"
    assert m.filter(y[0], u[0], num_particles=50, proposal="adapted").proposal == "adapted"
    m.filter_method = "particle"
    assert m.filter(y[0], u[0], num_particles=50).proposal == "adapted"


def test_filter_comparison_cell_and_table(tmp_path):
    import os

    from gpssm_np.experiments import filters

    data_dir = os.environ.get("GPSSM_NP_DATA")
    if not data_dir or not os.path.isdir(data_dir):
        pytest.skip("GPSSM_NP_DATA is not set")
    # the validation-block loop keeps a GP part (its residual's variance at least): the default fit may return the
    # floor, a linear-Gaussian model that both filters forecast exactly
    started = time.perf_counter()
    row = filters.run_cell("gas_furnace", 0, "enkf", fit_options={"plan": gp.BlockPlan(max_steps=20, eval_every=10)},
                           num_particles=50)
    elapsed = time.perf_counter() - started
    assert row["objective"] == "enkf" and set(row) >= {"particle", "enkf", "fit_seconds"}
    seconds = [row["fit_seconds"]] + [row[method]["seconds"] for method in filters.FILTERS]
    assert min(seconds) > 0 and sum(seconds) <= elapsed
    for method in filters.FILTERS:
        assert np.isfinite(row[method]["rmse"]) and 0 <= row[method]["coverage95"] <= 1
    assert row["particle"]["rmse"] != row["enkf"]["rmse"]
    table = filters.markdown([row])
    assert "| gas_furnace | enkf | 1 |" in table


def test_the_filters_study_runs_every_cell_once_and_writes_its_table(tmp_path, monkeypatch, capsys):
    """``python -m gpssm_np.experiments.filters``: two seeds by default, both objectives, each cell's row streamed
    and its table written beside them; each line of the table holds its own cells' means."""
    from gpssm_np.experiments import filters

    cells = []

    def run_cell(dataset, seed, objective, data_dir=None):
        cells.append((dataset, seed, objective))
        score = 1.0 + seed + (objective == "enkf")  # the mean over seeds: 1.5 for prior, 2.5 for enkf
        return {"dataset": dataset, "seed": seed, "objective": objective, "fit_seconds": 1.0,
                **{method: {"rmse": score, "nlpd": score, "coverage95": 0.5, "seconds": 1.0}
                   for method in filters.FILTERS}}

    monkeypatch.setattr(filters, "run_cell", run_cell)
    filters.main(["--datasets", "dryer", "--out", str(tmp_path)])
    assert sorted(cells) == sorted(("dryer", s, o) for o in ("enkf", "prior") for s in (0, 1))
    table = (tmp_path / "filters.md").read_text()
    assert table == filters.markdown(runs.read_jsonl(str(tmp_path / "filters.jsonl"))) + "\n"
    assert "| dryer | prior | 2 | 1.5000 | 1.5000 |" in table and "| dryer | enkf | 2 | 2.5000 | 2.5000 |" in table
    filters.main(["--datasets", "dryer", "--out", str(tmp_path)])  # resumed: nothing computed again
    assert len(cells) == 4 and table in capsys.readouterr().out
