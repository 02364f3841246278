"""The ablation of the default recipe (research/ablation_plan.md): what each piece buys on training and validation data.

Every cell fits one configuration to the **training half** of a data set (``fit`` holds back its last 20 % as the
validation block) and records the validation scores of its run (``GPSSM.validation_``): at step 0 (the initial
model: the warm start where there is one), of the selected parameters, and of the last iterate. The test halves
are never read. Rows are streamed to a JSON-lines file keyed on (data set, configuration, seed, budget, commit),
so an interrupted sweep resumes where it stopped and reuses only rows of the same code and budget.

Part of the research record, not of the package (research/README.md): the scripts beside it import it as
``ablation`` with this folder on ``sys.path``.
"""
import json
import logging
import time
from dataclasses import replace
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from gpssm_np import datasets as ds_module
from gpssm_np._versions import versions
from gpssm_np.baselines.lgssm_order import dim_x_candidates
from gpssm_np.experiments.runs import read_jsonl
from gpssm_np.experiments.table1 import MIMO_DATASETS  # the multi-output plants of amendment 3 (issue #14)
from gpssm_np.metrics import coverage, nlpd, rmse
from gpssm_np.models.training import ValidationScore, selected_windows
from gpssm_np.ops.threads import use_threads

logger = logging.getLogger(__name__)

#: The configurations of research/ablation_plan.md (constructor arguments of ODGPSSM on top of its defaults, and the
#: arguments of ``fit`` in FIT_ARGUMENTS on top of fit's: since amendment 8 every configuration that does not say
#: otherwise calibrates its intervals with ``calibrate="widen"``, which changes no RMSE score).
CONFIGS = {
    "full": {},
    "full_w10": {"seq_len": 10},
    "full_w50": {"seq_len": 50},
    "shared_x0": {"initial_state": "shared"},
    "no_warm_start": {"init": "random"},
    "zero_mean": {"init": "random", "mean_function": "zero"},
    "enkf": {"initial_state": "shared", "objective": "enkf"},  # amendment 2 (issue #13)
    # amendment 3 (issue #14): d_x chosen among d_y .. max(d_y + 4, 3 d_y), what dim_x="auto" was at commit 7af2239
    "auto_dx": {"initial_state": "shared", "objective": "enkf", "dim_x": "from_dim_y"},
    # amendment 4: the same from max(4, d_y) up, dim_x="auto" since (models/warm_start.py, AUTO_MIN_DIM_X)
    "auto_dx_floor": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto"},
    # amendment 5: every window of the validation block scored, not the first four
    "val_all": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all"},
    # amendment 6: then the final model fitted on all the training data (models/training.py, step 5)
    "refit": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
              "refit": True},
    # amendment 7: the default after amendment 6 with the intervals calibrated on the validation block (step 6)
    "calibrated": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                   "calibrate": True},
    # amendment 9: the warm start refitted to all the training data where training never beat it
    "refit_warm_start": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                         "refit": "warm_start"},
    # amendment 8: factors that only widen the intervals
    "widened": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                "calibrate": "widen"},
    # amendment 10: the warm start from the LGSSM or the ARX, whichever cross-validates better
    "linear_init": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                    "refit": "warm_start", "init": "linear"},
    # amendment 11: a kept warm start chosen again (kind and d_x) on all the training data
    "linear_refit": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                     "refit": "linear", "init": "linear"},
    # amendment 12: the default after amendment 10 with a smaller Adam step
    "lr_003": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
               "refit": "warm_start", "init": "linear", "lr": 0.003},
    # amendment 13: both steps trained, the better validation score kept
    "lr_choice": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                  "refit": "warm_start", "init": "linear", "lr": (0.01, 0.003)},
    # amendment 14: the exponential moving average of the iterates scored and kept
    "ema": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
            "refit": "warm_start", "init": "linear", "average": 0.99},
    # amendment 16: the same trained for the whole budget (no early stop; the best-scored average kept)
    "ema_full": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                 "refit": "warm_start", "init": "linear", "average": 0.99, "patience": 20},
    # amendment 18: the default with the linear part (F, G, b) held at its warm start
    "ema_fixlin": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                   "refit": "warm_start", "init": "linear", "average": 0.99, "fixed": ("F", "G", "b")},
    # amendment 19: the default with a ten times smaller Adam step for the linear part
    "ema_slowlin": {"initial_state": "shared", "objective": "enkf", "dim_x": "auto", "validation_windows": "all",
                    "refit": "warm_start", "init": "linear", "average": 0.99,
                    "lr_scale": {"F": 0.1, "G": 0.1, "b": 0.1}},
}
#: Arguments of ``fit`` (the rest of a configuration goes to the constructor).
FIT_ARGUMENTS = ("seq_len", "validation_windows", "refit", "calibrate", "lr", "average", "patience", "fixed",
                 "lr_scale")
DATASETS = ("actuator", "ballbeam", "drive", "dryer", "gas_furnace", "sim_linear", "sim_tanks")
#: fit's budget in every cell (the defaults of ``models.gpssm.DEFAULT_FIT`` at the time of the plan; the four
#: validation windows scored then are explicit since amendment 5 made "all" the default).
BUDGET = {"max_steps": 2000, "eval_every": 100, "patience": 5, "seq_len": 20, "validation_windows": 4}


def training_half(name, data_dir=None):
    """(y, u) of the training half of a Table 1 set (standardised by its loader), or of a simulated system
    (1000 steps generated with seed 0, the first 500 z-scored with their own statistics)."""
    if name == "sim_linear":
        system = ds_module.random_linear_system(dim_x=4, dim_y=1, dim_u=1, seed=0)
        y, u, _ = ds_module.simulate_linear(system, 1000, seed=0)
    elif name == "sim_tanks":
        y, u, _ = ds_module.cascaded_tanks(1000, seed=0)
    else:
        d = ds_module.load(name, data_dir)
        return d.y_train, d.u_train
    data = ds_module.from_arrays(y, u, train_fraction=0.5, name=name)  # the first 500, z-scored with their statistics
    return data.y_train, data.u_train


def held_out_start(T, share):
    """Index of the first held-out step of a training half of length ``T`` whose last ``share`` is held out."""
    return T - int(round(share * T))


def run_cell(data_name, config, seed, budget=None, data_dir=None):
    """Fit configuration ``config`` on the training half of ``data_name``; the row of the ablation table. With
    ``budget["held_out"]`` (amendment 5) the last share of the training half is held out of the fit, and the row's
    ``held_out`` is the causal forecast RMSE of every window of it (the validation score's protocol), with the
    coverage of the 95 % intervals and the NLPD there (:func:`held_out_metrics`)."""
    from gpssm_np import BlockPlan, ODGPSSM

    budget = dict(BUDGET if budget is None else budget)
    y, u = training_half(data_name, data_dir)
    held_out = budget.get("held_out")  # amendment 5: this share of the training half is never fitted
    cut = held_out_start(len(y), held_out) if held_out else len(y)
    start = time.perf_counter()
    with use_threads(1):
        config_args = dict(CONFIGS[config])
        fit_args = {k: v for k, v in budget.items() if k != "held_out"}
        fit_args["average"] = False  # the configurations before amendment 14 scored the iterates themselves
        fit_args["lr_scale"] = {}  # and before amendment 21 trained once, with one step for every parameter
        fit_args.update({k: config_args.pop(k) for k in FIT_ARGUMENTS if k in config_args})
        if config_args.get("dim_x") == "from_dim_y":  # amendment 3's candidates, as a list
            config_args["dim_x"] = dim_x_candidates(y.shape[1])
        dims = {"dim_x": max(4, y.shape[1]), "dim_y": y.shape[1], "dim_u": u.shape[1]}
        model = ODGPSSM(**dict(dims, **config_args), seed=seed)
        model.fit(y[:cut], u[:cut], plan=BlockPlan(**fit_args))  # every configuration here trained by it
        held_out_scores = held_out_metrics(model, y, u, cut) if held_out else {}
    scores = [r["rmse"] for r in model.validation_]
    return {"dataset": data_name, "config": config, "seed": int(seed), "budget": budget, "dim_x": model.spec.dim_x,
            "initial": scores[0], "selected": min(scores), "last": scores[-1],
            "windows": selected_windows(model.validation_, fit_args.get("min_delta", 0.0)),
            "steps": model.validation_[-1]["step"], "lr": model.lr_, "seconds": time.perf_counter() - start,
            **held_out_scores,
            "commit": versions().get("git_commit")}


#: The linear baselines scored on the same held-out blocks (:func:`linear_cell`).
LINEAR_BASELINES = ("arx", "lgssm")


def linear_cell(data_name, model_name, held_out=0.2, data_dir=None):
    """The row of a linear baseline (``model_name`` in :data:`LINEAR_BASELINES`, defaults: ARX orders and LGSSM
    d_x by their own cross-validation) fitted to the first 1 - ``held_out`` of the training half of ``data_name``
    and scored on the rest by :func:`held_out_metrics`, as a GP cell with ``budget["held_out"]``: what the GP
    models' held-out scores are compared with (the baselines have no validation block: they fit all of the part
    the GP fit sees, validation block included). Deterministic: no seed."""
    from gpssm_np.baselines import ARX, LGSSM

    if model_name not in LINEAR_BASELINES:
        raise ValueError(f"model_name: expected one of {LINEAR_BASELINES}, got {model_name!r}")
    y, u = training_half(data_name, data_dir)
    cut = held_out_start(len(y), held_out)
    dims = {"dim_y": y.shape[1], "dim_u": u.shape[1]}
    model = ARX(**dims) if model_name == "arx" else LGSSM(dim_x="auto", **dims)
    start = time.perf_counter()
    model.fit(y[:cut], u[:cut])
    params = model.get_learned_params()
    order = ({"na": len(params["a"]), "nb": len(params["b"])} if model_name == "arx"
             else {"dim_x": int(model.spec.dim_x)})
    return {"dataset": data_name, "model": model_name, "held_out_share": held_out, "order": order,
            "seconds": time.perf_counter() - start,
            **held_out_metrics(model, y, u, cut), "commit": versions().get("git_commit")}


def held_out_metrics(model, y, u, cut):
    """Scores of ``model``'s causal forecasts of every 100-step window of y[cut:] (``training.ValidationScore``'s
    protocol and random numbers): "held_out" (RMSE, mean over windows), "held_out_coverage" (share of the outputs
    inside the 95 % intervals), "held_out_nlpd" (mean NLPD); for a calibrated model (amendment 7) also the last two
    without its calibration, "..._uncalibrated" (the same forecasts, ``Forecast.std_scale`` None)."""
    pairs = list(ValidationScore([y], [u], [cut], max_windows=None).forecasts(model))
    variants = {"": [fc for _, fc in pairs]}
    if getattr(model, "interval_scale_", None) is not None:  # a calibrated GP model; a baseline has no factors
        variants["_uncalibrated"] = [replace(fc, std_scale=None) for _, fc in pairs]
    row = {"held_out": float(np.mean([rmse(y_w, fc.mean) for y_w, fc in pairs]))}
    truth = [y_w for y_w, _ in pairs]
    for suffix, forecasts in variants.items():  # the windows are equally long: the mean over windows is the pooled
        row["held_out_coverage" + suffix] = float(np.mean([coverage(y_w, *fc.interval(0.95))
                                                           for y_w, fc in zip(truth, forecasts)]))
        row["held_out_nlpd" + suffix] = float(np.mean([nlpd(y_w, fc.mean, fc.std)
                                                       for y_w, fc in zip(truth, forecasts)]))
    return row


def _key(row):
    return (row["dataset"], row["config"], row["seed"], json.dumps(row["budget"], sort_keys=True), row["commit"])


def sweep(out, datasets=DATASETS, configs=tuple(CONFIGS), seeds=2, jobs=2, budget=None, data_dir=None):
    """Run every (data set, configuration, seed) cell not yet in ``out`` (JSON lines); returns all rows."""
    budget = dict(BUDGET if budget is None else budget)
    commit = versions().get("git_commit")
    rows = read_jsonl(out)
    done = {_key(r) for r in rows}
    todo = [(d, c, s) for s in range(seeds) for d in datasets for c in configs
            if _key({"dataset": d, "config": c, "seed": s, "budget": budget, "commit": commit}) not in done]
    logger.info("ablation: %d cells reused, %d to run", len(rows), len(todo))
    with ProcessPoolExecutor(max_workers=jobs) as pool, open(out, "a") as fh:
        futures = [pool.submit(run_cell, d, c, s, budget, data_dir) for d, c, s in todo]
        for future in futures:
            row = future.result()
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            rows.append(row)
            logger.info("%s %s seed %d: initial %.4f selected %.4f last %.4f (%d steps, %.0f s)", row["dataset"],
                        row["config"], row["seed"], row["initial"], row["selected"], row["last"], row["steps"],
                        row["seconds"])
    return rows


def markdown(rows):
    """Mean validation score (and sample std over seeds) per data set and configuration, and the mean over data."""
    configs = [c for c in CONFIGS if any(r["config"] == c for r in rows)]
    names = [d for d in DATASETS + MIMO_DATASETS if any(r["dataset"] == d for r in rows)]
    lines = ["| configuration | " + " | ".join(names) + " | mean |", "|---" * (len(names) + 2) + "|"]
    for c in configs:
        cells, means = [], []
        for d in names:
            vals = [r["selected"] for r in rows if r["config"] == c and r["dataset"] == d]
            if vals:
                means.append(np.mean(vals))
                spread = f" +- {np.std(vals, ddof=1):.3f}" if len(vals) > 1 else ""
                cells.append(f"{np.mean(vals):.3f}{spread} (n={len(vals)})")
            else:
                cells.append("-")
        lines.append(f"| {c} | " + " | ".join(cells) + f" | {np.mean(means):.3f} |")
    return "\n".join(lines)


def held_out_comparison(gp_rows, linear_rows, config="ema"):
    """Markdown: per data set the seed-mean held-out RMSE and coverage of the GP cells of ``config`` (rows with a
    held-out block) beside those of the linear baselines (:func:`linear_cell` rows) on the same block, and the
    ratio of the GP model's to the better linear one's."""
    lines = [f"| data set | ODGPSSM `{config}` (seeds) | coverage | ARX (na, nb) | LGSSM (d_x) | coverage ARX, LGSSM "
             "| ODGPSSM / best linear |", "|---|---|---|---|---|---|---|"]
    for d in DATASETS + MIMO_DATASETS:
        gp = [r for r in gp_rows if r["dataset"] == d and r["config"] == config and "held_out" in r]
        linear = {r["model"]: r for r in linear_rows if r["dataset"] == d}
        if not gp or set(linear) != set(LINEAR_BASELINES):
            continue
        score = np.mean([r["held_out"] for r in gp])
        arx, lgssm = linear["arx"], linear["lgssm"]
        best = min(arx["held_out"], lgssm["held_out"])
        lines.append(f"| {d} | {score:.4f} ({len(gp)}) | {np.mean([r['held_out_coverage'] for r in gp]):.2f} | "
                     f"{arx['held_out']:.4f} ({arx['order']['na']}, {arx['order']['nb']}) | "
                     f"{lgssm['held_out']:.4f} ({lgssm['order']['dim_x']}) | "
                     f"{arx['held_out_coverage']:.2f}, {lgssm['held_out_coverage']:.2f} | {score / best:.3f} |")
    return "\n".join(lines) + "\n"
