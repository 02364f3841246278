"""Amendment 21 of research/ablation_plan.md: the default fit and the fit with a slow linear part (``lr_scale``), with
the per-window validation RMSEs of each run's selected model, on (a) the three plants whose held-out design has
several validation windows and (b) six simulated systems with new generator seeds and 2 000 training steps.

Each row keeps the per-window validation RMSEs of the run's selected model (``windows``, from the validation
record; until commit cc2bad7 this script wrapped ``ValidationScore.__call__`` to get them). Part (b) also runs
the package's default fit since amendment 21 (config ``default``), which must keep what the rule keeps.
Run from the repository root with the package
importable and GPSSM_NP_DATA set: ``python research/run_amendment21.py OUT.jsonl`` (resumable; two processes). Rows:
``research/results/history/ablation21.jsonl`` (commit 076e09e); the decision is computed by
``research/decide_amendment21.py``.
"""
import json
import logging
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from gpssm_np import ODGPSSM
from gpssm_np import datasets as D
from gpssm_np.experiments import systems
from gpssm_np.models import training
from gpssm_np.ops.threads import use_threads

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ablation  # noqa: E402 (research/ablation.py)
from rows import done_keys

SLOW = {"F": 0.1, "G": 0.1, "b": 0.1}
#: fit's lr_scale of each configuration: one step for all, the slow linear part, the package's default (both, the
#: paired test deciding)
LR_SCALE = {"ema": {}, "ema_slowlin": SLOW, "default": None}
BUDGET = dict(ablation.BUDGET, held_out=0.2)


def set_cell(d, config, seed):
    """Part (a): the ablation's cell (its row keeps the selected run's per-window validation RMSEs)."""
    return dict(ablation.run_cell(d, config, seed, BUDGET, None), part="a")


NEW = {"tanks": 131, "quad_tanks": 132, "pendulum": 135, "duffing": 136, "reactor": 138, "lin_3x1x1_slow": 141}
T_TRAIN, T_TOTAL = 2000, 2500


def system_data(name):
    """Part (b): (y, u) of a new system, 2 500 steps, standardised with the first 2 000 steps' statistics."""
    seed = NEW[name]
    if name.startswith("lin"):
        s = D.random_linear_system(dim_x=3, dim_y=1, dim_u=1, seed=seed, slow=True)
        y, u, _ = D.simulate_linear(s, T_TOTAL, seed=seed)
    else:
        y, u, _ = systems.NONLINEAR_SYSTEMS[name][0](T_TOTAL, seed=seed)
    data = D.from_arrays(y, u, train_fraction=T_TRAIN / T_TOTAL, name=name)
    return np.concatenate([data.y_train, data.y_test]), np.concatenate([data.u_train, data.u_test])


def system_cell(name, config, seed):
    """Part (b): one step for all parameters (``config`` "ema"), the slow linear part ("ema_slowlin") or the
    package's default ("default") fitted on the first 2 000 steps, scored causally on the last 500 (five 100-step
    windows after 100 past outputs)."""
    y, u = system_data(name)
    t0 = time.perf_counter()
    with use_threads(1):
        m = ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=seed)
        m.fit(y[:T_TRAIN], u[:T_TRAIN], plan=({} if LR_SCALE[config] is None else {"lr_scale": LR_SCALE[config]}))
        errs = []
        for g in range(T_TRAIN, T_TOTAL - 100 + 1, 100):
            f = m.forecast(u[g:g + 100], y_past=y[g - 100:g], u_past=u[g - 100:g], seed=seed)
            errs.append(float(np.sqrt(np.mean((f.mean - y[g:g + 100]) ** 2))))
    scores = [r["rmse"] for r in m.validation_]
    return {"dataset": name, "config": config, "seed": seed, "part": "b", "held_out": float(np.mean(errs)),
            "selected": min(scores), "initial": scores[0], "steps": m.validation_[-1]["step"], "dim_x": m.spec.dim_x,
            "windows": training.selected_windows(m.validation_, 0.0), "lr_scale": m.lr_scale_,
            "seconds": time.perf_counter() - t0}


def main(out):
    """Run every cell not yet in ``out`` (JSON lines), two processes."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    done = done_keys(out, "dataset", "config", "seed")
    parts = ((set_cell, ("steamgen", "winding", "cd_player_arm"), ("ema", "ema_slowlin")),
             (system_cell, tuple(NEW), ("ema", "ema_slowlin", "default")))
    cells = [(f, d, c, s) for f, names, configs in parts for d in names for s in (0, 1) for c in configs
             if (d, c, s) not in done]
    logging.info("%d cells to run", len(cells))
    with ProcessPoolExecutor(max_workers=2) as pool, open(out, "a") as fh:
        futures = [pool.submit(f, d, c, s) for f, d, c, s in cells]
        for fut in as_completed(futures):
            row = fut.result()
            fh.write(json.dumps(row, default=float) + "\n")
            fh.flush()
            logging.info("%s %s seed %d: selected %.4f held out %.4f windows %d", row["dataset"], row["config"],
                         row["seed"], row["selected"], row["held_out"], len(row["windows"]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ablation21.jsonl")
