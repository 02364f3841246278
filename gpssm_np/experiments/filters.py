"""The ensemble Kalman filter against the particle filter for causal forecasts, with models trained by either
objective (issue #13, item 4).

For each data set of Table 1 and seed, the default ODGPSSM is fitted with ``objective="prior"`` and with
``objective="enkf"`` at d_x = 4 (the study's fixed state dimension; everything else the package's defaults), and each
fitted model is scored under the causal protocol (``protocols.py``: 100-step windows, at most 6, the state at each
window start filtered from the 100 outputs before it) twice: with the fully adapted particle filter (1000 particles) and
with the ensemble Kalman filter (1000 members). Reported: standardised RMSE, NLPD, 95 % coverage and the seconds the
evaluation took.

Run: ``python -m gpssm_np.experiments.filters --seeds 2 --out DIR`` (JSON lines streamed to
``filters.jsonl``, resumable; Markdown to ``filters.md``).
"""
import argparse
import os
import time

import numpy as np

from .. import _validation as check
from .. import datasets as ds_module
from ..protocols import evaluate
from . import runs
from .table1 import DATASETS, PROTOCOL_OPTIONS

OBJECTIVES = ("prior", "enkf")
FILTERS = ("particle", "enkf")


def run_cell(dataset, seed, objective, data_dir=None, fit_options=None, num_particles=1000):
    """One fit (``fit_options``: keyword arguments of ``fit`` that override the defaults, for tests) and its two
    causal evaluations: a dict."""
    from .. import ODGPSSM

    data = ds_module.load(dataset, data_dir)
    start = time.perf_counter()
    model = ODGPSSM(dim_x=4, dim_y=data.y_train.shape[1], dim_u=data.u_train.shape[1], seed=seed,
                    objective=objective).fit(data.y_train, data.u_train, **(fit_options or {}))
    row = {"dataset": dataset, "seed": int(seed), "objective": objective, "fit_seconds": time.perf_counter() - start}
    for method in FILTERS:
        model.filter_method = method
        start = time.perf_counter()
        res = evaluate(model, data, "causal", seed=seed, num_particles=num_particles, **PROTOCOL_OPTIONS)
        row[method] = {key: res[key] for key in ("rmse", "nlpd", "coverage95")}
        row[method]["seconds"] = time.perf_counter() - start
    return row


def sweep(out_dir, seeds=2, datasets=DATASETS, data_dir=None):
    """Run every (data set, seed, objective) not yet in ``out_dir/filters.jsonl``; returns all rows."""
    cells = [(dataset, seed, objective) for seed in range(seeds) for dataset in datasets for objective in OBJECTIVES]
    return runs.jsonl_sweep(os.path.join(out_dir, "filters.jsonl"), cells,
                            lambda r: (r["dataset"], r["seed"], r["objective"]),
                            lambda *cell: run_cell(*cell, data_dir=data_dir))


def markdown(rows):
    """Per data set and training objective: mean over seeds of each filter's causal RMSE, NLPD, coverage, time."""
    lines = ["| data set | objective | seeds | RMSE PF | RMSE EnKF | NLPD PF | NLPD EnKF | cover. PF | cover. EnKF | "
             "s PF | s EnKF |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for dataset in DATASETS:
        for objective in OBJECTIVES:
            sel = [r for r in rows if r["dataset"] == dataset and r["objective"] == objective]
            if not sel:
                continue

            def mean(method, key):
                return np.mean([r[method][key] for r in sel])

            lines.append(f"| {dataset} | {objective} | {len(sel)} | {mean('particle', 'rmse'):.4f} | "
                         f"{mean('enkf', 'rmse'):.4f} | {mean('particle', 'nlpd'):.3f} | {mean('enkf', 'nlpd'):.3f} | "
                         f"{mean('particle', 'coverage95'):.2f} | {mean('enkf', 'coverage95'):.2f} | "
                         f"{mean('particle', 'seconds'):.1f} | {mean('enkf', 'seconds'):.1f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=check.positive_count, default=2)
    parser.add_argument("--out", default="results")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    rows = sweep(args.out, args.seeds, args.datasets, args.data_dir)
    runs.write_text(os.path.join(args.out, "filters.md"), markdown(rows) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
