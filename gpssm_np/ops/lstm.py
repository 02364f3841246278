r"""Fused multi-layer LSTM over a batch of sequences: one autograd primitive for all layers, steps and sequences.

Forward (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000; the gate order and equations of
the common ``nn.LSTM``). Layer l = 1..L reads the sequence x^l_1..x^l_T (x^1_t = inputs[:, t], x^l_t = h^{l-1}_t)
with zero initial state h^l_0 = c^l_0 = 0. For t = 1..T::

    z_t = W_ih x_t + W_hh h_{t-1} + b                   (4H,) pre-activations, rows in gate order i, f, g, o
    i = sigmoid(z_i)   f = sigmoid(z_f)   g = tanh(z_g)   o = sigmoid(z_o)
    c_t = f * c_{t-1} + i * g
    h_t = o * tanh(c_t)

Output: the last layer's hidden state at the last step, h^L_T, shape (B, H). The sequence is read in the order it
is stored (reverse it before the call to read it backwards). The jitted code evaluates sigmoid(z) = 1 / (1 + e^-z)
(accurate for every z; e^-z = inf gives 0, and one exp costs a third of a tanh), the reference the equal
(1 + tanh(z / 2)) / 2, which raises no overflow warning in NumPy.

Reverse (back-propagation through time, layer L down to 1). With dh_t = dL/dh_t (from the layer above at the same
step, plus what flows back from step t+1) and dc_t carried back from step t+1::

    tc = tanh(c_t) ;  dc = dc_{t+1 -> t} + dh_t o (1 - tc^2)
    dz_i = dc g i (1 - i) ;  dz_f = dc c_{t-1} f (1 - f) ;  dz_g = dc i (1 - g^2) ;  dz_o = dh_t tc o (1 - o)
    carried back to step t-1:  dc f  and  W_hh^T dz
    db += dz ;  dW_hh += dz h_{t-1}^T ;  dW_ih += dz x_t^T ;  dx_t = W_ih^T dz  (into the layer below, or the inputs)

Cost O(B T L 4H (F_in + H)) per evaluation, no Python loop over time or layers. The forward pass keeps the gate
activations, c, tanh(c) and h of every layer and step (O(L T B H) memory) for the reverse pass.

Parameter layout. All weights live in one flat vector ``weights`` so that any number of layers is one autograd
argument. Layer l (F_in = F for the first layer, H above it) contributes, in this order and row-major::

    W_ih (4H, F_in)    W_hh (4H, H)    b (4H,)

4H (F_in + H + 1) numbers per layer (:func:`lstm_num_params`); rows 0:H belong to gate i, H:2H to f, 2H:3H to g,
3H:4H to o. There is a single bias per layer: a model with the two biases b_ih, b_hh of ``nn.LSTM`` maps to
b = b_ih + b_hh. :func:`lstm_unpack` and :func:`lstm_pack` convert between the flat vector and per-layer matrices.

Shapes: inputs (B, T, F) with T >= 1; weights (lstm_num_params(F, H, L),). Differentiable: inputs, weights.
"""
import math
import weakref

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from .._validation import positive_int
from ._jit import jit, to_c_f64, vjp_all_argnums


# ---------------------------------------------------------------------------------------------------------------
# Parameter layout
# ---------------------------------------------------------------------------------------------------------------
def lstm_num_params(num_features, hidden, num_layers):
    """Length of the flat weight vector of an LSTM with ``num_layers`` layers of ``hidden`` units reading
    ``num_features`` inputs per step."""
    first = 4 * hidden * (num_features + hidden + 1)
    return first + (num_layers - 1) * 4 * hidden * (2 * hidden + 1)


def lstm_unpack(weights, num_features, hidden, num_layers):
    """The flat vector as a list of (W_ih (4H, F_in), W_hh (4H, H), b (4H,)), one per layer (autograd-friendly:
    slices and reshapes only)."""
    layers = []
    offset = 0
    G = 4 * hidden
    for layer in range(num_layers):
        F_in = num_features if layer == 0 else hidden
        W_ih = anp.reshape(weights[offset:offset + G * F_in], (G, F_in))
        offset += G * F_in
        W_hh = anp.reshape(weights[offset:offset + G * hidden], (G, hidden))
        offset += G * hidden
        layers.append((W_ih, W_hh, weights[offset:offset + G]))
        offset += G
    return layers


def lstm_pack(layers):
    """Inverse of :func:`lstm_unpack`: a list of (W_ih, W_hh, b) per layer to the flat float64 vector."""
    return np.concatenate([np.ravel(np.asarray(a, dtype=np.float64)) for layer in layers for a in layer])


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy, loop over layers and time)
# ---------------------------------------------------------------------------------------------------------------
def _sigmoid_reference(z):
    return 0.5 * (anp.tanh(0.5 * z) + 1.0)


def lstm_reference(inputs, weights, hidden, num_layers=1):
    """The LSTM in plain autograd.numpy; same arguments and result as :func:`lstm`."""
    B, T, F = np.shape(inputs)
    H = hidden
    sequence = [inputs[:, t, :] for t in range(T)]  # T x (B, F_in)
    for W_ih, W_hh, b in lstm_unpack(weights, F, hidden, num_layers):
        h = anp.zeros((B, H))
        c = anp.zeros((B, H))
        outputs = []
        for x in sequence:
            z = anp.dot(x, W_ih.T) + anp.dot(h, W_hh.T) + b  # (B, 4H)
            i = _sigmoid_reference(z[:, :H])
            f = _sigmoid_reference(z[:, H:2 * H])
            g = anp.tanh(z[:, 2 * H:3 * H])
            o = _sigmoid_reference(z[:, 3 * H:])
            c = f * c + i * g
            h = o * anp.tanh(c)
            outputs.append(h)
        sequence = outputs
    return sequence[-1]


# ---------------------------------------------------------------------------------------------------------------
# Jitted forward and reverse
# ---------------------------------------------------------------------------------------------------------------
@jit
def _sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


@jit
def _layer_offsets(F, H, L):
    """Start of each layer's block in the flat weight vector."""
    offsets = np.empty(L, dtype=np.int64)
    offset = 0
    for layer in range(L):
        offsets[layer] = offset
        F_in = F if layer == 0 else H
        offset += 4 * H * (F_in + H + 1)
    return offsets


@jit
def _block(w, offset, rows, cols):
    """w[offset:offset + rows cols] as a new (rows, cols) matrix."""
    out = np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            out[r, c] = w[offset + r * cols + c]
    return out


@jit
def _lstm_fwd(X, w, H, L):
    B, T, F = X.shape
    G = 4 * H
    gates = np.empty((L, T, B, G))  # activations i, f, g, o
    C = np.empty((L, T, B, H))
    TC = np.empty((L, T, B, H))  # tanh(c)
    Hs = np.empty((L, T, B, H))
    Zt = np.empty((T, B, G))  # pre-activations of the current layer
    offsets = _layer_offsets(F, H, L)
    for layer in range(L):
        F_in = F if layer == 0 else H
        # transposed, so the inner loops run over contiguous gate rows
        WT = _block(w, offsets[layer], G, F_in).T.copy()  # (F_in, 4H)
        UT = _block(w, offsets[layer] + G * F_in, G, H).T.copy()  # (H, 4H)
        o_b = offsets[layer] + G * (F_in + H)
        # input projection of every step at once: z_t = b + W_ih x_t
        for t in range(T):
            for b in range(B):
                z = Zt[t, b]
                for r in range(G):
                    z[r] = w[o_b + r]
                for k in range(F_in):
                    xk = X[b, t, k] if layer == 0 else Hs[layer - 1, t, b, k]
                    for r in range(G):
                        z[r] += xk * WT[k, r]
        # recurrence: z_t += W_hh h_{t-1}, then the gates
        for t in range(T):
            for b in range(B):
                z = Zt[t, b]
                if t > 0:
                    for j in range(H):
                        hj = Hs[layer, t - 1, b, j]
                        for r in range(G):
                            z[r] += hj * UT[j, r]
                act = gates[layer, t, b]
                for j in range(H):
                    i = _sigmoid(z[j])
                    f = _sigmoid(z[H + j])
                    g = math.tanh(z[2 * H + j])
                    o = _sigmoid(z[3 * H + j])
                    act[j] = i
                    act[H + j] = f
                    act[2 * H + j] = g
                    act[3 * H + j] = o
                    c = i * g
                    if t > 0:
                        c += f * C[layer, t - 1, b, j]
                    tc = math.tanh(c)
                    C[layer, t, b, j] = c
                    TC[layer, t, b, j] = tc
                    Hs[layer, t, b, j] = o * tc
    return Hs[L - 1, T - 1].copy(), gates, C, TC, Hs


@jit
def _lstm_vjp(Gout, gates, C, TC, Hs, X, w, H, L):
    B, T, F = X.shape
    G = 4 * H
    gw = np.empty(w.shape)
    gX = np.zeros(X.shape)
    dH = np.zeros((T, B, H))  # dL/dh_t of the current layer arriving from above (or the output)
    dZ = np.empty((T, B, G))  # dL/dz_t of the current layer
    dh_next = np.empty((B, H))  # carried back from step t+1: W_hh^T dz_{t+1}
    dc_next = np.empty((B, H))  # carried back from step t+1: dc_{t+1} f_{t+1}
    offsets = _layer_offsets(F, H, L)
    for b in range(B):
        for j in range(H):
            dH[T - 1, b, j] = Gout[b, j]
    for layer in range(L - 1, -1, -1):
        F_in = F if layer == 0 else H
        o_hh = offsets[layer] + G * F_in
        o_b = o_hh + G * H
        W_ih = _block(w, offsets[layer], G, F_in)
        W_hh = _block(w, o_hh, G, H)
        gW_ih = np.zeros((G, F_in))
        gW_hh = np.zeros((G, H))
        gb = np.zeros(G)
        dh_next[:] = 0.0
        dc_next[:] = 0.0
        # recurrent part, backwards in time
        for t in range(T - 1, -1, -1):
            for b in range(B):
                act = gates[layer, t, b]
                dz = dZ[t, b]
                for j in range(H):
                    i = act[j]
                    f = act[H + j]
                    g = act[2 * H + j]
                    o = act[3 * H + j]
                    dh = dH[t, b, j] + dh_next[b, j]
                    tc = TC[layer, t, b, j]
                    dc = dc_next[b, j] + dh * o * (1.0 - tc * tc)
                    c_prev = C[layer, t - 1, b, j] if t > 0 else 0.0
                    dz[j] = dc * g * i * (1.0 - i)
                    dz[H + j] = dc * c_prev * f * (1.0 - f)
                    dz[2 * H + j] = dc * i * (1.0 - g * g)
                    dz[3 * H + j] = dh * tc * o * (1.0 - o)
                    dc_next[b, j] = dc * f
                if t > 0:  # z_t = ... + W_hh h_{t-1}
                    dhn = dh_next[b]
                    dhn[:] = 0.0
                    for r in range(G):
                        dr = dz[r]
                        for j in range(H):
                            dhn[j] += dr * W_hh[r, j]
        # weight gradients, and dL/dx_t = W_ih^T dz_t, which becomes dH of the layer below (or the inputs' gradient)
        for t in range(T):
            for b in range(B):
                dz = dZ[t, b]
                dx = gX[b, t] if layer == 0 else dH[t, b]
                x = X[b, t] if layer == 0 else Hs[layer - 1, t, b]
                dx[:] = 0.0
                for r in range(G):
                    dr = dz[r]
                    gb[r] += dr
                    for k in range(F_in):
                        dx[k] += dr * W_ih[r, k]
                        gW_ih[r, k] += dr * x[k]
                if t > 0:
                    h_prev = Hs[layer, t - 1, b]
                    for r in range(G):
                        dr = dz[r]
                        for j in range(H):
                            gW_hh[r, j] += dr * h_prev[j]
        gw[offsets[layer]:o_hh] = gW_ih.ravel()
        gw[o_hh:o_b] = gW_hh.ravel()
        gw[o_b:o_b + G] = gb
    return gX, gw


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
# As in rollout.py: the reverse pass reuses the activations the forward pass stored, kept here keyed by the
# identity of the primitive's output and released when the output is freed.
_TAPES = {}


def _prepare(inputs, weights, hidden, num_layers):
    """Checked C-contiguous float64 inputs and weights, and the integer sizes."""
    hidden = positive_int(hidden, "hidden")
    num_layers = positive_int(num_layers, "num_layers")
    X = to_c_f64(inputs)
    w = to_c_f64(weights)
    if X.ndim != 3 or X.shape[1] < 1:
        raise ValueError(f"inputs: expected shape (B, T, F) with T >= 1, got {X.shape}")
    size = lstm_num_params(X.shape[2], hidden, num_layers)
    if w.shape != (size,):
        raise ValueError(f"weights: expected a flat vector of lstm_num_params({X.shape[2]}, {hidden}, {num_layers}) "
                         f"= {size} numbers, got shape {w.shape}")
    return X, w, hidden, num_layers


@primitive
def lstm(inputs, weights, hidden, num_layers=1):
    """Run an L-layer LSTM over each sequence and return the last layer's final hidden state.

    Parameters
    ----------
    inputs : array (B, T, F)
        B sequences of T steps, read in stored order.
    weights : array (lstm_num_params(F, hidden, num_layers),)
        All layers' W_ih, W_hh, b, flat (layout in the module docstring).
    hidden : int
        Hidden units H per layer.
    num_layers : int
        Number of stacked layers L.

    Returns
    -------
    h : array (B, H)
        h^L_T.
    """
    X, w, H, L = _prepare(inputs, weights, hidden, num_layers)
    h, *tape = _lstm_fwd(X, w, H, L)
    key = id(h)
    _TAPES[key] = (h, tape)
    weakref.finalize(h, _TAPES.pop, key, None)
    return h


def _lstm_make_vjp(ans, inputs, weights, hidden, num_layers=1):
    def vjp(G):
        X, w, H, L = _prepare(inputs, weights, hidden, num_layers)
        stored = _TAPES.get(id(ans))
        if stored is not None and stored[0] is ans:
            tape = stored[1]
        else:  # output not produced by this module's forward (e.g. a copy): recompute the tape
            tape = _lstm_fwd(X, w, H, L)[1:]
        gX, gw = _lstm_vjp(to_c_f64(G), *tape, X, w, H, L)
        return gX.reshape(np.shape(inputs)), gw.reshape(np.shape(weights))

    return vjp


defvjp_argnums(lstm, vjp_all_argnums(_lstm_make_vjp))


def lstm_example(rng, num_layers=2):
    """Small valid arguments (inputs, weights, hidden, num_layers): B=3 sequences, T=5, F=2, H=4."""
    B, T, F, H = 3, 5, 2, 4
    weights = rng.uniform(-1.0, 1.0, size=lstm_num_params(F, H, num_layers))
    return rng.normal(size=(B, T, F)), weights, H, num_layers
