r"""The GP models' start from a linear floor (``init="lgssm"``, ``"arx"``, ``"linear"``; ``models/floor.py``).

A linear model fitted in about a second, the package's ``LGSSM`` (subspace identification, then EM) or ``ARX`` at
the orders the floor chose, is a strong model of most plants. The GP model starts exactly there and moves away only
where the data say so. :func:`floor_warm_start` writes a fitted floor as the GP model's linear mean: the LGSSM in
the basis of steps 1-2 below; the ARX in observer form (``baselines/arx_state_space.py``: H = [I, 0] already, and
only the first d_y states carry process noise, so only they get the GP's share in step 3: the rows of A and the
PRSSM kernel variances of the other states start at 0 and at the floor) in the basis of :func:`whitened_basis`.
Every regime of ``fit`` starts there (the default fit, the validation-block loop, the epoch loop with a linear
``init``).

1. The LGSSM x_t = F x_{t-1} + G u_t + w_t, w_t ~ N(0, Q_l), y_t = H x_t + v_t, v_t ~ N(0, R_l), with the
   model's d_x, fitted to the training data (the floor's).
2. Change the state basis, x' = E x (``WarmStart.basis``), so that the emission becomes C = [I_{d_y}, 0] (paper
   Eq. (4b)): E = [H; N], where the rows of N span the null space of H Q_l, rotated so that N Q_l N^T is diagonal.
   Then H E^{-1} = [I, 0], and E Q_l E^T = blockdiag(H Q_l H^T, N Q_l N^T) has no cross terms: it is diagonal for
   d_y = 1 (for d_y > 1 the off-diagonal entries of H Q_l H^T are dropped). E is invertible because H Q_l H^T is
   positive definite. F' = E F E^{-1}, G' = E G, b = 0 (the data are standardised; an ARX floor's b is its
   intercept).
   Needs d_x >= d_y and H of full row rank (ValueError otherwise).
3. Transition x_t = F' x_{t-1} + G' u_t + b + A h + v_t (``transition.py``, ``mean_function="linear"``) with
   q(u) at its prior with zero mean (whitened q_mu = 0, q_sqrt = I): the GP residual h then has mean 0 and variance
   s2 at every input, so the transition mean is the LGSSM's. The GP's share of the process noise is
   g = ``gp_share`` * min_d Q'_dd (d over the states that carry noise) and the process noise q_d = Q'_dd - g.
   For ODGPSSM the kernel variance keeps its initial value s2 (order one, the data being standardised) and
   A = a V, V with orthonormal rows (V V^T = I), a = sqrt(g / s2), so that s2 A A^T = g I; for PRSSM (A = I
   fixed) the kernel variance is s2 = g. Either way the transition covariance s2 A A^T + diag q is exactly
   diag Q', so before any gradient step the model is the LGSSM in the new basis (up to the dropped off-diagonal
   noise terms for d_y > 1, and when Q < d_x, where V V^T = I is impossible and V is the first Q columns of an
   orthogonal matrix); its forecasts are the Kalman forecasts up to Monte-Carlo error. Scaling A rather than the
   kernel variance keeps the GP quick to learn: Adam moves A additively, while a tiny kernel variance would have
   to grow by orders of magnitude through its log-like parameter.
4. Observation noise R' = diag R_l; the free q(x0) is the LGSSM's stationary prior N(E m0, E P0 E^T), held
   exactly by a full q(x0) (``x0_covariance="full"``, the GP models' with a warm start: a forecast that reads
   only a few outputs, as the simulate protocol's, starts where the LGSSM's does), its diagonal by a diagonal one.
5. Inducing inputs Z: k-means (k-means++ seeding, Lloyd iterations) of the GP inputs [x'_{t-1}, u_t] built from the
   smoothed state means; ARD lengthscales = the standard deviation of each GP input dimension over those points
   (a ``lengthscale`` given to the constructor instead).
6. Every training window gets its own initial state: the smoothed marginal N(x'_s, diag P'_s) of the state before
   its first output (:class:`WarmStart.initial_states`), or the filtered one given the outputs before the window
   only (:class:`WarmStart.filtered_states`, the default fit's).
"""
from dataclasses import dataclass

import numpy as np

from .._config import POSITIVE_FLOOR
from ..baselines.arx import arx_is_stable
from ..baselines.arx_state_space import observer_form
from ..baselines.lgssm import LGSSM
from ..kalman import rts_smoother
from ..ops.linalg import symmetrise
from ..params import prior_q_sqrt
from ..transforms import positive, positive_inverse

#: The initial values (``params.INIT_VALUES``) a warm start sets from the linear model it starts from, so that the
#: GP model holds that model exactly: a constructor keyword for one of them would be ignored (PRSSM's kernel
#: ``variance`` too, which holds the GP's share of the process noise there).
WARM_START_SETS = ("process_noise", "obs_noise", "x0_var", "inducing_range")

#: Share of the smallest process-noise variance given to the GP residual's prior variance at the start.
GP_SHARE = 0.5

#: Smallest variance the warm start sets (the positive transform's floor is POSITIVE_FLOOR).
VAR_MIN = 2 * POSITIVE_FLOOR


@dataclass(frozen=True)
class WarmStart:
    """What the warm start found: the LGSSM in the emission basis and the smoothed states of the training data.

    Attributes
    ----------
    basis : (d_x, d_x)     the basis change E, x' = E x
    F, G, b : (d_x, d_x), (d_x, d_u), (d_x,)   the transition x' = F x' + G u + b (b: the ARX's intercept)
    process_var : (d_x,)   diagonal of E Q_l E^T
    obs_var : (d_y,)
    x0_mean, x0_cov : (d_x,), (d_x, d_x)   the stationary prior in the new basis
    smoothed_means, smoothed_vars : list of (T_i + 1, d_x)   x'_0..x'_T of each training sequence
    filtered_means, filtered_vars : list of (T_i + 1, d_x)   x'_s given y[:s] (0-based; row 0 the prior)
    lgssm : the fitted :class:`gpssm_np.baselines.LGSSM` (for ``kind="arx"`` the ARX's observer form)
    driven : (d_x,) bool   the states that carry process noise and so get the GP's share (step 3)
    """

    basis: np.ndarray
    F: np.ndarray
    G: np.ndarray
    b: np.ndarray
    process_var: np.ndarray
    obs_var: np.ndarray
    x0_mean: np.ndarray
    x0_cov: np.ndarray
    smoothed_means: list
    smoothed_vars: list
    filtered_means: list
    filtered_vars: list
    lgssm: LGSSM
    driven: np.ndarray

    def initial_states(self, sequence, starts):
        """(mean (n, d_x), var (n, d_x)) of the state before the windows of training sequence ``sequence`` whose
        first outputs are y[starts] (0-based)."""
        return self.smoothed_means[sequence][starts], self.smoothed_vars[sequence][starts]

    def filtered_states(self, sequence, starts):
        """(mean (n, d_x), var (n, d_x)) of the state before the windows of training sequence ``sequence`` whose first
        outputs are y[starts], given the outputs before each window only (the Kalman filter's)."""
        return self.filtered_means[sequence][starts], self.filtered_vars[sequence][starts]


def emission_basis(H, Q_l):
    """The basis change E (d_x, d_x) with H E^{-1} = [I, 0] and E Q_l E^T block diagonal for the LGSSM's emission
    matrix H and process-noise covariance Q_l (module docstring, step 2)."""
    d_y, d_x = H.shape
    if d_y > d_x:
        raise ValueError(f"dim_x: the warm start needs dim_x >= dim_y, got {d_x} < {d_y}")
    rank = np.linalg.matrix_rank(H)
    if rank < d_y:  # H has a row per output: dependent rows are outputs that move together on the training data
        raise ValueError(f"y: the linear warm start's emission matrix H has rank {rank} < dim_y = {d_y}: the outputs "
                         "are linearly dependent on the training data (one a copy or a combination of others); drop "
                         "the redundant outputs, or use init='random'")
    if d_x == d_y:
        return H.copy()
    _, _, vt = np.linalg.svd(H @ Q_l)
    N = vt[d_y:]  # rows span the null space of H Q_l: N Q_l H^T = 0
    _, rotation = np.linalg.eigh(N @ Q_l @ N.T)
    return np.concatenate([H, rotation.T @ N])


#: Outputs whose centred, unit-spread columns have a singular value below DEPENDENCE_RTOL times the largest are
#: linearly dependent (:func:`check_outputs`).
DEPENDENCE_RTOL = 1e-6


def check_outputs(ys):
    """ValueError naming ``y`` when the training sequences ``ys`` leave the linear floors an output they cannot hold:
    an output column constant over them (the LGSSM's emission H would lack full row rank, and there is nothing to
    forecast), or columns linearly dependent once centred (one a copy, a shift or a combination of others: H would
    lack full row rank, and the ARX's regressors would be collinear). Dependence is judged on the outputs centred and
    scaled to unit spread: a singular value below :data:`DEPENDENCE_RTOL` times the largest (a combination of the
    others to one part in a million of its spread) is dependence; the ARX floor's lag states are then too close to
    singular for its basis (:func:`whitened_basis`) and its filter, whichever floor the data would choose."""
    constant = [j for j in range(ys[0].shape[1]) if all(np.ptp(y[:, j]) == 0 for y in ys)]
    if constant:
        raise ValueError(f"y: output column(s) {constant} are constant over the training data; a linear warm start "
                         "cannot hold them (drop them, or use init='random')")
    stacked = np.concatenate(ys)
    centred = stacked - stacked.mean(axis=0)
    singular = np.linalg.svd(centred / centred.std(axis=0), compute_uv=False)
    rank = int(np.sum(singular > DEPENDENCE_RTOL * singular[0]))
    if rank < stacked.shape[1]:
        raise ValueError(f"y: the {stacked.shape[1]} outputs span only {rank} dimension(s) over the training data, to "
                         f"{DEPENDENCE_RTOL:g} of their spread: they are linearly dependent (one a copy or a "
                         "combination of others); drop the redundant outputs, or use init='random'")


def _in_emission_basis(lgssm, ys, us, basis, driven, bias_input=False):
    """The :class:`WarmStart` of a fitted ``lgssm`` in the state basis ``basis`` (None: :func:`emission_basis`).
    ``bias_input``: the LGSSM's last input is the constant 1 (``us`` then hold it), whose column of G is the
    intercept b."""
    p = lgssm.get_learned_params()
    E = emission_basis(p["H"], p["Q"]) if basis is None else basis
    E_inv = np.linalg.inv(E)
    in_basis = lambda m, P: (m @ E.T, np.einsum("ij,tjk,ik->ti", E, P, E))  # noqa: E731  (x' = E x, diagonals)
    smoothed, filtered = [], []
    for y, u in zip(ys, us):
        f = lgssm.kalman(y, u)  # x_1..x_T given y up to each; x_0: the prior
        filtered.append(in_basis(np.concatenate([p["m0"][None], f.means]), np.concatenate([p["P0"][None], f.covs])))
        smoothed.append(in_basis(*rts_smoother(p, f, p["m0"], p["P0"])[:2]))  # x_0..x_T, from the same filter
    G = E @ p["G"]
    G, b = (G[:, :-1], G[:, -1]) if bias_input else (G, np.zeros(len(E)))
    return WarmStart(basis=E, F=E @ p["F"] @ E_inv, G=G, b=b, process_var=np.diag(E @ p["Q"] @ E.T).copy(),
                     obs_var=np.diag(p["R"]).copy(), x0_mean=E @ p["m0"], x0_cov=symmetrise(E @ p["P0"] @ E.T),
                     smoothed_means=[m for m, _ in smoothed], smoothed_vars=[v for _, v in smoothed],
                     filtered_means=[m for m, _ in filtered], filtered_vars=[v for _, v in filtered], lgssm=lgssm,
                     driven=driven)


def floor_warm_start(floor, ys, us):
    """The :class:`WarmStart` of a fitted linear floor (``models/floor.py``): an ``ARX`` (any na, nb, with its
    intercept) in observer form with n = max(na, nb) blocks (``arx_state_space.observer_form``, its intercept b on
    the first block) written in the basis of :func:`whitened_basis` (the lag states' variance floor VAR_MIN set in
    that basis, so that its process noise is diagonal exactly), or an ``LGSSM`` in the emission basis. Both fitted
    with ``standardize=False`` on ``ys``, ``us`` (model units)."""
    check_outputs(ys)
    if not hasattr(floor, "coefficients"):  # an LGSSM
        return _in_emission_basis(floor, ys, us, None, np.ones(floor.spec.dim_x, dtype=bool))
    coef = floor.coefficients()
    d_y, d_u = floor.spec.dim_y, floor.spec.dim_u
    n = max(floor.na_, floor.nb_, 1)
    a, b = np.zeros((n, d_y, d_y)), np.zeros((n, d_y, d_u))
    a[:floor.na_], b[:floor.nb_] = coef["a"], coef["b"]
    F, G, H, Q, R = observer_form(a, b, floor.noise_var_, undriven_var=VAR_MIN)  # the GP model's noise floor
    bias = np.zeros(n * d_y)
    bias[:d_y] = coef["c"]
    form = LGSSM(dim_x=n * d_y, dim_y=d_y, dim_u=d_u + 1, standardize=False)
    if not arx_is_stable(floor.theta_, floor.na_):  # an order refitted on other data than it was chosen on
        F = form.stabilise(F)
    with_one = [np.concatenate([u, np.ones((len(u), 1))], axis=1) for u in us]
    data = list(zip(ys, with_one))
    form.set_learned_params({"F": F, "G": np.concatenate([G, bias[:, None]], axis=1), "H": H, "Q": Q, "R": R,
                     "m0": np.zeros(n * d_y), "P0": np.eye(n * d_y)})
    form.set_stationary_prior(data)
    E = whitened_basis(form.get_learned_params()["P0"], d_y)
    if n > 1:  # the lag states' variance floor in the new basis, so that its process noise is diagonal exactly
        E_inv = np.linalg.inv(E)
        Q[d_y:, d_y:] = 0.0
        Q += symmetrise(E_inv[:, d_y:] @ E_inv[:, d_y:].T) * VAR_MIN
        form.set_learned_params(dict(form.get_learned_params(), Q=Q)).set_stationary_prior(data)
    return _in_emission_basis(form, ys, with_one, E, np.arange(n * d_y) < d_y, bias_input=True)


def whitened_basis(P, d_y):
    r"""The basis change E (d_x, d_x) of an ARX floor's observer form (``floor_warm_start``; decision Y of
    research/ablation_plan.md): E = [C; N L^{-1}], C = [I_{d_y}, 0], P = L L^T the covariance of the observer form's
    states on the training data (its stationary prior), the rows of N orthonormal and orthogonal to the first d_y
    columns of L^{-1}.

    The first block row keeps the emission [I, 0] (H E^{-1} = [I, 0]); the lower-left block N L^{-1} [I; 0] is 0,
    so only the output states carry the ARX's process noise (no cross terms); the lower states' covariance is
    N L^{-1} P L^{-T} N^T = I. Why: the observer form's lag states are nearly collinear (their covariance's
    condition number was 2e5-5e6 on the ARX floors of the two masses' and dryer2's training halves), and a change
    dF of F written in those states is, in states of unit covariance, the change L^{-1} dF L, up to
    sqrt(cond P) times larger; Adam moves every entry of F by about its step, so a wide ARX floor's training left
    the stable region within a few dozen steps. In this basis a step of Adam is a step of the same size against
    the states' own scale. The floor's transition is the same model (x' = E x). With d_x = d_y, E = I."""
    d_x = len(P)
    if d_x == d_y:
        return np.eye(d_x)
    try:
        L_inv = np.linalg.inv(np.linalg.cholesky(P))
    except np.linalg.LinAlgError:  # outputs and inputs that (nearly) repeat one another leave a lag state no spread
        raise ValueError("y, u: the ARX floor's lag states have a singular covariance on the training data (outputs "
                         "or inputs that are nearly combinations of others); drop the redundant columns, or use "
                         "init='lgssm' or 'random'") from None
    left = np.linalg.svd(L_inv[:, :d_y])[0]
    return np.concatenate([np.eye(d_y, d_x), left[:, d_y:].T @ L_inv])


def kmeans(points, k, rng, iterations=25):
    """k centres (k, D) of ``points`` (P, D) by k-means++ seeding and Lloyd iterations; with k >= P the points
    themselves and then jittered copies of them."""
    P = len(points)
    if k >= P:
        extra = points[rng.integers(0, P, size=k - P)] + 1e-3 * rng.standard_normal((k - P, points.shape[1]))
        return np.concatenate([points, extra])
    centres = [points[rng.integers(P)]]
    dist = np.sum((points - centres[0]) ** 2, axis=1)
    for _ in range(1, k):
        centres.append(points[rng.choice(P, p=dist / dist.sum()) if dist.sum() > 0 else rng.integers(P)])
        dist = np.minimum(dist, np.sum((points - centres[-1]) ** 2, axis=1))
    centres = np.array(centres)
    for _ in range(iterations):
        labels = np.argmin(((points[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        for j in range(k):
            members = points[labels == j]
            if len(members):
                centres[j] = members.mean(axis=0)
    return centres


def gp_inputs(start, us):
    """GP inputs [x'_{t-1}, u_t] (sum_i T_i, D) from the smoothed means of each sequence and its inputs."""
    return np.concatenate([np.concatenate([m[:-1], u], axis=1) for m, u in zip(start.smoothed_means, us)])


def orthonormal_rows(d_x, Q, rng):
    """A (d_x, Q) with orthonormal rows when Q >= d_x (else orthonormal columns): A A^T = I for Q >= d_x."""
    q, r = np.linalg.qr(rng.standard_normal((max(d_x, Q), max(d_x, Q))))
    q = q * np.sign(np.diag(r))  # a uniformly distributed orthogonal matrix
    return q[:d_x, :Q]


def stationary_sqrt(cov):
    """The Cholesky factor of the stationary prior's covariance ``cov`` (d_x, d_x), with VAR_MIN on the diagonal
    only when it is not positive definite in floating point (the prior is then kept exactly otherwise)."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return np.linalg.cholesky(cov + VAR_MIN * np.eye(len(cov)))


def zero_residual_variance(spec, params):
    """The prior variance (d_x,) the GP residual adds to each state's process noise when ``params`` (unconstrained)
    hold a zero GP residual, the one :func:`initial_params` writes with ``gp_share`` 0; None otherwise.

    ODGPSSM: A = 0, so A h = 0 whatever q(u) holds, and the variance added is 0. PRSSM (A = I fixed, one GP per
    state): q(u) at its whitened prior with zero mean (q_mu = 0, q_sqrt = I), so that the residual's mean is 0 and
    its variance the kernel's k(x, x) = s2_d at every input (both kernels are stationary): each step adds
    N(0, s2_d) to state d, the model is linear Gaussian with process variance q_d + s2_d. The kernel variances must
    also be at the warm start's floor (VAR_MIN) or below, as the zero residual writes them: a warm start whose GP
    share is above that floor holds the same prior but is the start of training, which the default fit's selection
    scores with the particles of its later steps (common random numbers; ``models/default_fit.py``, stage 2)."""
    if not spec.independent:
        return np.zeros(spec.dim_x) if np.all(params["A"] == 0) else None
    at_prior = spec.whiten and np.all(params["q_mu"] == 0) and np.array_equal(params["q_sqrt"], prior_q_sqrt(spec))
    if not at_prior or np.any(params["variance"] > positive_inverse(VAR_MIN)):
        return None
    return positive(params["variance"])


def initial_params(spec, params, start, us, rng, gp_share=GP_SHARE, lengthscale=None):
    """Unconstrained parameters of a ``mean_function="linear"`` GPSSM set from ``start`` (module docstring, steps 3-5);
    ``params`` gives the names, shapes and any parameter not set here (e.g. a recognition network's). ``gp_share``
    0: a zero GP residual (A = 0 for ODGPSSM, the kernel variances at the floor for PRSSM), all of the process
    noise the linear model's: the GP model is then the linear model itself. ``lengthscale``: every ARD lengthscale's
    initial value where the user gave one (the constructor's keyword); None: the spread of each GP input (step 5).
    The lengthscales leave the transition's moments at the start unchanged (k(x, x) = s2 for any lengthscale), so
    the warm start holds the linear model either way; the noises, q(x0) and Z it sets itself
    (:data:`WARM_START_SETS`)."""
    if spec.mean_function != "linear":
        raise ValueError(f"mean_function: the LGSSM warm start needs mean_function='linear', got "
                         f"{spec.mean_function!r}")
    if not spec.whiten:
        raise ValueError("whiten: the LGSSM warm start needs the whitened q(u) (whiten=True)")
    new = dict(params)
    driven = start.driven
    g = max(gp_share * float(np.min(start.process_var[driven])), VAR_MIN) if gp_share else 0.0
    X = gp_inputs(start, us)
    centres = kmeans(X, spec.num_inducing, rng)
    new["Z"] = centres if spec.shared_inducing else np.broadcast_to(centres, params["Z"].shape).copy()
    spread = np.maximum(X.std(axis=0), 1e-3) if lengthscale is None else lengthscale
    new["lengthscale"] = np.broadcast_to(positive_inverse(spread), params["lengthscale"].shape).copy()
    new["q_mu"] = np.zeros(params["q_mu"].shape)
    new["q_sqrt"] = prior_q_sqrt(spec)
    share = np.where(driven, g, 0.0)  # the GP's prior variance on each state
    if spec.independent:
        new["variance"] = positive_inverse(np.maximum(share, VAR_MIN))
    else:
        s2 = positive(params["variance"])  # (Q,), equal entries from init_params
        new["A"] = orthonormal_rows(spec.dim_x, spec.num_latent, rng) * np.sqrt(share[:, None] / s2)
    new["F"], new["G"], new["b"] = start.F.copy(), start.G.copy(), start.b.copy()
    new["process_noise"] = positive_inverse(np.maximum(start.process_var - share, VAR_MIN))
    new["obs_noise"] = positive_inverse(np.maximum(start.obs_var, VAR_MIN))
    if spec.free_x0:
        new["x0_mean"] = start.x0_mean.copy()
        if spec.x0_covariance == "full":
            new["x0_sqrt"] = stationary_sqrt(start.x0_cov)
        else:
            new["x0_var"] = positive_inverse(np.maximum(np.diag(start.x0_cov), VAR_MIN))
    return new
