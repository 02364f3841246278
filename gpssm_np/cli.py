"""The ``gpssm-np`` command (also ``python -m gpssm_np``).

Sub-commands: ``demo`` (car-tracking demo: PNG + JSON), ``fit`` (train a model on a data set, save it),
``evaluate`` (score a saved model under a protocol, JSON), ``forecast`` (forecast a test window with a saved model,
JSON + PNG), ``info`` (versions). Each writes where ``--out`` says and prints the paths it wrote. ``fit``,
``evaluate`` and ``forecast`` read a benchmark (``--dataset NAME``) or your own CSV file (``--csv FILE --outputs
NAME ... --inputs NAME ...``, ``datasets.from_csv``); ``fit`` records the data set's name in the model file and
``evaluate`` warns when it scores the model on data of another name.
"""
import argparse
import json
import logging
import os
import shlex
import sys
import time

import numpy as np

from ._versions import versions
from .protocols import PROTOCOLS
from .experiments.table1 import MODELS  # the models `fit` trains and saves: every model of the package


def _write_json(path, obj):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=2, default=_jsonable)
    return path


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# -- demo -----------------------------------------------------------------------------------------------------
def cmd_demo(args):
    from .experiments import car_tracking
    from .plotting import plot_states

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(args.out, exist_ok=True)
    epochs = 40 if args.quick else args.epochs
    start = time.perf_counter()
    res = car_tracking.run(seed=args.seed, epochs=epochs, num_particles=200 if args.quick else 500)
    t = np.arange(1, res["T"] + 1)
    estimates = {name.upper(): (m["mean"], m["std"]) for name, m in res["models"].items()}
    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    plot_states(t, truth=res["truth"], estimates=estimates, axes=axes, names=car_tracking.STATE_NAMES)
    axes[0].set_title("Car tracking: smoothed latent states (velocities v1, v2 never observed)")
    axes[-1].set_xlabel("t")
    fig.tight_layout()
    png = os.path.join(args.out, "car_tracking.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    summary = {"experiment": "car_tracking", "seed": args.seed, "epochs": epochs, "T": res["T"],
               "rmse": {name: m["rmse"] for name, m in res["models"].items()},
               "seconds": {name: m["seconds"] for name, m in res["models"].items()},
               "wall_seconds": time.perf_counter() - start, "versions": versions()}
    path = _write_json(os.path.join(args.out, "car_tracking.json"), summary)
    for name, m in res["models"].items():
        print(f"{name:8s} RMSE " + "  ".join(f"{k}={v:.3f}" for k, v in m["rmse"].items()))
    print(f"wrote {png}\nwrote {path}")
    return 0


# -- fit / evaluate / forecast ----------------------------------------------------------------------------------
def _load_data(args):
    """The data set of ``--dataset NAME``, or of ``--csv FILE --outputs ... --inputs ...``."""
    from . import datasets

    if args.csv is None:
        if args.outputs or args.inputs:
            raise ValueError("--outputs, --inputs: these name the columns of a --csv file; --dataset "
                             f"{args.dataset} has its own")
        return datasets.load(args.dataset, args.data_dir)
    if not args.outputs:
        raise ValueError(f"--outputs: name the output columns of {args.csv} (--outputs NAME ... --inputs NAME ...)")
    return datasets.from_csv(args.csv, outputs=args.outputs, inputs=args.inputs or (),
                             train_fraction=args.train_fraction)


def cmd_fit(args):
    from .experiments.table1 import SETTINGS, make_model
    from .io import save

    ds = _load_data(args)
    model = make_model(args.model, ds, args.seed, SETTINGS[args.settings])
    options = {"epochs": args.epochs, "seq_len": args.seq_len, "batch_size": args.batch_size, "lr": args.lr,
               "num_samples": args.num_samples}
    if args.settings == "authors":  # the authors' loop: 70 epochs unless told otherwise
        options["epochs"] = options["epochs"] or 70
    start = time.perf_counter()
    model.fit(ds.y_train, ds.u_train, progress=True, data_name=ds.name,
              **{k: v for k, v in options.items() if v is not None})
    out = args.out or f"{ds.name}_{args.model}_seed{args.seed}.npz"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)  # as the other commands do for --out
    save(model, out)
    loss = f"{len(model.history_)} steps, final loss {model.history_[-1]:.4f}" if model.history_ else "closed form"
    chosen = getattr(model, "dim_x_scores_", None)  # dim_x="auto": the state dimension fit chose, and among which
    kind = getattr(model, "warm_start_", None)  # the linear model the warm start came from
    dims = (f"{kind} warm start, " if kind else "") + (
        f"d_x = {model.spec.dim_x} chosen from {min(chosen)}-{max(chosen)}, " if chosen else "")
    print(f"trained {args.model} on {ds.name} ({dims}{loss}) in {time.perf_counter() - start:.1f} s\nwrote {out}")
    return 0


def cmd_evaluate(args):
    from .io import load
    from .protocols import evaluate

    model = load(args.model_file)
    ds = _load_data(args)
    results = {p: evaluate(model, ds, p, num_samples=args.num_samples, seed=args.seed) for p in args.protocol}
    for p, r in results.items():
        print(f"{p:8s} RMSE {r['rmse']:.4f}  NLPD {r['nlpd']:.3f}  coverage95 {r['coverage95']:.2f}")
    if args.out:
        print(f"wrote {_write_json(args.out, {'dataset': ds.name, 'results': results})}")
    return 0


def cmd_forecast(args):
    from .io import load
    from .plotting import plot_forecast_figure
    from .protocols import evaluation_data

    model = load(args.model_file)
    ds = _load_data(args)
    data = evaluation_data(model, ds)  # the arrays in the units the model takes; warns for another data set's model
    standardised = data.y_test is ds.y_test  # else the raw series, for a model fitted on them
    y_all = np.concatenate([data.y_train, data.y_test])
    u_all = np.concatenate([data.u_train, data.u_test])
    g = len(ds.y_train) + args.start
    if not 0 <= args.start < len(ds.y_test):
        raise ValueError(f"--start: expected an index into the test half (0..{len(ds.y_test) - 1}), got {args.start}")
    remaining = len(ds.y_test) - args.start
    if not 1 <= args.steps <= remaining:
        raise ValueError(f"--steps: the test half of {ds.name} has {remaining} steps from --start {args.start} "
                         f"on (its length is {len(ds.y_test)}), got --steps {args.steps}; lower --steps or --start")
    steps = args.steps
    past = slice(max(0, g - args.burn_in), g)
    fc = model.forecast(u_all[g:g + steps], y_past=y_all[past], u_past=u_all[past], num_samples=args.num_samples,
                        seed=args.seed)
    lower, upper = fc.interval(0.95)
    out = args.out or "forecast"
    os.makedirs(out, exist_ok=True)
    path = _write_json(os.path.join(out, "forecast.json"), {
        "dataset": ds.name, "start": args.start, "steps": steps, "mean": fc.mean, "std": fc.std,
        "lower95": lower, "upper95": upper, "truth": y_all[g:g + steps]})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2 if ds.u_test.shape[1] else 1, 1, figsize=(8, 5), sharex=True, squeeze=False)
    plot_forecast_figure(fc, u_all[g:g + steps], y_past=y_all[past], u_past=u_all[past], y_true=y_all[g:g + steps],
                         y_label=f"{ds.y_names[0] if ds.y_names else 'y[0]'}{' (standardised)' * standardised}",
                         u_labels=ds.u_names,
                         axes=axes[:, 0])
    axes[0, 0].set_title(f"{ds.name}: causal forecast from test step {args.start}, after the {len(y_all[past])} "
                         "steps before it")
    fig.tight_layout()
    png = os.path.join(out, "forecast.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"wrote {path}\nwrote {png}")
    return 0


def cmd_reproduce(args):
    from .experiments import table1

    if args.what in ("table1", "qstudy", "mimo"):
        if args.what == "qstudy":
            models = args.models or [f"odgpssm_q{q}" for q in range(1, 9)]
        elif args.what == "mimo":  # the package's defaults on the multi-output plants (issue #14)
            models = args.models or ["odgpssm", "prssm", "arx", "lgssm"]
        else:
            models = args.models or list(table1.MODELS)
        settings = {} if args.epochs is None else {"epochs": args.epochs}
        if args.settings is None:
            args.settings = "default" if args.what == "mimo" else "authors"
        default_sets = table1.MIMO_DATASETS if args.what == "mimo" else table1.DATASETS
        doc = table1.sweep(datasets=args.datasets or list(default_sets), models=models, seeds=args.seeds,
                           settings=settings, out=args.out, jobs=args.jobs, scheduler=args.scheduler,
                           data_dir=args.data_dir, name=args.name or args.what, base=args.settings,
                           allow_mixed_versions=args.allow_mixed_versions, command=args.command_line)
        _print_reuse(doc["invocations"][-1])
        if args.what == "qstudy":
            from .experiments.q_study import write_figure

            print(f"wrote {write_figure(doc, os.path.join(args.out, (args.name or 'qstudy') + '.png'))}")
        name = args.name or args.what
        print(f"wrote {os.path.join(args.out, name + '.json')}\nwrote {os.path.join(args.out, name + '.md')}")
        return 0
    from .experiments import car_tracking

    paths, doc = car_tracking.reproduce(seeds=args.seeds, out=args.out,
                                        epochs=300 if args.epochs is None else args.epochs,
                                        allow_mixed_versions=args.allow_mixed_versions, command=args.command_line,
                                        return_document=True)
    _print_reuse(doc["invocations"][-1])
    print("\n".join(f"wrote {p}" for p in paths))
    return 0


def _print_reuse(invocation):
    print(f"reused {invocation['reused']} finished runs with the same settings and code, computed "
          f"{invocation['computed']}; {invocation['superseded']} runs with other settings moved to superseded_runs")


def cmd_info(args):
    for key, value in versions().items():
        print(f"{key:12s} {value}")
    return 0


def make_parser():
    parser = argparse.ArgumentParser(prog="gpssm-np", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="car-tracking demo: train ODGPSSM and PRSSM, plot the inferred latent states")
    p.add_argument("--out", default="gpssm_np_demo", help="output folder (default ./gpssm_np_demo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=300, help="training steps on the sequence (default 300)")
    p.add_argument("--quick", action="store_true", help="a few seconds: fewer steps and particles")
    p.set_defaults(func=cmd_demo)

    def data_args(p):
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", help="a benchmark: actuator, ballbeam, drive, dryer, gas_furnace, "
                                              "cd_player_arm, winding, steamgen or dryer2")
        source.add_argument("--csv", metavar="FILE", help="your own data: a CSV file with a header row of column "
                                                          "names (gpssm_np.datasets.from_csv), with --outputs")
        p.add_argument("--outputs", nargs="+", metavar="NAME", help="with --csv: the output columns")
        p.add_argument("--inputs", nargs="*", metavar="NAME", help="with --csv: the input columns (none: no inputs)")
        p.add_argument("--train-fraction", type=float, default=0.5,
                       help="with --csv: the share of rows, from the top, that is the training part (default 0.5)")
        p.add_argument("--data-dir", default=None, help="data folder (default: $GPSSM_NP_DATA)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--num-samples", type=int, default=50, help="particles (default 50)")

    p = sub.add_parser("fit", help="train a model (the package's defaults, or the authors' settings) and save it")
    data_args(p)
    p.add_argument("--model", default="odgpssm", choices=MODELS)
    p.add_argument("--settings", default="default", choices=["default", "authors"],
                   help="default: the package's recipe (warm start, validation-based stopping); authors: the "
                        "paper's code (70 epochs)")
    p.add_argument("--epochs", type=int, default=None, help="a fixed number of epochs instead of the stopping rule")
    p.add_argument("--seq-len", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--out", default=None, help="model file (default DATASET_MODEL_seedSEED.npz, DATASET the CSV "
                                               "file's name without .csv for --csv)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("evaluate", help="score a saved model under one or more protocols")
    p.add_argument("model_file")
    data_args(p)
    p.add_argument("--protocol", nargs="+", default=["causal", "simulate", "freerun"],
                   choices=list(PROTOCOLS))
    p.add_argument("--out", default=None, help="JSON file for the results")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("forecast", help="causal forecast of a test window with a saved model (JSON + PNG)")
    p.add_argument("model_file")
    data_args(p)
    p.add_argument("--start", type=int, default=0, help="first forecast step, index into the test half")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--burn-in", type=int, default=100, help="past steps the particle filter reads")
    p.add_argument("--out", default=None, help="output folder (default ./forecast)")
    p.set_defaults(func=cmd_forecast)

    p = sub.add_parser("reproduce", help="the paper's experiments (table1, car tracking over seeds, qstudy) and the "
                                         "multi-output plants (mimo)")
    p.add_argument("what", choices=["table1", "car", "qstudy", "mimo"])
    p.add_argument("--datasets", nargs="+", default=None,
                   help="default: the five of Table 1, or the four multi-output plants (mimo)")
    p.add_argument("--models", nargs="+", default=None,
                   help="default: odgpssm prssm dssm arx lgssm (table1), odgpssm_q1..odgpssm_q8 (qstudy)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epochs", type=int, default=None, help="default: the authors' 70 (car: 300 steps)")
    p.add_argument("--out", default="results")
    p.add_argument("--jobs", type=int, default=1, help="parallel local processes")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (pip install gpssm_np[dask])")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--settings", default=None, choices=["authors", "prssm_style", "default", "enkf", "default_prior"],
                   help="model and training configuration (experiments/table1.py); default: authors for table1, "
                        "qstudy and car, default for mimo")
    p.add_argument("--name", default=None, help="file stem of the outputs (default: the experiment's name)")
    p.add_argument("--allow-mixed-versions", action="store_true",
                   help="reuse finished runs of other code versions (legacy rows included) in the same file; "
                        "each row keeps its own commit (default: an error)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("info", help="print the versions that matter")
    p.set_defaults(func=cmd_info)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = make_parser().parse_args(argv)
    args.command_line = shlex.join(["gpssm-np"] + argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        code = args.func(args)
        sys.stdout.flush()  # a reader gone early (gpssm-np info | head) shows here, where it can be handled
        return code
    except BrokenPipeError:
        # stop quietly, as Python's documentation advises: stdout goes to devnull so that the flush at exit cannot
        # fail again, and the exit code is 1, Python's for EPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, FileNotFoundError) as err:
        print(f"gpssm-np {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
