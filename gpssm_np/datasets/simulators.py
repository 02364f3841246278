r"""Synthetic state-space data: :func:`car_tracking` (Sarkka 2013, Example 4.3, a linear-Gaussian constant-velocity
model), :func:`kink` (the 1-D kink transition of Ialongo et al. 2019), random stable linear Gaussian systems
(:func:`random_linear_system`, :func:`simulate_linear`), and nonlinear plants driven by a random multi-level input
(:func:`multilevel`): :func:`cascaded_tanks`, :func:`quadruple_tanks` (two inputs, two coupled outputs),
:func:`three_tanks` (two inputs, three outputs), :func:`block_oriented` (Hammerstein and Wiener systems),
:func:`forced_oscillator` (a pendulum, a Duffing oscillator), :func:`stirred_tank_reactor` (an exothermic CSTR, two
inputs, two outputs) and :func:`two_mass` (a hardening spring, one input, two outputs).

Both use the package's time convention: ``x_0`` given, ``x_t = f(x_{t-1}) + w_t`` and ``y_t = h(x_t) + r_t`` for
``t = 1..T``, so ``x`` has ``T + 1`` rows (row 0 is ``x_0``) and ``y`` has ``T`` rows (row ``t - 1`` is ``y_t``).
"""
import dataclasses

import numpy as np

from .. import _validation as check


def _input_range(input_range, name="input_range"):
    """(low, high) of a simulator's ``input_range`` (or the range ``name``); ValueError naming it unless it is two
    numbers with 0 <= low < high."""
    try:
        low, high = (float(v) for v in input_range)
    except (TypeError, ValueError):  # not a pair of numbers
        raise ValueError(f"{name}: expected two numbers (low, high) with 0 <= low < high, got "
                         f"{input_range!r}") from None
    if not 0.0 <= low < high < np.inf:
        raise ValueError(f"{name}: expected 0 <= low < high, got {input_range!r}")
    return low, high


def _plant(T, seed, dt=None, hold=None, **stds):
    """The checked length ``T`` and the generator of ``seed`` of a simulated plant, after checking its other sizes:
    ``dt`` positive, ``hold`` a positive integer, every standard deviation in ``stds`` (a number, or one per state
    or output) non-negative; each a ValueError naming the argument."""
    T = check.positive_int(T, "T")
    rng = np.random.default_rng(check.seed(seed))
    if dt is not None:
        check.positive_float(dt, "dt")
    if hold is not None:
        check.positive_int(hold, "hold")
    for name, value in stds.items():
        for v in np.atleast_1d(np.asarray(value, dtype=object)).tolist():
            check.non_negative_float(v, name)
    return T, rng


def multilevel(rng, T, dim, low, high, hold):
    """A random multi-level input (T, dim): levels drawn uniformly in [low, high] from ``rng``, each held ``hold``
    samples, the channels independent."""
    return np.repeat(rng.uniform(low, high, size=(-(-T // hold), dim)), hold, axis=0)[:T]


@dataclasses.dataclass(frozen=True, eq=False)
class CarTracking:
    """A simulated car-tracking trajectory (Sarkka 2013, Example 4.3); see :func:`car_tracking`.

    Attributes
    ----------
    x : ndarray, shape (T + 1, 4)
        States ``[p1, p2, v1, v2]``; row 0 is ``x_0``, row t is ``x_t``.
    y : ndarray, shape (T, 2)
        Noisy positions; row ``t - 1`` is ``y_t = H x_t + r_t``.
    x0 : ndarray, shape (4,)
        Initial state.
    F : ndarray, shape (4, 4)
        Transition matrix.
    Q : ndarray, shape (4, 4)
        Process-noise covariance.
    H : ndarray, shape (2, 4)
        Observation matrix ``[I_2, 0]``.
    R : ndarray, shape (2, 2)
        Observation-noise covariance ``obs_std**2 I_2``.
    dt : float
        Sampling interval.
    u : None
        The model has no control inputs.
    """

    x: np.ndarray
    y: np.ndarray
    x0: np.ndarray
    F: np.ndarray
    Q: np.ndarray
    H: np.ndarray
    R: np.ndarray
    dt: float
    u: None = None


def car_tracking(T=120, seed=0, dt=0.1, q=1.0, obs_std=0.5):
    r"""Simulate the constant-velocity car model of Sarkka (2013), Example 4.3.

    State ``x = [p1, p2, v1, v2]``, ``x_0 = [0, 0, 1, -1]``, and for ``t = 1..T``::

        x_t = F x_{t-1} + w_t,   w_t ~ N(0, Q)
        y_t = H x_t + r_t,       r_t ~ N(0, obs_std^2 I_2)

        F = [[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]],   H = [I_2, 0]
        Q = q [[dt^3/3, 0, dt^2/2, 0], [0, dt^3/3, 0, dt^2/2], [dt^2/2, 0, dt, 0], [0, dt^2/2, 0, dt]]

    Parameters
    ----------
    T : int
        Number of transitions and observations (the ODGPSSM paper's car-tracking run uses 120).
    seed : int or None
        Seed of ``numpy.random.default_rng``; equal seeds give equal trajectories.
    dt : float
        Sampling interval, > 0.
    q : float
        Spectral density of the continuous-time white-noise acceleration, >= 0.
    obs_std : float
        Observation-noise standard deviation, >= 0.

    Returns
    -------
    CarTracking
        ``x`` of shape (T + 1, 4) including ``x_0``, ``y`` of shape (T, 2), and the model matrices.
    """
    T = check.positive_int(T, "T")
    dt = check.positive_float(dt, "dt")
    q = check.non_negative_float(q, "q")
    obs_std = check.non_negative_float(obs_std, "obs_std")
    rng = np.random.default_rng(seed)

    eye2 = np.eye(2)
    F = np.block([[eye2, dt * eye2], [np.zeros((2, 2)), eye2]])
    Q_unit = np.kron(np.array([[dt**3 / 3.0, dt**2 / 2.0], [dt**2 / 2.0, dt]]), eye2)  # Q for q = 1
    H = np.hstack([eye2, np.zeros((2, 2))])
    R = obs_std**2 * eye2
    x0 = np.array([0.0, 0.0, 1.0, -1.0])

    w = np.sqrt(q) * rng.standard_normal((T, 4)) @ np.linalg.cholesky(Q_unit).T
    r = obs_std * rng.standard_normal((T, 2))
    x = np.empty((T + 1, 4))
    x[0] = x0
    for t in range(1, T + 1):
        x[t] = F @ x[t - 1] + w[t - 1]
    y = x[1:] @ H.T + r
    return CarTracking(x=x, y=y, x0=x0, F=F, Q=q * Q_unit, H=H, R=R, dt=dt)


def kink_function(x):
    r"""The kink transition ``f(x) = 0.8 + (x + 0.2) (1 - 5 / (1 + exp(-2 x)))`` (Ialongo et al. 2019).

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, same shape as ``x``
    """
    x = np.asarray(x, dtype=np.float64)
    # 5 / (1 + exp(-2x)) = 5 * sigmoid(2x); 0.5 * (1 + tanh(x)) is the overflow-free form of sigmoid(2x)
    return 0.8 + (x + 0.2) * (1.0 - 2.5 * (1.0 + np.tanh(x)))


@dataclasses.dataclass(frozen=True, eq=False)
class Kink:
    """A simulated kink-function trajectory; see :func:`kink`.

    Attributes
    ----------
    x : ndarray, shape (T + 1, 1)
        Latent states; row 0 is ``x_0``.
    y : ndarray, shape (T, 1)
        Observations; row ``t - 1`` is ``y_t = x_t + r_t``.
    x0 : float
        Initial state.
    process_noise_std, obs_noise_std : float
        Noise standard deviations used.
    u : None
        No control inputs.
    """

    x: np.ndarray
    y: np.ndarray
    x0: float
    process_noise_std: float
    obs_noise_std: float
    u: None = None

    #: The noise-free transition, :func:`kink_function`.
    kink_function = staticmethod(kink_function)


def kink(T=120, seed=0, process_noise_std=0.1, obs_noise_std=float(np.sqrt(0.1)), x0=0.5):
    r"""Simulate the 1-D kink-function state-space model used as a GPSSM benchmark (Ialongo et al. 2019).

    For ``t = 1..T``::

        x_t = f(x_{t-1}) + w_t,   w_t ~ N(0, process_noise_std^2)
        y_t = x_t + r_t,          r_t ~ N(0, obs_noise_std^2)

    with ``f`` = :func:`kink_function`. The defaults are a choice, not a value taken from the paper:
    process-noise variance 0.01 (std 0.1), observation-noise variance 0.1 (std ~0.316) and ``x_0 = 0.5``, the
    settings of common public GPSSM kink generators. The states then stay roughly within [-3, 1.5].

    Parameters
    ----------
    T : int
        Number of transitions and observations.
    seed : int or None
        Seed of ``numpy.random.default_rng``; equal seeds give equal trajectories.
    process_noise_std, obs_noise_std : float
        Noise standard deviations, >= 0.
    x0 : float
        Initial state.

    Returns
    -------
    Kink
        ``x`` of shape (T + 1, 1) including ``x_0`` and ``y`` of shape (T, 1).
    """
    T = check.positive_int(T, "T")
    process_noise_std = check.non_negative_float(process_noise_std, "process_noise_std")
    obs_noise_std = check.non_negative_float(obs_noise_std, "obs_noise_std")
    if isinstance(x0, bool) or not isinstance(x0, (int, float, np.integer, np.floating)) or not np.isfinite(x0):
        raise ValueError(f"x0: expected a finite number, got {x0!r}")
    rng = np.random.default_rng(seed)
    w = process_noise_std * rng.standard_normal(T)
    r = obs_noise_std * rng.standard_normal(T)
    x = np.empty(T + 1)
    x[0] = x0
    for t in range(1, T + 1):
        x[t] = kink_function(x[t - 1]) + w[t - 1]
    y = x[1:] + r
    return Kink(x=x[:, None], y=y[:, None], x0=float(x0), process_noise_std=process_noise_std,
                obs_noise_std=obs_noise_std)


def random_linear_system(dim_x=4, dim_y=1, dim_u=1, seed=0, slow=True, noise_std=0.1):
    """A random stable linear Gaussian state-space model (F, G, H, Q, R) as a dict, the package's time convention.

    Poles: a random real Schur form with eigenvalue moduli in [0.85, 0.98] (``slow``) or [0.3, 0.98] (slow and
    fast); G, H standard normal; Q = noise_std^2 I, R = noise_std^2 I.
    """
    dim_x, dim_y = check.positive_int(dim_x, "dim_x"), check.positive_int(dim_y, "dim_y")
    dim_u = check.non_negative_int(dim_u, "dim_u")
    noise_std = check.positive_float(noise_std, "noise_std")  # Q and R must have a Cholesky factor
    rng = np.random.default_rng(seed)
    low = 0.85 if slow else 0.3
    blocks, k = [], 0
    while k < dim_x:
        radius = rng.uniform(low, 0.98)
        if dim_x - k >= 2 and rng.uniform() < 0.5:  # a complex pair radius e^{+-i w}
            w = rng.uniform(0.05, 0.6)
            blocks.append(radius * np.array([[np.cos(w), -np.sin(w)], [np.sin(w), np.cos(w)]]))
            k += 2
        else:
            blocks.append(np.array([[radius * rng.choice([-1.0, 1.0]) if not slow else radius]]))
            k += 1
    D = np.zeros((dim_x, dim_x))
    i = 0
    for blk in blocks:
        n = len(blk)
        D[i:i + n, i:i + n] = blk
        i += n
    V = rng.normal(size=(dim_x, dim_x))
    F = V @ D @ np.linalg.inv(V)
    return {"F": F, "G": rng.normal(size=(dim_x, dim_u)), "H": rng.normal(size=(dim_y, dim_x)),
            "Q": noise_std**2 * np.eye(dim_x), "R": noise_std**2 * np.eye(dim_y)}


def simulate_linear(system, T, seed=0, u=None):
    """(y (T, d_y), u (T, d_u), x (T + 1, d_x)) from ``system`` (:func:`random_linear_system`), x_0 = 0, inputs
    i.i.d. standard normal held for 5 steps (a random multi-level signal) unless ``u`` (T, d_u) is given."""
    T = check.positive_int(T, "T")
    rng = np.random.default_rng(check.seed(seed))
    if not isinstance(system, dict) or not {"F", "G", "H", "Q", "R"} <= set(system):
        raise ValueError(f"system: expected a dict with F, G, H, Q and R (random_linear_system), got "
                         f"{type(system).__name__}")
    F, G, H, Q, R = (np.asarray(system[k], dtype=float) for k in ("F", "G", "H", "Q", "R"))
    if u is not None:
        u = check.finite_array(check.columns(u, G.shape[1], "u"), "u", (2,))
        if u.shape != (T, G.shape[1]):
            raise ValueError(f"u: expected shape {(T, G.shape[1])} (T steps of the system's inputs), got {u.shape}")
    else:
        levels = rng.standard_normal((-(-T // 5), G.shape[1]))
        u = np.repeat(levels, 5, axis=0)[:T]
    x = np.zeros((T + 1, F.shape[0]))
    LQ, LR = np.linalg.cholesky(Q), np.linalg.cholesky(R)
    for t in range(T):
        x[t + 1] = F @ x[t] + G @ u[t] + LQ @ rng.standard_normal(F.shape[0])
    y = x[1:] @ H.T + rng.standard_normal((T, H.shape[0])) @ LR.T
    return y, u, x


def cascaded_tanks(T, seed=0, dt=2.0, process_std=0.01, obs_std=0.02):
    """Two cascaded tanks with square-root outflow (Torricelli), a nonlinear plant of the system-identification
    literature. Levels h1, h2 >= 0, input flow u >= 0 (a random multi-level signal in [0, 2] held 25 steps)::

        dh1/dt = k u - a1 sqrt(h1),   dh2/dt = a1 sqrt(h1) - a2 sqrt(h2),   y = h2 + e

    with a1 = 0.5, a2 = 0.4, k = 0.4, integrated by 10 Euler substeps per sample, process noise on the levels
    (std ``process_std`` per sample) and output noise (std ``obs_std``). Returns (y (T, 1), u (T, 1), levels
    (T + 1, 2)); the steady state for a constant u is h1 = (k u / a1)^2, h2 = (k u / a2)^2, so the gain grows with
    the input: no linear model fits every operating point."""
    T, rng = _plant(T, seed, dt=dt, process_std=process_std, obs_std=obs_std)
    a1, a2, k = 0.5, 0.4, 0.4
    u = multilevel(rng, T, 1, 0.0, 2.0, 25)
    h = np.zeros((T + 1, 2))
    h[0] = [(k * u[0, 0] / a1) ** 2, (k * u[0, 0] / a2) ** 2]
    sub = dt / 10
    for t in range(T):
        h1, h2 = h[t]
        for _ in range(10):
            q1 = a1 * np.sqrt(max(h1, 0.0))
            h1 += sub * (k * u[t, 0] - q1)
            h2 += sub * (q1 - a2 * np.sqrt(max(h2, 0.0)))
        h[t + 1] = np.maximum([h1, h2] + process_std * rng.standard_normal(2), 0.0)
    return h[1:, 1:] + obs_std * rng.standard_normal((T, 1)), u, h


#: The quadruple-tank process of Johansson (2000), IEEE Trans. Control Syst. Technol. 8(3), Table I and the
#: minimum-phase operating point P-: tank and outlet areas (cm^2), pump gains k1, k2 (cm^3 / (V s)), valve splits
#: gamma1, gamma2, level sensor gain kc (V / cm), gravity (cm / s^2).
QUADRUPLE_TANKS = {"A": (28.0, 32.0, 28.0, 32.0), "a": (0.071, 0.057, 0.071, 0.057), "k": (3.33, 3.35),
                   "gamma": (0.70, 0.60), "kc": 0.50, "g": 981.0}


def quadruple_tanks(T, seed=0, dt=5.0, process_std=0.05, obs_std=0.02, input_range=(1.0, 4.0), hold=20, u=None):
    """The quadruple-tank process (Johansson 2000), a nonlinear two-input two-output plant whose outputs are coupled
    through the upper tanks. Pump voltages v1, v2 (a random multi-level signal in ``input_range``, each level held
    ``hold`` samples, the two pumps independently; or ``u`` (T, 2) if given) fill the lower tanks directly and,
    crosswise, the upper ones::

        dh1/dt = -a1/A1 s(h1) + a3/A1 s(h3) + gamma1 k1/A1 v1     dh3/dt = -a3/A3 s(h3) + (1 - gamma2) k2/A3 v2
        dh2/dt = -a2/A2 s(h2) + a4/A2 s(h4) + gamma2 k2/A2 v2     dh4/dt = -a4/A4 s(h4) + (1 - gamma1) k1/A4 v1

    with s(h) = sqrt(2 g h) and the constants of :data:`QUADRUPLE_TANKS`; the outputs are the lower levels,
    y = kc [h1, h2] + e. Integrated by 10 Euler substeps per sample of ``dt`` seconds (the lower tanks' time
    constants are 60-90 s at P-), process noise on the levels (std ``process_std`` cm per sample), output noise
    (std ``obs_std`` V); levels start at the steady state of the first inputs. Returns (y (T, 2), u (T, 2), levels
    (T + 1, 4)). Steady-state levels grow with the square of the flows, so no linear model fits every operating
    point, and each output depends on both inputs (the upper tanks feed the other side's lower tank)."""
    T, rng = _plant(T, seed, dt=dt, hold=hold, process_std=process_std, obs_std=obs_std)
    p = QUADRUPLE_TANKS
    A, a, k, gamma = (np.array(p[key]) for key in ("A", "a", "k", "gamma"))
    low, high = _input_range(input_range)
    levels = multilevel(rng, T, 2, low, high, hold)  # drawn even when u is given: the noise stays the same
    if u is None:
        u = levels
    else:
        u = check.finite_array(u, "u", (2,))
        if u.shape != (T, 2) or np.min(u) < 0:
            raise ValueError(f"u: expected pump voltages >= 0 of shape ({T}, 2), got shape {u.shape}")
    # flows into tanks 1-4 per volt of (v1, v2): lower tanks directly, upper tanks crosswise
    inflow = np.array([[gamma[0] * k[0], 0.0], [0.0, gamma[1] * k[1]],
                       [0.0, (1 - gamma[1]) * k[1]], [(1 - gamma[0]) * k[0], 0.0]]) / A[:, None]
    root = np.sqrt(2 * p["g"])
    out = a / A * root  # outflow of each tank per sqrt(cm)
    h = np.zeros((T + 1, 4))
    flows = inflow @ u[0] * A  # steady state: upper tanks first, then the lower ones they feed
    h[0, 2:] = (flows[2:] / (a[2:] * root)) ** 2
    h[0, :2] = ((flows[:2] + flows[2:]) / (a[:2] * root)) ** 2
    sub = dt / 10
    for t in range(T):
        level = h[t].copy()
        for _ in range(10):
            drain = out * np.sqrt(np.maximum(level, 0.0))
            level = level + sub * (inflow @ u[t] - drain + np.array([A[2] / A[0] * drain[2], A[3] / A[1] * drain[3],
                                                                      0.0, 0.0]))
        h[t + 1] = np.maximum(level + process_std * rng.standard_normal(4), 0.0)
    return p["kc"] * h[1:, :2] + obs_std * rng.standard_normal((T, 2)), u, h


#: The linear part of :func:`block_oriented`: poles 0.9 exp(+-0.3 i), a lightly damped resonance.
_RESONANCE = 0.9 * np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]]), np.array([1.0, 0.5])
#: structure -> (input range, nonlinearity before the linear part, after it)
BLOCK_STRUCTURES = {"hammerstein": ((-2.0, 2.0), lambda u: np.tanh(2.0 * u), lambda x: x),
                    "wiener": ((-1.0, 1.0), lambda u: u, lambda x: np.tanh(0.8 * x))}


def block_oriented(T, seed=0, structure="hammerstein", process_std=0.02, obs_std=0.02, hold=10):
    """A block-oriented nonlinear system, one input and one output: a static nonlinearity in series with the
    second-order linear system x_t = F x_{t-1} + g v_t + w_t, F with poles 0.9 exp(+-0.3 i), g = (1, 0.5)
    (:data:`BLOCK_STRUCTURES`)::

        "hammerstein" (a saturating actuator): v_t = tanh(2 u_t), u in [-2, 2];  y_t = x_{t,1} + e_t
        "wiener" (a saturating sensor):        v_t = u_t,         u in [-1, 1];  y_t = tanh(0.8 x_{t,1}) + e_t

    u is a random multi-level signal (:func:`multilevel`, levels held ``hold`` samples), w and e Gaussian with
    standard deviations ``process_std`` (per state) and ``obs_std``; x_0 = 0. Returns (y (T, 1), u (T, 1),
    x (T + 1, 2)). Both are textbook cases where a linear model's gain is right at one amplitude only; the Wiener
    system's output saturates, so its nonlinearity is in the measurement, which a state-space model with
    y = C x must move into its transition."""
    T, rng = _plant(T, seed, hold=hold, process_std=process_std, obs_std=obs_std)
    if structure not in BLOCK_STRUCTURES:
        raise ValueError(f"structure: expected one of {tuple(BLOCK_STRUCTURES)}, got {structure!r}")
    (low, high), before, after = BLOCK_STRUCTURES[structure]
    F, g = _RESONANCE
    u = multilevel(rng, T, 1, low, high, hold)
    x = np.zeros((T + 1, 2))
    for t in range(T):
        x[t + 1] = F @ x[t] + g * before(u[t, 0]) + process_std * rng.standard_normal(2)
    return after(x[1:, :1]) + obs_std * rng.standard_normal((T, 1)), u, x


#: restoring -> (restoring force k(p), damping c, input gain b, input amplitude); the pendulum's torque stays
#: below gravity's (3 * 1.5 < 9.81), so it swings without turning over.
OSCILLATORS = {"pendulum": (lambda p: 9.81 * np.sin(p), 0.5, 3.0, 1.5),
               "duffing": (lambda p: p + 2.0 * p ** 3, 0.3, 2.0, 1.0)}


def forced_oscillator(T, seed=0, restoring="pendulum", dt=0.1, process_std=0.02, obs_std=0.02, hold=20):
    """A damped oscillator driven by a force u, its position measured: p'' = -k(p) - c p' + b u
    (:data:`OSCILLATORS`): "pendulum" k(p) = 9.81 sin p (the angle p in radians), "duffing" k(p) = p + 2 p^3
    (a hardening spring). u is a random multi-level signal in [-a, a] (:func:`multilevel`, levels held ``hold``
    samples); 10 Euler substeps per sample of ``dt``; process noise on the velocity (std ``process_std`` per sample),
    output noise (std ``obs_std``); at rest at 0 at the start. Returns (y (T, 1), u (T, 1), states (T + 1, 2) of
    position and velocity). The stiffness changes with the amplitude (softening for the pendulum, hardening for
    Duffing), so the resonance frequency moves with the input level."""
    T, rng = _plant(T, seed, dt=dt, hold=hold, process_std=process_std, obs_std=obs_std)
    if restoring not in OSCILLATORS:
        raise ValueError(f"restoring: expected one of {tuple(OSCILLATORS)}, got {restoring!r}")
    force, damping, gain, amplitude = OSCILLATORS[restoring]
    u = multilevel(rng, T, 1, -amplitude, amplitude, hold)
    states = np.zeros((T + 1, 2))
    sub = dt / 10
    for t in range(T):
        p, v = states[t]
        for _ in range(10):
            p, v = p + sub * v, v + sub * (-force(p) - damping * v + gain * u[t, 0])
        states[t + 1] = p, v + process_std * rng.standard_normal()
    return states[1:, :1] + obs_std * rng.standard_normal((T, 1)), u, states


#: Constants of :func:`three_tanks`, of the order of the laboratory three-tank rigs of the fault-diagnosis
#: literature (illustrative, not one rig's identified values): tank area (m^2), pipe cross-section (m^2), outflow
#: coefficients of the pipes 1-3, 3-2 and of tank 2's outlet, gravity (m / s^2).
THREE_TANKS = {"area": 0.0154, "pipe": 5e-5, "az13": 0.5, "az32": 0.45, "az20": 0.6, "g": 9.81}


def three_tanks(T, seed=0, dt=5.0, process_std=0.002, obs_std=0.002, input_range=(0.1e-4, 0.5e-4), hold=20):
    """Three tanks in a row, connected at the bottom by pipes: pumps fill tanks 1 and 2 (flows Q1, Q2 in m^3 / s, a
    random multi-level signal in ``input_range``, :func:`multilevel`, levels held ``hold`` samples), tank 1 drains
    into the middle tank 3, tank 3 into tank 2, and tank 2 out of the rig; all three levels are measured::

        A dh1/dt = Q1 - q13,   A dh3/dt = q13 - q32,   A dh2/dt = Q2 + q32 - q20
        q13 = az13 S sgn(h1 - h3) sqrt(2 g |h1 - h3|),   q32 = az32 S sgn(h3 - h2) sqrt(2 g |h3 - h2|),
        q20 = az20 S sqrt(2 g h2)

    (:data:`THREE_TANKS`). 10 Euler substeps per sample of ``dt`` seconds, process noise on the levels (std
    ``process_std`` m per sample), output noise (std ``obs_std`` m); empty at the start. Returns (y (T, 3) the
    levels h1, h2, h3 in m, u (T, 2) the flows in 1e-4 m^3 / s, levels (T + 1, 3)). The flows between tanks depend
    on level differences through square roots, so every output depends nonlinearly on both inputs and on the
    other levels."""
    T, rng = _plant(T, seed, dt=dt, hold=hold, process_std=process_std, obs_std=obs_std)
    low, high = _input_range(input_range)
    p = THREE_TANKS
    u = multilevel(rng, T, 2, low, high, hold)
    root = p["pipe"] * np.sqrt(2 * p["g"])

    def flow(az, difference):
        return az * root * np.sign(difference) * np.sqrt(np.abs(difference))

    h = np.zeros((T + 1, 3))
    sub = dt / 10
    for t in range(T):
        h1, h2, h3 = h[t]
        for _ in range(10):
            q13, q32, q20 = flow(p["az13"], h1 - h3), flow(p["az32"], h3 - h2), flow(p["az20"], max(h2, 0.0))
            h1, h2, h3 = (h1 + sub * (u[t, 0] - q13) / p["area"], h2 + sub * (u[t, 1] + q32 - q20) / p["area"],
                          h3 + sub * (q13 - q32) / p["area"])
        h[t + 1] = np.maximum([h1, h2, h3] + process_std * rng.standard_normal(3), 0.0)
    return h[1:] + obs_std * rng.standard_normal((T, 3)), u * 1e4, h


#: Constants of :func:`stirred_tank_reactor`, those of the exothermic CSTR of the process-control literature (the
#: first-order reaction A -> B with Arrhenius kinetics, as in Seborg, Edgar and Mellichamp's textbook and many
#: control benchmarks), per minute: flow over volume q/V (1/min), feed temperature (K), pre-exponential factor
#: (1/min), activation temperature E/R (K), heat of reaction over volumetric heat capacity -dH/(rho Cp)
#: (K m^3/kmol), heat transfer UA/(V rho Cp) (1/min).
STIRRED_TANK = {"flow": 1.0, "feed_temp": 350.0, "k0": 7.2e10, "activation": 8750.0, "heat": 209.2,
                "transfer": 2.092}


def _reactor_substeps(state, inputs, sub, count):
    """(C, T_r) after ``count`` substeps of ``sub`` minutes of :func:`stirred_tank_reactor`'s equations at fixed
    inputs (T_c, C_f); the concentration implicitly (the reaction term is stiff when the reactor is hot)."""
    p = STIRRED_TANK
    c, temp = state
    coolant, feed = inputs
    for _ in range(count):
        rate = p["k0"] * np.exp(-p["activation"] / temp)
        c = (c + sub * p["flow"] * feed) / (1.0 + sub * (p["flow"] + rate))
        temp = temp + sub * (p["flow"] * (p["feed_temp"] - temp) + p["heat"] * rate * c
                             - p["transfer"] * (temp - coolant))
    return c, temp


def stirred_tank_reactor(T, seed=0, dt=0.05, process_std=(0.001, 0.05), obs_std=(0.002, 0.1),
                         coolant_range=(295.0, 301.0), feed_range=(0.9, 1.0), hold=25):
    """A continuous stirred-tank reactor with an exothermic reaction, two inputs and two outputs: the coolant
    temperature T_c (K) and the feed concentration C_f (kmol/m^3) drive the concentration C and the temperature T_r
    in the reactor::

        dC/dt   = q/V (C_f - C) - k(T_r) C,                 k(T_r) = k0 exp(-(E/R) / T_r)
        dT_r/dt = q/V (T_f - T_r) + (-dH / rho Cp) k(T_r) C - UA / (V rho Cp) (T_r - T_c)

    (:data:`STIRRED_TANK`). Both inputs are random multi-level signals in ``coolant_range`` and ``feed_range``
    (:func:`multilevel`, levels held ``hold`` samples, independently); 10 substeps per sample of ``dt`` minutes
    (the residence time is 1 minute, 20 samples); process noise on (C, T_r) (std ``process_std`` per sample),
    output noise (std ``obs_std``); the reactor starts at the steady state of the first inputs (integrated there
    noise-free for 50 minutes). Returns (y (T, 2) = [C, T_r] + noise, u (T, 2) = [T_c, C_f], states (T + 1, 2)).
    The reaction rate grows exponentially with the temperature and heats the reactor in turn, so the gain from the
    coolant to both outputs grows with the temperature: the classic nonlinear process plant. The default ranges keep
    it on the low-temperature branch: at T_c = 302 K and C_f = 1.05 the reactor ignites (it runs away to about
    400 K and oscillates), so wider ranges may leave the regime this benchmark means."""
    T, rng = _plant(T, seed, dt=dt, hold=hold, process_std=process_std, obs_std=obs_std)
    (c_low, c_high), (f_low, f_high) = _input_range(coolant_range, "coolant_range"), _input_range(feed_range,
                                                                                                 "feed_range")
    u = multilevel(rng, T, 2, np.array([c_low, f_low]), np.array([c_high, f_high]), hold)
    sub = dt / 10
    states = np.zeros((T + 1, 2))
    states[0] = _reactor_substeps((u[0, 1], u[0, 0]), u[0], sub, int(round(50.0 / sub)))  # from cold feed
    noise = np.asarray(process_std, dtype=float)
    for t in range(T):
        states[t + 1] = np.array(_reactor_substeps(states[t], u[t], sub, 10)) + noise * rng.standard_normal(2)
    return states[1:] + np.asarray(obs_std, dtype=float) * rng.standard_normal((T, 2)), u, states


def two_mass(T, seed=0, dt=0.05, process_std=0.005, obs_std=0.01, amplitude=1.0, hold=30):
    """Two masses joined by a hardening spring, the first also tied to a wall, a force u on the first; both
    positions are measured (one input, two outputs)::

        p1'' = u - p1 - s(p1 - p2) - c p1',    p2'' = s(p1 - p2) - c p2',    s(d) = d + 2 d^3,  c = 0.3

    u is a random multi-level signal in [-``amplitude``, ``amplitude``] (:func:`multilevel`, levels held ``hold``
    samples); 10 Euler substeps per sample of ``dt``; process noise on all four states (std ``process_std`` per
    sample), output noise (std ``obs_std``); at rest at 0 at the start. Returns (y (T, 2) = [p1, p2] + noise,
    u (T, 1), states (T + 1, 4) = [p1, v1, p2, v2]). The coupling stiffens with the stretch between the masses, so
    the second output answers the first nonlinearly: a drive train or a flexible arm with a hardening joint."""
    T, rng = _plant(T, seed, dt=dt, hold=hold, process_std=process_std, obs_std=obs_std)
    amplitude = check.positive_float(amplitude, "amplitude")
    u = multilevel(rng, T, 1, -amplitude, amplitude, hold)
    states = np.zeros((T + 1, 4))
    sub = dt / 10
    for t in range(T):
        p1, v1, p2, v2 = states[t]
        for _ in range(10):
            spring = (p1 - p2) + 2.0 * (p1 - p2) ** 3
            p1, v1, p2, v2 = (p1 + sub * v1, v1 + sub * (u[t, 0] - p1 - spring - 0.3 * v1),
                              p2 + sub * v2, v2 + sub * (spring - 0.3 * v2))
        states[t + 1] = np.array([p1, v1, p2, v2]) + process_std * rng.standard_normal(4)
    return states[1:, [0, 2]] + obs_std * rng.standard_normal((T, 2)), u, states
