"""The ARX in observer form (baselines/arx_state_space.py) and the GP models' ARX warm start (init="arx",
init="linear"; models/warm_start.py)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.baselines import arx_simulate
from gpssm_np.baselines.arx import arx_blocks
from gpssm_np.baselines.arx_state_space import arx_least_squares, fit_arx_lgssm, observer_form
from gpssm_np.models.warm_start import arx_candidates, choose_warm_start, warm_start
from gpssm_np.transforms import positive

A1 = np.array([[0.5, 0.1], [-0.2, 0.4]])
A2 = np.array([[-0.2, 0.0], [0.1, 0.2]])
B0 = np.array([[1.0, 0.3], [0.0, 0.5]])
B1 = np.array([[0.2, 0.0], [0.1, -0.3]])
#: The validation-block loop's plan, whose start is the ARX warm start of ``warm_start.py`` (the default fit's is the
#: floor's, tests/test_floor.py).
LOOP = gp.BlockPlan()


def arx_data(T=800, noise=0.05, seed=0):
    """A two-output, two-input ARX of order 2 (y_t = A1 y_{t-1} + A2 y_{t-2} + B0 u_t + B1 u_{t-1} + e_t)."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((T, 2))
    y = np.zeros((T, 2))
    for t in range(2, T):
        y[t] = A1 @ y[t - 1] + A2 @ y[t - 2] + B0 @ u[t] + B1 @ u[t - 1] + noise * rng.standard_normal(2)
    return y, u


def test_least_squares_recovers_the_coefficients():
    y, u = arx_data(T=3000)
    theta, noise_var = arx_least_squares([y], [u], 2)
    a, b = arx_blocks(theta, 2, 2, 2)
    np.testing.assert_allclose(a, [A1, A2], atol=0.02)
    np.testing.assert_allclose(b, [B0, B1], atol=0.02)
    np.testing.assert_allclose(noise_var, 0.05**2, rtol=0.1)


def test_observer_form_is_the_arx():
    """Unrolled, the observer form gives the ARX's outputs exactly: its noise-free free run equals arx_simulate."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(scale=0.3, size=(3, 2, 2)), rng.normal(size=(3, 2, 1))
    F, G, H, Q, R = observer_form(a, b, np.array([0.1, 0.2]), obs_share=0.25)
    np.testing.assert_allclose(H, np.eye(2, 6))
    np.testing.assert_allclose(np.diag(Q), [0.075, 0.15, 0, 0, 0, 0])
    np.testing.assert_allclose(np.diag(R), [0.025, 0.05])
    u = rng.standard_normal((40, 1))
    y = np.zeros((40, 2))
    x = np.zeros(6)
    for t in range(40):
        x = F @ x + G @ u[t]
        y[t] = H @ x
    theta = np.concatenate([a.transpose(1, 0, 2).reshape(2, 6), b.transpose(1, 0, 2).reshape(2, 3),
                            np.zeros((2, 1))], axis=1).T
    lags = np.zeros((1, 3, 2))
    inputs = np.concatenate([np.zeros((2, 1)), u])[None]  # u_{-2}, u_{-1} = 0 before the start
    means, _ = arx_simulate(theta, 3, 3, lags, inputs)
    np.testing.assert_allclose(y, means[0], atol=1e-12)


def test_kalman_forecasts_of_the_fitted_form_are_the_arx_forecasts():
    y, u = arx_data()
    model = fit_arx_lgssm([y[:600]], [u[:600]], 2, obs_share=1e-8)
    theta, _ = arx_least_squares([y[:600]], [u[:600]], 2)
    theta = np.concatenate([theta, np.zeros((1, 2))])  # arx_simulate's Theta has an intercept row
    g, H = 650, 50
    state = model.filter(y[g - 100:g], u[g - 100:g])
    mean = model.predict_moments(u[g:g + H], state.means[-1], state.covs[-1])[2]
    means, _ = arx_simulate(theta, 2, 2, y[g - 1:g - 3:-1][None], u[None, g - 1:g + H])
    np.testing.assert_allclose(mean, means[0], atol=1e-5)


def test_unstable_fit_is_rejected_or_stabilised():
    y = np.cumsum(np.ones((200, 1)), axis=0) * 1.01 ** np.arange(200)[:, None]  # explosive growth
    u = np.zeros((200, 1))
    with pytest.raises(ValueError, match="unstable"):
        fit_arx_lgssm([y], [u], 1)
    stabilised = fit_arx_lgssm([y], [u], 4, stabilise=True).get_learned_params()
    assert np.max(np.abs(np.linalg.eigvals(stabilised["F"]))) < 1.0
    np.testing.assert_allclose(stabilised["H"], np.eye(1, 4))
    start = warm_start([y / y.std()], [u], 4, kind="arx")  # a warm start of an order chosen elsewhere: no error
    assert np.max(np.abs(np.linalg.eigvals(start.F))) < 1.0
    with pytest.raises(ValueError, match="shorter"):
        arx_least_squares([y[:2]], [np.zeros((2, 1))], 2)


def test_arx_warm_start_drives_only_the_first_block():
    """Only the output block carries process noise, so only it gets the GP's share: A's other rows are 0 and the
    PRSSM's other kernel variances at the floor; the total transition variance is the ARX form's."""
    y, u = arx_data()
    start = warm_start([y], [u], 4, kind="arx")
    np.testing.assert_array_equal(start.driven, [True, True, False, False])
    np.testing.assert_allclose(start.basis, np.eye(4))
    od = gp.ODGPSSM(dim_x=4, dim_y=2, dim_u=2, init="arx", seed=0, standardize=False).initialise(y, u, plan=LOOP)
    A, s2 = od.params["A"], positive(od.params["variance"])
    np.testing.assert_allclose(A[2:], 0.0)
    transition_var = (A * s2) @ A.T + np.diag(positive(od.params["process_noise"]))
    np.testing.assert_allclose(np.diag(transition_var)[:2], start.process_var[:2], rtol=1e-6)
    assert np.all(np.diag(transition_var)[2:] < 1e-4)
    pr = gp.PRSSM(dim_x=4, dim_y=2, dim_u=2, init="arx", seed=0, standardize=False).initialise(y, u, plan=LOOP)
    variances = positive(pr.params["variance"])
    assert np.all(variances[:2] > 100 * variances[2:])


def test_arx_warm_started_model_forecasts_like_the_arx():
    """Before any gradient step the ODGPSSM is the ARX's observer form: the same causal forecasts up to the
    Monte-Carlo error of the particle filter."""
    y, u = arx_data()
    model = gp.ODGPSSM(dim_x=4, dim_y=2, dim_u=2, init="arx", seed=0, standardize=False).initialise(y[:600], u[:600],
                                                                                                  plan=LOOP)
    form = warm_start([y[:600]], [u[:600]], 4, kind="arx").lgssm
    g = 650
    past = slice(g - 60, g)
    exact = form.forecast(u[g:g + 50], y_past=y[past], u_past=u[past])
    fc = model.forecast(u[g:g + 50], y_past=y[past], u_past=u[past], num_samples=2000, num_particles=2000)
    assert np.abs(fc.mean - exact.mean).max() < 0.03 * np.abs(exact.mean).max()


def test_linear_init_chooses_the_better_cross_validated_warm_start():
    """On ARX data the ARX warm start of the true order scores best; the choice is the lowest score over both
    kinds, and the model reports it (``warm_start_``, ``get_config``)."""
    y, u = arx_data(T=900, noise=0.3)
    kind, d_x, scores = choose_warm_start([y], [u], ("lgssm", "arx"), [2, 4, 6])
    assert set(scores) == {"lgssm", "arx"} and set(scores["arx"]) == {2, 4, 6}
    best = min((s, k, d) for k in scores for d, s in scores[k].items())
    assert (kind, d_x) == (best[1], best[2])
    assert kind == "arx" and d_x == 4
    model = gp.ODGPSSM(dim_x=[2, 4, 6], dim_y=2, dim_u=2, init="linear", seed=0).initialise(y, u, plan=LOOP)
    ms = model.warm_start_scores_  # on the model's standardised data: its own lowest score
    best = min((s, k, d) for k in ms for d, s in ms[k].items())
    assert (model.warm_start_, model.spec.dim_x) == (best[1], best[2])
    assert model.dim_x_scores_ == ms[model.warm_start_]
    assert model.get_config()["init"] == model.warm_start_ and model.get_config()["dim_x"] == model.spec.dim_x
    # the LGSSM alone: no ARX scores, the choice of the LGSSM's candidates
    kind, _, scores = choose_warm_start([y], [u], ("lgssm",), [2, 4])
    assert kind == "lgssm" and set(scores) == {"lgssm"}



def noisy_state_space_data(T=800, noise=0.5, seed=0):
    """A two-state linear plant seen through output noise of std ``noise`` (where an ARX of two lags is biased)."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((T, 1))
    x, y = np.zeros(2), np.zeros((T, 1))
    A = np.array([[0.9, 0.2], [-0.2, 0.9]])
    for t in range(T):
        y[t] = x[0] + noise * rng.standard_normal()
        x = A @ x + np.array([0.5, 0.0]) * u[t] + 0.1 * rng.standard_normal(2)
    return y, u


def test_a_fixed_state_dimension_still_compares_both_kinds():
    """With one d_x (``dim_x=2``, ``init="linear"``) both kinds are scored on the folds and the lower score wins: on a
    plant with output noise the LGSSM's, not the ARX's by default. ``LGSSM(dim_x=[2])`` alone still skips the
    cross-validation, having nothing to choose."""
    y, u = noisy_state_space_data()
    kind, d_x, scores = choose_warm_start([y], [u], ("lgssm", "arx"), [2])
    assert np.isfinite(scores["lgssm"][2]) and np.isfinite(scores["arx"][2])
    assert scores["lgssm"][2] < scores["arx"][2] and (kind, d_x) == ("lgssm", 2)
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, seed=0).initialise(y, u)
    assert model.warm_start_ == "lgssm" and model.spec.dim_x == 2
    alone = gp.LGSSM(dim_x=[2], dim_y=1, dim_u=1).fit(y, u)
    assert alone.spec.dim_x == 2 and np.isnan(alone.dim_x_scores_[2])

def test_arx_warm_start_arguments():
    assert arx_candidates([4, 5, 6, 7, 8], 2) == [4, 6, 8]
    with pytest.raises(ValueError, match="multiple of dim_y"):
        gp.ODGPSSM(dim_x=5, dim_y=2, dim_u=1, init="arx")
    with pytest.raises(ValueError, match="multiple of dim_y"):
        rng = np.random.default_rng(0)  # outputs that vary: a constant one is refused first
        choose_warm_start([rng.standard_normal((300, 3))], [rng.standard_normal((300, 1))], ("arx",), [4, 5])
    with pytest.raises(ValueError, match="init"):
        gp.ODGPSSM(dim_x=4, dim_y=2, init="arx", mean_function="zero")
    assert gp.ODGPSSM(dim_y=2, init="linear").dim_x_choice == "auto"
    assert gp.ODGPSSM(dim_x=4, dim_y=1, init="linear").get_config()["init"] == "linear"  # until a fit chooses
