"""Simulated systems with a known truth: does the default fit reach the Kalman filter on linear systems, and beat the
linear models on nonlinear ones (targets of issue #12), including plants the recipe was not chosen on (issue #14)?

Systems (simulators of ``datasets``), 1000 steps each: the first 500 train
(standardised with their own statistics, like the data sets' training halves), the last 500 test:

* five random stable linear Gaussian systems, 2-6 states, slow or slow-and-fast poles, 1-2 inputs and outputs
  (:data:`LINEAR_SYSTEMS`); the model has the true state dimension;
* nonlinear plants (:data:`NONLINEAR_SYSTEMS`): the cascaded tanks (square-root outflow, d_x = 4); the quadruple
  tanks of Johansson (2000) (two inputs, two coupled outputs, d_x = 4), a Hammerstein and a Wiener system (a saturating
  actuator or sensor around a resonance, d_x = 2), a driven pendulum and Duffing oscillator (d_x = 2), three
  tanks in a row (two inputs, three outputs, d_x = 3), an exothermic stirred-tank reactor (two inputs, two outputs,
  d_x = 2) and two masses joined by a hardening spring (one input, two outputs, d_x = 4).

Score: the causal protocol of ``protocols.py`` on the test part: 100-step windows at stride 100 (five), the state
at each window start filtered from the 100 outputs before it; RMSE of the mean forecast, standardised units,
averaged over windows and outputs. References: the Kalman filter and forecast with the **true** linear model (the
best possible forecast of a linear system), and the package's LGSSM (the true d_x) and ARX (orders by its own
cross-validation) fitted on the same training part. Two GP models: ``ODGPSSM(dim_x=d, ...)`` with the system's d
(as a user who knows it would build it), and ``ODGPSSM(dim_y=..., dim_u=...)``, whose d_x the fit chooses
(``dim_x="auto"``, the default; a row without it shows "-").

Run: ``python -m gpssm_np.experiments.systems --seeds 5 --out DIR`` (JSON lines streamed to
``systems.jsonl``, resumable; Markdown to ``systems.md``).
"""
import argparse
import functools
import os
import time

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from .. import _validation as check
from .. import datasets as ds_module
from ..metrics import rmse
from ..ops.threads import use_threads
from . import runs

#: (name, d_x, d_y, d_u, slow poles only, generator seed)
LINEAR_SYSTEMS = [("lin_2x1x1_slow", 2, 1, 1, True, 11), ("lin_3x1x2_fast", 3, 1, 2, False, 12),
                  ("lin_4x2x1_slow", 4, 2, 1, True, 13), ("lin_5x1x1_fast", 5, 1, 1, False, 14),
                  ("lin_6x2x2_slow", 6, 2, 2, True, 15)]
#: name -> (simulator, generator seed, d_x of the model)
NONLINEAR_SYSTEMS = {
    "tanks": (ds_module.cascaded_tanks, 21, 4), "quad_tanks": (ds_module.quadruple_tanks, 22, 4),
    "hammerstein": (functools.partial(ds_module.block_oriented, structure="hammerstein"), 23, 2),
    "wiener": (functools.partial(ds_module.block_oriented, structure="wiener"), 24, 2),
    "pendulum": (functools.partial(ds_module.forced_oscillator, restoring="pendulum"), 25, 2),
    "duffing": (functools.partial(ds_module.forced_oscillator, restoring="duffing"), 26, 2),
    "three_tanks": (ds_module.three_tanks, 27, 3), "reactor": (ds_module.stirred_tank_reactor, 28, 2),
    "two_mass": (ds_module.two_mass, 29, 4)}
SYSTEMS = [s[0] for s in LINEAR_SYSTEMS] + list(NONLINEAR_SYSTEMS)
T_TRAIN, T_TOTAL, WINDOW, BURN_IN = 500, 1000, 100, 100


def make_system(name):
    """(y (1000, d_y), u (1000, d_u), true LGSSM params or None, d_x of the model) of system ``name``."""
    if name in NONLINEAR_SYSTEMS:
        simulate, seed, dx = NONLINEAR_SYSTEMS[name]
        y, u, _ = simulate(T_TOTAL, seed=seed)
        return y, u, None, dx
    _, dx, dy, du, slow, seed = next(s for s in LINEAR_SYSTEMS if s[0] == name)
    system = ds_module.random_linear_system(dim_x=dx, dim_y=dy, dim_u=du, seed=seed, slow=slow)
    y, u, _ = ds_module.simulate_linear(system, T_TOTAL, seed=seed)
    return y, u, system, dx


def causal_rmse(forecast, y, u):
    """Mean RMSE over the test windows of ``forecast(u_window, y_past, u_past) -> mean (W, d_y)``: the causal
    protocol's windows (``protocols.evaluate_causal``) on the test part, here for any forecasting function (the
    true Kalman filter works in raw units) and with one seed for every window."""
    errors = []
    for g in range(T_TRAIN, T_TOTAL - WINDOW + 1, WINDOW):
        past = slice(g - BURN_IN, g)
        mean = forecast(u[g:g + WINDOW], y[past], u[past])
        errors.append(rmse(y[g:g + WINDOW], mean))
    return float(np.mean(errors))


def run_cell(name, seed, chosen_dim_x=True, fit_options=None):
    """Scores of the default ODGPSSM (``seed``) with the system's d_x and (``chosen_dim_x``) with d_x chosen by the
    fit, the LGSSM, the ARX and (linear systems) the true Kalman filter on ``name``. ``fit_options``: keyword
    arguments of both ODGPSSM fits (for example ``{"max_steps": 300}``; None: the default fit)."""
    from .. import ARX, LGSSM, ODGPSSM

    y_raw, u_raw, system, dx = make_system(name)
    # z-scored with the training part's statistics, as the data sets' training halves
    data = ds_module.from_arrays(y_raw, u_raw, train_fraction=T_TRAIN / T_TOTAL, name=name)
    y, u = np.concatenate([data.y_train, data.y_test]), np.concatenate([data.u_train, data.u_test])
    row = {"system": name, "seed": int(seed)}

    def gp_rmse(model):
        return causal_rmse(lambda uw, yp, up: model.forecast(uw, y_past=yp, u_past=up, seed=seed).mean, y, u)

    fit_options = fit_options or {}
    start = time.perf_counter()
    with use_threads(1):
        model = ODGPSSM(dim_x=dx, dim_y=y.shape[1], dim_u=u.shape[1], seed=seed).fit(y[:T_TRAIN], u[:T_TRAIN],
                                                                                   **fit_options)
        row["fit_seconds"] = time.perf_counter() - start
        row["odgpssm"] = gp_rmse(model)
        if chosen_dim_x:
            chosen = ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=seed).fit(y[:T_TRAIN], u[:T_TRAIN],
                                                                                 **fit_options)
            row["odgpssm_auto"], row["dim_x_auto"] = gp_rmse(chosen), chosen.spec.dim_x
    lgssm = LGSSM(dim_x=dx, dim_y=y.shape[1], dim_u=u.shape[1]).fit(y[:T_TRAIN], u[:T_TRAIN])
    row["lgssm"] = causal_rmse(lambda uw, yp, up: lgssm.forecast(uw, y_past=yp, u_past=up).mean, y, u)
    arx = ARX(dim_y=y.shape[1], dim_u=u.shape[1]).fit(y[:T_TRAIN], u[:T_TRAIN])
    row["arx"] = causal_rmse(lambda uw, yp, up: arx.forecast(uw, y_past=yp, u_past=up, seed=seed).mean, y, u)
    if system is not None:  # the true model works on raw units: filter raw data, then standardise its forecast
        truth = LGSSM(dim_x=dx, dim_y=y.shape[1], dim_u=u.shape[1])
        prior_cov = solve_discrete_lyapunov(system["F"], system["G"] @ system["G"].T + system["Q"])
        truth.set_learned_params({"F": system["F"], "G": system["G"], "H": system["H"], "Q": system["Q"],
                                  "R": system["R"], "m0": np.zeros(dx), "P0": prior_cov})

        def kalman(uw, yp, up):
            units = data.scaling
            raw = truth.forecast(units.u_to_original(uw), y_past=units.y_to_original(yp),
                                 u_past=units.u_to_original(up))
            return units.y_to_model(raw.mean)

        row["kalman_true"] = causal_rmse(kalman, y, u)
    return row


def sweep(out_dir, seeds=5, systems=SYSTEMS):
    """Run every (system, seed) not yet in ``out_dir/systems.jsonl``; returns all rows."""
    cells = [(name, seed) for seed in range(seeds) for name in systems]
    return runs.jsonl_sweep(os.path.join(out_dir, "systems.jsonl"), cells, lambda r: (r["system"], r["seed"]),
                            run_cell)


def markdown(rows):
    """One table per code version (commit) of the rows, in the order they were written: see :func:`table`."""
    commits = list(dict.fromkeys(r.get("commit") for r in rows))
    if len(commits) == 1:
        return table(rows)
    return "\n\n".join(f"Rows of commit `{str(c)[:7]}`:\n\n" + table([r for r in rows if r.get("commit") == c])
                       for c in commits)


def table(rows):
    """Per system: mean +- sample std over seeds of each model's causal RMSE, the d_x chosen by ``dim_x="auto"``,
    and the ratios of ODGPSSM with the system's d_x to the references (a column a row lacks shows "-")."""
    lines = ["| system | ODGPSSM (d_x of the system) | ODGPSSM (d_x auto) | d_x chosen | LGSSM | ARX | "
             "Kalman, true model | ODGPSSM / Kalman | ODGPSSM / LGSSM | ODGPSSM / best linear | fit s |",
             "|---" * 11 + "|"]
    for name in SYSTEMS:
        sel = [r for r in rows if r["system"] == name]
        if not sel:
            continue

        def cell(key):
            vals = [r[key] for r in sel if r.get(key) is not None]
            if not vals:
                return "-"
            return f"{np.mean(vals):.4f} +- {np.std(vals, ddof=1):.4f}" if len(vals) > 1 else f"{vals[0]:.4f}"

        od = np.mean([r["odgpssm"] for r in sel])
        kal = [r["kalman_true"] for r in sel if r.get("kalman_true") is not None]
        ratio_k = f"{od / np.mean(kal):.3f}" if kal else "-"
        chosen = sorted({r["dim_x_auto"] for r in sel if r.get("dim_x_auto") is not None})
        linear = min(np.mean([r[key] for r in sel]) for key in ("lgssm", "arx") if all(key in r for r in sel))
        lines.append(f"| {name} (n={len(sel)}) | {cell('odgpssm')} | {cell('odgpssm_auto')} | "
                     f"{', '.join(map(str, chosen)) or '-'} | {cell('lgssm')} | {cell('arx')} | "
                     f"{cell('kalman_true')} | "
                     f"{ratio_k} | {od / np.mean([r['lgssm'] for r in sel]):.3f} | {od / linear:.3f} | "
                     f"{np.mean([r['fit_seconds'] for r in sel]):.0f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=check.positive_count, default=5)
    parser.add_argument("--out", default="results")
    parser.add_argument("--systems", nargs="+", default=SYSTEMS, choices=SYSTEMS)
    args = parser.parse_args(argv)
    rows = sweep(args.out, args.seeds, args.systems)
    runs.write_text(os.path.join(args.out, "systems.md"), markdown(rows) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
