r"""The car-tracking experiment of the paper (Section 4.1, Fig. 2): unobserved velocities recovered with output
dependence.

Data: the 2-D car-tracking linear Gaussian model (Sarkka 2013, Example 4.3; ``datasets.car_tracking``): state
[p1, p2, v1, v2], T = 120 steps, positions observed with noise 0.5^2, velocities never observed, x_0 known.
Protocol, as the paper states it: d_x = 4, m = 20 inducing points, transition GPs pre-trained on 20 true state
pairs (x_{t-1}, x_t), then trained on the position observations alone with q(x0) fixed at the known x_0.

Settings the paper leaves open, used for both models: Matern-5/2 kernels (the authors' code), zero mean function
(the paper's mu(x) = 0; a first trial with the identity mean gave worse velocity estimates for both models), shared
inducing inputs initialised at the 20 pre-training inputs, Q = 4 latent GPs for ODGPSSM with A initialised at
I + 0.1 N(0, 1) noise, initial lengthscale 5, kernel variance 1, process noise 0.01, observation noise 0.25;
pre-training 300 Adam steps (lr 0.02), training ``epochs`` steps on the whole sequence (lr 0.01, 30 particles).

The inferred states are the smoothed trajectories of a particle filter with backward simulation (FFBSi) under each
trained model; the RMSE of each of the four dimensions against the true states is reported.
"""
import logging
import os
import time

import numpy as np

from .. import ODGPSSM, PRSSM
from .. import _validation as check
from ..datasets import car_tracking
from ..transforms import positive_inverse
from . import runs as runs_module
from .stats import paired_bootstrap

logger = logging.getLogger(__name__)

STATE_NAMES = ("p1", "p2", "v1", "v2")
MODELS = ("prssm", "odgpssm")
#: The paper states mu(x) = 0 for the transition prior (and the authors' code uses a zero mean).
MEAN_FUNCTION = "zero"

#: Every setting of a run (module docstring); ``reproduce`` keys its runs on all of them (and the code version).
CAR_TRACKING_SETTINGS = {
    "T": 120, "epochs": 300, "num_particles": 500, "num_trajectories": 100, "num_inducing": 20, "kernel": "matern52",
    "mean_function": MEAN_FUNCTION, "num_latent": 4, "lengthscale": 5.0, "variance": 1.0, "process_noise": 0.01,
    "obs_noise": 0.25, "x0_var": 1e-4, "A_init_noise": 0.1, "pretrain_pairs": 20, "pretrain_iterations": 300,
    "pretrain_lr": 0.02, "lr": 0.01, "num_samples": 30}


def build_models(data, seed, settings=CAR_TRACKING_SETTINGS):
    """ODGPSSM and PRSSM with the experiment's settings, parameters initialised (before pre-training)."""
    s = settings
    # standardize=False: the states are compared with the true positions and velocities, in the data's units
    common = dict(dim_x=4, dim_y=2, dim_u=0, standardize=False, num_inducing=s["num_inducing"], kernel=s["kernel"],
                  mean_function=s["mean_function"], seed=seed, lengthscale=s["lengthscale"], variance=s["variance"],
                  process_noise=s["process_noise"], obs_noise=s["obs_noise"])
    models = {"prssm": PRSSM(**common), "odgpssm": ODGPSSM(num_latent=s["num_latent"], **common)}
    idx = pretraining_indices(len(data.y), s["pretrain_pairs"])
    rng = np.random.default_rng(seed)
    for model in models.values():
        params = model.get_learned_params()
        params["Z"] = data.x[idx - 1].copy()
        params["x0_mean"] = data.x[0].copy()
        params["x0_var"] = positive_inverse(np.full(4, s["x0_var"]))
        if "A" in params:
            params["A"] = np.eye(4) + s["A_init_noise"] * rng.normal(size=(4, s["num_latent"]))
        model.set_learned_params(params)
    return models


def pretraining_indices(T, count=20):
    """The ``count`` steps t (1..T) whose true pairs (x_{t-1}, x_t) pre-train the transition, evenly spaced."""
    return np.linspace(1, T, count).astype(int)


def run(seed=0, epochs=None, num_particles=None, num_trajectories=None, T=None, settings=CAR_TRACKING_SETTINGS):
    """Train both models on one car-tracking sequence and return a dict of results (states, RMSE, seconds).
    ``settings`` (default :data:`CAR_TRACKING_SETTINGS`), with ``epochs``, ``num_particles``, ``num_trajectories``
    and ``T`` overriding it when given."""
    check.seed(seed)  # named here, not by NumPy's generator deep inside
    given = {"epochs": epochs, "num_particles": num_particles, "num_trajectories": num_trajectories, "T": T}
    s = dict(settings, **{k: v for k, v in given.items() if v is not None})
    T = s["T"]
    data = car_tracking(T=T, seed=seed)
    idx = pretraining_indices(T, s["pretrain_pairs"])
    results = {"seed": seed, "T": T, "epochs": s["epochs"], "truth": data.x[1:], "models": {}}
    for name, model in build_models(data, seed, s).items():
        start = time.perf_counter()
        model.pretrain_transition(data.x[idx - 1], data.x[idx], iterations=s["pretrain_iterations"],
                                  lr=s["pretrain_lr"])
        model.fit(data.y, None, epochs=s["epochs"], seed=seed, plan=dict(
            seq_len=T, batch_size=1, lr=s["lr"], num_samples=s["num_samples"], fixed=("x0_mean", "x0_var")))
        trajectories = model.smooth(data.y, num_particles=s["num_particles"],
                                    num_trajectories=s["num_trajectories"], seed=seed)  # (M, T, 4)
        mean, std = trajectories.mean(axis=0), trajectories.std(axis=0)
        rmse = np.sqrt(np.mean((mean - data.x[1:]) ** 2, axis=0))
        results["models"][name] = {"model": model, "mean": mean, "std": std,
                                   "rmse": dict(zip(STATE_NAMES, map(float, rmse))),
                                   "seconds": time.perf_counter() - start}
    return results


def _identity(row):
    return row["seed"]


def run_rows(seed, epochs, command=None):
    """The rows (one per model) of :func:`run` for ``seed``, with the run's provenance, and the run's results."""
    started, start = runs_module.utc_now(), time.perf_counter()
    res = run(seed=seed, settings=dict(CAR_TRACKING_SETTINGS, epochs=epochs))
    prov = runs_module.provenance(started, time.perf_counter() - start, command)
    return [{"seed": seed, "model": name, "rmse": m["rmse"], "seconds": m["seconds"], "provenance": prov}
            for name, m in res["models"].items()], res


def read_document(path):
    """The car-tracking document at ``path`` with every row in the current form (legacy rows read with the
    file-level provenance and the settings of this module with the file's epochs and T), or None."""
    document = runs_module.read_sweep_file(path, ("seed", "model"))
    if document is None:
        return None
    if any("provenance" not in row for row in document.get("runs", [])):
        config = document.get("config") or {"settings": dict(CAR_TRACKING_SETTINGS, epochs=document["epochs"],
                                                              T=document["T"])}
        document["runs"] = runs_module.legacy_rows(document, config)
        document.setdefault("config", config)
        document.setdefault("invocations", [{"legacy": True, "wall_seconds": document.get("wall_seconds")}])
    return document


def markdown(document):
    """A line stating the settings, then mean +- population std of the RMSE per model and dimension, and ODGPSSM
    minus PRSSM paired by seed."""
    rows = document["runs"]
    seeds = sorted({r["seed"] for r in rows})
    s = (document.get("config") or {}).get("settings") or {}
    lines = [f"Settings (`experiments/car_tracking.py`): {s.get('epochs')} epochs on T = {s.get('T')} steps, "
             f"{s.get('num_particles')} particles and {s.get('num_trajectories')} smoothed trajectories.", "",
             "| model | " + " | ".join(STATE_NAMES) + " |", "|---|" + "---|" * len(STATE_NAMES)]
    for name in MODELS:
        values = np.array([[r["rmse"][k] for k in STATE_NAMES] for r in sorted(rows, key=_identity)
                           if r["model"] == name])
        if len(values):
            lines.append(f"| {name} | " + " | ".join(f"{m:.3f} +- {s:.3f}" for m, s in
                                                      zip(values.mean(0), values.std(0))) + " |")
    by_model = {name: {r["seed"]: r["rmse"] for r in rows if r["model"] == name} for name in MODELS}
    common = sorted(set(by_model["odgpssm"]) & set(by_model["prssm"]))
    if common:
        cells = []
        for k in STATE_NAMES:
            r = paired_bootstrap([by_model["odgpssm"][s][k] for s in common],
                                 [by_model["prssm"][s][k] for s in common])
            cells.append(f"{r['mean']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]")
        lines.append("| odgpssm - prssm, paired | " + " | ".join(cells) + " |")
    wall = document.get("wall_seconds") or 0.0
    lines.append(f"\nRMSE of the smoothed states against the truth over {len(seeds)} seeds, mean +- population "
                 "standard deviation; the last row is the mean per-seed difference with its 95 % bootstrap interval "
                 f"over seeds (negative: ODGPSSM better); wall time {wall:.0f} s.")
    return "\n".join(lines) + "\n"


def write_state_figure(res, path, title):
    """Draw the true states of a :func:`run` result ``res`` and each model's smoothed ones (mean and interval; one
    panel per state) under ``title``, and save the figure to ``path`` (PNG). Returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    from ..plotting import plot_states

    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    plot_states(np.arange(1, res["T"] + 1), truth=res["truth"], axes=axes, names=STATE_NAMES,
                estimates={name.upper(): (m["mean"], m["std"]) for name, m in res["models"].items()})
    axes[0].set_title(title)
    axes[-1].set_xlabel("t")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def reproduce(seeds=5, out="results", epochs=CAR_TRACKING_SETTINGS["epochs"], allow_mixed_versions=False, command=None,
              return_document=False):
    """Run :func:`run` for seeds 0..seeds-1 (those not already in ``out/car_tracking.json`` with the same settings
    and code version: ``runs.reconcile``); write ``car_tracking.json`` (RMSE per model, dimension and seed, each
    row with its provenance), ``car_tracking.md`` (mean +- population std, paired differences) and
    ``car_tracking.png`` (the states of the lowest seed computed in this call). Returns the paths written (and the
    document with ``return_document``)."""
    os.makedirs(out, exist_ok=True)
    json_path = os.path.join(out, "car_tracking.json")
    config = {"settings": dict(CAR_TRACKING_SETTINGS, epochs=epochs)}
    code = runs_module.code_version()
    earlier = read_document(json_path) or {}
    rows, still_superseded = runs_module.revive(earlier, config, code)
    kept, superseded, done = runs_module.reconcile(rows, _identity, lambda r: r["model"], MODELS, config, code,
                                                   allow_mixed_versions, json_path)
    todo = [seed for seed in range(seeds) if seed not in done]
    invocation = {"command": command or {"function": "gpssm_np.experiments.car_tracking.reproduce",
                                         "seeds": seeds, "epochs": epochs},
                  "code": code, "started": runs_module.utc_now(), "machine": runs_module.machine(),
                  "reused": seeds - len(todo), "reused_other_code": len({_identity(r) for r in kept
                                                                         if r.get("code") != code}),
                  "computed": 0, "superseded": len({_identity(r) for r in superseded}),
                  "wall_seconds": None}
    document = {"config": config, "config_key": runs_module.config_key(config), "epochs": epochs,
                "T": CAR_TRACKING_SETTINGS["T"], "runs": list(kept),
                "superseded_runs": still_superseded + superseded,
                "invocations": earlier.get("invocations", []) + [invocation], "wall_seconds": None}
    started = time.perf_counter()
    first = None
    md_path = os.path.join(out, "car_tracking.md")

    def write():  # the summary with its JSON, so that a stopped sweep leaves the two in agreement
        invocation["wall_seconds"] = time.perf_counter() - started
        document["wall_seconds"] = float(earlier.get("wall_seconds") or 0.0) + invocation["wall_seconds"]
        runs_module.write_text(json_path, runs_module.dumps(document))
        runs_module.write_text(md_path, markdown(document))

    logger.info("%s: reusing %d of %d seeds, computing %d", json_path, seeds - len(todo), seeds, len(todo))
    for seed in todo:  # each finished seed is written at once (atomically): a stopped sweep resumes after it
        rows, res = run_rows(seed, epochs, invocation["command"])
        first = first or res
        document["runs"].extend(dict(r, config_key=document["config_key"], code=code) for r in rows)
        document["runs"].sort(key=lambda r: (r["seed"], MODELS.index(r["model"])))
        invocation["computed"] += 1
        write()
        logger.info("finished car tracking seed %d (%d of %d)", seed, invocation["computed"], len(todo))
    write()
    paths = [json_path, md_path]
    if first is not None:
        paths.append(write_state_figure(first, os.path.join(out, "car_tracking.png"),
                                        f"Car tracking, seed {first['seed']}: smoothed states (v1, v2 never observed)"))
    return (paths, document) if return_document else paths
