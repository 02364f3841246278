"""The ARX in observer form (baselines/arx_state_space.py) and the GP models' start from an ARX floor (init="arx",
init="linear"; models/warm_start.py, models/floor.py)."""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.baselines import arx_simulate
from gpssm_np.baselines.arx import arx_is_stable
from gpssm_np.baselines.arx_state_space import observer_form
from gpssm_np.models.warm_start import floor_warm_start
from gpssm_np.transforms import positive

A1 = np.array([[0.5, 0.1], [-0.2, 0.4]])
A2 = np.array([[-0.2, 0.0], [0.1, 0.2]])
B0 = np.array([[1.0, 0.3], [0.0, 0.5]])
B1 = np.array([[0.2, 0.0], [0.1, -0.3]])


def arx_data(T=800, noise=0.05, seed=0):
    """A two-output, two-input ARX of order 2 (y_t = A1 y_{t-1} + A2 y_{t-2} + B0 u_t + B1 u_{t-1} + e_t)."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((T, 2))
    y = np.zeros((T, 2))
    for t in range(2, T):
        y[t] = A1 @ y[t - 1] + A2 @ y[t - 2] + B0 @ u[t] + B1 @ u[t - 1] + noise * rng.standard_normal(2)
    return y, u


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


def test_an_unstable_arx_floor_is_held_stabilised():
    """An ARX fitted to explosive data (its companion matrix outside the unit circle) is held in observer form with
    its F's outlying eigenvalues scaled back inside the unit circle (``LGSSM.stabilise``), H = [I, 0] kept."""
    y = np.cumsum(np.ones((200, 1)), axis=0) * 1.01 ** np.arange(200)[:, None]  # explosive growth
    y, u = y / y.std(), np.zeros((200, 1))
    arx = gp.ARX(na=4, nb=4, dim_y=1, dim_u=1, standardize=False).fit(y, u)
    assert not arx_is_stable(arx.theta_, 4)
    start = floor_warm_start(arx, [y], [u])
    assert np.max(np.abs(np.linalg.eigvals(start.F))) < 1.0
    np.testing.assert_allclose(start.lgssm.get_learned_params()["H"], np.eye(1, 4))


def test_arx_floor_drives_only_the_first_block():
    """Only the output block of the ARX's observer form carries process noise, so only it gets the GP's share: A's
    other rows are 0 and the PRSSM's other kernel variances at the floor; the total transition variance is the
    ARX form's."""
    y, u = arx_data()
    start = floor_warm_start(gp.ARX(na=2, nb=2, dim_y=2, dim_u=2, standardize=False).fit(y, u), [y], [u])
    np.testing.assert_array_equal(start.driven, [True, True, False, False])
    od = gp.ODGPSSM(dim_x=4, dim_y=2, dim_u=2, init="arx", seed=0, standardize=False).initialise(y, u)
    assert od.selection_["floor"]["orders"] == [2, 2]
    A, s2 = od.params["A"], positive(od.params["variance"])
    np.testing.assert_allclose(A[2:], 0.0)
    transition_var = (A * s2) @ A.T + np.diag(positive(od.params["process_noise"]))
    np.testing.assert_allclose(np.diag(transition_var)[:2], start.process_var[:2], rtol=1e-6)
    assert np.all(np.diag(transition_var)[2:] < 1e-4)
    pr = gp.PRSSM(dim_x=4, dim_y=2, dim_u=2, init="arx", seed=0, standardize=False).initialise(y, u)
    variances = positive(pr.params["variance"])
    assert np.all(variances[:2] > 100 * variances[2:])


def test_linear_init_chooses_the_better_kind_and_order():
    """``init="linear"`` takes the lowest fold error over both kinds and every candidate d_x, and the model reports
    the choice (``warm_start_``, ``get_config``); held to the ARX, the candidates of ARX data of two lags choose
    d_x = 2 lags x 2 outputs."""
    y, u = arx_data(T=900, noise=0.3)
    model = gp.ODGPSSM(dim_x=[2, 4, 6], dim_y=2, dim_u=2, init="linear", seed=0).initialise(y, u)
    scores = model.selection_["floor"]["dim_x_scores"]
    best = min((score, kind, d) for d, by_kind in scores.items() for kind, score in by_kind.items())
    assert (model.warm_start_, model.spec.dim_x) == best[1:] and set(scores[4]) == {"arx", "lgssm"}
    config = model.get_config()
    assert (config["init"], config["dim_x"]) == best[1:]
    arx = gp.ODGPSSM(dim_x=[2, 4, 6], dim_y=2, dim_u=2, init="arx", seed=0).initialise(y, u)
    assert (arx.warm_start_, arx.spec.dim_x) == ("arx", 4)
    lgssm_only = gp.ODGPSSM(dim_x=[2, 4], dim_y=2, dim_u=2, init="lgssm", seed=0).initialise(y, u)
    assert lgssm_only.warm_start_ == "lgssm" and set(lgssm_only.selection_["floor"]["scores"]) == {"lgssm"}


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
    plant with output noise the LGSSM's, not the ARX's. ``LGSSM(dim_x=[2])`` alone still skips the
    cross-validation, having nothing to choose."""
    y, u = noisy_state_space_data()
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, seed=0).initialise(y, u)
    scores = model.selection_["floor"]["scores"]
    assert np.isfinite(scores["lgssm"]) and np.isfinite(scores["arx"]) and scores["lgssm"] < scores["arx"]
    assert model.warm_start_ == "lgssm" and model.spec.dim_x == 2
    alone = gp.LGSSM(dim_x=[2], dim_y=1, dim_u=1).fit(y, u)
    assert alone.spec.dim_x == 2 and np.isnan(alone.dim_x_scores_[2])


def test_arx_warm_start_arguments():
    with pytest.raises(ValueError, match="multiple of dim_y"):
        gp.ODGPSSM(dim_x=5, dim_y=2, dim_u=1, init="arx")
    with pytest.raises(ValueError, match="multiple of dim_y"):
        rng = np.random.default_rng(0)  # outputs that vary: a constant one is refused first
        gp.ODGPSSM(dim_x=[4, 5], dim_y=3, dim_u=1, init="arx").initialise(rng.standard_normal((300, 3)),
                                                                         rng.standard_normal((300, 1)))
    with pytest.raises(ValueError, match="init"):
        gp.ODGPSSM(dim_x=4, dim_y=2, init="arx", mean_function="zero")
    assert gp.ODGPSSM(dim_y=2, init="linear").dim_x_choice == "auto"
    assert gp.ODGPSSM(dim_x=4, dim_y=1, init="linear").get_config()["init"] == "linear"  # until a fit chooses


@pytest.mark.parametrize("na, nb", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_an_arx_floor_of_one_lag_holds_one_block_of_states(na, nb):
    """The observer form holds n = max(na, nb, 1) blocks of d_y states: an ARX of one lag (or of none on one side)
    is held in d_y states, with the output block driven."""
    y, u = arx_data()
    start = floor_warm_start(gp.ARX(na=na, nb=nb, dim_y=2, dim_u=2, standardize=False).fit(y, u), [y], [u])
    assert start.F.shape == (2, 2) and start.G.shape == (2, 2) and start.driven.tolist() == [True, True]


def test_a_two_lag_arx_floors_noise_is_diagonal_in_its_basis():
    """The lag states' variance floor is set in the whitened basis for every floor of more than one lag (the
    observer form's floor, written there, has cross terms the GP model's diagonal noise would drop): for n = 2
    too, E Q E^T is diagonal."""
    y, u = arx_data()
    start = floor_warm_start(gp.ARX(na=2, nb=2, dim_y=2, dim_u=2, standardize=False).fit(y, u), [y], [u])
    noise = start.basis @ start.lgssm.get_learned_params()["Q"] @ start.basis.T
    assert noise.shape == (4, 4)
    np.testing.assert_allclose(noise - np.diag(np.diag(noise)), 0.0, atol=1e-15)
