"""How far the true plant forecasts below the linear models on the nine simulated plants (a check, deciding nothing;
research/ablation_plan.md, "how far the true plant forecasts below the linear models").

For each plant's record (``experiments.systems.make_system``), the bound at a step g is E[y_{g:} | x_g, inputs]: the
record's own noise is replayed up to step g (so the state x_g is the record's), the process noise after it is drawn
afresh (``--draws`` times) and the output noise is set to zero, and the draws' outputs are averaged (the squared
error of that average less its Monte Carlo variance, so that the finite draws do not raise the bound). It is scored as
the models are, in the training half's standardised units: the causal protocol's windows of the test half (100 steps
from each start of ``protocols.scored_windows``), and the simulate protocol's span (the test half from its step
``N_INIT``). No forecast from the outputs before a window can have a lower expected error than this conditional mean
given the true state, so its ratio to the better linear model bounds what any model can gain there (up to the draws'
Monte Carlo error, reported as the standard error of the bound's RMSE over ``--repeats`` independent groups of draws).

The replay works on any simulator of ``datasets.simulators`` that draws its inputs first and then one call of
process noise per step and one of output noise at the end (every plant here; checked: replaying every call
reproduces the record exactly).

Run: python research/true_plant_bound.py OUT.jsonl [--plants ...] [--draws 64] [--repeats 4]; then --summary.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets import simulators
from gpssm_np.experiments.systems import NONLINEAR_SYSTEMS, T_TOTAL, T_TRAIN
from gpssm_np.protocols import N_INIT, scored_windows
from rows import done_keys, head_commit

WINDOW = 100


class Replay:
    """A generator that records (given ``rng``) or replays (given the recorded ``calls``) the calls of a simulator:
    inputs and the first ``cut`` process-noise calls as recorded, later process noise from ``fresh``, the last call
    (the output noise) as zeros (as recorded with ``zero_last`` False)."""

    def __init__(self, rng=None, calls=None, cut=None, fresh=None, zero_last=True):
        self.rng, self.calls, self.cut, self.fresh, self.zero_last = rng, calls, cut, fresh, zero_last
        self.recorded, self.k, self.normals = [], 0, 0
        self.total_normals = sum(name == "standard_normal" for name, _ in calls or ())

    def _call(self, name, *args, **kwargs):
        if self.calls is None:  # recording
            value = getattr(self.rng, name)(*args, **kwargs)
            self.recorded.append((name, value))
            return value
        recorded_name, value = self.calls[self.k]
        self.k += 1
        if recorded_name != name:
            raise RuntimeError(f"replay out of step: {name} where {recorded_name} was recorded")
        if name == "standard_normal":
            index, self.normals = self.normals, self.normals + 1
            if index == self.total_normals - 1:
                return np.zeros_like(value) if self.zero_last else value
            if index >= self.cut:
                return self.fresh.standard_normal(np.shape(value)) if np.ndim(value) else self.fresh.standard_normal()
        return value

    def uniform(self, *args, **kwargs):
        return self._call("uniform", *args, **kwargs)

    def standard_normal(self, *args, **kwargs):
        return self._call("standard_normal", *args, **kwargs)


def _run(simulate, seed, generator):
    """The simulator's outputs with ``generator`` in place of its own."""
    original = simulators._plant

    def plant(T, seed_, **kwargs):
        T, _ = original(T, seed_, **kwargs)
        return T, generator

    simulators._plant = plant
    try:
        y, _, _ = simulate(T_TOTAL, seed=seed)
    finally:
        simulators._plant = original
    return y


def conditional_mean(simulate, seed, calls, cut, draws, rng):
    """E[y | the record's state after ``cut`` steps of process noise, inputs], the mean of ``draws`` replays, and
    the variance of that mean (the draws' sample variance over ``draws``), each (T, d_y)."""
    runs = np.array([_run(simulate, seed, Replay(calls=calls, cut=cut, fresh=rng)) for _ in range(draws)])
    return runs.mean(axis=0), runs.var(axis=0, ddof=1) / draws


def plant_row(name, draws, repeats):
    simulate, seed, _ = NONLINEAR_SYSTEMS[name]
    recorder = Replay(rng=np.random.default_rng(seed))
    y = _run(simulate, seed, recorder)
    calls = recorder.recorded
    y_again, u, _ = simulate(T_TOTAL, seed=seed)
    replayed = _run(simulate, seed, Replay(calls=calls, cut=T_TOTAL, zero_last=False))
    if not (np.array_equal(y_again, y) and np.array_equal(replayed, y)):
        raise RuntimeError(f"{name}: the recording or its replay changed the record")
    obs_noise = y - _run(simulate, seed, Replay(calls=calls, cut=T_TOTAL))
    ds = gp.datasets.from_arrays(y, u, train_fraction=T_TRAIN / T_TOTAL, name=name)
    scale = np.asarray(ds.y_std)

    def score(mean_and_variance, start, stop):
        # E (mean_N - y)^2 = (m - y)^2 + Var(mean_N): the Monte Carlo variance is taken off, so that the bound
        # is that of the conditional mean m itself and not raised by the finite number of draws
        mean, variance = mean_and_variance
        mse = np.mean(((mean[start:stop] - y[start:stop]) ** 2 - variance[start:stop]) / scale ** 2)
        return float(np.sqrt(max(mse, 0.0)))

    rng = np.random.default_rng(1000 + seed)
    spans = [(T_TRAIN + s, T_TRAIN + s + WINDOW) for s in scored_windows(T_TOTAL - T_TRAIN, WINDOW)]
    causal, simulate_scores = [], []
    for _ in range(repeats):
        # the state at step g is the one after process-noise calls 0..g-1 (call t moves the state to step t + 1)
        causal.append(np.mean([score(conditional_mean(simulate, seed, calls, g, draws, rng), g, stop)
                               for g, stop in spans]))
        g = T_TRAIN + N_INIT
        simulate_scores.append(score(conditional_mean(simulate, seed, calls, g, draws, rng), g, T_TOTAL))
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    linear = {}
    for kind, model in (("arx", gp.ARX(dim_y=dy, dim_u=du)), ("lgssm", gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du))):
        model.fit(ds.y_train, ds.u_train)
        linear[kind] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in ("causal", "simulate")}
    row = {"data": name, "draws": draws, "repeats": repeats, "commit": head_commit(),
           "output_noise_rmse": float(np.sqrt(np.mean((obs_noise[T_TRAIN:] / scale) ** 2)))}
    for p, values in (("causal", causal), ("simulate", simulate_scores)):
        better = min(linear["arx"][p], linear["lgssm"][p])
        row[p] = {"bound": float(np.mean(values)), "bound_se": float(np.std(values, ddof=1) / np.sqrt(repeats)),
                  "arx": linear["arx"][p], "lgssm": linear["lgssm"][p], "ratio": float(np.mean(values)) / better}
    return row


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    print("| plant | causal: bound | better linear | bound / linear "
          "| simulate: bound | better linear | bound / linear |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        c, s = r["causal"], r["simulate"]
        print(f"| {r['data']} | {c['bound']:.4f} (se {c['bound_se']:.4f}) | {min(c['arx'], c['lgssm']):.4f} | "
              f"{c['ratio']:.3f} | {s['bound']:.4f} (se {s['bound_se']:.4f}) | {min(s['arx'], s['lgssm']):.4f} | "
              f"{s['ratio']:.3f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--plants", nargs="*", default=list(NONLINEAR_SYSTEMS))
    parser.add_argument("--draws", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        return summary(args.out)
    done = done_keys(args.out, "data")
    for name in args.plants:
        if name in done:
            continue
        row = plant_row(name, args.draws, args.repeats)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(name, row["causal"]["ratio"], row["simulate"]["ratio"], flush=True)


if __name__ == "__main__":
    main()
