r"""Table 1 of the paper (100-step forecast RMSE on five system-identification data sets), with more models,
three protocols and several seeds; also the study over the number of latent GPs Q (paper Fig. 4).

One *run* trains one model on one data set with one seed and evaluates it under the ``paper``, ``causal`` and
``freerun`` protocols (``protocols`` module), giving one row per protocol. A sweep runs the product of data sets,
models and seeds, in parallel on local processes (``jobs``) or on a Dask cluster (``scheduler``), and streams every
finished run into ``table1.json`` (atomically rewritten), so an interrupted sweep resumes without redoing finished
runs. A run is keyed on its data set, model and seed, the settings (name and every value), the protocol options
and the code version, and each row carries its own provenance (``experiments/runs.py``): a resumed sweep reuses only
runs with the same key and says how many. ``table1.md`` summarises mean +- population standard deviation (ddof 0)
over seeds beside the paper's numbers, and paired bootstrap intervals of per-seed differences (``stats.py``).

Settings (the authors' code, docs/design.md s7 and s12; see :data:`AUTHORS_SETTINGS`): d_x = 4,
Q = 4, M = 20 inducing points per latent GP (one set of Z per GP, as their code), Matern-5/2, zero mean, whitened
q(u), 2-layer LSTM recognition over the reversed window, KL(q(u)||p(u)) / T, windows of 50 at stride 1, batch 16,
Adam lr 0.01, 70 epochs, 50 particles; initial lengthscale 2 and kernel variance 0.5 on ballbeam and drive, 0.693
elsewhere; initial process noise 0.693 and observation noise 1.693 (what their code does in effect). Deviations:
ARD lengthscales on every data set (theirs: only ballbeam and drive); float64 (theirs: float32); the final
parameters are evaluated (their checkpoint choice is not recorded).

A second configuration, ``prssm_style`` (:data:`PRSSM_STYLE_SETTINGS`), was fixed in advance from the PR-SSM
reference code: identity mean function (residual dynamics), initial process noise 0.002^2 and observation noise 1.
Both are reported; neither is chosen after looking at test scores.
"""
import contextlib
import logging
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from .. import datasets as ds_module
from .._config import CPU_COUNT
from ..estimator import GradientTrainedModel
from ..models.registry import (AUTHORS_SETTINGS, DEFAULT_SETTINGS, PRSSM_STYLE_SETTINGS,  # noqa: F401 (importable here)
                               Q_MODEL, RUN_SETTINGS, make_model)
from ..models.registry import MODELS as MODEL_CLASSES
from ..params import GPSSMSpec
from .._versions import versions
from ..ops.threads import use_threads
from ..protocols import evaluate
from . import runs as runs_module
from .stats import paired_bootstrap, paired_scores

#: The protocols every sweep row is scored under, in the order of the Markdown tables (the committed results').
SWEEP_PROTOCOLS = ("paper", "causal", "freerun", "envi", "simulate")

logger = logging.getLogger(__name__)

DATASETS = ("actuator", "ballbeam", "drive", "dryer", "gas_furnace")
#: The multi-output plants of ``gpssm-np reproduce mimo`` (issue #14), with the same sweep machinery.
MIMO_DATASETS = ("cd_player_arm", "winding", "steamgen", "dryer2")
MODELS = tuple(MODEL_CLASSES)

#: The paper's Table 1 (standardised RMSE, 100-step windows, the ``paper`` protocol).
PAPER_TABLE1 = {
    "dssm": {"actuator": 3.0752, "ballbeam": 2.6311, "drive": 1.8417, "dryer": 2.7055, "gas_furnace": 1.7746},
    "prssm": {"actuator": 0.3592, "ballbeam": 0.9082, "drive": 1.0459, "dryer": 0.1334, "gas_furnace": 0.3356},
    "odgpssm": {"actuator": 0.2668, "ballbeam": 0.8309, "drive": 0.9945, "dryer": 0.1171, "gas_furnace": 0.3225},
}

#: EnVI's Table II (Lin et al., IEEE TSP 2024; RMSE in original units, mean over five seeds; its code's protocol,
#: ``protocols.py`` "envi"), the rows of the three models of this package and EnVI (../shared/research/
#: envi_reference.md s6; whether the ODGPSSM and PRSSM rows used the same protocol is not verified there).
ENVI_TABLE2 = {
    "envi": {"actuator": 0.657, "ballbeam": 0.055, "drive": 0.703, "dryer": 0.125, "gas_furnace": 1.388},
    "odgpssm": {"actuator": 0.666, "ballbeam": 0.068, "drive": 0.708, "dryer": 0.171, "gas_furnace": 1.704},
    "prssm": {"actuator": 0.691, "ballbeam": 0.074, "drive": 0.647, "dryer": 0.174, "gas_furnace": 1.503},
}

#: Options of the evaluation protocols (``protocols.py``): 100-step windows, at most 6 of them, 100 burn-in steps.
PROTOCOL_OPTIONS = {"window": 100, "max_windows": 6, "burn_in": 100}

#: The models compared with ODGPSSM in the summary's paired intervals.
LINEAR_MODELS = ("arx", "lgssm")


def run_config(settings, name="authors", protocol_options=None):
    """Everything besides (dataset, model, seed) and the code that determines a run's numbers."""
    return {"settings_name": name, "settings": dict(settings),
            "protocol_options": dict(PROTOCOL_OPTIONS if protocol_options is None else protocol_options)}


def run_one(dataset_name, model_name, seed, settings=AUTHORS_SETTINGS, data_dir=None, threads=None,
            protocol_options=None, command=None):
    """Train and evaluate one model; returns the list of rows (one per protocol), each with the run's provenance
    (``runs.provenance``). ``threads``: kernel threads of the run (None: ``GPSSM_NP_THREADS``); the results do not
    depend on it."""
    started, start = runs_module.utc_now(), time.perf_counter()
    with contextlib.nullcontext() if threads is None else use_threads(threads):
        rows = _run_one(dataset_name, model_name, seed, settings, data_dir,
                        dict(PROTOCOL_OPTIONS if protocol_options is None else protocol_options))
    prov = runs_module.provenance(started, time.perf_counter() - start, command)
    return [dict(row, provenance=prov) for row in rows]


def _run_one(dataset_name, model_name, seed, settings, data_dir, protocol_options):
    start = time.perf_counter()
    dataset = ds_module.load(dataset_name, data_dir)
    model = make_model(model_name, dataset, seed, settings)
    plan = {k: settings[k] for k in ("seq_len", "stride", "batch_size", "lr", "num_samples") if settings[k] is not None}
    training = dict(plan=plan, epochs=settings["epochs"], progress=False)  # the linear models take none
    model.fit(dataset.y_train, dataset.u_train, **(training if isinstance(model, GradientTrainedModel) else {}))
    train_seconds = time.perf_counter() - start
    windows = {k: protocol_options[k] for k in ("window", "max_windows")}
    rows = []
    for protocol in SWEEP_PROTOCOLS:
        t0 = time.perf_counter()
        options = {"paper": windows, "freerun": {}, "envi": {}, "simulate": {},
                   "causal": dict(windows, burn_in=protocol_options["burn_in"])}[protocol]
        if protocol != "paper":
            options["num_particles"] = settings["eval_num_particles"]
        res = evaluate(model, dataset, protocol, num_samples=settings["eval_num_samples"], seed=seed, **options)
        rows.append({"dataset": dataset_name, "model": model_name, "seed": int(seed), "protocol": protocol,
                     "rmse": res["rmse"], "rmse_per_output": res["rmse_per_output"],
                     "rmse_original_units": res["rmse_original_units"],
                     "rmse_original_units_per_output": res["rmse_original_units_per_output"], "nlpd": res["nlpd"],
                     "coverage95": res["coverage95"], "per_window": res["per_window"],
                     "seconds": train_seconds + time.perf_counter() - t0, "train_seconds": train_seconds,
                     "final_loss": model.history_[-1] if model.history_ else None,
                     "dim_x": model.spec.dim_x if model.has_latent_state else None,  # the ARX has lags, no state
                     **mixing_summary(model), **training_choice(model)})
    return rows


def mixing_summary(model):
    """What the learned transition says about output dependence (GP models; {} otherwise): the singular values of
    A diag(sqrt(s2_q)), the GP part's amplitude in each direction of the state, beside the process noise's standard
    deviations sqrt(q_d). One large singular value: the latent GPs drive the states together; values far below
    sqrt(q): the GP residual does little beside the mean function."""
    if not isinstance(getattr(model, "spec", None), GPSSMSpec):
        return {}
    p = model.constrained_params()
    mixing = np.asarray(p["A"]) * np.sqrt(np.asarray(p["variance"]))[None, :]
    return {"gp_singular_values": [float(v) for v in np.linalg.svd(mixing, compute_uv=False)],
            "process_std": [float(v) for v in np.sqrt(p["process_var"])]}


def gp_part_structure(row):
    """How many state directions the GP part of a run drives, from its :func:`mixing_summary` ({} without one):
    ``gp_directions``, the participation ratio (sum s^2)^2 / sum s^4 of the singular values s of A diag(sqrt(s2))
    (1: one shared latent function drives the states; Q: Q equal directions); ``gp_over_noise``, the largest s
    over the largest process-noise standard deviation (below 1: the GP part is smaller than the noise beside it,
    as at a kept warm start). Both read the prior amplitude of the GP part, not the size of the learned q(u)."""
    s = np.asarray(row.get("gp_singular_values") or [], dtype=float)
    if not s.size or not np.any(s > 0):
        return {}
    return {"gp_directions": float(np.sum(s**2) ** 2 / np.sum(s**4)),
            "gp_over_noise": float(s.max() / np.max(row["process_std"]))}


def training_choice(model):
    """What a GP model's default fit chose beside its parameters ({} for a model without): the kept ``lr_scale``
    candidate and the paired t statistic of every later one (``models/training.py``, step 8)."""
    if not hasattr(model, "lr_scale_tests_"):
        return {}
    return {"lr_scale": model.lr_scale_, "lr_scale_t": [test["t"] for test in model.lr_scale_tests_]}


#: Options of the protocols when sweep files did not record them (the defaults of protocols.py then).
LEGACY_PROTOCOL_OPTIONS = {"window": 100, "max_windows": 6, "burn_in": 100}


def legacy_config(document):
    """The configuration a sweep file written before rows had keys says it ran: its file-level settings, and as
    their name the configuration of :data:`RUN_SETTINGS` that differs from them in the fewest values (the sweeps built
    them as ``dict(RUN_SETTINGS[base], **overrides)``, the command line overriding only epochs; None on a tie)."""
    settings = document.get("settings") or {}
    distance = {n: sum(values.get(k) != settings.get(k) for k in set(values) | set(settings))
                for n, values in RUN_SETTINGS.items()}
    best = min(distance.values())
    names = [n for n, d in distance.items() if d == best]
    return run_config(settings, names[0] if len(names) == 1 else None, LEGACY_PROTOCOL_OPTIONS)


def read_document(path, stated=None):
    """A sweep document from ``path`` with every row in the current form: rows of a legacy file (no per-row
    provenance) are read with their file-level provenance (``runs.legacy_rows``). None if there is no file."""
    document = runs_module.read_sweep_file(path, ("dataset", "model", "seed"))
    if document is None:
        return None
    if any("provenance" not in row for row in document.get("runs", [])):
        config = document.get("config") or legacy_config(document)
        document["runs"] = runs_module.legacy_rows(document, config, stated)
        document.setdefault("config", config)
        document.setdefault("invocations", [{"legacy": True, "command": document.get("command"),
                                             "versions": document.get("versions"),
                                             "wall_seconds": document.get("wall_seconds")}])
    return document


def _identity(row):
    return row["dataset"], row["model"], row["seed"]


def sweep(datasets=DATASETS, models=MODELS, seeds=5, settings=None, out="results", jobs=1, scheduler=None,
          data_dir=None, name="table1", base="authors", allow_mixed_versions=False, command=None):
    """Run every (dataset, model, seed) whose run is not already in ``out/<name>.json`` with the same key, and
    write ``<name>.json`` and ``<name>.md``. ``base`` names the configuration in :data:`RUN_SETTINGS` ("authors" or
    "prssm_style") that ``settings`` overrides.

    Resuming (``runs.reconcile``): finished runs with the same settings, protocol options and code version are
    reused; runs of other settings move to the document's ``superseded_runs``; finished runs of another code
    version raise ValueError unless ``allow_mixed_versions``. ``command``: how the sweep was invoked, recorded in
    every new row. Returns the JSON document; its ``invocations[-1]`` says how many runs were reused, computed and
    superseded."""
    if base not in RUN_SETTINGS:
        raise ValueError(f"base: expected one of {sorted(RUN_SETTINGS)}, got {base!r}")
    stray = sorted(set(settings or {}) - set(RUN_SETTINGS[base]))
    if stray:
        raise ValueError(f"settings: unknown {stray}; expected names from {sorted(RUN_SETTINGS[base])}")
    settings = dict(RUN_SETTINGS[base], **(settings or {}))
    unknown = [d for d in datasets if d not in DATASETS + MIMO_DATASETS]
    if unknown:
        raise ValueError(f"datasets: unknown {unknown}; expected names from {DATASETS + MIMO_DATASETS}")
    for m in models:
        if m not in MODELS and not Q_MODEL.match(m):
            raise ValueError(f"models: unknown {m!r}; expected names from {MODELS} or odgpssm_q<Q> (Q = 1, 2, ...)")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    if not seed_list:
        raise ValueError(f"seeds: expected a positive count or a non-empty list of seeds, got {seeds!r}")
    for argname, values in (("datasets", datasets), ("models", models), ("seeds", seed_list)):
        repeated = sorted({v for v in values if list(values).count(v) > 1}, key=str)
        if repeated:  # a repeated run would count twice in the tables' n and spread
            raise ValueError(f"{argname}: {repeated} named more than once; name each once")
    os.makedirs(out, exist_ok=True)
    json_path = os.path.join(out, f"{name}.json")
    config = run_config(settings, base)
    code = runs_module.code_version()
    if command is None:
        command = {"function": "gpssm_np.experiments.table1.sweep", "datasets": list(datasets),
                   "models": list(models), "seeds": seed_list, "settings": base, "jobs": jobs,
                   "scheduler": scheduler, "name": name}
    earlier = read_document(json_path) or {}
    rows, still_superseded = runs_module.revive(earlier, config, code)
    kept, superseded, done = runs_module.reconcile(rows, _identity, lambda r: r["protocol"], SWEEP_PROTOCOLS, config,
                                                   code, allow_mixed_versions, json_path)
    requested = [(d, m, s) for d in datasets for m in models for s in seed_list]
    todo = [key for key in requested if key not in done]
    runs = list(kept)
    invocation = {"command": command, "code": code, "started": runs_module.utc_now(), "versions": versions(),
                  "machine": runs_module.machine(), "reused": len(requested) - len(todo),
                  "reused_other_code": len({_identity(r) for r in kept if r.get("code") != code}), "computed": 0,
                  "superseded": len({_identity(r) for r in superseded}), "wall_seconds": None}
    document = {"config": config, "config_key": runs_module.config_key(config), "settings": settings,
                "runs": runs, "superseded_runs": still_superseded + superseded,
                "invocations": earlier.get("invocations", []) + [invocation], "wall_seconds": None}
    logger.info("%s: reusing %d of %d runs, computing %d; %d runs with other settings superseded", json_path,
                invocation["reused"], len(requested), len(todo), invocation["superseded"])
    started = time.perf_counter()
    earlier_seconds = float(earlier.get("wall_seconds") or 0.0)

    def write():  # the summary with its JSON, so that a stopped sweep leaves the two in agreement
        invocation["wall_seconds"] = time.perf_counter() - started
        document["wall_seconds"] = earlier_seconds + invocation["wall_seconds"]
        runs_module.write_text(json_path, runs_module.dumps(document))
        runs_module.write_text(os.path.join(out, f"{name}.md"), markdown(document))

    def record(rows):
        runs.extend(dict(row, config_key=document["config_key"], code=code) for row in rows)
        invocation["computed"] += 1
        write()
        logger.info("finished %s/%s seed %s (%d of %d)", rows[0]["dataset"], rows[0]["model"], rows[0]["seed"],
                    invocation["computed"], len(todo))

    if scheduler:
        from dask.distributed import Client, as_completed as dask_completed

        with Client(scheduler) as client:
            # one kernel thread per task: a Dask worker may run several tasks in its threads at once
            futures = [client.submit(run_one, d, m, s, settings, data_dir, 1, PROTOCOL_OPTIONS, command, pure=False)
                       for d, m, s in todo]
            for future in dask_completed(futures):
                record(future.result())
    elif jobs > 1 and len(todo) > 1:
        threads = max(1, CPU_COUNT // jobs)  # the processes share the cores
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_one, d, m, s, settings, data_dir, threads, PROTOCOL_OPTIONS, command)
                       for d, m, s in todo]
            for future in as_completed(futures):
                record(future.result())
    else:
        for d, m, s in todo:
            record(run_one(d, m, s, settings, data_dir, None, PROTOCOL_OPTIONS, command))
    write()
    return document


def summarise(runs):
    """{protocol: {model: {dataset: (mean, std, n)}}} of the standardised RMSE over seeds; std is the population
    standard deviation (ddof 0)."""
    cells = {}
    for row in runs:
        cells.setdefault(row["protocol"], {}).setdefault(row["model"], {}).setdefault(row["dataset"], []).append(
            row["rmse"])
    return {p: {m: {d: (float(np.mean(v)), float(np.std(v)), len(v)) for d, v in by_d.items()}
                for m, by_d in by_m.items()} for p, by_m in cells.items()}


def paired_comparisons(runs, model="odgpssm", others=("prssm", "best linear")):
    """{protocol: {label: {dataset: (paired_bootstrap result, other model)}}}: ``model`` minus each of ``others``
    per seed (negative: ``model`` better). "best linear" is, per data set and protocol, the model of
    :data:`LINEAR_MODELS` with the lowest mean RMSE."""
    summary = summarise(runs)
    out = {}
    for protocol, by_model in summary.items():
        if model not in by_model:
            continue
        for label in others:
            for dataset in by_model[model]:
                if label == "best linear":
                    linear = [m for m in LINEAR_MODELS if dataset in by_model.get(m, {})]
                    if not linear:
                        continue
                    other = min(linear, key=lambda m: by_model[m][dataset][0])
                else:
                    other = label
                seeds, a, b = paired_scores(runs, model, other, dataset, protocol)
                if seeds:
                    out.setdefault(protocol, {}).setdefault(label, {})[dataset] = (paired_bootstrap(a, b), other)
    return out


def _original_units_table(rows, protocol, datasets):
    """Markdown lines: the RMSE in original units under ``protocol`` (mean +- population std over seeds), with
    EnVI's published Table II beside the ``envi`` protocol. A data set of several outputs, whose units differ, has no
    pooled RMSE in original units: its cell gives each output's (mean over seeds), in the data set's order."""
    lines = [f"### Protocol `{protocol}` in original units (mean +- population std over seeds)", "",
             "| model | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
    orig = {}
    for row in rows:
        value = row["rmse_original_units"]
        if value is None and row.get("rmse_original_units_per_output"):
            value = list(row["rmse_original_units_per_output"])
        if row["protocol"] == protocol and value is not None:
            orig.setdefault(row["model"], {}).setdefault(row["dataset"], []).append(value)

    def cell(values):
        if isinstance(values[0], list):
            return " / ".join(f"{v:.4g}" for v in np.mean(values, axis=0)) + f" (each output's mean, n={len(values)})"
        return f"{np.mean(values):.4f} +- {np.std(values):.4f}"

    for model, by_d in sorted(orig.items()):
        lines.append(f"| {model} | " + " | ".join(cell(by_d[d]) if d in by_d else "" for d in datasets) + " |")
    if protocol == "envi" and set(datasets) <= set(DATASETS):
        for model, by_d in ENVI_TABLE2.items():
            lines.append(f"| {model} (EnVI paper, Table II) | " + " | ".join(
                "-" if by_d.get(d) is None else f"{by_d[d]:.3f}" for d in datasets) + " |")
    return lines + [""]


def _per_model_table(rows, datasets, key, title, number_format):
    """Markdown lines: ``key`` of the causal rows per model and data set, the mean over seeds in ``number_format``,
    (None) the distinct values, or (a function) what it makes of the values; nothing when no row has ``key``."""
    cells = {}
    for row in rows:
        if row["protocol"] == "causal" and row.get(key) is not None:
            cells.setdefault(row["model"], {}).setdefault(row["dataset"], []).append(row[key])
    if not cells:
        return []
    def cell(values):
        if callable(number_format):
            return number_format(values)
        if number_format:
            return number_format.format(float(np.mean(values)))
        return ", ".join(str(v) for v in sorted(set(values)))

    lines = [f"### {title}", "", "| model | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
    for model, by_d in sorted(cells.items()):
        lines.append(f"| {model} | " + " | ".join(cell(by_d[d]) if d in by_d else "" for d in datasets) + " |")
    return lines + [""]


def settings_line(config):
    """What a sweep ran with, in one sentence: the named settings, the gradient-trained models' epochs (or the
    default fit) and the protocols' options, from the document's ``config``."""
    settings = config.get("settings") or {}
    epochs = settings.get("epochs")
    training = f"{epochs} epochs of the epoch loop" if epochs is not None else "each its own default fit"
    options = ", ".join(f"{k} {v}" for k, v in (config.get("protocol_options") or {}).items())
    return (f"Settings `{config.get('settings_name')}` (`models/registry.py`): the gradient-trained models train "
            f"{training};\nthe protocols' options: {options or 'their defaults'}.")


def markdown(document):
    """Markdown tables under a line that states the settings they ran with: one per protocol, models x data sets,
    mean +- population std over seeds, the paper's row beside; paired bootstrap intervals of ODGPSSM's per-seed
    differences; the code versions of the rows."""
    summary = summarise(document["runs"])
    datasets = [d for d in DATASETS + MIMO_DATASETS if any(d == r["dataset"] for r in document["runs"])]
    lines = [settings_line(document.get("config") or {}), ""]
    for protocol in SWEEP_PROTOCOLS:
        if protocol not in summary:
            continue
        lines += [f"### Protocol `{protocol}` (standardised RMSE, mean +- population std over seeds)", "",
                  "| model | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
        for model, by_d in sorted(summary[protocol].items()):
            cells = [f"{by_d[d][0]:.4f} +- {by_d[d][1]:.4f} (n={by_d[d][2]})" if d in by_d else "" for d in datasets]
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
            if protocol == "paper" and model in PAPER_TABLE1 and set(datasets) <= set(PAPER_TABLE1[model]):
                lines.append(f"| {model} (paper Table 1) | "
                             + " | ".join(f"{PAPER_TABLE1[model][d]:.4f}" for d in datasets) + " |")
        lines.append("")
    for protocol in ("freerun", "envi"):
        if protocol in summary:
            lines += _original_units_table(document["runs"], protocol, datasets)
    lines += _per_model_table(document["runs"], datasets, "coverage95", "Coverage of the 95 % intervals, protocol "
                              "`causal` (share of the test outputs inside; mean over seeds)", "{:.0%}")
    lines += _per_model_table(document["runs"], datasets, "dim_x", "State dimension d_x of each run, protocol "
                              "`causal` (the values over seeds)", None)
    def gp_part_cell(parts):
        return (f"{np.mean([p['gp_directions'] for p in parts]):.2f} "
                f"({np.mean([p['gp_over_noise'] for p in parts]):.2f})")

    structure = [dict(row, gp_part=gp_part_structure(row) or None) for row in document["runs"]]
    lines += _per_model_table(structure, datasets, "gp_part", "The GP part: directions it drives (participation "
                              "ratio of the singular values of A diag(sqrt(s2))) and, in brackets, its largest "
                              "singular value over the largest process-noise std (causal, mean over seeds)",
                              gp_part_cell)
    paired = paired_comparisons(document["runs"])
    if paired:
        lines += ["### ODGPSSM minus other models, paired by seed (standardised RMSE)", "",
                  "Mean of the per-seed differences [95 % percentile bootstrap interval over seeds]; negative means "
                  "ODGPSSM is better. Best linear: the one of ARX and LGSSM with the lower mean on that data set "
                  "and protocol (named in brackets).", "",
                  "| protocol | compared with | " + " | ".join(datasets) + " |",
                  "|---|---|" + "---|" * len(datasets)]
        for protocol in SWEEP_PROTOCOLS:
            for label, by_d in paired.get(protocol, {}).items():
                cells = []
                for d in datasets:
                    if d not in by_d:
                        cells.append("")
                        continue
                    r, other = by_d[d]
                    name = f" ({other})" if label == "best linear" else ""
                    few = f" (n={r['n']})" if r["n"] < 5 else ""  # the spread of so few seeds, no interval
                    cells.append(f"{r['mean']:+.4f} [{r['low']:+.4f}, {r['high']:+.4f}]{few}{name}")
                lines.append(f"| {protocol} | {label} | " + " | ".join(cells) + " |")
        lines.append("")
    codes = {}
    for row in document["runs"]:
        code = row.get("code", runs_module.LEGACY)
        if code == runs_module.LEGACY:
            commit = row.get("provenance", {}).get("commit")
            code = f"legacy, commit {commit}" if commit else "legacy, commit not recorded"
        codes.setdefault(code, set()).add(_identity(row))
    if codes:
        lines.append("Runs by code version: " + "; ".join(
            f"`{code}` {len(ids)}" for code, ids in sorted(codes.items())) + " (each row's provenance is in the JSON).")
    wall = document.get("wall_seconds")
    if wall:
        lines.append(f"Wall time of the sweep (all invocations): {wall:.0f} s.")
    return "\n".join(lines) + "\n"
