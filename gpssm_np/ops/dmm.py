r"""Fused time loop of the deep Markov model's ELBO (the DSSM baseline, ``models/dssm.py``), with a hand-derived VJP.

Forward. Particle n in 0..N-1 (N = B S) belongs to window b = n // S. From x_0 = x0[n], for t = 1..T (each affine
layer "name" is name(a) = W a + b, relu(a) = max(a, 0), softplus(a) = log(1 + e^a), F = STD_FLOOR)::

    z = [x_{t-1}, u_t]
    g = sigmoid(gate_2(relu(gate_1(z))))            prop = prop_2(relu(prop_1(z)))      lin = trans_lin(z)
    mp = (1 - g) lin + g prop                        sp = softplus(trans_scale(relu(prop))) + F     p(x_t | x_{t-1})
    c = (tanh(comb(x_{t-1})) + h_t) / 2
    mq = comb_mean(c)                                sq = softplus(comb_std(c)) + F                   q(x_t | x_{t-1})
    kl = sum_d log(sp_d / sq_d) + ((sq_d^2 + (mq_d - mp_d)^2) / sp_d^2 - 1) / 2
    ll = sum_{d < d_y} -(log(2 pi r_d) + ((y_t,d - mq_d)^2 + sq_d^2) / r_d) / 2
    x_t = mq + sq eps_x[t, n]

Output: total = sum_n sum_t (ll - kl), a scalar (``dssm_elbo`` scales it). This is the loop over time that the
module ``models/dssm.py`` writes in autograd.numpy (its reference), in one primitive.

Reverse (g_x = dtotal/dx_t carried back from step t+1; ' marks the derivative of the activation)::

    dmq = g_x - e / sp^2 + (y - mq) / r        dsq = g_x eps + 1 / sq - sq / sp^2 - sq / r    (e = mq - mp; the
    dmp = e / sp^2                             dsp = -1 / sp + (sq^2 + e^2) / sp^3              r terms for d < d_y)
    dr = sum -(1 / r - ((y - mq)^2 + sq^2) / r^2) / 2
    then back through every affine layer (dW += da a_in^T, db += da, da_in = W^T da) and activation:
    dlin = dmp (1 - g),  dprop = dmp g + relu'(prop) W_s^T dsp softplus'(.),  dg = dmp (prop - lin),
    dc -> dh_t += dc / 2 and dx_{t-1} += W_c^T (dc / 2 (1 - tanh^2)),  dz -> dx_{t-1} += dz[:d_x]

How it is computed: the particles are split into blocks (``rollout.particle_blocks``); each block runs the whole
time loop, on its own kernel thread when there are several (``threads.run_blocks``). Inside a block the activations
are (features, particles) arrays, so every inner loop runs over particles and vectorises (tanh by
``_fastmath.tanh_fast``; the few sigmoids and softplus per particle and step use libm's exp, which measured faster here,
and faster to compile, than the inlined ``exp_fast``). The forward pass keeps only the states x_0..x_T (T N d_x
numbers); the reverse pass recomputes each step's activations from x_{t-1} (one more forward, cheaper than a tape
of ~120 numbers per particle and step).
Weight gradients and dh are summed per block and the blocks added in order, so the bits do not depend on the thread
count.

Parameter layout: the weights of the layers in :data:`LAYERS` order, each W (out, in) row-major then b (out,), in
one flat vector (:func:`dmm_num_params`, :func:`dmm_pack`, :func:`dmm_unpack`).

Shapes: x0 (N, d_x); U (B, T, d_u) (d_u may be 0); Y (B, T, d_y); Hs (T, B, H_r); theta (dmm_num_params,);
obs_var (d_y,); eps_x (T, N, d_x). Differentiable: x0, Hs, theta, obs_var. Cost O(T N (H (d_x + d_u) + d_x H +
d_x H_r)) forward, about twice that in reverse.
"""
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnums, primitive

from .._config import FASTMATH, FASTMATH_SUMS
from ._compile import jit
from ._fastmath import tanh_fast
from ._primitive import to_c_f64, vjp_all_argnums
from .threads import run_blocks, sum_blocks
from .rollout import particle_blocks

#: The affine layers in the order of the flat parameter vector (names as ``models/dssm.py``).
LAYERS = ("trans_gate_1", "trans_gate_2", "trans_prop_1", "trans_prop_2", "trans_lin", "trans_scale", "comb",
          "comb_mean", "comb_std")

#: Added to both softplus standard deviations (same constant as models/dssm.py).
STD_FLOOR = 1e-4

_LOG_2PI = float(np.log(2.0 * np.pi))


# ---------------------------------------------------------------------------------------------------------------
# Parameter layout
# ---------------------------------------------------------------------------------------------------------------
def layer_shapes(dim_x, dim_u, hidden, rnn_hidden):
    """(out, in) of every layer of :data:`LAYERS`."""
    D = dim_x + dim_u
    return {"trans_gate_1": (hidden, D), "trans_gate_2": (dim_x, hidden), "trans_prop_1": (hidden, D),
            "trans_prop_2": (dim_x, hidden), "trans_lin": (dim_x, D), "trans_scale": (dim_x, dim_x),
            "comb": (rnn_hidden, dim_x), "comb_mean": (dim_x, rnn_hidden), "comb_std": (dim_x, rnn_hidden)}


def dmm_num_params(dim_x, dim_u, hidden, rnn_hidden):
    """Length of the flat parameter vector."""
    return sum(o * (i + 1) for o, i in layer_shapes(dim_x, dim_u, hidden, rnn_hidden).values())


def _offsets(dim_x, dim_u, hidden, rnn_hidden):
    """int64 array (len(LAYERS), 2): start of W and of b of each layer in the flat vector."""
    offsets = np.empty((len(LAYERS), 2), dtype=np.int64)
    start = 0
    for k, (out, inp) in enumerate(layer_shapes(dim_x, dim_u, hidden, rnn_hidden).values()):
        offsets[k] = start, start + out * inp
        start += out * (inp + 1)
    return offsets


def dmm_pack(params):
    """The flat vector from a dict with ``name_W`` and ``name_b`` for every layer (autograd-traceable)."""
    return anp.concatenate([anp.ravel(params[f"{name}_{part}"]) for name in LAYERS for part in ("W", "b")])


def dmm_unpack(theta, dim_x, dim_u, hidden, rnn_hidden):
    """Inverse of :func:`dmm_pack`: {name_W: (out, in), name_b: (out,)} (autograd-traceable)."""
    params, start = {}, 0
    for name, (out, inp) in layer_shapes(dim_x, dim_u, hidden, rnn_hidden).items():
        params[f"{name}_W"] = anp.reshape(theta[start:start + out * inp], (out, inp))
        params[f"{name}_b"] = theta[start + out * inp:start + out * (inp + 1)]
        start += out * (inp + 1)
    return params


# ---------------------------------------------------------------------------------------------------------------
# Reference (autograd.numpy, loop over time)
# ---------------------------------------------------------------------------------------------------------------
def _affine(p, name, a):
    """a W^T + b of the layer ``name`` (parameters ``name + "_W"``, ``name + "_b"``)."""
    return anp.dot(a, p[name + "_W"].T) + p[name + "_b"]


def _relu(a):
    return a * (a > 0.0)  # the mask is a constant, so the gradient is one multiplication


def _softplus_reference(a):
    return anp.logaddexp(0.0, a)


def gated_transition(p, x, u):
    """Mean mp and standard deviation sp (each (N, d_x)) of p(x_t | x_{t-1}, u_t) for N states ``x`` (N, d_x) and
    inputs ``u`` (N, d_u); ``p`` a dict of the layers' parameters (plain or autograd-traced)."""
    z = anp.concatenate([x, u], axis=1)
    gate = 0.5 * (anp.tanh(0.5 * _affine(p, "trans_gate_2", _relu(_affine(p, "trans_gate_1", z)))) + 1.0)
    proposed = _affine(p, "trans_prop_2", _relu(_affine(p, "trans_prop_1", z)))
    mean = (1.0 - gate) * _affine(p, "trans_lin", z) + gate * proposed
    return mean, _softplus_reference(_affine(p, "trans_scale", _relu(proposed))) + STD_FLOOR


def combiner(p, h, x_prev):
    """Mean mq and standard deviation sq (each (N, d_x)) of q(x_t | x_{t-1}, h_t) from the RNN states h (N, H_r)
    and x_{t-1} (N, d_x)."""
    c = 0.5 * (anp.tanh(_affine(p, "comb", x_prev)) + h)
    return _affine(p, "comb_mean", c), _softplus_reference(_affine(p, "comb_std", c)) + STD_FLOOR


def dmm_loop_reference(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden):
    """``total`` of the module docstring in plain autograd.numpy; same arguments and result as :func:`dmm_loop`."""
    N, dx = np.shape(x0)
    B, T, du = np.shape(U)
    dy = np.shape(Y)[2]
    S = N // B
    p = dmm_unpack(theta, dx, du, hidden, rnn_hidden)
    C = np.eye(dy, dx)
    U_rep, Y_rep = np.repeat(U, S, axis=0), np.repeat(Y, S, axis=0)
    x, total = x0, 0.0
    for t in range(T):
        mean_p, std_p = gated_transition(p, x, U_rep[:, t])
        mean_q, std_q = combiner(p, anp.repeat(Hs[t], S, axis=0), x)
        kl = anp.log(std_p / std_q) + 0.5 * ((std_q**2 + (mean_q - mean_p) ** 2) / std_p**2 - 1.0)
        # E_q log N(y_t | C x_t, diag r) over x_t ~ q(x_t | x_{t-1}), in closed form
        resid2 = (Y_rep[:, t] - anp.dot(mean_q, C.T)) ** 2 + anp.dot(std_q**2, C.T)
        log_lik = -0.5 * (_LOG_2PI + anp.log(obs_var) + resid2 / obs_var)
        x = mean_q + std_q * eps_x[t]
        total = total + anp.sum(log_lik) - anp.sum(kl)
    return total


# ---------------------------------------------------------------------------------------------------------------
# Jitted block step, forward and reverse
# ---------------------------------------------------------------------------------------------------------------
# Layout: inside a block every activation is an array (features, L) over the block's L particles, so that each
# inner loop runs over particles and vectorises (as ops/rollout.py); the states are kept as (T + 1, d_x, L) per block.
@jit(fastmath=FASTMATH)
def _softplus(a):
    return max(a, 0.0) + math.log1p(math.exp(-abs(a)))


@jit(fastmath=FASTMATH)
def _sigmoid(a):
    return 1.0 / (1.0 + math.exp(-a))


@jit(fastmath=FASTMATH)
def _layer(out, w, offs, k, a, nl):
    """out[:, :nl] = W_k a[:, :nl] + b_k for layer k of the flat vector w (W row-major at offs[k, 0], b at
    offs[k, 1])."""
    ow, ob = offs[k, 0], offs[k, 1]
    n_in = a.shape[0]
    for o in range(out.shape[0]):
        bias = w[ob + o]
        for i in range(nl):
            out[o, i] = bias
        for j in range(n_in):
            wj = w[ow + o * n_in + j]
            for i in range(nl):
                out[o, i] += wj * a[j, i]


@jit(fastmath=FASTMATH_SUMS)
def _layer_back(da, w, gw, offs, k, a, nl, da_in, accumulate):
    """For out = W_k a + b_k with dL/dout = da (out, L): gw[W_k] += da a^T, gw[b_k] += sum da, and da_in (+)=
    W_k^T da (the sums over particles run in vector lanes: ``_config.FASTMATH_SUMS``)."""
    ow, ob = offs[k, 0], offs[k, 1]
    n_in = a.shape[0]
    if not accumulate:
        da_in[:, :nl] = 0.0
    for o in range(da.shape[0]):
        acc = 0.0
        for i in range(nl):
            acc += da[o, i]
        gw[ob + o] += acc
        for j in range(n_in):
            acc = 0.0
            for i in range(nl):
                acc += da[o, i] * a[j, i]
            gw[ow + o * n_in + j] += acc
            wj = w[ow + o * n_in + j]
            for i in range(nl):
                da_in[j, i] += wj * da[o, i]


@jit(fastmath=FASTMATH, inline=True)
def _moments(ag, lin, prop, a3, a4, mq):
    """gate g, sp, sq and e = mq - mp of one particle and state dimension (module docstring)."""
    g = _sigmoid(ag)
    sp = _softplus(a3) + STD_FLOOR
    sq = _softplus(a4) + STD_FLOOR
    return g, sp, sq, mq - ((1.0 - g) * lin + g * prop)


@jit(fastmath=FASTMATH, inline=True)
def _relu_into(out, a, nl):
    for j in range(a.shape[0]):
        for i in range(nl):
            out[j, i] = max(a[j, i], 0.0)


@jit
def _scratch(dx, du, dy, H, Hr, L):
    """The activations of one block step (module docstring names): z, a1, r1, ag, a2, r2, prop, lin, rp, a3, ac,
    c, mq, a4, and the gathered u_t, h_t, y_t of each particle."""
    return (np.empty((dx + du, L)), np.empty((H, L)), np.empty((H, L)), np.empty((dx, L)), np.empty((H, L)),
            np.empty((H, L)), np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, L)),
            np.empty((Hr, L)), np.empty((Hr, L)), np.empty((dx, L)), np.empty((dx, L)), np.empty((du, L)),
            np.empty((Hr, L)), np.empty((dy, L)))


@jit(fastmath=FASTMATH)
def _step(t, n0, nl, S, U, Y, Hs, w, offs, x, sc):
    """The activations of step t for the block's particles n0..n0+nl-1 from their states x (d_x, L), into sc."""
    z, a1, r1, ag, a2, r2, prop, lin, rp, a3, ac, c, mq, a4, ut, ht, yt = sc
    dx, du, dy = x.shape[0], ut.shape[0], yt.shape[0]
    Hr = ac.shape[0]
    for i in range(nl):  # gather the window's u_t, h_t, y_t for each particle
        b = (n0 + i) // S
        for j in range(du):
            ut[j, i] = U[b, t, j]
        for j in range(Hr):
            ht[j, i] = Hs[t, b, j]
        for j in range(dy):
            yt[j, i] = Y[b, t, j]
    for j in range(dx):
        for i in range(nl):
            z[j, i] = x[j, i]
    for j in range(du):
        for i in range(nl):
            z[dx + j, i] = ut[j, i]
    _layer(a1, w, offs, 0, z, nl)
    _relu_into(r1, a1, nl)
    _layer(ag, w, offs, 1, r1, nl)
    _layer(a2, w, offs, 2, z, nl)
    _relu_into(r2, a2, nl)
    _layer(prop, w, offs, 3, r2, nl)
    _layer(lin, w, offs, 4, z, nl)
    _relu_into(rp, prop, nl)
    _layer(a3, w, offs, 5, rp, nl)
    _layer(ac, w, offs, 6, x, nl)
    for j in range(Hr):
        for i in range(nl):
            c[j, i] = 0.5 * (tanh_fast(ac[j, i]) + ht[j, i])
    _layer(mq, w, offs, 7, c, nl)
    _layer(a4, w, offs, 8, c, nl)


@jit(fastmath=FASTMATH)
def _fwd_block(blk, n0, nl, S, x0, U, Y, Hs, w, offs, r, eps_x, X, totals, H, Hr):
    T, dx = eps_x.shape[0], x0.shape[1]
    du, dy = U.shape[2], Y.shape[2]
    L = X.shape[3]
    sc = _scratch(dx, du, dy, H, Hr, L)
    ag, lin, prop, a3, mq, a4, yt = sc[3], sc[7], sc[6], sc[9], sc[12], sc[13], sc[16]
    Xb = X[blk]
    for d in range(dx):
        for i in range(nl):
            Xb[0, d, i] = x0[n0 + i, d]
    total = 0.0
    for t in range(T):
        _step(t, n0, nl, S, U, Y, Hs, w, offs, Xb[t], sc)
        for d in range(dx):
            log_r = math.log(r[d]) if d < dy else 0.0
            for i in range(nl):
                g, sp, sq, e = _moments(ag[d, i], lin[d, i], prop[d, i], a3[d, i], a4[d, i], mq[d, i])
                value = -(math.log(sp / sq) + 0.5 * ((sq * sq + e * e) / (sp * sp) - 1.0))
                if d < dy:
                    res = yt[d, i] - mq[d, i]
                    value -= 0.5 * (_LOG_2PI + log_r + (res * res + sq * sq) / r[d])
                total += value
                Xb[t + 1, d, i] = mq[d, i] + sq * eps_x[t, n0 + i, d]
    totals[blk] = total


@jit(fastmath=FASTMATH)
def _vjp_block(blk, n0, nl, S, g_total, U, Y, Hs, w, offs, r, eps_x, X, H, Hr, gx0, gHs, gw, gr):
    T, dx = eps_x.shape[0], X.shape[2]
    du, dy = U.shape[2], Y.shape[2]
    L = X.shape[3]
    D = dx + du
    sc = _scratch(dx, du, dy, H, Hr, L)
    z, a1, r1, ag, a2, r2, prop, lin, rp, a3, ac, c, mq, a4, ut, ht, yt = sc
    gx = np.zeros((dx, L))  # dL/dx_t carried back from step t+1
    dmq, da4, da3, drp = np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, L))
    dprop, dlin, dag = np.empty((dx, L)), np.empty((dx, L)), np.empty((dx, L))
    dc, dac = np.empty((Hr, L)), np.empty((Hr, L))
    dr1, da1, dr2, da2 = np.empty((H, L)), np.empty((H, L)), np.empty((H, L)), np.empty((H, L))
    dz = np.empty((D, L))
    Xb, gwb, ghb, grb = X[blk], gw[blk], gHs[blk], gr[blk]
    for t in range(T - 1, -1, -1):
        x = Xb[t]
        _step(t, n0, nl, S, U, Y, Hs, w, offs, x, sc)  # recompute the activations of step t
        for d in range(dx):
            acc_r = 0.0
            for i in range(nl):
                gate, sp, sq, e = _moments(ag[d, i], lin[d, i], prop[d, i], a3[d, i], a4[d, i], mq[d, i])
                isp2 = 1.0 / (sp * sp)
                dmq_d = gx[d, i] - g_total * e * isp2
                dsq_d = gx[d, i] * eps_x[t, n0 + i, d] + g_total * (1.0 / sq - sq * isp2)
                dmp = g_total * e * isp2
                dsp = g_total * (-1.0 / sp + (sq * sq + e * e) * isp2 / sp)
                if d < dy:
                    res = yt[d, i] - mq[d, i]
                    dmq_d += g_total * res / r[d]
                    dsq_d -= g_total * sq / r[d]
                    acc_r -= 0.5 * g_total * (1.0 / r[d] - (res * res + sq * sq) / (r[d] * r[d]))
                dmq[d, i] = dmq_d
                da4[d, i] = dsq_d * _sigmoid(a4[d, i])  # softplus' = sigmoid
                da3[d, i] = dsp * _sigmoid(a3[d, i])
                dlin[d, i] = dmp * (1.0 - gate)
                dprop[d, i] = dmp * gate
                dag[d, i] = dmp * (prop[d, i] - lin[d, i]) * gate * (1.0 - gate)
            if d < dy:
                grb[d] += acc_r
        # q side: mq = comb_mean(c), a4 = comb_std(c), c = (tanh(comb(x)) + h) / 2
        _layer_back(dmq, w, gwb, offs, 7, c, nl, dc, False)
        _layer_back(da4, w, gwb, offs, 8, c, nl, dc, True)
        for j in range(Hr):
            for i in range(nl):
                tj = 2.0 * c[j, i] - ht[j, i]  # tanh(ac)
                dac[j, i] = 0.5 * dc[j, i] * (1.0 - tj * tj)
        for i in range(nl):
            b = (n0 + i) // S
            for j in range(Hr):
                ghb[t, b, j] += 0.5 * dc[j, i]
        # p side: a3 = trans_scale(relu(prop)), lin = trans_lin(z), prop = prop_2(relu(prop_1(z))), the gate
        _layer_back(da3, w, gwb, offs, 5, rp, nl, drp, False)
        for d in range(dx):
            for i in range(nl):
                if prop[d, i] > 0.0:
                    dprop[d, i] += drp[d, i]
        _layer_back(dlin, w, gwb, offs, 4, z, nl, dz, False)
        _layer_back(dprop, w, gwb, offs, 3, r2, nl, dr2, False)
        for j in range(H):
            for i in range(nl):
                da2[j, i] = dr2[j, i] if a2[j, i] > 0.0 else 0.0
        _layer_back(da2, w, gwb, offs, 2, z, nl, dz, True)
        _layer_back(dag, w, gwb, offs, 1, r1, nl, dr1, False)
        for j in range(H):
            for i in range(nl):
                da1[j, i] = dr1[j, i] if a1[j, i] > 0.0 else 0.0
        _layer_back(da1, w, gwb, offs, 0, z, nl, dz, True)
        # dL/dx_{t-1}: through comb(x) and through z
        _layer_back(dac, w, gwb, offs, 6, x, nl, gx, False)
        for d in range(dx):
            for i in range(nl):
                gx[d, i] += dz[d, i]
    for d in range(dx):
        for i in range(nl):
            gx0[n0 + i, d] = gx[d, i]


# Drivers: blocks first..last-1 one after the other (``threads.run_blocks`` hands them to the kernel threads).
@jit
def _fwd_blocks(first, last, L, S, x0, U, Y, Hs, w, offs, r, eps_x, X, totals, H, Hr):
    N = x0.shape[0]
    for blk in range(first, last):
        _fwd_block(blk, blk * L, min(L, N - blk * L), S, x0, U, Y, Hs, w, offs, r, eps_x, X, totals, H, Hr)


@jit
def _vjp_blocks(first, last, L, S, g_total, U, Y, Hs, w, offs, r, eps_x, X, H, Hr, gx0, gHs, gw, gr):
    N = eps_x.shape[1]
    for blk in range(first, last):
        _vjp_block(blk, blk * L, min(L, N - blk * L), S, g_total, U, Y, Hs, w, offs, r, eps_x, X, H, Hr, gx0, gHs,
                   gw, gr)


# ---------------------------------------------------------------------------------------------------------------
# Autograd primitive
# ---------------------------------------------------------------------------------------------------------------
def _check(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden):
    """Checked sizes (N, B, S, T, d_x, d_u, d_y), or a ValueError naming the argument."""
    if np.ndim(x0) != 2:
        raise ValueError(f"x0: expected shape (N, d_x), got {np.shape(x0)}")
    N, dx = np.shape(x0)
    if np.ndim(U) != 3:
        raise ValueError(f"U: expected shape (B, T, d_u), got {np.shape(U)}")
    B, T, du = np.shape(U)
    if N % B:
        raise ValueError(f"x0: expected B S rows with B = {B} windows (U), got {N}")
    if np.ndim(Y) != 3 or np.shape(Y)[:2] != (B, T) or np.shape(Y)[2] > dx:
        raise ValueError(f"Y: expected shape ({B}, {T}, d_y <= {dx}), got {np.shape(Y)}")
    dy = np.shape(Y)[2]
    checks = {"Hs": (Hs, (T, B, rnn_hidden)), "theta": (theta, (dmm_num_params(dx, du, hidden, rnn_hidden),)),
              "obs_var": (obs_var, (dy,)), "eps_x": (eps_x, (T, N, dx))}
    for name, (value, shape) in checks.items():
        if np.shape(value) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {np.shape(value)}")
    return N, B, N // B, T, dx, du, dy


def _forward(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden):
    """(total, X): X (blocks, T + 1, d_x, L) holds x_0..x_T of each block's particles for the reverse pass."""
    N, B, S, T, dx, du, dy = _check(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden)
    nb, L = particle_blocks(N)
    X = np.empty((nb, T + 1, dx, L))
    totals = np.zeros(nb)
    run_blocks(_fwd_blocks, nb, L, S, to_c_f64(x0), to_c_f64(U), to_c_f64(Y), to_c_f64(Hs),
               to_c_f64(theta), _offsets(dx, du, hidden, rnn_hidden), to_c_f64(obs_var), to_c_f64(eps_x), X,
               totals, hidden, rnn_hidden)
    return sum_blocks(totals), X


@primitive
def dmm_loop(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden):
    """sum over particles and steps of log-likelihood minus KL of the deep Markov model (module docstring).

    Parameters
    ----------
    x0 : array (N, d_x)
        Initial particles, N = B S (particle n belongs to window n // S).
    U : array (B, T, d_u)
        Inputs (data); d_u may be 0.
    Y : array (B, T, d_y)
        Outputs (data).
    Hs : array (T, B, H_r)
        The inference RNN's states h_1..h_T of each window.
    theta : array (dmm_num_params(d_x, d_u, hidden, rnn_hidden),)
        The layers' weights, flat (:func:`dmm_pack`).
    obs_var : array (d_y,)
        Observation-noise variances r.
    eps_x : array (T, N, d_x)
        Standard-normal draws of the reparameterised states.
    hidden, rnn_hidden : int
        H (transition layers) and H_r (RNN and combiner).

    Returns
    -------
    total : float
    """
    return _forward(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden)[0]


def _dmm_make_vjp(ans, x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden):
    # The states are recomputed here rather than kept from the forward call: one forward costs a third of the
    # reverse pass, and nothing has to be filed under the output (a float) for later.
    def vjp(g):
        N, B, S, T, dx, du, dy = _check(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden)
        _, X = _forward(x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden)
        nb, L = particle_blocks(N)
        gx0 = np.empty((N, dx))
        gHs, gw, gr = np.zeros((nb, T, B, rnn_hidden)), np.zeros((nb, np.size(theta))), np.zeros((nb, dy))
        run_blocks(_vjp_blocks, nb, L, S, float(g), to_c_f64(U), to_c_f64(Y), to_c_f64(Hs),
                   to_c_f64(theta), _offsets(dx, du, hidden, rnn_hidden), to_c_f64(obs_var), to_c_f64(eps_x), X,
                   hidden, rnn_hidden, gx0, gHs, gw, gr)
        return gx0, None, None, sum_blocks(gHs), sum_blocks(gw), sum_blocks(gr), None, None, None

    return vjp


defvjp_argnums(dmm_loop, vjp_all_argnums(_dmm_make_vjp))


def dmm_loop_example(rng, B=2, S=3, T=4, dim_x=3, dim_u=1, dim_y=2, hidden=5, rnn_hidden=4):
    """Small valid arguments (x0, U, Y, Hs, theta, obs_var, eps_x, hidden, rnn_hidden)."""
    N = B * S
    theta = rng.uniform(-0.8, 0.8, size=dmm_num_params(dim_x, dim_u, hidden, rnn_hidden))
    return (rng.normal(size=(N, dim_x)), rng.normal(size=(B, T, dim_u)), rng.normal(size=(B, T, dim_y)),
            np.tanh(rng.normal(size=(T, B, rnn_hidden))), theta, rng.uniform(0.2, 1.0, size=dim_y),
            rng.normal(size=(T, N, dim_x)), hidden, rnn_hidden)
