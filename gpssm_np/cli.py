"""The ``gpssm-np`` command (also ``python -m gpssm_np``).

Sub-commands: ``demo`` (car-tracking demo: PNG + JSON), ``fit`` (train a model on a data set, save it),
``evaluate`` (score a saved model under protocols, by default causal, simulate and freerun: printed, and JSON with
``--out``), ``forecast`` (forecast a test window with a saved model, JSON + PNG), ``reproduce`` (the paper's
experiments and the multi-output plants, resumable sweeps), ``info`` (versions, printed). Those that write files
write where ``--out`` says and print the paths they wrote. ``fit``,
``evaluate`` and ``forecast`` read a benchmark (``--dataset NAME``) or your own CSV file (``--csv FILE --outputs
NAME ... --inputs NAME ...``, ``datasets.from_csv``). ``fit`` trains on the file's units (the model keeps their
scaling, ``scaling_``) and records the data set's name, its channel names and, for a CSV file, the train fraction
in the model file; ``evaluate`` and ``forecast`` reorder columns given by name in another order, refuse other
names, warn for data of another name or another train fraction, and report in the file's units beside the
standardised scale.
"""
import argparse
import contextlib
import json
import logging
import os
import re
import shlex
import sys
import time

import numpy as np

from . import _validation as check
from ._validation import positive_count  # also the examples' type of --seeds
from ._versions import versions
from ._warn import warn
from .datasets.files import DATASET_NAMES
from .models.registry import AUTHORS_SETTINGS, MODELS  # MODELS: what `fit` trains and saves, every model
from .protocols import PROTOCOLS
from .training_loop import TrainingError

#: The epochs of the authors' loop (their settings), and ``demo --quick``'s steps and particles (a few seconds' run;
#: without it the demo runs the car-tracking experiment's settings, ``experiments.car_tracking.CAR_TRACKING_SETTINGS``).
AUTHORS_EPOCHS = AUTHORS_SETTINGS["epochs"]
QUICK_EPOCHS, QUICK_PARTICLES = 40, 200
#: ``forecast``'s default number of steps: the protocols' window.
FORECAST_STEPS = 100
#: ``evaluate``'s and ``forecast``'s default ``--num-samples``: the protocols' (``protocols.evaluate``).
NUM_SAMPLES = 50


def _write_json(path, obj):
    """Write ``obj`` to ``path`` as strict JSON (a score that is not finite, such as a diverged free run's, is null:
    JSON has no Infinity or NaN), through a temporary file moved into place, so that a file there before is either
    kept or replaced whole."""
    from .archive import atomic_write

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    text = json.dumps(_strict(obj), indent=2, allow_nan=False)
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
    return path


def _strict(value):
    """``value`` with numpy arrays and scalars as lists and numbers, and floats that are not finite as None."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_strict(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


# -- demo -----------------------------------------------------------------------------------------------------
def default_demo_dir():
    """Where ``demo`` writes without ``--out``: ``$XDG_CACHE_HOME/gpssm_np/demo``, else ``~/.cache/gpssm_np/demo``
    (beside the default data folder, not the working directory)."""
    from .datasets.files import default_data_dir

    return str(default_data_dir().parent / "demo")


def cmd_demo(args):
    from .experiments import car_tracking

    out = _writable_folder(args.out or default_demo_dir())
    check.seed(args.seed, "--seed")
    if args.epochs is not None:
        check.positive_int(args.epochs, "--epochs")
    os.makedirs(out, exist_ok=True)  # after the checks: a refused command leaves no folder
    print(f"car-tracking demo: writing into {os.path.abspath(out)} (--out DIR to change)", file=sys.stderr)
    epochs = QUICK_EPOCHS if args.epochs is None and args.quick else args.epochs  # None: the experiment's
    start = time.perf_counter()
    res = car_tracking.run(seed=args.seed, epochs=epochs, num_particles=QUICK_PARTICLES if args.quick else None)
    epochs = res["epochs"]
    png = car_tracking.write_state_figure(res, os.path.join(out, "car_tracking.png"),
                                          "Car tracking: smoothed latent states (velocities v1, v2 never observed)")
    summary = {"experiment": "car_tracking", "seed": args.seed, "epochs": epochs, "T": res["T"],
               "rmse": {name: m["rmse"] for name, m in res["models"].items()},
               "seconds": {name: m["seconds"] for name, m in res["models"].items()},
               "wall_seconds": time.perf_counter() - start, "versions": versions()}
    path = _write_json(os.path.join(out, "car_tracking.json"), summary)
    print("RMSE of each model's smoothed latent states against the true states (lower is better): positions p1, "
          "p2 (observed with noise) and velocities v1, v2 (never observed)")
    means = {}
    for name, m in res["models"].items():
        means[name] = float(np.mean(list(m["rmse"].values())))
        print(f"{name:8s} " + "  ".join(f"{k}={v:.3f}" for k, v in m["rmse"].items()) + f"  mean={means[name]:.3f}")
    best = min(means, key=means.get)
    print(f"better: {best} (mean RMSE over the four states {means[best]:.3f} against "
          + ", ".join(f"{n} {v:.3f}" for n, v in means.items() if n != best) + ")")
    print(f"wrote {png}\nwrote {path}")
    return 0


# -- fit / evaluate / forecast ----------------------------------------------------------------------------------
def fraction(text):
    """``--train-fraction``: the number, checked as ``from_csv`` checks it (``_validation.fraction``), its error
    raised as argparse's so that argparse names the option."""
    try:
        return check.fraction(float(text), "train_fraction")
    except ValueError:  # not a number, or out of (0, 1)
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None


#: ``--train-fraction`` of a ``--csv`` file when not given.
TRAIN_FRACTION = 0.5


def _load_data(args, model=None):
    """The data set of ``--dataset NAME``, or of ``--csv FILE --outputs ... --inputs ...`` (split as
    :func:`_train_fraction` says for ``model``, the saved model that will read it); an option of the other source is
    a ValueError naming it (it would be ignored)."""
    from . import datasets

    if args.csv is None:
        stray = [option for option, value in (("--outputs", args.outputs), ("--inputs", args.inputs),
                                              ("--train-fraction", args.train_fraction),
                                              ("--delimiter", args.delimiter)) if value is not None]
        if stray:
            raise ValueError(f"{', '.join(stray)}: options of a --csv file; --dataset {args.dataset} has its own "
                             "columns and split")
        return datasets.load(args.dataset, args.data_dir)
    if args.data_dir is not None:
        raise ValueError(f"--data-dir: the folder of the benchmarks (--dataset); --csv {args.csv} is read as given")
    if not args.outputs:
        raise ValueError(f"--outputs: name the output columns of {args.csv} (--outputs NAME ... --inputs NAME ...)")
    if not os.path.isfile(args.csv):
        raise ValueError(f"--csv: {args.csv!r} is {'a folder' if os.path.isdir(args.csv) else 'no file'}; expected "
                         "a CSV file")
    return datasets.from_csv(args.csv, outputs=args.outputs, inputs=args.inputs or (),
                             train_fraction=_train_fraction(args, model),
                             delimiter="," if args.delimiter is None else args.delimiter)


def _data_file(args):
    """The file the data come from: ``--csv``, or the file of ``--dataset`` (None where it is not found: loading it
    says so)."""
    from .datasets.files import DatasetNotFoundError, dataset_path

    if args.csv is not None:
        return args.csv
    try:
        return dataset_path(args.dataset, args.data_dir)
    except (DatasetNotFoundError, ValueError):
        return None


def _train_fraction(args, model=None):
    """``--train-fraction``; when not given, the fraction ``model`` was fitted at (``fit --csv`` records it), else
    :data:`TRAIN_FRACTION`."""
    if args.train_fraction is not None:
        return args.train_fraction
    fitted_at = getattr(model, "train_fraction_", None)
    return TRAIN_FRACTION if fitted_at is None else fitted_at


def _model_data(model, ds, args):
    """The data set ``ds`` checked against ``model`` and the arrays the model takes: (the data set with its columns
    in the model's order of channel names, ``protocols.EvaluationData`` in the model's units). Warns when ``--csv``
    is split at another train fraction than the fit's."""
    from ._names import align_dataset
    from .protocols import evaluation_data

    fitted_at = getattr(model, "train_fraction_", None)
    if args.csv is not None and fitted_at is not None and not np.isclose(fitted_at, _train_fraction(args, model)):
        warn(f"--train-fraction: the model was fitted on the first {fitted_at:g} of the rows, the data are "
             f"split at {_train_fraction(args, model):g}; the scored test part then differs from the fit's "
             f"(give --train-fraction {fitted_at:g} to score the fit's test part)", UserWarning)
    data = evaluation_data(model, ds)  # checks dimensions and names, warns for another data set's name
    return align_dataset(model, ds), data


def _writable_file(out, reads=(), example="model.npz"):
    """The file path ``out`` of ``fit --out`` or ``evaluate --out``, its folder made as the other commands make
    theirs, checked before the work: a ValueError when it is a folder, its folder cannot be made or written to (the
    work would be lost), or it is one of the files the command ``reads`` (None entries skipped: the data or the
    model would be overwritten); a folder's message suggests ``example`` in it."""
    from .archive import check_path, check_writable

    for path in reads:
        if path is not None and os.path.exists(out) and os.path.exists(path) and os.path.samefile(out, path):
            raise ValueError(f"--out: {out!r} is {path!r}, which this command reads; write the result elsewhere")
    folder = os.path.dirname(os.path.abspath(check_path(out, "--out", example)))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        raise ValueError(f"--out: cannot make the folder {folder!r} for {out!r}: {err.strerror}") from None
    return check_writable(out, "--out", example)


def _writable_folder(out, option="--out"):
    """The folder ``out`` of a command that writes several files, checked before the work (and made only when the
    command writes): a ValueError naming ``option`` when it is a file, or when neither it nor the nearest folder
    above it that exists can be written to."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"{option}: {out!r} is a file; expected a folder to write into")
    existing = os.path.abspath(out)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing) or not os.access(existing, os.W_OK):
        raise ValueError(f"{option}: cannot make or write to the folder {out!r} ({existing!r} is not a writable "
                         "folder)")
    return out


def cmd_fit(args):
    from .estimator import GradientTrainedModel
    from .io import save
    from .models.default_fit import Plan
    from .models.registry import RUN_SETTINGS, make_model

    ds = _load_data(args)
    model = make_model(args.model, ds, args.seed, RUN_SETTINGS[args.settings])
    if not isinstance(model, GradientTrainedModel):  # said, not silently dropped
        ignored = [f"--{name.replace('_', '-')}" for name in ("epochs", "max_steps", "seq_len", "batch_size", "lr",
                                                              "num_samples") if getattr(args, name) is not None]
        if ignored:
            print(f"note: {', '.join(ignored)}: the {args.model} model (fitted in closed form or by EM) takes no "
                  "training options; ignored", file=sys.stderr)
    plan = {"seq_len": args.seq_len, "batch_size": args.batch_size, "lr": args.lr, "num_samples": args.num_samples}
    # the model's fit checks it (0 is refused there, not replaced by the default); None leaves the regime to the
    # model: the authors' epoch loop under --settings authors without --max-steps (training_plan)
    epochs = args.epochs
    if args.max_steps is not None and isinstance(model, GradientTrainedModel) and not hasattr(model, "training_plan"):
        raise ValueError(f"--max-steps: the {args.model} model trains by epochs (--epochs); --max-steps bounds the GP "
                         "models' default fit")
    if epochs is not None and args.max_steps is not None and isinstance(model, GradientTrainedModel):
        raise ValueError("--max-steps, --epochs: give one: --epochs trains that many epochs (the epoch loop), "
                         "--max-steps bounds the gradient steps of the default fit's runs")
    start = time.perf_counter()
    n = len(ds.y_train)  # the file's units: the model keeps the scaling (scaling_) and takes raw data later
    steps = {} if args.max_steps is None else {"max_steps": args.max_steps}  # the GP models' budget in steps
    if args.seq_len is not None and hasattr(model, "training_plan") and isinstance(
            model.training_plan(None, args.max_steps, epochs), Plan):
        raise ValueError("--seq-len: the default fit grows its training windows itself (20, 40, then 80 steps); "
                         "--seq-len sets the epoch loop's (--settings authors, or --epochs)")
    # checked before a fit of minutes
    out = _writable_file(args.out or f"{ds.name}_{args.model}_seed{args.seed}.npz", reads=(_data_file(args),))
    training = dict(plan={k: v for k, v in plan.items() if v is not None}, epochs=epochs, progress=True, **steps)
    model.fit(ds.y_raw[:n], ds.u_raw[:n], data_name=ds.name, y_names=ds.y_names, u_names=ds.u_names,
              **(training if isinstance(model, GradientTrainedModel) else {}))  # the linear models take none
    if args.csv is not None:
        model.train_fraction_ = _train_fraction(args)
    replaced = " (replacing the file that was there)" if os.path.exists(out) else ""
    save(model, out)
    print(f"trained {args.model} on {ds.name} ({fit_summary(model)}) in {time.perf_counter() - start:.1f} s")
    print(f"wrote {out}{replaced}")
    return 0


def fit_summary(model):
    """What ``fit`` says of a fitted ``model``: the floor a GP model with a linear init started from, then its
    training (steps and final loss, EM iterations, or closed form) or, after the default fit, which model it kept
    and on what evidence."""
    from .estimator import GradientTrainedModel
    from .models.default_fit import Plan, floor_rmse

    if isinstance(model, GradientTrainedModel):
        loss = (f"{len(model.history_)} steps, final loss {model.history_[-1]:.4f}" if model.history_ else
                "no training step beat the starting parameters on the validation score; they were kept")
    elif model.history_:  # the LGSSM's EM iterations
        loss = f"{len(model.history_)} EM iterations, final negative log-likelihood {model.history_[-1]:.4f}"
    else:
        loss = "closed form"
    selection = getattr(model, "selection_", None) or {}  # a GP model with a linear init: the floor it started from
    floor = selection.get("floor")
    dims = f"floor {floor['kind']} {tuple(floor['orders'])}, d_x = {model.spec.dim_x}, " if floor else ""
    if "record" in selection:  # the default fit: say which model was kept and on what evidence
        record = {r["step"]: r["rmse"] for r in selection["record"]}
        judged = floor_rmse(selection)  # the floor's fold error the part was judged against
        if selection["gp_part"]:
            loss = (f"kept: the GP part after {selection['step']} steps, fold RMSE {record[selection['step']]:.4f} "
                    f"against the floor's {judged:.4f}")
        elif selection.get("free_run") is not None and not selection["free_run"]["passed"]:
            loss = f"kept: the linear floor (stage 4 dropped the refitted GP part: {_failed_guards(selection)})"
        elif selection.get("t") and judged is not None:  # t = 0: no step's fold error below step 0's
            loss = (f"kept: the linear floor (the GP part's best fold RMSE {min(record.values()):.4f} against the "
                    f"floor's {judged:.4f}, lower by {selection['t']:.2f} standard errors of the paired test, "
                    f"more than {Plan().switch_t:g} needed)")
        else:
            loss = ("kept: the linear floor (the GP part did not beat it on the folds"
                    + ("" if judged is None else f", floor's fold RMSE {judged:.4f}") + ")")
    return dims + loss


def _failed_guards(selection):
    """In words, which of stage 4's guards (``models/guards.py``) the refitted GP part of a default fit's
    ``selection`` failed: its record ``selection["free_run"]`` keeps the errors and radii, and one verdict for both."""
    from .models.default_fit import Plan
    from .models.guards import far_field_passes, free_run_passes

    guard, failed = selection["free_run"], []
    if not free_run_passes(guard["model"], guard["floor"], Plan().free_run_factor):
        failed.append(f"its free run of the training data, RMSE {guard['model']:.4g} against the floor's "
                      f"{guard['floor']:.4g}")
    far = guard["far_field"]
    if not far_field_passes(far["model"], far["floor"]):
        failed.append("off the data its transition (spectral radius {run:.3g}) or its filter's error dynamics "
                      "({filter:.3g}) grow beyond the floor's".format(**far["model"]))
    return "; ".join(failed)


def _num_samples(args):
    """``--num-samples`` of ``evaluate`` and ``forecast``, :data:`NUM_SAMPLES` when not given (``fit`` leaves it to
    the model's training plan, whose default it is too)."""
    return NUM_SAMPLES if args.num_samples is None else args.num_samples


def _output_names(ds):
    return list(ds.y_names) if ds.y_names else [f"y[{j}]" for j in range(ds.y_test.shape[1])]


def _load_model(path):
    """The model in the file ``path`` (``io.load``); a ValueError naming ``model_file`` where there is no file."""
    from .io import load

    if not os.path.isfile(path):
        raise ValueError(f"model_file: {path!r} is {'a folder' if os.path.isdir(path) else 'no file'}; expected a "
                         "model file written by gpssm-np fit")
    return load(path)


def cmd_evaluate(args):
    from .protocols import evaluate

    # checked before the evaluations
    out = _writable_file(args.out, (args.model_file, _data_file(args)), "results.json") if args.out else None
    model = _load_model(args.model_file)
    ds, data = _model_data(model, _load_data(args, model), args)
    names, results = _output_names(ds), {}
    for p in args.protocol:  # each printed when done: a protocol the data cannot take loses none before it
        try:
            results[p] = r = evaluate(model, data, p, num_samples=_num_samples(args), seed=args.seed)
        except ValueError as err:
            raise ValueError(f"--protocol {p}: {err}") from None
        nlpd = "-" if r["nlpd"] is None else f"{r['nlpd']:.3f}"
        cover = "-" if r["coverage95"] is None else f"{r['coverage95']:.2f}"
        original = "  ".join(f"{n} {v:.4g}" for n, v in zip(names, r["rmse_original_units_per_output"]))
        print(f"{p:8s} RMSE {r['rmse']:.4f} standardised; in the file's units: {original}  NLPD {nlpd}  "
              f"coverage95 {cover}")
    if out:
        print(f"wrote {_write_json(out, {'dataset': ds.name, 'outputs': names, 'results': results})}")
    return 0


def cmd_forecast(args):
    from .plotting import plot_forecast_figure
    from .protocols import fitted_on_raw_series

    out = _writable_folder(args.out or "forecast")  # before the forecast
    model = _load_model(args.model_file)
    ds, data = _model_data(model, _load_data(args, model), args)
    in_file_units = fitted_on_raw_series(model, ds)
    y_all = np.concatenate([data.y_train, data.y_test])
    u_all = np.concatenate([data.u_train, data.u_test])
    g = len(ds.y_train) + args.start
    if not 0 <= args.start < len(ds.y_test):
        raise ValueError(f"--start: expected an index into the test half (0..{len(ds.y_test) - 1}), got {args.start}")
    remaining = len(ds.y_test) - args.start
    if args.steps is None:  # the default: a window of the protocols' length, or what the test half has left
        args.steps = min(FORECAST_STEPS, remaining)
    if args.steps < 1:
        raise ValueError(f"--steps: expected a positive number of steps to forecast, got {args.steps}")
    if args.steps > remaining:
        raise ValueError(f"--steps: the test half of {ds.name} has {remaining} steps from --start {args.start} "
                         f"on (its length is {len(ds.y_test)}), got --steps {args.steps}; lower --steps or --start")
    steps = args.steps
    if args.burn_in < 1:
        raise ValueError(f"--burn-in: expected at least 1 past step for the filter to read, got {args.burn_in}")
    past = slice(max(0, g - args.burn_in), g)
    fc = model.forecast(u_all[g:g + steps], y_past=y_all[past], u_past=u_all[past], num_samples=_num_samples(args),
                        seed=args.seed)
    lower, upper = fc.interval(0.95)
    # the file's units and the data set's standardised scale, whichever the model works in
    to_file = (lambda a: a) if in_file_units else ds.to_original_y
    to_std = ds.scaling.y_to_model if in_file_units else (lambda a: a)
    arrays = {"mean": fc.mean, "lower95": lower, "upper95": upper, "truth": y_all[g:g + steps]}
    file_units = {k: to_file(v) for k, v in arrays.items()}
    file_units["std"] = fc.std if in_file_units else ds.scaling.y_spread_to_original(fc.std)
    standardised = {k: to_std(v) for k, v in arrays.items()}
    standardised["std"] = ds.scaling.y_spread_to_model(fc.std) if in_file_units else fc.std
    os.makedirs(out, exist_ok=True)
    path = _write_json(os.path.join(out, "forecast.json"), {
        "dataset": ds.name, "outputs": _output_names(ds), "start": args.start, "steps": steps,
        "units": "the file's (standardised: the same on the data set's standardised scale)", **file_units,
        "standardised": standardised})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not in_file_units:  # draw in the file's units
        from dataclasses import replace

        fc = replace(fc, y_mean=ds.y_mean, y_std=ds.y_std).in_original_units()
    d_y, d_u = ds.y_test.shape[1], ds.u_test.shape[1]
    y_past, y_true = to_file(y_all[past]), to_file(y_all[g:g + steps])
    u_future, u_past = to_file_u(ds, u_all[g:g + steps], in_file_units), to_file_u(ds, u_all[past], in_file_units)
    fig, axes = plt.subplots(d_y + (1 if d_u else 0), 1, figsize=(8, 3 + 2 * d_y), sharex=True, squeeze=False)
    for k, name in enumerate(_output_names(ds)):  # a panel per output; the inputs' panel below the last
        inputs = k == d_y - 1 and d_u
        plot_forecast_figure(fc, u_future if inputs else None, y_past=y_past, u_past=u_past if inputs else None,
                             y_true=y_true, output=k, y_label=name, u_labels=ds.u_names,
                             axes=axes[k:, 0] if inputs else axes[k:k + 1, 0])
    axes[0, 0].set_title(f"{ds.name}: causal forecast from test step {args.start}, after the {len(y_all[past])} "
                         "steps before it")
    fig.tight_layout()
    png = os.path.join(out, "forecast.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"wrote {path}\nwrote {png}")
    return 0


def to_file_u(ds, u, in_file_units):
    """Inputs ``u`` in the file's units (they are when the model takes them so)."""
    return u if in_file_units else ds.to_original_u(u)


def cmd_reproduce(args):
    from .experiments import car_tracking, table1

    if args.name is not None and (not args.name or os.sep in args.name or (os.altsep and os.altsep in args.name)):
        raise ValueError(f"--name: expected a file stem without a folder (the files go into --out), got {args.name!r}")
    _writable_folder(args.out)  # before runs that take minutes

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

    ignored = [f"--{name.replace('_', '-')}" for name in ("datasets", "models", "data_dir", "settings", "name",
                                                          "scheduler") if getattr(args, name) is not None]
    if ignored or args.jobs != 1:
        raise ValueError(f"{', '.join(ignored + (['--jobs'] if args.jobs != 1 else []))}: reproduce car trains "
                         "ODGPSSM and PRSSM (the authors' settings) on the simulated car, one seed after another; "
                         "it takes --seeds, --epochs, --out and --allow-mixed-versions")
    paths, doc = car_tracking.reproduce(seeds=args.seeds, out=args.out,
                                        **({} if args.epochs is None else {"epochs": args.epochs}),
                                        allow_mixed_versions=args.allow_mixed_versions, command=args.command_line,
                                        return_document=True)
    _print_reuse(doc["invocations"][-1])
    print("\n".join(f"wrote {p}" for p in paths))
    return 0


def _print_reuse(invocation):
    other = invocation.get("reused_other_code", 0)
    code = f" ({other} of them from other code versions)" if other else " and code"
    print(f"reused {invocation['reused']} finished runs with the same settings{code}, computed "
          f"{invocation['computed']}; {invocation['superseded']} runs with other settings moved to superseded_runs")


def cmd_info(args):
    info = versions()
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:{width}s} {value}")
    return 0


def make_parser():
    parser = argparse.ArgumentParser(prog="gpssm-np", description="Gaussian-process state-space models: the "
                                     "demo, fitting, evaluating and forecasting your data, the paper's experiments")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="car-tracking demo: train ODGPSSM and PRSSM, plot the inferred latent states")
    p.add_argument("--out", default=None, help="output folder (default ~/.cache/gpssm_np/demo, or "
                                               "$XDG_CACHE_HOME/gpssm_np/demo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=None,
                   help=f"training steps on the sequence (default: the car experiment's; {QUICK_EPOCHS} with --quick)")
    p.add_argument("--quick", action="store_true", help="a few seconds: fewer steps (unless --epochs) and particles")
    p.set_defaults(func=cmd_demo)

    def data_args(p):
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", choices=DATASET_NAMES, metavar="NAME",
                            help="a benchmark: " + ", ".join(DATASET_NAMES))
        source.add_argument("--csv", metavar="FILE", help="your own data: a CSV file with a header row of column "
                                                          "names (gpssm_np.datasets.from_csv), with --outputs")
        p.add_argument("--outputs", nargs="+", metavar="NAME", help="with --csv: the output columns")
        p.add_argument("--inputs", nargs="*", metavar="NAME", help="with --csv: the input columns (none: no inputs)")
        p.add_argument("--train-fraction", type=fraction, default=None,
                       help=f"with --csv: the share of rows, from the top, that is the training part (default "
                            f"{TRAIN_FRACTION})")
        p.add_argument("--delimiter", default=None, help="with --csv: the field separator (default ',')")
        p.add_argument("--data-dir", default=None,
                       help="with --dataset: the data folder (default: $GPSSM_NP_DATA, else ~/.cache/gpssm_np/data)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--num-samples", type=int, default=None,
                       help="particles per training window (fit), sampled forecast trajectories (evaluate, "
                            f"forecast); default {NUM_SAMPLES}")

    p = sub.add_parser("fit", help="train a model (the package's defaults, or the authors' settings) and save it")
    data_args(p)
    p.add_argument("--model", default="odgpssm", choices=tuple(MODELS))
    p.add_argument("--settings", default="default", choices=["default", "authors"],
                   help="default: the package's default fit (linear floor, selection on rolling-origin folds); "
                        f"authors: the paper's code ({AUTHORS_EPOCHS} epochs)")
    p.add_argument("--epochs", type=int, default=None,
                   help="train a fixed number of epochs (the epoch loop) instead of the default fit: no selection, "
                        "acceptance, guards or calibration; the GP part is always kept")
    p.add_argument("--max-steps", type=int, default=None,
                   help="ODGPSSM, PRSSM: gradient steps of each selection run of the default fit at most (default "
                        "1500; the refit takes r times the chosen step, r >= 1; with --settings authors, of the "
                        "validation-block loop, as fit(max_steps=...) trains there); the linear models ignore it")
    p.add_argument("--seq-len", type=int, default=None,
                   help="training window length of the epoch loop (--settings authors or --epochs); the default "
                        "fit grows its own windows")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--out", default=None, help="model file (default DATASET_MODEL_seedSEED.npz, DATASET the CSV "
                                               "file's name without .csv for --csv)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("evaluate", help="score a saved model under one or more protocols")
    p.add_argument("model_file")
    data_args(p)
    p.add_argument("--protocol", nargs="+", default=["causal", "simulate", "freerun"],
                   choices=list(PROTOCOLS),
                   help="default: causal (100-step forecasts from the data before each window), simulate (the "
                        "test part simulated from its inputs after its first 5 outputs), freerun; paper is the "
                        "paper's Table 1 protocol, which reads the window it forecasts")
    p.add_argument("--out", default=None, help="JSON file for the results")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("forecast", help="causal forecast of a test window with a saved model (JSON + PNG)")
    p.add_argument("model_file")
    data_args(p)
    p.add_argument("--start", type=int, default=0, help="first forecast step, index into the test half")
    p.add_argument("--steps", type=int, default=None,
                   help=f"steps to forecast (default {FORECAST_STEPS}, or as many as the test half has left)")
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
    p.add_argument("--seeds", type=positive_count, default=5,
                   help="how many seeds: 0, 1, ..., SEEDS - 1 (default 5)")
    p.add_argument("--epochs", type=positive_count, default=None,
                   help=f"the epoch loop with this many epochs (default: the authors' {AUTHORS_EPOCHS} for table1 and "
                        "qstudy, the car experiment's steps for car; mimo's GP models: the default fit)")
    p.add_argument("--out", default="results", help="results folder (default ./results); a rerun resumes there")
    p.add_argument("--jobs", type=positive_count, default=1, help="parallel local processes")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (pip install gpssm_np[dask])")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--settings", default=None, choices=["authors", "prssm_style", "default"],
                   help="model and training configuration of table1, qstudy and mimo (models/registry.py); "
                        "default: authors for table1 and qstudy, default for mimo")
    p.add_argument("--name", default=None, help="file stem of the outputs (default: the experiment's name)")
    p.add_argument("--allow-mixed-versions", action="store_true",
                   help="reuse finished runs of other code versions (legacy rows included) in the same file; "
                        "each row keeps its own commit (default: an error)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("info", help="print the versions that matter")
    p.set_defaults(func=cmd_info)
    return parser


#: Names in the package's messages that are not the command-line option of that name: ``model`` is the model object
#: there (the --model option's value is checked by argparse's choices).
NOT_OPTIONS = ("model",)


def option_names(parser, command):
    """{argument name: its command-line option} of ``command``'s optional arguments (``--seq-len`` for seq_len)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.dest: max(a.option_strings, key=len) for a in sub._actions
            if a.option_strings and a.dest not in NOT_OPTIONS}


def in_option_names(message, options):
    """``message`` (a ValueError's, which names the package's argument before a colon: "seed: expected ...") with
    each argument that is one of ``options`` (:func:`option_names`) named as the option a command-line user gave."""
    return re.sub(r"(^|: )([a-z_]+):", lambda m: f"{m[1]}{options.get(m[2], m[2])}:", message)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = make_parser()
    args = parser.parse_args(argv)
    args.command_line = shlex.join(["gpssm-np"] + argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with _sweep_progress(args.command == "reproduce" and not args.verbose):
        try:
            code = args.func(args)
            sys.stdout.flush()  # a reader gone early (gpssm-np info | head) shows here, where it can be handled
            return code
        except BrokenPipeError:
            # stop quietly, as Python's documentation advises: stdout goes to devnull so that the flush at exit
            # cannot fail again, and the exit code is 1, Python's for EPIPE
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        except (ValueError, OSError) as err:  # bad arguments, and files or folders that cannot be read or written
            print(f"gpssm-np {args.command}: error: {in_option_names(str(err), option_names(parser, args.command))}",
                  file=sys.stderr)
            return 2
        except TrainingError as err:  # e.g. a step size at which every step overflows
            print(f"gpssm-np {args.command}: training failed: {err}", file=sys.stderr)
            return 1
        except MemoryError:  # e.g. --num-samples beyond what the machine holds
            print(f"gpssm-np {args.command}: error: not enough memory for the arrays the options ask for (lower "
                  "--num-samples or the like)", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"gpssm-np {args.command}: interrupted", file=sys.stderr)
            return 130  # the shell's code for SIGINT


@contextlib.contextmanager
def _sweep_progress(enabled):
    """While one ``reproduce`` command without ``-v`` runs (``enabled``), the sweeps' progress lines (``experiments``
    logs each finished run at INFO) go to stderr: a sweep runs for hours and should say how far it is. The logger's
    handlers and level are as before afterwards."""
    if not enabled:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("gpssm_np.experiments")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


if __name__ == "__main__":
    sys.exit(main())
