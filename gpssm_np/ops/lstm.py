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
(accurate for every z; e^-z = inf gives 0) and tanh(z) = (1 - e) / (1 + e), e = e^-2|z| (its Taylor series below
|z| = 1/8, where that loses relative accuracy), both with the vectorising ``_fastmath.exp_fast``
(``_fastmath.sigmoid_fast``, ``_fastmath.tanh_fast``); the reference uses (1 + tanh(z / 2)) / 2 and NumPy's tanh,
which raise no overflow warning.

Reverse (back-propagation through time, layer L down to 1). With dh_t = dL/dh_t (from the layer above at the same
step, plus what flows back from step t+1) and dc_t carried back from step t+1::

    tc = tanh(c_t) ;  dc = dc_{t+1 -> t} + dh_t o (1 - tc^2)
    dz_i = dc g i (1 - i) ;  dz_f = dc c_{t-1} f (1 - f) ;  dz_g = dc i (1 - g^2) ;  dz_o = dh_t tc o (1 - o)
    carried back to step t-1:  dc f  and  W_hh^T dz
    db += dz ;  dW_hh += dz h_{t-1}^T ;  dW_ih += dz x_t^T ;  dx_t = W_ih^T dz  (into the layer below, or the inputs)

Cost O(B T L 4H (F_in + H)) per evaluation, no Python loop over time or layers. The products that do not wait for
the recurrence (W_ih x_t for all steps; in the reverse pass dW_ih, dW_hh and W_ih^T dz_t) are one BLAS product per
layer, W_hh h_{t-1} and W_hh^T dz_t one small product per step (``_blas.gemm``, BLAS at one thread). The forward pass
keeps the gate activations, c, tanh(c) and h of every layer and step (O(L T B H) memory, reused from call to call:
``_tape.TapeStore``) for the reverse pass.

Parameter layout. All weights live in one flat vector ``weights`` so that any number of layers is one autograd
argument. Layer l (F_in = F for the first layer, H above it) contributes, in this order and row-major::

    W_ih (4H, F_in)    W_hh (4H, H)    b (4H,)

4H (F_in + H + 1) numbers per layer (:func:`lstm_num_params`); rows 0:H belong to gate i, H:2H to f, 2H:3H to g,
3H:4H to o. There is a single bias per layer: a model with the two biases b_ih, b_hh of ``nn.LSTM`` maps to
b = b_ih + b_hh. :func:`lstm_unpack` and :func:`lstm_pack` convert between the flat vector and per-layer matrices.

Shapes: inputs (B, T, F) with T >= 1; weights (lstm_num_params(F, H, L),). Differentiable: inputs, weights.
"""
import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from .._config import FASTMATH
from .._validation import positive_int
from ._blas import gemm
from ._compile import jit
from ._fastmath import sigmoid_fast, tanh_fast
from ._primitive import to_c_f64, vjp_all_argnums
from ._tape import TapeStore
from .threads import run_blocks, sum_blocks

#: Most sequences per block, the unit of work of one kernel thread (``GPSSM_NP_THREADS``); fixed by B alone, so the
#: result does not depend on the thread count. 8: the authors' batch of 16 makes two blocks, one per core here.
SEQUENCE_BLOCK = 8


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
# Layout: every per-layer array is batch-major like the inputs, (B, T, .), so that "all steps of all sequences" is
# one (B T) x . matrix for BLAS, and the rows of one step are T apart (BLAS's leading dimension).
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


@jit(fastmath=FASTMATH)
def _lstm_fwd_block(b0, b1, X, w, H, L, gates, C, TC, Hs, Z):
    # Sequences b0..b1-1. Tape (filled here): gates (L, B, T, 4H) activations i, f, g, o; C, TC, Hs (L, B, T, H)
    # c, tanh(c), h. Scratch: Z (B, T, 4H) pre-activations of the current layer.
    B, T, F = X.shape
    nb = b1 - b0
    G = 4 * H
    offsets = _layer_offsets(F, H, L)
    for layer in range(L):
        F_in = F if layer == 0 else H
        o_hh = offsets[layer] + G * F_in
        o_b = o_hh + G * H
        # z = W_ih x_t + b for every step of the block's sequences at once (inputs: X, or the layer below's h)
        if layer == 0:
            gemm(False, True, nb * T, G, F_in, 1.0, X, b0 * T * F_in, F_in, w, offsets[layer], F_in, 0.0, Z,
                 b0 * T * G, G)
        else:
            gemm(False, True, nb * T, G, F_in, 1.0, Hs[layer - 1], b0 * T * F_in, F_in, w, offsets[layer], F_in, 0.0,
                 Z, b0 * T * G, G)
        for b in range(b0, b1):
            for t in range(T):
                z = Z[b, t]
                for r in range(G):
                    z[r] += w[o_b + r]
        # recurrence: z_t += W_hh h_{t-1} (rows b of step t - 1 are T H apart), then the gates
        for t in range(T):
            if t > 0:
                gemm(False, True, nb, G, H, 1.0, Hs[layer], (b0 * T + t - 1) * H, T * H, w, o_hh, H, 1.0, Z,
                     (b0 * T + t) * G, T * G)
            for b in range(b0, b1):
                # short loops over one or two arrays each, indexed in place (no views), so that they vectorise
                for r in range(2 * H):
                    gates[layer, b, t, r] = sigmoid_fast(Z[b, t, r])  # i, f
                for r in range(2 * H, 3 * H):
                    gates[layer, b, t, r] = tanh_fast(Z[b, t, r])  # g
                for r in range(3 * H, G):
                    gates[layer, b, t, r] = sigmoid_fast(Z[b, t, r])  # o
                for j in range(H):
                    C[layer, b, t, j] = gates[layer, b, t, j] * gates[layer, b, t, 2 * H + j]
                if t > 0:
                    for j in range(H):
                        C[layer, b, t, j] += gates[layer, b, t, H + j] * C[layer, b, t - 1, j]
                for j in range(H):
                    TC[layer, b, t, j] = tanh_fast(C[layer, b, t, j])
                for j in range(H):
                    Hs[layer, b, t, j] = gates[layer, b, t, 3 * H + j] * TC[layer, b, t, j]


@jit(fastmath=FASTMATH)
def _lstm_vjp_block(blk, b0, b1, Gout, gates, C, TC, Hs, X, w, H, L, gw, gX, dH, dZ, dh_next, dc_next):
    # Sequences b0..b1-1; the weight gradient of the block goes to gw[blk]. Scratch (rows b0..b1-1 used): dH
    # (B, T, H) dL/dh_t of the current layer from above (or the output), dZ (B, T, 4H) dL/dz_t, dh_next (B, H)
    # W_hh^T dz_{t+1} and dc_next (B, H) dc_{t+1} f_{t+1}, both carried back from step t+1.
    B, T, F = X.shape
    nb = b1 - b0
    G = 4 * H
    offsets = _layer_offsets(F, H, L)
    for b in range(b0, b1):
        for t in range(T - 1):
            for j in range(H):
                dH[b, t, j] = 0.0
        for j in range(H):
            dH[b, T - 1, j] = Gout[b, j]
    for layer in range(L - 1, -1, -1):
        F_in = F if layer == 0 else H
        o_hh = offsets[layer] + G * F_in
        o_b = o_hh + G * H
        dh_next[b0:b1, :] = 0.0
        dc_next[b0:b1, :] = 0.0
        # recurrent part, backwards in time
        for t in range(T - 1, -1, -1):
            for b in range(b0, b1):
                act = gates[layer, b, t]
                dz = dZ[b, t]
                tc_row = TC[layer, b, t]
                dh_row = dH[b, t]
                for j in range(H):
                    i = act[j]
                    f = act[H + j]
                    g = act[2 * H + j]
                    o = act[3 * H + j]
                    dh = dh_row[j] + dh_next[b, j]
                    tc = tc_row[j]
                    dc = dc_next[b, j] + dh * o * (1.0 - tc * tc)
                    c_prev = C[layer, b, t - 1, j] if t > 0 else 0.0
                    dz[j] = dc * g * i * (1.0 - i)
                    dz[H + j] = dc * c_prev * f * (1.0 - f)
                    dz[2 * H + j] = dc * i * (1.0 - g * g)
                    dz[3 * H + j] = dh * tc * o * (1.0 - o)
                    dc_next[b, j] = dc * f
            if t > 0:  # z_t = ... + W_hh h_{t-1}:  dh_{t-1} += W_hh^T dz_t
                gemm(False, False, nb, H, G, 1.0, dZ, (b0 * T + t) * G, T * G, w, o_hh, H, 0.0, dh_next, b0 * H, H)
        # weight gradients: dW_ih = sum dz_t x_t^T, dW_hh = sum dz_t h_{t-1}^T, db = sum dz_t
        g_row = gw[blk]
        if layer == 0:
            gemm(True, False, G, F_in, nb * T, 1.0, dZ, b0 * T * G, G, X, b0 * T * F_in, F_in, 0.0, g_row,
                 offsets[layer], F_in)
        else:
            gemm(True, False, G, F_in, nb * T, 1.0, dZ, b0 * T * G, G, Hs[layer - 1], b0 * T * F_in, F_in, 0.0,
                 g_row, offsets[layer], F_in)
        for b in range(b0, b1):
            gemm(True, False, G, H, T - 1, 1.0, dZ, b * T * G + G, G, Hs[layer], b * T * H, H, 1.0, g_row, o_hh, H)
        for b in range(b0, b1):
            for t in range(T):
                dz = dZ[b, t]
                for r in range(G):
                    g_row[o_b + r] += dz[r]
        # dL/dx_t = W_ih^T dz_t: the inputs' gradient, or dH of the layer below
        if layer == 0:
            gemm(False, False, nb * T, F_in, G, 1.0, dZ, b0 * T * G, G, w, offsets[layer], F_in, 0.0, gX,
                 b0 * T * F_in, F_in)
        else:
            gemm(False, False, nb * T, F_in, G, 1.0, dZ, b0 * T * G, G, w, offsets[layer], F_in, 0.0, dH,
                 b0 * T * F_in, F_in)


# Drivers: blocks of sequences first..last-1 one after the other (``threads.run_blocks`` hands them to the threads).
@jit
def _fwd_blocks(first, last, S, X, w, H, L, gates, C, TC, Hs, Z):
    B = X.shape[0]
    for blk in range(first, last):
        _lstm_fwd_block(blk * S, min(B, blk * S + S), X, w, H, L, gates, C, TC, Hs, Z)


@jit
def _vjp_blocks(first, last, S, Gout, gates, C, TC, Hs, X, w, H, L, gw, gX, dH, dZ, dh_next, dc_next):
    B = X.shape[0]
    for blk in range(first, last):
        _lstm_vjp_block(blk, blk * S, min(B, blk * S + S), Gout, gates, C, TC, Hs, X, w, H, L, gw, gX, dH, dZ,
                        dh_next, dc_next)


def sequence_blocks(B):
    """(number of blocks, sequences per block) for B sequences: equal blocks of at most SEQUENCE_BLOCK."""
    nb = max(1, -(-B // SEQUENCE_BLOCK))
    return nb, max(1, -(-B // nb))


def _lstm_vjp(Gout, gates, C, TC, Hs, X, w, H, L):
    """(dL/dinputs, dL/dweights): the blocks' weight gradients are added in block order (bits independent of the
    thread count)."""
    B, T, F = X.shape
    nb, S = sequence_blocks(B)
    gw = np.zeros((nb, w.shape[0]))
    gX = np.empty(X.shape)
    scratch = (np.empty((B, T, H)), np.empty((B, T, 4 * H)), np.empty((B, H)), np.empty((B, H)))
    run_blocks(_vjp_blocks, nb, S, Gout, gates, C, TC, Hs, X, w, H, L, gw, gX, *scratch)
    return gX, sum_blocks(gw)


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
# As in rollout.py: the reverse pass reuses the activations the forward pass stored, kept in a TapeStore keyed by
# the identity of the primitive's output, and pooled for the next call once the output is freed.
_TAPES = TapeStore()


def _forward(X, w, H, L):
    """h^L_T and the tape (gates, C, TC, Hs and the scratch Z of :func:`_lstm_fwd`)."""
    B, T, F = X.shape
    tape = _TAPES.acquire(((L, B, T, 4 * H), (L, B, T, H), (L, B, T, H), (L, B, T, H), (B, T, 4 * H)))
    nb, S = sequence_blocks(B)
    run_blocks(_fwd_blocks, nb, S, X, w, H, L, *tape)
    return tape[3][L - 1, :, T - 1].copy(), tape


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
    h, tape = _forward(X, w, H, L)
    _TAPES.attach(h, tape)
    return h


def _lstm_make_vjp(ans, inputs, weights, hidden, num_layers=1):
    def vjp(G):
        X, w, H, L = _prepare(inputs, weights, hidden, num_layers)
        with _TAPES.reverse_tape(ans, lambda: _forward(X, w, H, L)[1]) as tape:
            gX, gw = _lstm_vjp(to_c_f64(G), *tape[:4], X, w, H, L)
        return gX.reshape(np.shape(inputs)), gw.reshape(np.shape(weights))

    return vjp


defvjp_argnums(lstm, vjp_all_argnums(_lstm_make_vjp))


def lstm_example(rng, num_layers=2):
    """Small valid arguments (inputs, weights, hidden, num_layers): B=3 sequences, T=5, F=2, H=4."""
    B, T, F, H = 3, 5, 2, 4
    weights = rng.uniform(-1.0, 1.0, size=lstm_num_params(F, H, num_layers))
    return rng.normal(size=(B, T, F)), weights, H, num_layers
