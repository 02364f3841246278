r"""Adam (Kingma & Ba 2015) on dicts of NumPy arrays.

:meth:`Adam.step` **minimises**: pass the gradients of the loss (e.g. the negative ELBO), not of the objective
to be maximised. For every parameter ``p`` with gradient ``g`` at step ``t = 1, 2, ...``::

    g <- g * min(1, clip_norm / ||G||)          (optional; ||G|| is the global norm over all gradients)
    m <- beta1 m + (1 - beta1) g
    v <- beta2 v + (1 - beta2) g^2
    p <- p - lr * s_p * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)

with s_p = 1 unless ``scales`` gives the parameter its own factor (a per-parameter step size: Adam moves each
coordinate by about lr s_p whatever the gradient's scale, so this is the one way to move some parameters more
slowly). With every s_p = 1 this is the update of ``torch.optim.Adam`` without weight decay, which the authors'
code uses with lr 0.01.
"""
import logging
import numbers

import numpy as np

from . import _validation as check

logger = logging.getLogger(__name__)


def _decay_rate(value, name):
    """``value`` as a float if it is a finite real number (not a bool) in [0, 1); ValueError naming ``name``
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name}: expected a finite number in [0.0, 1.0), got {value!r}")
    return float(value)


class Adam:
    """Adam optimiser over a dict of float64 arrays; :meth:`step` returns new arrays and minimises.

    Parameters
    ----------
    lr : float
        Step size, > 0.
    beta1, beta2 : float
        Decay rates of the first and second moment estimates, in [0, 1).
    eps : float
        Added to the square root of the bias-corrected second moment, > 0.
    clip_norm : float or None
        When set (> 0), gradients are rescaled so that their global Euclidean norm (over all arrays) is at most
        ``clip_norm`` before the moments are updated.
    scales : dict of str -> float or None
        Factors (> 0) on the step size of the named parameters (the others: 1).

    Attributes
    ----------
    t : int
        Number of steps taken so far.
    """

    def __init__(self, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, clip_norm=None, scales=None):
        self.lr = check.positive_float(lr, "lr")
        if scales is not None and not isinstance(scales, dict):
            raise ValueError(f"scales: expected a dict of parameter name -> factor, got {type(scales).__name__}")
        self.scales = {str(k): check.positive_float(v, f"scales[{k!r}]") for k, v in (scales or {}).items()}
        self.beta1 = _decay_rate(beta1, "beta1")
        self.beta2 = _decay_rate(beta2, "beta2")
        self.eps = check.positive_float(eps, "eps")
        self.clip_norm = None if clip_norm is None else check.positive_float(clip_norm, "clip_norm")
        self.t = 0
        self._m = {}
        self._v = {}

    def _checked_grads(self, params, grads):
        if not isinstance(params, dict) or not isinstance(grads, dict):
            raise ValueError(f"params, grads: expected dicts of arrays, got {type(params).__name__} and "
                             f"{type(grads).__name__}")
        if set(params) != set(grads):
            raise ValueError(f"grads: expected the same keys as params {sorted(params)}, got {sorted(grads)}")
        if self._m and set(params) != set(self._m):
            raise ValueError(f"params: expected the keys the optimiser state was built for {sorted(self._m)}, "
                             f"got {sorted(params)}")
        out = {}
        for key, p in params.items():
            if not isinstance(key, str):
                raise ValueError(f"params: expected string keys, got {key!r}")
            g = np.asarray(grads[key], dtype=np.float64)
            if g.shape != np.shape(p):
                raise ValueError(f"grads[{key!r}]: expected shape {np.shape(p)} like params[{key!r}], got {g.shape}")
            if not np.all(np.isfinite(g)):
                raise ValueError(f"grads[{key!r}]: expected finite values, got NaN or inf")
            out[key] = g
        return out

    def step(self, params, grads):
        """Take one Adam step that decreases the loss whose gradients are ``grads``.

        Parameters
        ----------
        params : dict of str -> ndarray
            Current parameter values (any shapes). Not modified.
        grads : dict of str -> ndarray
            Gradients of the loss to minimise, same keys and shapes as ``params``. Not modified.

        Returns
        -------
        dict of str -> ndarray
            New float64 parameter arrays, same keys and shapes as ``params``.
        """
        grads = self._checked_grads(params, grads)
        if self.clip_norm is not None:
            norm = float(np.sqrt(sum(np.sum(g * g) for g in grads.values())))
            if norm > self.clip_norm:
                logger.debug("Adam step %d: clipping gradient norm %.3g to %.3g", self.t + 1, norm, self.clip_norm)
                grads = {k: g * (self.clip_norm / norm) for k, g in grads.items()}
        self.t += 1
        c1 = 1.0 - self.beta1**self.t
        c2 = 1.0 - self.beta2**self.t
        new = {}
        for key, g in grads.items():
            m = self.beta1 * self._m.get(key, 0.0) + (1.0 - self.beta1) * g
            v = self.beta2 * self._v.get(key, 0.0) + (1.0 - self.beta2) * g * g
            self._m[key], self._v[key] = m, v
            step = self.lr * self.scales.get(key, 1.0)
            new[key] = np.asarray(params[key], dtype=np.float64) - step * (m / c1) / (np.sqrt(v / c2) + self.eps)
        return new

    def state_dict(self):
        """The optimiser state as plain arrays and ints, e.g. for ``np.savez(file, **opt.state_dict())``.

        Returns
        -------
        dict
            ``"t"`` (int) and, per parameter ``key``, ``"m:" + key`` and ``"v:" + key`` (copies of the moment
            arrays, shapes as the parameter). Hyperparameters are not included; pass them to the constructor.
        """
        state = {"t": int(self.t)}
        for key in self._m:
            state["m:" + key] = self._m[key].copy()
            state["v:" + key] = self._v[key].copy()
        return state

    def load_state_dict(self, state):
        """Restore a state produced by :meth:`state_dict` (also accepts the mapping ``np.load`` returns).

        Parameters
        ----------
        state : mapping
            ``"t"`` (int or 0-d integer array) and matching ``"m:<key>"`` / ``"v:<key>"`` arrays.
        """
        if "t" not in state:
            raise ValueError("state: expected a mapping with key 't' as produced by Adam.state_dict()")
        t = np.asarray(state["t"])
        if t.shape != () or not np.issubdtype(t.dtype, np.integer) or int(t) < 0:
            raise ValueError(f"state['t']: expected a non-negative integer, got {state['t']!r}")
        m, v = {}, {}
        for name in state:
            if name == "t":
                continue
            prefix, _, key = name.partition(":")
            if prefix not in ("m", "v") or not key:
                raise ValueError(f"state: unexpected key {name!r}; expected 't', 'm:<param>' or 'v:<param>'")
            (m if prefix == "m" else v)[key] = np.array(state[name], dtype=np.float64)
        if set(m) != set(v) or any(m[k].shape != v[k].shape for k in m):
            raise ValueError("state: expected an 'm:<param>' and a 'v:<param>' array of equal shape for each param")
        self.t, self._m, self._v = int(t), m, v
