"""The default fit on plants none of the package's choices were made on: seven systems written for this check
alone (an input delay longer than the ARX's ten lags, a 2x2 linear plant, a dead zone with backlash, an
autonomous Van der Pol oscillator, a 120-step series, a bilinear plant, a saturating sensor). Each: 1000 steps
(the short one 120) driven by random steps of the input, output noise at 5 % of the output's spread, the first half
trains (the data are the same for every seed). The default ODGPSSM (each seed) beside ARX() and LGSSM(dim_x="auto")
at their defaults on the same training half (they draw no random numbers: one row each), scored by the causal and
simulate protocols. One JSON line per (data, model, seed), resumable.

Run: python research/unseen_plants.py OUT.jsonl [--data name ...] [--seeds 0 1 ...] [--models arx ...]; ``OUT
[OUT ...] --summary`` prints the Markdown table of those files, a later file's row replacing an earlier one's
(docs/results/unseen_plants_n.md for the current default: means over the seeds run).
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import numpy as np

import gpssm_np as gp

from defaults_check import selection_row
from rows import done_keys, head_commit


def _steps(rng, T, d_u, hold=(5, 30), low=-1.0, high=1.0):
    """Random steps: each input holds a uniform level for a random 5-30 steps."""
    u = np.empty((T, d_u))
    for j in range(d_u):
        t = 0
        while t < T:
            n = rng.integers(*hold)
            u[t:t + n, j] = rng.uniform(low, high)
            t += n
    return u


def _noisy(y, rng):
    return y + 0.05 * y.std(axis=0) * rng.standard_normal(y.shape)


def delay12(rng, T=1000):
    u = _steps(rng, T, 1)
    y = np.zeros((T, 1))
    for t in range(1, T):
        y[t] = 0.8 * y[t - 1] + 0.5 * (u[t - 12] if t >= 12 else 0.0) + 0.02 * rng.standard_normal()
    return _noisy(y, rng), u


def mimo_linear(rng, T=1000):
    F = np.array([[0.85, 0.1, 0.0, 0.0], [-0.1, 0.85, 0.05, 0.0], [0.0, 0.0, 0.7, 0.2], [0.0, 0.0, -0.2, 0.7]])
    G = np.array([[0.5, 0.0], [0.0, 0.2], [0.3, 0.4], [0.0, 0.5]])
    H = np.array([[1.0, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 1.0]])
    u = _steps(rng, T, 2)
    x, y = np.zeros(4), np.empty((T, 2))
    for t in range(T):
        x = F @ x + G @ u[t] + 0.02 * rng.standard_normal(4)
        y[t] = H @ x
    return _noisy(y, rng), u


def deadzone_backlash(rng, T=1000):
    u = _steps(rng, T, 1, low=-2.0, high=2.0)
    v = np.sign(u) * np.maximum(np.abs(u) - 0.5, 0.0)  # dead zone
    x, out, y = 0.0, 0.0, np.empty((T, 1))
    for t in range(T):
        x = 0.9 * x + 0.1 * v[t, 0]
        out = min(max(out, x - 0.1), x + 0.1)  # backlash of width 0.2
        y[t] = out
    return _noisy(y, rng), u


def van_der_pol(rng, T=1000):
    dt, mu = 0.1, 1.5
    x = np.array([2.0, 0.0])
    y = np.empty((T, 1))
    for t in range(T):
        for _ in range(5):  # five Euler substeps per sample
            x = x + dt / 5 * np.array([x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]])
        x = x + 0.02 * rng.standard_normal(2)
        y[t] = x[0]
    return _noisy(y, rng), np.zeros((T, 0))


def short(rng, T=120):
    u = _steps(rng, T, 1)
    y = np.zeros((T, 1))
    for t in range(2, T):
        y[t] = 1.5 * y[t - 1] - 0.7 * y[t - 2] + 0.3 * u[t - 1] + 0.02 * rng.standard_normal()
    return _noisy(y, rng), u


def bilinear(rng, T=1000):
    u = _steps(rng, T, 1)
    y = np.zeros((T, 1))
    for t in range(1, T):
        y[t] = 0.7 * y[t - 1] + 0.4 * u[t - 1] + 0.3 * y[t - 1] * u[t - 1] + 0.02 * rng.standard_normal()
    return _noisy(y, rng), u


def saturating_sensor(rng, T=1000):
    u = _steps(rng, T, 1, low=-2.0, high=2.0)
    x = np.zeros(2)
    y = np.empty((T, 1))
    for t in range(T):
        x = np.array([[1.6, -0.68], [1.0, 0.0]]) @ x + np.array([0.2, 0.0]) * u[t, 0] + 0.01 * rng.standard_normal(2)
        y[t] = np.tanh(1.5 * x[0])
    return _noisy(y, rng), u


SYSTEMS = {f.__name__: f for f in (delay12, mimo_linear, deadzone_backlash, van_der_pol, short, bilinear,
                                     saturating_sensor)}


def summary(outs, names=tuple(SYSTEMS)):
    """The Markdown table of the rows in the files ``outs`` (a later file's row replacing an earlier one's of the
    same plant, model and seed) for the plants ``names``: each protocol's standardised RMSE and the ratio of the
    default ODGPSSM's (mean over its seeds) to the better linear model's."""
    rows = {(r["data"], r["model"], r.get("seed", 0)): r for out in outs for r in map(json.loads, open(out))}
    by = {}
    for r in rows.values():
        by.setdefault(r["data"], {}).setdefault(r["model"], []).append(r)
    lines = ["Standardised RMSE on the test half, ODGPSSM's the mean over the seeds run; ratio: ODGPSSM over the "
             "better of ARX and LGSSM (below 1: ODGPSSM better).", "",
             "| plant | seeds | causal: ODGPSSM | ARX | LGSSM | ratio | simulate: ODGPSSM | ARX | LGSSM | ratio "
             "| GP part kept | fit s | code |", "|---" * 13 + "|"]
    for name in names:
        m = by.get(name, {})
        if len(m) < 3:
            continue
        fits, a, lin = m["odgpssm"], m["arx"][0], m["lgssm"][0]
        cells = [name, str(len(fits))]
        for p in ("causal", "simulate"):
            mean = float(np.mean([o[p] for o in fits]))
            cells += [f"{mean:.4f}", f"{a[p]:.4f}", f"{lin[p]:.4f}", f"**{mean / min(a[p], lin[p]):.3f}**"]
        cells += [f"{sum(o['selection']['gp_part'] for o in fits)} of {len(fits)}",
                  f"{np.mean([o['fit_seconds'] for o in fits]):.0f}", " ".join(sorted({o['commit'] for o in fits}))]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="+", help="the rows' file (for --summary: one or more)")
    parser.add_argument("--data", nargs="+", default=list(SYSTEMS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--models", nargs="+", default=["arx", "lgssm", "odgpssm"])
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
        return
    out = args.out[0]
    done = done_keys(out, "data", "model", "seed", missing=0)
    commit = head_commit()
    for name in args.data:
        y, u = SYSTEMS[name](np.random.default_rng(2026))
        ds = gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)
        dy, du = y.shape[1], u.shape[1]
        cells = [("arx", 0, gp.ARX(dim_y=dy, dim_u=du)), ("lgssm", 0, gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du))]
        cells += [("odgpssm", seed, gp.ODGPSSM(dim_y=dy, dim_u=du, seed=seed)) for seed in args.seeds]
        for kind, seed, model in cells:
            if (name, kind, seed) in done or kind not in args.models:
                continue
            start = time.perf_counter()
            model.fit(ds.y_train, ds.u_train)
            row = {"data": name, "model": kind, "seed": seed, "commit": commit,
                   "fit_seconds": time.perf_counter() - start,
                   "repr": repr(model)}
            if kind == "odgpssm":
                row["selection"] = selection_row(model.selection_)
            for protocol in ("causal", "simulate"):
                row[protocol] = gp.evaluate(model, ds, protocol)["rmse"]
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(name, kind, seed, {p: round(row[p], 4) for p in ("causal", "simulate")},
                  f"{row['fit_seconds']:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
