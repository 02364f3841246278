"""The default fit on eight more plants that no decision of research/ablation_plan.md saw (a check, deciding
nothing; research/unseen_plants.py holds the first seven, which later decisions' held-out cuts used).

Eight simulators written for this check, each with its dynamics, noise and input fixed before any model was fitted
to it (research/ablation_plan.md, "the default on eight plants no decision saw"). 1000 steps (the short plant 300),
the first half trains; the default ``ODGPSSM(dim_y, dim_u, seed)`` beside ``ARX()`` and ``LGSSM(dim_x="auto")``,
scored as research/defaults_check.py scores its cells (causal, simulate, envi).

* ``lag8``: a linear ARX with eight output and input lags (poles at radii 0.95, 0.9, 0.8, 0.7), equation noise
  0.02: the floor must hold eight lags (issue #28's single-output example).
* ``tanh_feedback``: y' = 0.5 y + 0.3 y_prev + 1.2 tanh(u - 0.8 y) + 0.03 e, measured with noise 0.02.
* ``backlash``: the input through a backlash of width 0.4, then a lightly damped resonance (poles 0.95 e^{+-0.3i}).
* ``mimo_saturation``: three states, two inputs clipped at +-0.7, two outputs; inputs in [-1.5, 1.5] held 8 steps.
* ``piecewise``: two states whose decay is 0.92 where the first state is positive, 0.6 where it is not.
* ``noisy_resonance``: a linear resonance with process noise 0.3 and measurement noise 0.02 (a state-space model's
  case rather than an ARX's).
* ``short_sine``: y' = 0.8 y + sin(2 u) + 0.02 e, 300 steps (150 train).
* ``drifting_gain``: y' = 0.85 y + g_t u + 0.02 e, the gain g_t drifting as 1 + 0.3 sin(2 pi t / 700).

Run: python research/fresh_plants.py OUT.jsonl [--seeds 0 ...] [--data name ...] [--models arx ...]; ``OUT [OUT ...]
--summary`` prints the Markdown table (a later file's row replacing an earlier one's).
This script is the research record's; nothing in the package imports it.
"""
import argparse

import numpy as np

import gpssm_np as gp
import unseen_plants
from defaults_check import run_cells


def held_inputs(rng, T, dim, low, high, hold):
    """Piecewise-constant inputs (T, dim): a uniform level in [low, high] held ``hold`` steps."""
    levels = rng.uniform(low, high, size=(-(-T // hold), dim))
    return np.repeat(levels, hold, axis=0)[:T]


def poly_from_poles(poles):
    """Real coefficients a_1..a_n of y_t = sum a_i y_{t-i} whose characteristic roots are ``poles``."""
    return -np.real(np.poly(poles))[1:]


def lag8(rng, T):
    poles = [0.95 * np.exp(0.2j), 0.95 * np.exp(-0.2j), 0.9 * np.exp(0.9j), 0.9 * np.exp(-0.9j),
             0.8 * np.exp(1.8j), 0.8 * np.exp(-1.8j), 0.7, -0.5]
    a = poly_from_poles(poles)
    b = np.array([0.0, 0.5, 0.3, -0.2, 0.4, 0.1, -0.3, 0.2])
    u = held_inputs(rng, T, 1, -1, 1, 3)[:, 0]
    y = np.zeros(T)
    for t in range(8, T):
        y[t] = a @ y[t - 8:t][::-1] + b @ u[t - 8:t][::-1] + 0.02 * rng.standard_normal()
    return y[:, None], u[:, None]


def tanh_feedback(rng, T):
    u = held_inputs(rng, T, 1, -2, 2, 6)[:, 0]
    x = np.zeros(T)
    for t in range(1, T - 1):
        x[t + 1] = 0.5 * x[t] + 0.3 * x[t - 1] + 1.2 * np.tanh(u[t] - 0.8 * x[t]) + 0.03 * rng.standard_normal()
    return (x + 0.02 * rng.standard_normal(T))[:, None], u[:, None]


def backlash(rng, T):
    u = held_inputs(rng, T, 1, -1, 1, 10)[:, 0]
    r, w, width = 0.95, 0.3, 0.4
    a1, a2 = 2 * r * np.cos(w), -r * r
    v, x = np.zeros(T), np.zeros(T)
    for t in range(1, T):
        v[t] = min(max(v[t - 1], u[t] - width / 2), u[t] + width / 2)  # the backlash's output follows at a gap
        if t >= 2:
            x[t] = a1 * x[t - 1] + a2 * x[t - 2] + 0.1 * v[t - 1] + 0.005 * rng.standard_normal()
    return (x + 0.02 * rng.standard_normal(T))[:, None], u[:, None]


def mimo_saturation(rng, T):
    A = np.array([[0.9, 0.1, 0.0], [-0.1, 0.85, 0.1], [0.0, 0.05, 0.7]])
    B = np.array([[0.5, 0.0], [0.0, 0.4], [0.3, 0.3]])
    C = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -0.5]])
    u = held_inputs(rng, T, 2, -1.5, 1.5, 8)
    x = np.zeros((T, 3))
    for t in range(T - 1):
        x[t + 1] = A @ x[t] + B @ np.clip(u[t], -0.7, 0.7) + 0.01 * rng.standard_normal(3)
    return x @ C.T + 0.02 * rng.standard_normal((T, 2)), u


def piecewise(rng, T):
    u = held_inputs(rng, T, 1, -1, 1, 12)[:, 0]
    x = np.zeros((T, 2))
    for t in range(T - 1):
        decay = 0.92 if x[t, 0] > 0 else 0.6
        x[t + 1, 0] = decay * x[t, 0] + 0.2 * x[t, 1] + 0.3 * u[t] + 0.01 * rng.standard_normal()
        x[t + 1, 1] = 0.7 * x[t, 1] - 0.2 * x[t, 0] + 0.01 * rng.standard_normal()
    return (x[:, :1] + 0.02 * rng.standard_normal((T, 1))), u[:, None]


def noisy_resonance(rng, T):
    r, w = 0.97, 0.25
    A = np.array([[r * np.cos(w), -r * np.sin(w)], [r * np.sin(w), r * np.cos(w)]])
    u = held_inputs(rng, T, 1, -1, 1, 15)
    x = np.zeros((T, 2))
    for t in range(T - 1):
        x[t + 1] = A @ x[t] + np.array([0.3, 0.0]) * u[t, 0] + 0.3 * rng.standard_normal(2)
    return x[:, :1] + 0.02 * rng.standard_normal((T, 1)), u


def short_sine(rng, T):
    u = held_inputs(rng, T, 1, -1.5, 1.5, 5)[:, 0]
    y = np.zeros(T)
    for t in range(T - 1):
        y[t + 1] = 0.8 * y[t] + np.sin(2 * u[t]) + 0.02 * rng.standard_normal()
    return y[:, None], u[:, None]


def drifting_gain(rng, T):
    u = held_inputs(rng, T, 1, -1, 1, 8)[:, 0]
    g = 1 + 0.3 * np.sin(2 * np.pi * np.arange(T) / 700)
    y = np.zeros(T)
    for t in range(T - 1):
        y[t + 1] = 0.85 * y[t] + g[t] * u[t] + 0.02 * rng.standard_normal()
    return y[:, None], u[:, None]


#: name -> (simulator, generator seed, steps)
PLANTS = {"lag8": (lag8, 101, 1000), "tanh_feedback": (tanh_feedback, 102, 1000), "backlash": (backlash, 103, 1000),
          "mimo_saturation": (mimo_saturation, 104, 1000), "piecewise": (piecewise, 105, 1000),
          "noisy_resonance": (noisy_resonance, 106, 1000), "short_sine": (short_sine, 107, 300),
          "drifting_gain": (drifting_gain, 108, 1000)}


def dataset(name):
    simulate, seed, T = PLANTS[name]
    y, u = simulate(np.random.default_rng(seed), T)
    return gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)


def summary(outs):
    """The Markdown table of the row files ``outs`` (``unseen_plants.summary`` for these plants)."""
    unseen_plants.summary(outs, list(PLANTS))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="+", help="the rows' file (for --summary: one or more)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--data", nargs="+", default=list(PLANTS))
    parser.add_argument("--models", nargs="+", default=["arx", "lgssm", "odgpssm"])
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        return summary(args.out)
    run_cells(args.out[0], args.seeds, args.data, args.models, dataset, linear_once=True)


if __name__ == "__main__":
    main()
