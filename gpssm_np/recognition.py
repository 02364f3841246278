r"""Recognition networks for the initial state: q_zeta(x_0 | y_{1:T}, u_{1:T}) = N(m_x0, diag(S_x0)).

The paper's q_zeta(x_0) = N(m_x0, S_x0) with (m_x0, S_x0) produced by a network of the window's outputs and inputs.
Both networks end in the same two heads on a feature vector e (B, E)::

    m_x0 = e W_m^T + b_m                               (B, d_x)
    S_x0 = softplus(e W_s^T + b_s) + VAR_OFFSET        (B, d_x), diagonal covariance; b_s starts at 1.0

so the initial variance is about softplus(1) + 1e-4 = 1.3134 (docs/design.md, authors' code s5).

* :class:`LSTMRecognition` (the authors' network): the features [y_t, u_t] of the whole window are read **reversed
  in time**, t = T..1, by an L-layer unidirectional LSTM (``ops/lstm.py``) with zero initial state; e = h^L at its
  last step, i.e. after reading y_1. Parameters ``rec_lstm`` (the flat LSTM weights, layout in ops/lstm.py) and the
  heads.
* :class:`MLPRecognition` (PR-SSM style, cheaper): e = tanh(f W_h^T + b_h) with f = [y_1, u_1, ..., y_k, u_k]
  (B, k (d_y + d_u)) the first k = num_steps steps flattened time-major.

Initialisation (the common default of LSTM and linear layers): every LSTM weight and bias ~ U(-1/sqrt(H), 1/sqrt(H));
every linear weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = H for the heads; then b_s = 1.0. The
LSTM has one bias per layer (a model with two, b_ih and b_hh, maps to their sum).

Parameters (unconstrained, all float64, prefixed ``rec_`` so a model can merge them into its own dict):

=============  ===========================  ==============================================
name           shape                        meaning
=============  ===========================  ==============================================
rec_lstm       (lstm_num_params(F, H, L),)  LSTM weights, F = d_y + d_u (LSTM only)
rec_hidden_W   (H, k F)                     hidden layer weight W_h (MLP only)
rec_hidden_b   (H,)                         hidden layer bias b_h (MLP only)
rec_mean_W     (d_x, H)                     W_m
rec_mean_b     (d_x,)                       b_m
rec_var_W      (d_x, H)                     W_s
rec_var_b      (d_x,)                       b_s
=============  ===========================  ==============================================

Shapes of :meth:`q_x0`: y (B, T, d_y) or (T, d_y); u (B, T, d_u), or None when d_u = 0. Returns mean and
variance, each (B, d_x), differentiable with respect to the parameters through autograd.
"""
import autograd.numpy as anp
import numpy as np

from . import _validation
from ._init import fan_in_uniform
from .ops.lstm import lstm, lstm_num_params, lstm_reference

#: Added to the softplus of the variance head, as in the authors' code.
VAR_OFFSET = 1e-4

#: Initial bias of the variance head.
VAR_BIAS_INIT = 1.0

#: Accepted ``backend`` values of :meth:`q_x0`, those of the ELBO: "reference" runs the LSTM in autograd.numpy,
#: "fused" and "ops" use the Numba primitive of ops/lstm.py (one op covers the whole sequence either way).
BACKENDS = ("fused", "ops", "reference")


class _Recognition:
    """Shared configuration, heads and checks; subclasses supply the feature extractor."""

    kind = None

    #: The fewest steps of a window the network reads (the MLP: its num_steps).
    min_steps = 1

    def __init__(self, dim_x, dim_y, dim_u, hidden):
        self.dim_x = _validation.positive_int(dim_x, "dim_x")
        self.dim_y = _validation.positive_int(dim_y, "dim_y")
        self.dim_u = _validation.non_negative_int(dim_u, "dim_u")
        self.hidden = _validation.positive_int(hidden, "hidden")

    @property
    def num_features(self):
        """Features per time step, F = d_y + d_u."""
        return self.dim_y + self.dim_u

    # -- subclass hooks ----------------------------------------------------------------------------------------
    def _body_shapes(self):
        raise NotImplementedError

    def _init_body(self, rng):
        raise NotImplementedError

    def _features(self, params, steps, backend):
        """e (B, H) from the per-step features ``steps`` = [y_t, u_t] (B, T, F)."""
        raise NotImplementedError

    # -- public interface --------------------------------------------------------------------------------------
    def param_shapes(self):
        """Name -> shape of every parameter."""
        shapes = self._body_shapes()
        for head in ("mean", "var"):
            shapes[f"rec_{head}_W"] = (self.dim_x, self.hidden)
            shapes[f"rec_{head}_b"] = (self.dim_x,)
        return shapes

    def init_params(self, rng):
        """Initial parameters (see the module docstring); ``rng`` is a numpy Generator."""
        params = self._init_body(rng)
        for head in ("mean", "var"):
            params[f"rec_{head}_W"] = fan_in_uniform(rng, self.hidden, (self.dim_x, self.hidden))
            params[f"rec_{head}_b"] = fan_in_uniform(rng, self.hidden, (self.dim_x,))
        params["rec_var_b"] = np.full(self.dim_x, VAR_BIAS_INIT)
        return params

    def q_x0(self, params, y, u=None, backend="fused"):
        """Mean and variance (each (B, d_x)) of the diagonal Gaussian q(x0 | y, u) of every window."""
        if backend not in BACKENDS:
            raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
        y, u = _validation.sequences(y, u, self.dim_y, self.dim_u)
        e = self._features(params, np.concatenate([y, u], axis=2), backend)  # (B, H)
        mean = anp.dot(e, params["rec_mean_W"].T) + params["rec_mean_b"]
        var = anp.logaddexp(0.0, anp.dot(e, params["rec_var_W"].T) + params["rec_var_b"]) + VAR_OFFSET
        return mean, var

    def get_config(self):
        """Constructor arguments as plain JSON types, with "kind": ``NETWORKS[kind](**rest)`` rebuilds the network."""
        return {"kind": self.kind, "dim_x": self.dim_x, "dim_y": self.dim_y, "dim_u": self.dim_u,
                "hidden": self.hidden}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "kind")
        return f"{type(self).__name__}({args})"


class LSTMRecognition(_Recognition):
    """The authors' q(x0) network: ``num_layers`` stacked LSTM layers of ``hidden`` units (the authors' 2 and 32)
    over the window's [y_t, u_t], read backwards in time. State, output and input dimensions dim_x, dim_y, dim_u
    (dim_u may be 0)."""

    kind = "lstm"

    def __init__(self, dim_x, dim_y, dim_u, hidden=32, num_layers=2):
        super().__init__(dim_x, dim_y, dim_u, hidden)
        self.num_layers = _validation.positive_int(num_layers, "num_layers")

    def _body_shapes(self):
        return {"rec_lstm": (lstm_num_params(self.num_features, self.hidden, self.num_layers),)}

    def _init_body(self, rng):
        return {"rec_lstm": fan_in_uniform(rng, self.hidden, self._body_shapes()["rec_lstm"])}

    def _features(self, params, steps, backend):
        reversed_steps = steps[:, ::-1, :]  # t = T..1
        run = lstm_reference if backend == "reference" else lstm
        return run(reversed_steps, params["rec_lstm"], self.hidden, self.num_layers)

    def get_config(self):
        return dict(super().get_config(), num_layers=self.num_layers)


class MLPRecognition(_Recognition):
    """PR-SSM-style q(x0) network: one tanh layer of ``hidden`` units over the first k = ``num_steps`` steps of
    [y_t, u_t]; windows shorter than k raise a ValueError. Dimensions as in :class:`LSTMRecognition`."""

    kind = "mlp"

    def __init__(self, dim_x, dim_y, dim_u, num_steps=16, hidden=32):
        super().__init__(dim_x, dim_y, dim_u, hidden)
        self.num_steps = _validation.positive_int(num_steps, "num_steps")

    @property
    def min_steps(self):
        return self.num_steps

    def _body_shapes(self):
        return {"rec_hidden_W": (self.hidden, self.num_steps * self.num_features), "rec_hidden_b": (self.hidden,)}

    def _init_body(self, rng):
        fan_in = self.num_steps * self.num_features
        return {name: fan_in_uniform(rng, fan_in, shape) for name, shape in self._body_shapes().items()}

    def _features(self, params, steps, backend):
        batch, T, F = steps.shape
        if T < self.num_steps:
            raise ValueError(f"num_steps: the MLP recognition reads the first num_steps = {self.num_steps} steps, "
                             f"got a window of {T} steps")
        flat = steps[:, :self.num_steps, :].reshape(batch, self.num_steps * F)  # [y_1, u_1, ..., y_k, u_k]
        return anp.tanh(anp.dot(flat, params["rec_hidden_W"].T) + params["rec_hidden_b"])

    def get_config(self):
        return dict(super().get_config(), num_steps=self.num_steps)


#: Recognition networks by their ``kind``.
NETWORKS = {cls.kind: cls for cls in (LSTMRecognition, MLPRecognition)}

