r"""DSSM: the deep Markov model of Krishnan, Shalit & Sontag (AAAI 2017), the paper's "DSSM" baseline.

Generative model (the package's time convention, ``estimator.py``): x_0 ~ p(x_0) = N(0, I) emits nothing; for
t = 1..T, with z_t = [x_{t-1}, u_t] (d_x + d_u) and each affine layer "name" written name(a) = W a + b::

    g_t = sigmoid(trans_gate_2(relu(trans_gate_1(z_t))))          (d_x,) gate
    p_t = trans_prop_2(relu(trans_prop_1(z_t)))                    (d_x,) nonlinear proposal
    m_t = (1 - g_t) * trans_lin(z_t) + g_t * p_t                   (d_x,) mean: gated linear / nonlinear mix
    s_t = softplus(trans_scale(relu(p_t))) + STD_FLOOR             (d_x,) standard deviation
    x_t | x_{t-1}, u_t ~ N(m_t, diag s_t^2)                        the "gated transition" of Krishnan et al., Sec. 5
    y_t | x_t ~ N(C x_t, diag r),  C = [I_{d_y}, 0] fixed,  r = positive(obs_noise)   (as the GPSSMs)

Inference network (the "structured" ST-R variant of the paper: q factorises as the true posterior does)::

    h_T = tanh(rnn_in([y_T, u_T])),  h_t = tanh(rnn_in([y_t, u_t]) + W_hh h_{t+1})    RNN read backwards, t = T..1
    q(x_0 | y_{1:T}, u_{1:T}) = N(x0_mean(h_1), diag(softplus(x0_var(h_1)) + VAR_FLOOR))
    c_t = (tanh(comb(x_{t-1})) + h_t) / 2                                                 combiner
    q(x_t | x_{t-1}, y_{t:T}, u_{t:T}) = N(comb_mean(c_t), diag sigma_t^2)
    sigma_t = softplus(comb_std(c_t)) + STD_FLOOR

``q_x0(y, u)`` -- what the paper protocol uses -- is q(x_0 | y_{1:T}, u_{1:T}) of the window given: the heads
x0_mean, x0_var on the RNN state h_1 after it has read the whole window backwards (as the authors' LSTM recognition
network of the GPSSMs, which also reads the window reversed). ``filter``/``forecast(y_past=...)`` start the
particle filter from q_x0 of the first ``init_window`` observed steps (``GradientTrainedModel.filter``), and a forecast
with neither x0 nor past data starts from p(x_0) = N(0, I).

ELBO of one window, with S reparameterised samples x^(s)_{0:T} ~ q (noise drawn outside the differentiated
function, by ``inference.draw_noise``)::

    ELBO = 1/S sum_s sum_t [ E_{q(x_t | x_{t-1}^(s), ...)} log N(y_t | C x_t, diag r)
                             - KL( q(x_t | x_{t-1}^(s), ...) || p(x_t | x_{t-1}^(s), u_t) ) ]  - KL( q(x_0) || N(0, I) )

The inner expectation and the KLs are in closed form given x_{t-1}^(s) (Rao-Blackwellised; the KLs as Pyro's
``TraceMeanField_ELBO``); x_t^(s) = mu_t + sigma_t eps_t then feeds the next step. The KL weighting conventions are
those of ``inference.py``: :meth:`DSSM.elbo` is c_data * sum_i ELBO_i with c_data = num_windows / B ("unbiased") or
1 / B ("paper"). The model has no global latent variable (no KL(q(u) || p(u))), so both weightings give the same
training loss, the minibatch mean of -ELBO_i (``GradientTrainedModel.minibatch_loss``, per window as for the GP
models).

Differences from Pyro's ``dmm`` example: inputs u_t enter the transition (z_t) and the RNN; the RNN is a tanh Elman
network with zero initial state (Pyro: ReLU and a learned h_0); q(x_0) is a Gaussian from the RNN rather than a
learned point x_0; the standard deviations have a small floor; no KL annealing, no normalising flows.

Parameters (unconstrained float64; H = ``hidden``, H_r = ``rnn_hidden``, D = d_x + d_u, F = d_y + d_u). Each affine
layer ``name`` has ``name_W`` (out, in) and ``name_b`` (out,):

=============  =========  ===========  =================================================================
layer          in         out          notes
=============  =========  ===========  =================================================================
trans_gate_1   D          H
trans_gate_2   H          d_x
trans_prop_1   D          H
trans_prop_2   H          d_x
trans_lin      D          d_x          starts at W = [I, 0], b = 0 (as Pyro)
trans_scale    d_x        d_x          b starts so that s_t is about ``init_process_std``
rnn_in         F          H_r          plus ``rnn_hh_W`` (H_r, H_r), the recurrent weight W_hh
comb           d_x        H_r
comb_mean      H_r        d_x
comb_std       H_r        d_x
x0_mean        H_r        d_x
x0_var         H_r        d_x
=============  =========  ===========  =================================================================

and ``obs_noise`` (d_y,), r = positive(obs_noise) (``transforms.positive``), starting at ``init_obs_var``.

Weights and biases start U(-1/sqrt(fan_in), 1/sqrt(fan_in)) unless stated otherwise.

Cost: O(T B S (H D + d_x H_r)) per evaluation. The loop over time is one Numba primitive with a hand-derived
reverse pass (``ops.dmm``; its autograd.numpy reference is ``backend="reference"``); the backward RNN, O(T B H_r^2),
stays in autograd.

Reference: R. G. Krishnan, U. Shalit, D. Sontag, "Structured inference networks for nonlinear state space models",
AAAI 2017; the Pyro ``dmm`` example (Bingham et al., JMLR 2019) for the gated transition and the combiner.
"""
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np

from .. import _validation as check
from .._init import fan_in_uniform
from ..estimator import GradientTrainedModel
from ..gp import kl_diag_standard_normal
from ..inference import draw_noise, kl_weights
from ..ops.dmm import STD_FLOOR, dmm_loop, dmm_loop_reference, dmm_pack, gated_transition
from ..transforms import positive, positive_inverse

DSSM_BACKENDS = ("fused", "reference")

#: Added to the softplus variance of q(x_0), as the recognition networks' VAR_OFFSET.
VAR_FLOOR = 1e-4

@dataclass(frozen=True)
class DSSMSpec:
    """Dimensions of a :class:`DSSM`: state, output and input sizes, transition and RNN hidden sizes."""

    dim_x: int
    dim_y: int
    dim_u: int
    hidden: int
    rnn_hidden: int

    def __post_init__(self):
        for name in ("dim_x", "dim_y", "hidden", "rnn_hidden"):  # stored as Python ints (NumPy's are no JSON type)
            object.__setattr__(self, name, check.positive_int(getattr(self, name), name))
        object.__setattr__(self, "dim_u", check.non_negative_int(self.dim_u, "dim_u"))
        if self.dim_y > self.dim_x:
            raise ValueError(f"dim_y: expected at most dim_x = {self.dim_x} (C = [I, 0]), got {self.dim_y}")


def _linear(p, layer, a):
    """a W^T + b of the layer named ``layer`` (parameters ``layer + "_W"``, ``layer + "_b"``)."""
    return anp.dot(a, p[layer + "_W"].T) + p[layer + "_b"]


def _layer_shapes(layers):
    """{name_W: (out, in), name_b: (out,)} of the layers given as (name, out, in)."""
    shapes = {}
    for name, n_out, n_in in layers:
        shapes[name + "_W"], shapes[name + "_b"] = (n_out, n_in), (n_out,)
    return shapes


def _init_layers(rng, layers):
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases of the layers given as (name, out, in)."""
    params = {}
    for name, n_out, n_in in layers:
        params[name + "_W"] = fan_in_uniform(rng, n_in, (n_out, n_in))
        params[name + "_b"] = fan_in_uniform(rng, n_in, (n_out,))
    return params


class BackwardRNN:
    """The DSSM's inference network: the backward RNN, q(x_0) heads and combiner (module docstring).

    ``dim_x``, ``dim_y``, ``dim_u`` are the model's dimensions, ``hidden`` the RNN size H_r. Methods take a plain
    dict of the model's parameters (values plain or autograd-traced).
    """

    #: The fewest steps of a window the network reads.
    min_steps = 1

    def __init__(self, dim_x, dim_y, dim_u, hidden):
        self.dim_x, self.dim_y, self.dim_u, self.hidden = dim_x, dim_y, dim_u, hidden

    def layers(self):
        """(name, out, in) of every affine layer."""
        H, dx = self.hidden, self.dim_x
        return [("rnn_in", H, self.dim_y + self.dim_u), ("comb", H, dx), ("comb_mean", dx, H), ("comb_std", dx, H),
                ("x0_mean", dx, H), ("x0_var", dx, H)]

    def param_shapes(self):
        return dict(_layer_shapes(self.layers()), rnn_hh_W=(self.hidden, self.hidden))

    def init_params(self, rng):
        return dict(_init_layers(rng, self.layers()), rnn_hh_W=fan_in_uniform(rng, self.hidden, (self.hidden,) * 2))

    def hidden_states(self, p, y, u):
        """h_1..h_T as a list of T arrays (B, H_r): the RNN over [y_t, u_t] (B, T, .) read from t = T down to 1."""
        features = np.concatenate([y, u], axis=2)
        h = _linear(p, "rnn_in", features[:, -1])
        states = [anp.tanh(h)]
        for t in range(y.shape[1] - 2, -1, -1):
            states.append(anp.tanh(_linear(p, "rnn_in", features[:, t]) + anp.dot(states[-1], p["rnn_hh_W"].T)))
        return states[::-1]

    def q_x0(self, p, h1):
        """Mean and variance (each (B, d_x)) of q(x_0 | y_{1:T}, u_{1:T}) from h_1 (B, H_r)."""
        return _linear(p, "x0_mean", h1), anp.logaddexp(0.0, _linear(p, "x0_var", h1)) + VAR_FLOOR


def dssm_elbo(params, network, y, u, noise, kl_weighting="unbiased", num_windows=None, backend="fused"):
    """c_data * sum_i ELBO_i (module docstring) of windows y (B, T, d_y), u (B, T, d_u) with ``noise`` from
    ``inference.draw_noise(rng, B, S, T, d_x, 0)`` (particle n belongs to window n // S). The loop over time is
    ``ops.dmm.dmm_loop`` (backend "fused") or its autograd.numpy reference ("reference"); both give the same
    numbers."""
    p = {name: params[name] for name in params}  # one traced look-up per parameter
    batch, T, dy = y.shape
    S = noise.eps0.shape[0] // batch
    hs = network.hidden_states(p, y, u)
    m0, v0 = network.q_x0(p, hs[0])
    x0 = anp.repeat(m0, S, axis=0) + anp.sqrt(anp.repeat(v0, S, axis=0)) * noise.eps0  # (N, d_x)
    loop = {"fused": dmm_loop, "reference": dmm_loop_reference}[backend]
    total = loop(x0, u, y, anp.stack(hs), dmm_pack(p), positive(p["obs_noise"]), noise.eps_x,
                 p["trans_gate_1_W"].shape[0], network.hidden)
    c_data, _ = kl_weights(kl_weighting, batch, T, num_windows)
    return c_data * (total / S - anp.sum(kl_diag_standard_normal(m0, v0)))


class DSSM(GradientTrainedModel):
    """Deep Markov model (Krishnan et al. 2017) with the GPSSMs' linear Gaussian emission (module docstring).

    Parameters
    ----------
    dim_x, dim_y, dim_u : int
        State, output and input dimensions (dim_u may be 0, for no inputs; dim_y <= dim_x); dim_u = 1 by default
        in every model of the package (:class:`gpssm_np.ODGPSSM` says why).
    seed : int
        Seeds the parameter initialisation (and the default training shuffle).
    standardize : bool
        ``fit`` z-scores outputs and inputs with the statistics of its data (mean and population std of each
        column) and the model then takes and returns original units (``gpssm_np.units``; the
        statistics are in ``scaling_`` and the model file); False: the model works in the units it is given.
    hidden : int
        Units H of each hidden layer of the gated transition (gate and proposal).
    rnn_hidden : int
        Units H_r of the inference RNN and combiner.
    kl_weighting : {"unbiased", "paper"}
        As ``inference.py``; both give the same training loss here (module docstring).
    init_obs_var : float
        Initial observation noise variance r.
    init_process_std : float
        Initial transition standard deviation s_t (through the bias b_s).
    backend : {"fused", "reference"}
        The ELBO's loop over time: the Numba kernel ``ops.dmm.dmm_loop`` with its hand-derived gradient, or its
        autograd.numpy reference; both give the same numbers (the fused one about twice as fast at the authors'
        configuration).

    Attributes
    ----------
    params : dict of ndarray
        Unconstrained parameters (module docstring table).
    recognition : BackwardRNN
        The inference network (its q(x_0) heads give :meth:`q_x0`).
    history_ : list of float
        Training loss per Adam step (set by :meth:`fit`).
    """

    def __init__(self, dim_x=4, dim_y=1, dim_u=1, seed=0, hidden=32, rnn_hidden=32, kl_weighting="unbiased",
                 init_obs_var=0.1, init_process_std=0.1, backend="fused", standardize=True, **unknown):
        check.keywords(unknown, DSSM.__init__)
        super().__init__(seed, standardize)
        if backend not in DSSM_BACKENDS:
            raise ValueError(f"backend: expected one of {DSSM_BACKENDS}, got {backend!r}")
        self.backend = backend
        self.spec = DSSMSpec(dim_x=dim_x, dim_y=dim_y, dim_u=dim_u, hidden=hidden, rnn_hidden=rnn_hidden)
        kl_weights(kl_weighting, 1, 1)  # validates the name
        self.kl_weighting = kl_weighting
        self.init_obs_var = check.positive_float(init_obs_var, "init_obs_var")
        self.init_process_std = check.positive_float(init_process_std, "init_process_std")
        if self.init_process_std <= STD_FLOOR:
            raise ValueError(f"init_process_std: expected a value > {STD_FLOOR}, got {init_process_std!r}")
        self.recognition = BackwardRNN(dim_x, dim_y, dim_u, rnn_hidden)
        self.params = self._init_params(np.random.default_rng(self.seed))

    def _layers(self):
        """(name, out, in) of the transition's affine layers."""
        s = self.spec
        D, H = s.dim_x + s.dim_u, s.hidden
        return [("trans_gate_1", H, D), ("trans_gate_2", s.dim_x, H), ("trans_prop_1", H, D),
                ("trans_prop_2", s.dim_x, H), ("trans_lin", s.dim_x, D), ("trans_scale", s.dim_x, s.dim_x)]

    def _start_afresh(self):
        """The random initialisation drawn from ``seed``, as construction draws it."""
        self.params = self._init_params(np.random.default_rng(self.seed))

    def _init_params(self, rng):
        s = self.spec
        params = _init_layers(rng, self._layers())
        params["trans_lin_W"] = np.eye(s.dim_x, s.dim_x + s.dim_u)
        params["trans_lin_b"] = np.zeros(s.dim_x)
        # softplus(b) + STD_FLOOR = init_process_std (the weights W_s are small); log(expm1(v)) = v + log(-expm1(-v)),
        # the second form where expm1 would overflow (the first kept where it does not: the same bits as ever)
        v = self.init_process_std - STD_FLOOR
        params["trans_scale_b"] = np.full(s.dim_x, float(np.log(np.expm1(v)) if v < 700 else v + np.log(-np.expm1(-v))))
        params["obs_noise"] = np.full(s.dim_y, float(positive_inverse(self.init_obs_var)))
        params.update(self.recognition.init_params(rng))
        return params

    def get_config(self):
        """Constructor arguments as plain JSON types: ``DSSM(**model.get_config())`` rebuilds the model (with
        freshly initialised parameters)."""
        s = self.spec
        return {"dim_x": s.dim_x, "dim_y": s.dim_y, "dim_u": s.dim_u, "seed": self.seed, "hidden": s.hidden,
                "rnn_hidden": s.rnn_hidden, "kl_weighting": self.kl_weighting, "init_obs_var": self.init_obs_var,
                "init_process_std": self.init_process_std, "backend": self.backend, "standardize": self.standardize}

    def param_shapes(self):
        """Name -> shape of every unconstrained parameter."""
        shapes = _layer_shapes(self._layers())
        shapes["obs_noise"] = (self.spec.dim_y,)
        shapes.update(self.recognition.param_shapes())
        return shapes

    # -- ELBO ------------------------------------------------------------------------------------------------
    def elbo_function(self, y, u, rng, num_samples, num_windows=None):
        """The ELBO of windows y (B, T, d_y), u (B, T, d_u) weighted as the module docstring says, as a function of
        the parameters, with noise drawn from ``rng``."""
        noise = draw_noise(rng, y.shape[0], num_samples, y.shape[1], self.spec.dim_x, 0)
        return lambda params: dssm_elbo(params, self.recognition, y, u, noise, self.kl_weighting, num_windows,
                                        self.backend)

    def transition_moments(self):
        """x_t | x_{t-1} ~ N(m_t, diag s_t^2) of the gated transition, as a function for
        ``filtering.particle_filter``: ``(x_prev (N, d_x), u_t (d_u,) or None, k) -> (mean (N, d_x), cov (N, d_x,
        d_x))``. The parameters are copied, so later training does not change the function."""
        p = self.get_learned_params()
        dx, du = self.spec.dim_x, self.spec.dim_u

        def transition(x_prev, u_t, k=None):
            x_prev = np.asarray(x_prev, dtype=np.float64)
            if x_prev.ndim != 2 or x_prev.shape[1] != dx:
                raise ValueError(f"x_prev: expected shape (N, {dx}), got {x_prev.shape}")
            u_t = np.zeros(0) if u_t is None else np.asarray(u_t, dtype=np.float64)
            if u_t.shape != (du,):
                raise ValueError(f"u_t: expected shape ({du},) (None only when dim_u = 0), got {u_t.shape}")
            mean, std = gated_transition(p, x_prev, np.broadcast_to(u_t, (len(x_prev), du)))
            return mean, std[:, :, None] ** 2 * np.eye(dx)

        return transition

    def obs_var(self):
        """Diagonal of R (d_y,)."""
        return np.asarray(positive(self.params["obs_noise"]))

    def constrained_params(self):
        """The parameters as the model uses them: the network weights and biases as they are, and R's diagonal as
        ``obs_var`` (d_y,) in place of ``obs_noise``."""
        params = self.get_learned_params()
        del params["obs_noise"]
        return dict(params, obs_var=self.obs_var())

    def _free_run(self, x0, u, rng):
        S, T = x0.shape[0], u.shape[0]
        eps = rng.standard_normal((T, S, self.spec.dim_x))
        x, states = x0, np.empty((S, T, self.spec.dim_x))
        for t in range(T):
            mean, std = gated_transition(self.params, x, np.broadcast_to(u[t], (S, u.shape[1])))
            x = states[:, t] = mean + std * eps[t]
        return states

    def _q_x0(self, y=None, u=None, full_cov=False):
        """Mean and variance (each (d_x,)) of q(x_0 | y_{1:T}, u_{1:T}): the inference network's q(x_0) heads on
        the RNN state after reading the window y (T, d_y), u (T, d_u) (model units) backwards (module
        docstring); ``full_cov``: the (diagonal) covariance (d_x, d_x) instead of the variances."""
        if y is None:
            raise ValueError("y: the DSSM's q(x0) comes from its inference network, which needs the window y")
        y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u)
        mean, var = self.recognition.q_x0(self.params, self.recognition.hidden_states(self.params, y[None],
                                                                                    u[None])[0])
        mean, var = np.asarray(mean)[0], np.asarray(var)[0]
        return mean, (np.diag(var) if full_cov else var)
