"""Particle filter and backward simulation against an exact Kalman filter / RTS smoother, and with a GPSSM's
transition."""
import numpy as np
import pytest

import gpssm_np
from gpssm_np.filtering import (FilterResult, ancestral_paths, backward_simulation, particle_filter, smoothed_moments,
                                systematic_resample)
from gpssm_np.gp import inducing_gram
from gpssm_np.ops.conditional import conditional_moments_reference, conditional_precompute_reference
from gpssm_np.ops.kernels import kernel_matrix_reference
from gpssm_np.ops.lmc import lmc_cov_reference
from gpssm_np.params import constrain


# ---------------------------------------------------------------------------------------------------------------
# Linear-Gaussian reference: x_t = F x_{t-1} + N(0, Qm), y_t = C x_t + N(0, diag r), x_0 ~ N(m0, P0)
# ---------------------------------------------------------------------------------------------------------------
class LinearGaussian:
    def __init__(self, F, Qm, C, r, m0, P0):
        self.F, self.Qm, self.C, self.r, self.m0, self.P0 = F, Qm, C, np.asarray(r, dtype=float), m0, P0

    def transition(self, x, u_t, k):
        return x @ self.F.T, np.broadcast_to(self.Qm, (x.shape[0],) + self.Qm.shape)

    def simulate(self, T, rng):
        x = rng.multivariate_normal(self.m0, self.P0)
        ys = []
        for _ in range(T):
            x = rng.multivariate_normal(self.F @ x, self.Qm)
            ys.append(self.C @ x + np.sqrt(self.r) * rng.standard_normal(self.r.shape))
        return np.array(ys)

    def kalman(self, y):
        """Filtered means/covariances, predicted means/covariances, and log p(y_{1:T}); NaN components missing."""
        m, P = self.m0, self.P0
        out = {"m": [], "P": [], "mp": [], "Pp": []}
        log_lik = 0.0
        for y_t in y:
            m, P = self.F @ m, self.F @ P @ self.F.T + self.Qm
            out["mp"].append(m)
            out["Pp"].append(P)
            obs = ~np.isnan(y_t)
            if obs.any():
                C, R = self.C[obs], np.diag(self.r[obs])
                S = C @ P @ C.T + R
                resid = y_t[obs] - C @ m
                K = np.linalg.solve(S, C @ P).T
                log_lik -= 0.5 * (obs.sum() * np.log(2 * np.pi) + np.linalg.slogdet(S)[1]
                                  + resid @ np.linalg.solve(S, resid))
                m, P = m + K @ resid, P - K @ C @ P
            out["m"].append(m)
            out["P"].append(P)
        return {k: np.array(v) for k, v in out.items()}, log_lik

    def rts(self, kf):
        ms, Ps = kf["m"].copy(), kf["P"].copy()
        for k in range(len(ms) - 2, -1, -1):
            G = kf["P"][k] @ self.F.T @ np.linalg.inv(kf["Pp"][k + 1])
            ms[k] = kf["m"][k] + G @ (ms[k + 1] - kf["mp"][k + 1])
            Ps[k] = kf["P"][k] + G @ (Ps[k + 1] - kf["Pp"][k + 1]) @ G.T
        return ms, Ps

    def filter(self, y, **kwargs):
        return particle_filter(self.transition, self.C, self.r, y, None, self.m0, self.P0, **kwargs)


def car_model(dt=0.1, qc=1.0, r=0.5):
    """Constant-velocity car tracking: state (p1, p2, v1, v2), positions observed."""
    F = np.eye(4)
    F[0, 2] = F[1, 3] = dt
    a, b, c = dt**3 / 3, dt**2 / 2, dt
    Qm = qc * np.array([[a, 0, b, 0], [0, a, 0, b], [b, 0, c, 0], [0, b, 0, c]])
    return LinearGaussian(F, Qm, np.eye(2, 4), np.full(2, r), np.zeros(4), np.eye(4))


def ar2_model():
    F = np.array([[0.9, 0.2], [-0.1, 0.8]])
    return LinearGaussian(F, np.array([[0.3, 0.05], [0.05, 0.2]]), np.eye(1, 2), [0.4], np.zeros(2), np.eye(2))


def with_data(model, T=50, seed=1):
    """(model, simulated y (T, d_y), (Kalman filter moments, exact log-likelihood))."""
    y = model.simulate(T, np.random.default_rng(seed))
    return model, y, model.kalman(y)


@pytest.fixture(scope="module")
def car():
    return with_data(car_model())


@pytest.fixture(scope="module")
def ar2():
    return with_data(ar2_model())


def assert_filter_close(res, kf, cov_rtol=0.2):
    """Filtered means: root-mean-square error below 4 Monte Carlo units sd / sqrt(N) (resampling inflates the
    variance of a weighted mean by a factor of a few; measured 1.1 to 3 on these models) and no error above
    0.25 sd. Covariances within cov_rtol of the largest entry."""
    err = (res.means - kf["m"]) / np.sqrt(np.diagonal(kf["P"], axis1=1, axis2=2))
    assert np.sqrt(np.mean(err**2) * res.num_particles) < 4.0
    assert np.abs(err).max() < 0.25
    assert np.abs(res.covs - kf["P"]).max() < cov_rtol * np.abs(kf["P"]).max()


# ---------------------------------------------------------------------------------------------------------------
# Particle filter on a linear-Gaussian model
# ---------------------------------------------------------------------------------------------------------------
def test_adapted_filter_matches_kalman(car):
    model, y, (kf, log_lik) = car
    res = model.filter(y, num_particles=4000, rng=0)
    assert isinstance(res, FilterResult) and res.num_particles == 4000 and res.num_steps == 50
    assert_filter_close(res, kf)
    assert abs(res.log_likelihood - log_lik) < 0.75  # Monte Carlo sd about 0.2 here
    np.testing.assert_allclose(res.log_likelihood, res.log_likelihood_steps.sum())
    np.testing.assert_allclose(np.exp(res.log_weights).sum(), 1.0)


@pytest.mark.parametrize("proposal", ["adapted", "bootstrap"])
def test_output_moments_and_innovations_match_kalman(car, proposal):
    """Predicted output y_t | y_{1:t-1} (mean C m_pred, variances diag(C P_pred C^T) + r), its innovation and the
    filtered output C x_t | y_{1:t}, with missing components."""
    model, y, _ = car
    y = y.copy()
    y[3, 0] = y[10] = np.nan
    kf, _ = model.kalman(y)
    res = model.filter(y, num_particles=8000, rng=0, proposal=proposal)
    C = model.C
    pred_var = np.einsum("ij,tjk,ik->ti", C, kf["Pp"], C) + model.r
    err = (res.predicted_output_means - kf["mp"] @ C.T) / np.sqrt(pred_var)
    assert np.abs(err).max() < 0.1
    np.testing.assert_allclose(res.predicted_output_vars, pred_var, rtol=0.15)
    np.testing.assert_array_equal(res.innovations, y - res.predicted_output_means)
    assert np.isnan(res.innovations[3, 0]) and not np.isnan(res.innovations[3, 1])
    filt_var = np.einsum("ij,tjk,ik->ti", C, kf["P"], C)
    assert np.abs((res.output_means - kf["m"] @ C.T) / np.sqrt(filt_var)).max() < 0.25
    np.testing.assert_allclose(res.output_vars, filt_var, rtol=0.25)


def test_bootstrap_filter_close_with_more_particles(car):
    model, y, (kf, log_lik) = car
    res = model.filter(y, num_particles=8000, rng=0, proposal="bootstrap")
    assert_filter_close(res, kf)
    assert abs(res.log_likelihood - log_lik) < 0.5


def test_adapted_log_likelihood_on_ar2(ar2):
    model, y, (kf, log_lik) = ar2
    res = model.filter(y, num_particles=4000, rng=0)
    assert_filter_close(res, kf)
    assert abs(res.log_likelihood - log_lik) < 0.5  # Monte Carlo sd about 0.12 here


def test_log_likelihood_unbiased_in_exp(ar2):
    model, y, _ = ar2
    y = y[:10]
    _, log_lik = model.kalman(y)
    ratios = np.exp([model.filter(y, num_particles=50, rng=s).log_likelihood - log_lik for s in range(60)])
    assert abs(ratios.mean() - 1.0) < 4.0 * ratios.std() / np.sqrt(len(ratios)) + 0.02


def test_resampling_only_below_threshold(car):
    model, y, _ = car
    for proposal in ("adapted", "bootstrap"):
        for thr in (0.0, 0.3, 0.8):
            res = model.filter(y[:20], num_particles=300, rng=1, proposal=proposal, ess_threshold=thr)
            np.testing.assert_array_equal(res.resampled, res.ess < thr * 300)
            assert np.all((res.ess >= 1.0 - 1e-9) & (res.ess <= 300 + 1e-9))
        assert not model.filter(y[:20], num_particles=300, rng=1, proposal=proposal, ess_threshold=0.0).resampled.any()


def test_missing_observations(car):
    model, y, _ = car
    y = y[:20].copy()
    y[[3, 4, 11]] = np.nan  # whole steps missing
    y[7, 1] = np.nan  # one component missing
    kf, log_lik = model.kalman(y)
    for proposal in ("adapted", "bootstrap"):
        res = model.filter(y, num_particles=3000, rng=2, proposal=proposal, ess_threshold=0.5)
        assert np.all(res.log_likelihood_steps[[3, 4, 11]] == 0.0)
        assert res.ess[4] == pytest.approx(res.ess[3]) and not res.resampled[[3, 4, 11]].any()
        assert_filter_close(res, kf)
        assert abs(res.log_likelihood - log_lik) < 0.5


def test_initial_particles_and_same_seed(car):
    model, y, _ = car
    x0 = np.random.default_rng(5).multivariate_normal(model.m0, model.P0, size=200)
    a = particle_filter(model.transition, model.C, model.r, y[:10], x0_particles=x0, rng=7)
    b = particle_filter(model.transition, model.C, np.diag(model.r), y[:10], x0_particles=x0,
                        rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a.initial_particles, x0)
    np.testing.assert_allclose(a.means, b.means, rtol=1e-12)  # diagonal R == the same full R
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)
    c = particle_filter(model.transition, model.C, model.r, y[:10], x0_particles=x0, rng=8)
    assert not np.allclose(a.means, c.means)


def test_logsumexp_is_scipys_bit_for_bit():
    from scipy.special import logsumexp as scipy_logsumexp

    from gpssm_np.filtering import logsumexp

    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 500, 4000):
        for k in range(50):
            a = rng.normal(size=n) * rng.uniform(0.1, 300.0)
            if k % 2:
                a[rng.integers(n)] = a.max()  # ties at the maximum
            assert logsumexp(a) == scipy_logsumexp(a)
    assert logsumexp(np.array([-np.inf, 0.0])) == 0.0 and np.isnan(logsumexp(np.array([np.nan, 1.0])))


def test_systematic_resample_counts():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(10))
    idx = systematic_resample(np.log(w), rng)
    counts = np.bincount(idx, minlength=10)
    assert counts.sum() == 10 and np.all(np.abs(counts - 10 * w) < 1.0)
    assert np.all(np.diff(idx) >= 0)


# ---------------------------------------------------------------------------------------------------------------
# Smoothing
# ---------------------------------------------------------------------------------------------------------------
def test_backward_simulation_matches_rts():
    model = ar2_model()
    y = model.simulate(30, np.random.default_rng(4))
    kf, _ = model.kalman(y)
    ms, Ps = model.rts(kf)
    res = model.filter(y, num_particles=1000, rng=0, store_particles=True)
    M = 400
    traj = backward_simulation(model.transition, res, None, M, rng=1)
    assert traj.shape == (M, 30, 2)
    mean, cov = smoothed_moments(traj)
    # errors in units of the smoothed sd: RMS below 3 Monte Carlo units 1 / sqrt(M) (measured 1.1 to 1.9 over
    # seeds), none above 0.3; covariances within 35% of the largest entry (sampling error of 400 draws alone ~7%)
    err = (mean - ms) / np.sqrt(np.diagonal(Ps, axis1=1, axis2=2))
    assert np.sqrt(np.mean(err**2) * M) < 3.0 and np.abs(err).max() < 0.3
    assert np.abs(cov - Ps).max() < 0.35 * np.abs(Ps).max()
    full = backward_simulation(model.transition, res, None, 5, rng=1, include_initial=True)
    assert full.shape == (5, 31, 2)
    assert np.all(np.isin(full[:, 0, 0], res.initial_particles[:, 0]))
    # same seed, same trajectories
    np.testing.assert_array_equal(traj, backward_simulation(model.transition, res, None, M, rng=1))


def test_ancestors_index_the_parents():
    # nearly deterministic transition x_t = x_{t-1} + 1: each particle is its parent plus one
    def shift(x, u_t, k):
        return x + 1.0, np.broadcast_to(1e-18 * np.eye(2), (x.shape[0], 2, 2))

    y = np.random.default_rng(6).normal(size=(15, 1)) + np.arange(1, 16)[:, None]
    for proposal in ("adapted", "bootstrap"):
        res = particle_filter(shift, np.eye(1, 2), [1.0], y, None, np.zeros(2), np.eye(2), num_particles=200, rng=0,
                              store_particles=True, proposal=proposal, ess_threshold=0.9)
        assert res.resampled.any()
        X, anc = res.particles_history, res.ancestors
        np.testing.assert_allclose(X[0], res.initial_particles[anc[0]] + 1.0, atol=1e-6)
        for k in range(1, 15):
            np.testing.assert_allclose(X[k], X[k - 1][anc[k]] + 1.0, atol=1e-6)
        paths, log_w = ancestral_paths(res)
        np.testing.assert_array_equal(paths[:, -1], X[-1])
        np.testing.assert_allclose(np.diff(paths, axis=1), 1.0, atol=1e-6)
        mean, _ = smoothed_moments(paths, log_w)
        np.testing.assert_allclose(mean[-1], res.means[-1])


# ---------------------------------------------------------------------------------------------------------------
# A GPSSM's transition in the filter
# ---------------------------------------------------------------------------------------------------------------
def gp_model(mean_function="zero", prssm=False):
    if prssm:
        model = gpssm_np.PRSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=8, seed=0, mean_function=mean_function)
    else:
        model = gpssm_np.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=8, seed=0, mean_function=mean_function)
    params = model.get_learned_params()
    rng = np.random.default_rng(1)
    params["q_mu"] = rng.normal(size=params["q_mu"].shape)  # a GP mean that depends on x
    if mean_function == "linear":
        params.update(F=0.5 * np.eye(3) + 0.1 * rng.normal(size=(3, 3)), G=rng.normal(size=(3, 1)),
                      b=rng.normal(size=3))
    model.set_learned_params(params)
    return model


@pytest.mark.parametrize("mean_function,prssm", [("zero", False), ("identity", False), ("linear", False),
                                                 ("zero", True), ("linear", True)])
def test_gpssm_transition_matches_direct_computation(mean_function, prssm):
    model = gp_model(mean_function, prssm)
    spec, p = model.spec, constrain(model.params, model.spec)
    transition = model.transition_moments()
    rng = np.random.default_rng(0)
    x, u_t = rng.normal(size=(6, 3)), rng.normal(size=1)
    mean, cov = transition(x, u_t, 0)
    assert mean.shape == (6, 3) and cov.shape == (6, 3, 3)

    x_in = np.concatenate([x, np.tile(u_t, (6, 1))], axis=1)
    Kzz = inducing_gram(p, spec, kernel_matrix_reference)
    alpha, B = conditional_precompute_reference(Kzz, p["q_mu"], p["q_sqrt"], spec.whiten)
    Kxz = kernel_matrix_reference(x_in, p["Z"], p["lengthscale"], p["variance"], spec.kernel)
    m_h, s_h = conditional_moments_reference(Kxz, np.outer(p["variance"], np.ones(6)), alpha, B)
    mu = {"zero": 0.0, "identity": x}.get(mean_function)
    if mean_function == "linear":
        mu = x @ p["F"].T + np.tile(u_t, (6, 1)) @ p["G"].T + p["b"]
    expected_mean = m_h.T @ p["A"].T + mu
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cov, lmc_cov_reference(s_h.T, p["A"], p["process_var"]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cov, np.swapaxes(cov, 1, 2))

    C, R = model.emission()
    np.testing.assert_array_equal(C, [[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(R, p["obs_var"])


def test_gpssm_filter_and_smoother():
    model = gp_model("identity")
    rng = np.random.default_rng(2)
    T = 25
    u = rng.normal(size=(T, 1))
    y = np.cumsum(rng.normal(size=(T, 1)), axis=0)
    y[[4, 9]] = np.nan
    res = model.filter(y, u, num_particles=300, seed=3, store_particles=True)
    transition = model.transition_moments()
    assert res.means.shape == (T, 3) and res.covs.shape == (T, 3, 3) and res.particles.shape == (300, 3)
    assert res.particles_history.shape == (T, 300, 3) and res.ancestors.shape == (T, 300)
    for value in (res.means, res.covs, res.ess, res.log_weights, res.particles, res.log_likelihood):
        assert np.all(np.isfinite(value))
    np.testing.assert_array_equal(res.resampled, res.ess < 0.5 * 300)
    assert res.resampled.any() and not res.resampled.all()
    assert np.all(res.log_likelihood_steps[[4, 9]] == 0.0)
    again = model.filter(y, u, num_particles=300, seed=3, store_particles=True)
    np.testing.assert_array_equal(res.means, again.means)
    assert res.log_likelihood == again.log_likelihood
    p = model.constrained_params()
    err = np.abs(res.initial_particles.mean(axis=0) - p["x0_mean"])
    assert np.all(err < 4 * np.sqrt(p["x0_var"] / 300))

    traj = backward_simulation(transition, res, u, 20, rng=0)
    assert traj.shape == (20, T, 3) and np.all(np.isfinite(traj))
    # the model's smoother: that filter (missing outputs and all), then backward draws from seed + 1
    np.testing.assert_array_equal(model.smooth(y, u, num_particles=300, num_trajectories=20, seed=3),
                                  backward_simulation(transition, res, u, 20, rng=np.random.default_rng(4)))
    boot = model.filter(y, u, num_particles=300, seed=3, proposal="bootstrap")
    assert np.isfinite(boot.log_likelihood)
    assert abs(boot.log_likelihood - res.log_likelihood) < 0.1 * abs(res.log_likelihood) + 5.0


def test_gpssm_filter_with_recognition_network():
    model = gpssm_np.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=8, seed=0, recognition="mlp",
                             recognition_options={"num_steps": 4, "hidden": 8})
    rng = np.random.default_rng(4)
    y, u = rng.normal(size=(12, 1)), rng.normal(size=(12, 1))
    res = model.filter(y, u, num_particles=400, seed=0)
    mean, var = model.recognition.q_x0(model.params, y, u)
    err = np.abs(res.initial_particles.mean(axis=0) - mean[0])
    assert np.all(err < 4 * np.sqrt(var[0] / 400)) and np.isfinite(res.log_likelihood)
    y[3] = np.nan  # 3 complete steps before the gap, the network needs 4: the filter starts from N(0, I), saying so
    with pytest.warns(UserWarning, match="prior N") as caught:
        model.filter(y, u, num_particles=50)
    assert [w.filename for w in caught] == [__file__]  # the line that called filter
    x0 = rng.normal(size=(50, 3))
    res = particle_filter(model.transition_moments(), *model.emission(), y, u, x0_particles=x0, rng=0)
    np.testing.assert_array_equal(res.initial_particles, x0)
    assert res.log_likelihood_steps[3] == 0.0


# ---------------------------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------------------------
def _pf_call(**overrides):
    model = ar2_model()
    args = dict(transition=model.transition, C=model.C, R=model.r, y=np.zeros((5, 1)), u=None, x0_mean=model.m0,
                x0_cov=model.P0, num_particles=10)
    args.update(overrides)
    return particle_filter(**args)


@pytest.mark.parametrize("overrides,match", [
    (dict(transition=3), "transition"),
    (dict(proposal="optimal"), "proposal"),
    (dict(ess_threshold=1.5), "ess_threshold"),
    (dict(ess_threshold=True), "ess_threshold"),
    (dict(C=np.eye(2)), "R"),
    (dict(C=np.ones(2)), "C"),
    (dict(R=[-1.0]), "R"),
    (dict(R=[0.0]), "R: expected 1 positive variances"),
    (dict(R=np.array([[1.0, 2.0], [0.0, 1.0]])), "R"),
    (dict(y=np.zeros((5, 2))), "y"),
    (dict(y=np.full((5, 1), np.inf)), "y"),
    (dict(y=np.full((5, 1), 1e300)), "y: values up to 1e\\+300"),
    (dict(y=np.zeros((0, 1))), "y"),
    (dict(y=[["a"], ["b"]]), "y"),
    (dict(u=np.zeros((4, 1))), "u"),
    (dict(x0_mean=np.zeros(3)), "x0_mean"),
    (dict(x0_mean=None), "x0_mean"),
    (dict(x0_cov=None), "x0_mean: expected x0_mean and x0_cov"),
    (dict(x0_cov=-np.ones(2)), "x0_cov"),
    (dict(x0_cov=np.array([[1.0, 0.0], [0.0, -1.0]])), "x0_cov"),
    (dict(x0_cov=np.eye(3)), r"x0_cov: expected a symmetric \(2, 2\) matrix"),
    (dict(x0_cov=np.array([[1.0, 0.5], [0.0, 1.0]])), r"x0_cov: expected a symmetric \(2, 2\) matrix"),
    (dict(x0_particles=np.zeros((10, 2))), "x0_particles"),
    (dict(x0_mean=None, x0_particles=np.zeros((10, 2))), "x0_particles: expected either"),
    (dict(x0_cov=None, x0_particles=np.zeros((10, 2))), "x0_particles: expected either"),
    (dict(x0_mean=None, x0_cov=None, x0_particles=np.zeros((10, 3))), "x0_particles"),
    (dict(x0_mean=None, x0_cov=None, x0_particles=np.zeros((8, 2))), "num_particles"),
    (dict(num_particles=0), "num_particles"),
    (dict(rng=-1), "rng"),
    (dict(transition=lambda x, u, k: (x, x)), "transition"),
    (dict(transition=lambda x, u, k: (x * np.nan, np.tile(np.eye(2), (len(x), 1, 1)))), "transition"),
    (dict(transition=lambda x, u, k: (x, np.tile(-np.eye(2), (len(x), 1, 1)))), "transition"),
])
def test_particle_filter_validation(overrides, match):
    with pytest.raises(ValueError, match=match):
        _pf_call(**overrides)


def test_smoother_and_gpssm_validation():
    model = ar2_model()
    y = np.zeros((5, 1))
    res = model.filter(y, num_particles=10)
    with pytest.raises(ValueError, match="store_particles"):
        backward_simulation(model.transition, res, None, 5)
    with pytest.raises(ValueError, match="filter_result"):
        ancestral_paths(object())
    stored = model.filter(y, num_particles=10, store_particles=True)
    with pytest.raises(ValueError, match="num_trajectories"):
        backward_simulation(model.transition, stored, None, 0)
    with pytest.raises(ValueError, match="u"):
        backward_simulation(model.transition, stored, np.zeros((4, 1)), 5)
    with pytest.raises(ValueError, match="log_weights"):
        smoothed_moments(np.zeros((3, 5, 2)), np.zeros(2))

    gp = gp_model()
    bad = gp.get_learned_params()
    bad["A"] = np.zeros((2, 2))
    with pytest.raises(ValueError, match="params\\['A'\\]"):
        gp.set_learned_params(bad)
    transition = gp.transition_moments()
    with pytest.raises(ValueError, match="x_prev"):
        transition(np.zeros((4, 2)), np.zeros(1), 0)
    with pytest.raises(ValueError, match="u_t: the model has dim_u = 1 inputs, got None"):
        transition(np.zeros((4, 3)), None, 0)
    with pytest.raises(ValueError, match="u_t"):
        transition(np.zeros((4, 3)), np.zeros(2), 0)
    step = gp.filter_transition()  # its fused step reads u_t without a shape check of its own
    with pytest.raises(ValueError, match="u_t: the model has dim_u = 1 inputs, got None"):
        step.propagate(np.zeros((4, 3)), np.full(4, -np.log(4)), None, np.eye(1, 3), np.ones(1), np.zeros(1))
    with pytest.raises(ValueError, match="u"):
        gp.filter(y)


@pytest.mark.parametrize("kernel", ["matern52", "se"])
@pytest.mark.parametrize("cls", [gpssm_np.ODGPSSM, gpssm_np.PRSSM])
def test_filters_transition_equals_the_transition_moments(cls, kernel, rng):
    # moments_function (one noise-free step of the fused rollout kernel) against Transition.moments (the sparse-GP
    # conditional and the LMC as separate primitives), over more particles than one block
    from gpssm_np.transition import Transition

    model = cls(dim_x=3, dim_y=1, dim_u=2, num_inducing=7, kernel=kernel, seed=2)
    params = {k: v + 0.3 * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()}
    transition = Transition(constrain(params, model.spec), model.spec)
    x, u = rng.normal(size=(950, 3)), rng.normal(size=2)
    mean, cov = transition.moments_function()(x, u, 0)
    expected_mean, expected_cov = transition.moments(x, np.broadcast_to(u, (950, 2)))
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cov, expected_cov, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", ["matern52", "se"])
@pytest.mark.parametrize("cls", [gpssm_np.ODGPSSM, gpssm_np.PRSSM])
def test_far_from_the_inducing_inputs_the_transition_is_its_far_field(cls, kernel, rng):
    # Transition.far_field (F, P) against the moments at a state far from every inducing input: mean F x + G u + b
    from gpssm_np.transition import Transition

    model = cls(dim_x=3, dim_y=1, dim_u=2, num_inducing=7, kernel=kernel, mean_function="linear", seed=2)
    params = {k: v + 0.3 * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()}
    p = constrain(params, model.spec)
    transition = Transition(p, model.spec)
    x, u = 1e3 * rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mean, cov = transition.moments(x, u)
    F, P = transition.far_field()
    np.testing.assert_allclose(mean, x @ F.T + u @ p["G"].T + p["b"], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(cov, np.broadcast_to(P, cov.shape), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mean_function", ["zero", "identity", "linear"])
@pytest.mark.parametrize("kernel", ["matern52", "se"])
@pytest.mark.parametrize("cls", [gpssm_np.ODGPSSM, gpssm_np.PRSSM])
def test_the_fused_adapted_step_is_the_numpy_step(cls, kernel, mean_function, rng):
    # filter_transition's step (ops.adapted_step) against the NumPy step of the plain transition function: the same
    # random numbers (so the same resampling and generator state after) and the same numbers up to rounding, with
    # outputs missing in part and in full
    from gpssm_np.filtering import PROPOSAL_STEPS, step_function

    model = cls(dim_x=3, dim_y=2, dim_u=1, num_inducing=7, kernel=kernel, mean_function=mean_function, seed=2)
    params = {k: v + 0.3 * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()}
    params["q_mu"] = 2.0 * rng.normal(size=params["q_mu"].shape)  # particles that predict apart: uneven weights
    if mean_function == "linear":
        params["F"] = 0.8 * np.eye(3)  # stable: rounding differences do not grow from step to step
    model.set_learned_params(params)
    C, r = model.emission()
    T = 40
    y, u = np.cumsum(0.3 * rng.normal(size=(T, 2)), axis=0), rng.normal(size=(T, 1))
    y[5, 0] = y[12] = np.nan
    fused_transition = model.filter_transition()
    assert step_function("adapted", fused_transition, np.diag(r)) is not PROPOSAL_STEPS["adapted"]
    results, generators = [], []
    for transition in (fused_transition, model.transition_moments()):
        generators.append(np.random.default_rng(3))
        results.append(particle_filter(transition, C, r, y, u, np.zeros(3), np.ones(3), num_particles=150,
                                       rng=generators[-1], ess_threshold=0.8, store_particles=True))
    fused, plain = results
    assert generators[0].bit_generator.state == generators[1].bit_generator.state
    np.testing.assert_array_equal(fused.resampled, plain.resampled)
    np.testing.assert_array_equal(fused.ancestors, plain.ancestors)
    assert fused.resampled.any() and not fused.resampled.all() and fused.log_likelihood_steps[12] == 0.0
    for name in ("means", "covs", "log_likelihood_steps", "ess", "particles", "log_weights", "particles_history",
                 "output_means", "output_vars", "predicted_output_means", "predicted_output_vars", "innovations"):
        np.testing.assert_allclose(getattr(fused, name), getattr(plain, name), rtol=1e-9, atol=1e-12, err_msg=name)


def test_a_forecast_from_past_data_filters_with_the_fused_step(monkeypatch, rng):
    # forecast(y_past=...) (every causal score, the default fit's selection) filters the past through
    # filter_transition, whose fully adapted step is ops.adapted_step: its propagate runs once per past step, and the
    # forecast is the one of the NumPy step up to rounding (the same random numbers)
    import gpssm_np.transition as transition_module

    model = gpssm_np.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_inducing=6, seed=1)
    params = {k: v + 0.2 * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()}
    params["F"] = 0.8 * np.eye(3)
    model.set_learned_params(params)
    y, u = np.cumsum(0.3 * rng.normal(size=(30, 1)), axis=0), rng.normal(size=(40, 1))
    calls = []
    fused = transition_module.propagate
    monkeypatch.setattr(transition_module, "propagate", lambda *a: calls.append(1) or fused(*a))
    forecast = model.forecast(u[30:], y_past=y, u_past=u[:30], num_samples=20, seed=4, num_particles=100)
    assert len(calls) == 30
    monkeypatch.setattr(model, "filter_transition", model.transition_moments)  # the NumPy step
    plain = model.forecast(u[30:], y_past=y, u_past=u[:30], num_samples=20, seed=4, num_particles=100)
    assert len(calls) == 30
    np.testing.assert_allclose(forecast.mean, plain.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(forecast.samples, plain.samples, rtol=1e-9, atol=1e-12)


def test_the_backward_densities_are_gaussian_log_densities_with_their_own_covariances(rng):
    """Backward simulation weighs candidates by log N(x; mean_n, cov_n) with a covariance per component (a GP
    transition's differs by particle): each against scipy, normalising constant included."""
    from scipy.stats import multivariate_normal

    from gpssm_np.filtering import _GaussianMixtureDensity
    N, d = 4, 3
    mean = rng.normal(size=(N, d))
    roots = rng.normal(size=(N, d, d)) * np.array([0.3, 1.0, 3.0, 0.1])[:, None, None]
    cov = roots @ np.swapaxes(roots, 1, 2) + 0.1 * np.eye(d)
    x = rng.normal(size=(5, d))
    expected = np.stack([multivariate_normal(mean[n], cov[n]).logpdf(x) for n in range(N)], axis=1)
    np.testing.assert_allclose(_GaussianMixtureDensity(mean, cov).log_pdf(x), expected, rtol=1e-10)


def scaled_transition(a, q):
    """The transition x_t | x_{t-1} ~ N(a x_{t-1}, q I) as the filters call it (moments of N particles)."""
    def transition(x, u, k):
        d = x.shape[1]
        return a * x, np.broadcast_to(q * np.eye(d), (len(x), d, d)).copy()

    return transition


@pytest.mark.parametrize("R", [np.array([[1.0, 0.0], [0.5, 1.0]]), np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones((2, 2))])
def test_the_particle_filter_refuses_a_noise_matrix_that_is_no_covariance(R, rng):
    """Not symmetric, or symmetric with a negative or a zero eigenvalue (each alone is refused)."""
    transition = scaled_transition(1.0, 1.0)
    with pytest.raises(ValueError, match="R: expected a symmetric positive-definite matrix"):
        particle_filter(transition, np.eye(2), R, rng.normal(size=(5, 2)), None, np.zeros(2), np.ones(2),
                        num_particles=10)


def test_backward_simulation_draws_the_last_state_by_the_last_weights(rng):
    """x_T is drawn from the last step's particles by their own weights (without resampling, the bootstrap filter's
    weights differ from step to step, so those of the step before would draw another mixture)."""
    transition = scaled_transition(0.9, 0.5)
    y = rng.normal(size=(6, 1)) * 2.0
    fr = particle_filter(transition, np.eye(1), np.array([0.3]), y, None, np.zeros(1), np.ones(1), num_particles=40,
                         rng=1, proposal="bootstrap", ess_threshold=0.0, store_particles=True)
    M = 20000
    last = backward_simulation(transition, fr, num_trajectories=M, rng=2)[:, -1, 0]
    X, W = fr.particles_history[-1, :, 0], np.exp(fr.log_weights_history)
    mean, sd = W[-1] @ X, np.sqrt(W[-1] @ (X - W[-1] @ X) ** 2)
    assert abs(W[-2] @ X - mean) > 10 * sd / np.sqrt(M)  # the weights of the step before would show
    assert abs(last.mean() - mean) <= 5 * sd / np.sqrt(M)


def test_the_ensemble_kalman_filter_matches_kalman(car):
    """With many members the ensemble Kalman filter's means, covariances and log-likelihood (each step's Gaussian
    density of y_t about C times the ensemble mean) are the Kalman filter's, up to Monte Carlo error."""
    model, y, (kf, log_lik) = car
    res = model.filter(y, num_particles=4000, rng=0, proposal="enkf")
    assert_filter_close(res, kf)
    assert abs(res.log_likelihood - log_lik) < 0.75
    assert np.all(res.ess == 4000) and not res.resampled.any()


def test_the_ensemble_kalman_filter_runs_with_two_members(ar2):
    """Two members are the fewest whose sample covariance (N - 1 in the denominator) exists."""
    model, y, _ = ar2
    res = model.filter(y[:5], num_particles=2, rng=0, proposal="enkf")
    assert res.particles.shape == (2, 2) and np.all(np.isfinite(res.means))


def test_systematic_resampling_never_draws_a_particle_of_zero_weight():
    """Positions (j + U) / N, U uniform on [0, 1), all lie in (0, 1): none falls on the first particle's empty
    stretch of the CDF."""
    log_w = np.array([-np.inf, np.log(0.25), np.log(0.75)])
    for seed in range(20):
        idx = systematic_resample(log_w, np.random.default_rng(seed))
        assert idx.min() >= 1 and len(idx) == 3


@pytest.mark.parametrize("proposal", ["bootstrap", "enkf"])
def test_the_filters_refuse_a_transition_covariance_that_fails_at_the_first_particle(proposal):
    """The draw from each particle's transition names the transition where the first Gaussian's covariance has no
    Cholesky factor, as where a later one has none."""
    def transition(x, u, k):
        cov = np.tile(np.eye(2), (len(x), 1, 1))
        cov[0] = -np.eye(2)
        return 0.5 * x, cov

    with pytest.raises(ValueError, match="transition"):
        _pf_call(transition=transition, proposal=proposal)


def test_the_fused_adapted_step_refuses_a_covariance_that_fails_at_the_first_particle():
    """A transition with ``propagate`` (the fused adapted step) whose Cholesky fails at particle 0 is refused as the
    unfused step refuses it."""
    class Failing:
        def __call__(self, x, u, k):
            return x, np.tile(np.eye(2), (len(x), 1, 1))

        def propagate(self, x, log_w, u_t, C, r, y_t):
            N = len(x)
            return x, np.zeros((N, 2, 2)), log_w, 0.0, float(N), np.zeros(1), np.ones(1), 0, True

    with pytest.raises(ValueError, match="transition"):
        _pf_call(transition=Failing())


def test_the_initial_particles_follow_the_initial_distribution():
    """Diagonal variances: each state's draws have the standard deviation given; zero variances, and a singular (here
    zero) covariance matrix, are allowed and put every particle at the mean; without ``num_particles`` 1000 are
    drawn."""
    model = ar2_model()
    y = np.zeros((1, 1))
    res = particle_filter(model.transition, model.C, model.r, y, None, np.array([1.0, -2.0]), np.array([4.0, 0.25]),
                          num_particles=20000, rng=0)
    np.testing.assert_allclose(res.initial_particles.std(axis=0), [2.0, 0.5], rtol=0.03)
    np.testing.assert_allclose(res.initial_particles.mean(axis=0), [1.0, -2.0], atol=0.05)
    for cov in (np.zeros(2), np.zeros((2, 2))):
        res = particle_filter(model.transition, model.C, model.r, y, None, np.array([1.0, -2.0]), cov, rng=0)
        assert res.initial_particles.shape == (1000, 2)
        np.testing.assert_array_equal(res.initial_particles, np.tile([1.0, -2.0], (1000, 1)))


def test_backward_draws_are_unmoved_by_a_common_offset_and_reach_the_last_candidate():
    """``_sample_rows`` draws each row by its own CDF scaled to its largest entry: rows of log-probabilities near
    800 (exp overflows) draw exactly as the same rows near 0, and a row whose mass is all on its last entry draws
    that entry."""
    from gpssm_np.filtering import _sample_rows

    log_p = np.random.default_rng(1).normal(size=(50, 6))
    a = _sample_rows(log_p, np.random.default_rng(3))
    b = _sample_rows(log_p + 800.0, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    last = np.full((4, 5), -np.inf)
    last[:, -1] = 0.0
    np.testing.assert_array_equal(_sample_rows(last, np.random.default_rng(0)), 4)


def test_the_ensemble_kalman_step_by_hand():
    """One step of three members: x_n = m_n + s eps_n, the gain from the ensemble's sample covariance (N - 1 in the
    denominator) and each member moved towards its own perturbed observation y + R^(1/2) e_n (eps, then e, drawn
    from the step's generator); the log-likelihood increment is log N(y; C xbar, C P C^T + R)."""
    from scipy.stats import multivariate_normal

    from gpssm_np.filtering import _enkf_step

    mean = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 3.0]])
    s, C, R, y = 0.3, np.array([[1.0, 0.5]]), np.array([[0.2]]), np.array([0.7])
    cov = np.tile(s**2 * np.eye(2), (3, 1, 1))
    x, log_w, _, inc, ess, resampled, carried, _, _ = _enkf_step(mean, cov, np.full(3, -np.log(3)), (C, R, y), 0.5,
                                                                np.random.default_rng(4))
    rng = np.random.default_rng(4)
    prior = mean + s * rng.standard_normal((3, 2))
    dev = prior - prior.mean(axis=0)
    P = dev.T @ dev / 2
    S = C @ P @ C.T + R
    gain = P @ C.T @ np.linalg.inv(S)
    perturbed = y + rng.standard_normal((3, 1)) * np.sqrt(R[0, 0])
    np.testing.assert_allclose(x, prior + (perturbed - prior @ C.T) @ gain.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(inc, multivariate_normal(C @ prior.mean(axis=0), S).logpdf(y), rtol=1e-12)
    assert ess == 3.0 and not resampled and carried is x


def test_the_particle_filter_takes_matching_particles_and_a_covariance_negative_by_rounding(rng):
    """x0_particles with the matching num_particles are taken as they are; x0_cov's tolerance for rounding below zero
    is relative to its scale (a negative eigenvalue 1e-11 of its largest is rounding)."""
    x0 = rng.normal(size=(10, 2))
    res = _pf_call(x0_mean=None, x0_cov=None, x0_particles=x0, num_particles=10)
    np.testing.assert_array_equal(res.initial_particles, x0)
    assert np.isfinite(_pf_call(x0_cov=np.diag([1e6, -1e-5])).log_likelihood)


def test_the_online_particle_filter_takes_a_missing_output(rng):
    """update(y_t) with NaN (the output missing at that step) predicts without conditioning, as the batch filter."""
    from gpssm_np.filtering import OnlineParticleFilter

    transition = scaled_transition(0.9, 0.1)
    C, R, y = np.eye(1, 2), np.array([0.1]), np.array([[0.3], [np.nan], [-0.2]])
    online = OnlineParticleFilter.start(transition, C, R, np.zeros(2), np.ones(2), 20, rng=7)
    steps = [online.update(y_t) for y_t in y]
    batch = particle_filter(transition, C, R, y, None, np.zeros(2), np.ones(2), num_particles=20, rng=7)
    assert steps[1].log_likelihood == 0.0
    np.testing.assert_array_equal(online.particles, batch.particles)


def test_backward_simulation_with_the_initial_state_draws_each_step_from_its_particles():
    """Every column of the trajectories from x_0 on is one of the stored particles of its own step."""
    model = ar2_model()
    y = model.simulate(8, np.random.default_rng(4))
    res = model.filter(y, num_particles=50, rng=0, store_particles=True)
    full = backward_simulation(model.transition, res, None, 30, rng=1, include_initial=True)
    assert np.all(np.isin(full[:, 0, 0], res.initial_particles[:, 0]))
    for k in range(8):
        assert np.all(np.isin(full[:, k + 1, 0], res.particles_history[k][:, 0]))
