"""In-fold against out-of-fold forecast error while the default fit's selection trains the GP part on one fold.

The selection (``models/default_fit.py``, stage 2) scores each step on the windows after a fold's origin only. Where
those errors rise from the first evaluation on (the reactor, docs/results.md, section 1), this says whether the
training also makes the model worse on the fold's own training part (an objective that does not aim at forecasts)
or better there (the GP part learns what does not carry past the origin). For the latest fold of a training half,
the floor of one kind refitted before the origin, the first step-size candidate: every ``--every`` steps the mean
causal RMSE of the windows after the origin ("out", the selection's own score) and of 100-step windows inside the
fold's training part at stride 50, each after the 100 outputs before it ("in"), and the largest change of each
parameter array since step 0. Variants, each a change of the training alone:

- ``default``: the default fit's training;
- ``kl_once``: the data term's weight divided by the window length, so that each training output counts once
  against KL(q(u) || p(u)) (the default's windows at stride 1 count each output as often as the windows are long);
- ``state_only``: the GP's lengthscales of the inputs u held at 1e4, so that the GP part is a function of the
  state alone (the input enters through the linear part only);
- ``linear_slow``: the second step-size candidate of the selection (F, G, b at a tenth of the step);
- ``linear_fixed``: F, G and b never move (the floor's linear part, the rest trained as by the default).

Each trace row also has the spectral radius of F (``radius_F``).

Training halves only (``defaults_check.dataset``); no test half is read. One JSON line per (data, kind, variant).

Run: python research/diagnose_fold_fit.py OUT.jsonl reactor [pendulum ...] [--kinds lgssm arx]
         [--variants default kl_once state_only linear_slow linear_fixed] [--steps 300] [--every 50]
This script is the research record's; nothing in the package imports it.
"""
import argparse
import copy
import json

import numpy as np

import gpssm_np as gp
from gpssm_np import inference, optim
from gpssm_np.datasets.folds import Window, rolling_origin
from gpssm_np.models import default_fit
from gpssm_np.models.training import ValidationScore

from defaults_check import dataset
from rows import done_keys, head_commit

VARIANTS = ("default", "kl_once", "state_only", "linear_slow", "linear_fixed")
LINEAR = ("F", "G", "b")
HUGE = 1e4


def kl_once():
    """Patch ``inference.kl_weights`` so that the "unbiased" data weight counts each output once (module docstring);
    returns the undo."""
    original = inference.kl_weights

    def weights(kl_weighting, num_sequences, T, num_windows=None):
        c_data, c_inducing = original(kl_weighting, num_sequences, T, num_windows)
        return (c_data / T if kl_weighting == "unbiased" else c_data), c_inducing

    inference.kl_weights = weights
    return lambda: setattr(inference, "kl_weights", original)


def state_only(model):
    """Hold the lengthscales of the GP inputs u of ``model`` at HUGE, before and after every Adam step; returns the
    undo."""
    dx = model.spec.dim_x
    model.params["lengthscale"] = np.array(model.params["lengthscale"], dtype=np.float64)
    model.params["lengthscale"][:, dx:] = HUGE  # softplus(1e4) = 1e4
    original = optim.Adam.step

    def step(self, params, grads):
        new = original(self, params, grads)
        new["lengthscale"][:, dx:] = HUGE
        return new

    optim.Adam.step = step
    return lambda: setattr(optim.Adam, "step", original)


def inside_windows(y, u, horizon=100, stride=50):
    """100-step windows of the fold's training part, each after the 100 outputs before it."""
    return [Window(y[s - horizon:s], u[s - horizon:s], u[s:s + horizon], y[s:s + horizon], 0, s)
            for s in range(horizon, len(y) - horizon + 1, stride)]


def trace(name, kind, variant, steps, every):
    ds = dataset(name)
    y, u = ds.y_train, ds.u_train
    y, u = (y - y.mean(0)) / y.std(0), (u - u.mean(0)) / u.std(0)  # model units, as the fit's scaling
    model = gp.ODGPSSM(dim_y=y.shape[1], dim_u=u.shape[1], seed=0, init=kind)
    plan = default_fit.Plan(max_steps=steps, fixed=LINEAR if variant == "linear_fixed" else ())
    fit = default_fit.DefaultFit(model, plan, kinds=(kind,))
    floor = fit.floor([y], [u])
    fold = rolling_origin([y], [u], plan.origins)[-1]
    run_model = copy.deepcopy(model)
    run_model.history_, run_model.training_log_ = [], {"rejected_steps": [], "jitter": []}
    k = plan.gp_folds - 1  # the seed offset of the latest fold in the selection
    warm = run_model.start_from_floor(floor.refit(fold.ys, fold.us), fold.ys, fold.us, fit.seed + k)
    undo = kl_once() if variant == "kl_once" else state_only(run_model) if variant == "state_only" else None
    try:
        scales = plan.lr_scales[1 if variant == "linear_slow" else 0]
        run = fit.training_run(run_model, warm, fold.ys, fold.us, fit.seed + k, scales)
        outside = ValidationScore.of_windows(fold.windows)
        inside = ValidationScore.of_windows(inside_windows(fold.ys[0], fold.us[0]))
        start = {key: np.array(v) for key, v in run.params().items()}
        rows = []
        for step in range(0, steps + 1, every):
            if step:
                run.advance(every)
            params = run.params()
            change = {key: float(np.abs(np.asarray(params[key]) - start[key]).max()) for key in params}
            rows.append({"step": step, "out": float(np.mean(run.scored(outside.window_scores))),
                         "in": float(np.mean(run.scored(inside.window_scores))),
                         "radius_F": float(np.abs(np.linalg.eigvals(np.asarray(params["F"]))).max()),
                         "largest_changes": dict(sorted(change.items(), key=lambda kv: -kv[1])[:4])})
            print(json.dumps(dict(rows[-1], data=name, kind=kind, variant=variant)), flush=True)
    finally:
        if undo is not None:
            undo()
    return {"data": name, "kind": kind, "variant": variant, "floor": floor.summary(), "origin": list(fold.origins),
            "windows_out": len(outside.tasks), "windows_in": len(inside.tasks), "trace": rows}


def trace_parser(variants):
    """The command line of a script of fold traces: the row file, the data sets, ``--kinds``, ``--variants`` (of
    ``variants``), ``--steps`` and ``--every``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("names", nargs="+")
    parser.add_argument("--kinds", nargs="+", default=["lgssm", "arx"])
    parser.add_argument("--variants", nargs="+", choices=variants, default=list(variants))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--every", type=int, default=50)
    return parser


def pending_traces(args):
    """The (data, kind, variant) of the command line ``args`` (:func:`trace_parser`) without a row in its file."""
    done = done_keys(args.out, "data", "kind", "variant")
    return [(name, kind, variant) for name in args.names for kind in args.kinds for variant in args.variants
            if (name, kind, variant) not in done]


def main():
    args = trace_parser(VARIANTS).parse_args()
    for name, kind, variant in pending_traces(args):
        row = dict(trace(name, kind, variant, args.steps, args.every), commit=head_commit())
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
