"""Issue #28, the whole budget with a cross-fitted acceptance (research/ablation_plan.md; an exploration, deciding
nothing).

Variant P30 (the default fit with ``plan={"patience": 30}``: no stop before step 1500) on the cells of the plan, each
row keeping every pipeline's full selection record and the number of windows of each fold run (a wrapper around
``DefaultFit.run`` inside the fit; the package's files unchanged). Rule CF is computed from those records in the
summary (:func:`crossfit_t`).

Run: python research/explore_crossfit.py research/results/explore_crossfit.jsonl --worker K  (K = 0, 1)
     python research/explore_crossfit.py research/results/explore_crossfit.jsonl --summary
Nothing in the package imports this module.
"""
import contextlib
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t

from defaults_check import selection_row
from explore_warmup import cells as early_stopped_cells
from fresh_records import append_scored, record, rows_by_record
from rows import done_keys, head_commit, run_or_summarise

PLAN = {"patience": 30}
DEFAULT_ROWS = {4000: ("research/results/fresh_records_long_a.jsonl", "research/results/fresh_records_long_b.jsonl"),
                1000: ("research/results/fresh_records_100_a.jsonl", "research/results/fresh_records_100_b.jsonl")}
P30_ROWS = "research/results/explore_plateau.jsonl"


def cells():
    """(plant, record, length) in the plan's order."""
    return ([("hammerstein", r, 4000) for r in (100, 101, 102, 103, 104)]
            + [(name, r, 1000) for name, r in early_stopped_cells()]
            + [("hammerstein", r, 1000) for r in (100, 102)])


@contextlib.contextmanager
def keep_records(into):
    """Append every pipeline's record (kind, origins, record, windows per fold run, s*, t, candidate) to ``into``."""
    original = default_fit.DefaultFit.run

    def run(self, ys, us):
        selection = original(self, ys, us)
        into.append({"kind": selection["floor"]["kind"], "origins": selection["origins"],
                     "record": selection["record"], "windows_per_run": [len(score.tasks) for _, _, score in self.runs],
                     "step": selection["step"], "t": selection["t"], "candidate": int(self.candidate)})
        return selection

    default_fit.DefaultFit.run = run
    try:
        yield
    finally:
        default_fit.DefaultFit.run = original


def run(out, worker=0):
    commit = head_commit()
    for name, r, length in cells()[worker::2]:
        if (name, r, length) in done_keys(out, "data", "record", "length"):
            continue
        ds = record(name, r, length)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=0)
        pipelines = []
        start = time.perf_counter()
        with keep_records(pipelines):
            model.fit(ds.y_train, ds.u_train, plan=PLAN, progress=False)
        row = {"data": name, "record": r, "length": length, "variant": "P30", "seed": 0, "commit": commit,
               "fit_seconds": time.perf_counter() - start, "selection": selection_row(model.selection_),
               "pipelines": pipelines}
        append_scored(out, row, model, ds, name, r, length)


def fold_slices(pipeline):
    """The slices of fold 1's and fold 2's windows in each candidate's window errors (runs candidate-major)."""
    candidates = len(pipeline["record"][0]["windows"])
    per_candidate = len(pipeline["windows_per_run"]) // candidates
    counts = pipeline["windows_per_run"][:per_candidate]
    edges = np.concatenate([[0], np.cumsum(counts)])
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def fold_choice(record, window):
    """(candidate, row index) of the lowest mean error over the windows ``window`` (ties to the earlier step, then
    the earlier candidate); row 0 (step 0) where no later step is below it."""
    floor = float(np.mean(record[0]["windows"][0][window]))
    best = (floor, 0, 0, 0)
    for i, row in enumerate(record[1:], start=1):
        for c, errors in enumerate(row["windows"]):
            mean = float(np.mean(errors[window]))
            if np.isfinite(mean) and (mean, row["step"], c) < best[:3]:
                best = (mean, row["step"], c, i)
    return best[2], best[3]


def crossfit_t(pipeline):
    """t_CF of rule CF (module docstring of the plan): each fold's choice judged on the other fold's windows."""
    record = pipeline["record"]
    if len(record) < 2:
        return None
    folds = fold_slices(pipeline)
    if len(folds) != 2:
        raise ValueError(f"expected 2 GP folds, got {len(folds)}")
    floor, chosen = [], []
    for f, g in ((0, 1), (1, 0)):
        c, i = fold_choice(record, folds[f])
        floor.extend(record[0]["windows"][c][folds[g]])
        chosen.extend(record[i]["windows"][c][folds[g]])
    return paired_t(floor, chosen)


def returned_pipeline(row):
    """The pipeline whose model the fit returned (stage 3b's where its part was kept), or None for the floor."""
    selection, pipelines = row["selection"], row["pipelines"]
    other = selection.get("other_floor") or {}
    if other.get("chosen") is not None:
        return pipelines[1]
    return pipelines[0] if selection["gp_part"] else None


def summary(out):
    rows = {}
    for x in map(json.loads, open(out)):
        rows.setdefault((x["data"], x["record"], x["length"]), x)
    p30_rows = {(x["record"], x["length"]): x for x in map(json.loads, open(P30_ROWS))}
    lines = ["| plant | record | length | default s* (kept) | P30 s* (kept), t, t_CF | causal: P30 / default, "
             "P30+CF / default | simulate: the same | causal over the better linear: default, P30, P30+CF | "
             "fit s: default -> P30 |", "|---" * 9 + "|"]
    ratios = {"P30": {"causal": [], "simulate": []}, "CF": {"causal": [], "simulate": []}}
    checks, dropped = [], []
    for (name, r, length) in [c for c in cells() if c in rows]:
        x = rows[name, r, length]
        m = rows_by_record(DEFAULT_ROWS[length], [r], [name])[(name, r)]
        d = m["odgpssm"]
        linear = {p: min(m["arx"][p], m["lgssm"][p]) for p in ("causal", "simulate")}
        pipeline = returned_pipeline(x)
        t_cf = crossfit_t(pipeline) if pipeline is not None else None
        keep = pipeline is not None and t_cf is not None and t_cf > 1.0
        cf = {p: x[p] for p in linear} if pipeline is None or keep else \
            {p: m[pipeline["kind"]][p] for p in linear}
        if pipeline is not None and not keep:
            dropped.append((name, r, length, x["causal"] / m[pipeline["kind"]]["causal"]))
        for p in linear:
            ratios["P30"][p].append(x[p] / d[p])
            ratios["CF"][p].append(cf[p] / d[p])
        if name == "hammerstein" and (r, length) in p30_rows:
            old = p30_rows[r, length]
            checks.append((r, length, x["causal"] == old["causal"] and x["simulate"] == old["simulate"]))
        t = x["selection"]["t"] if pipeline is None or pipeline is x["pipelines"][0] else pipeline["t"]
        lines.append(
            f"| {name} | {r} | {length} | {d['selection']['step']} ({'yes' if d['selection']['gp_part'] else 'no'}) "
            f"| {x['selection']['step']} ({'yes' if x['selection']['gp_part'] else 'no'}), "
            f"{'-' if t is None else f'{t:.2f}'}, {'-' if t_cf is None else f'{t_cf:.2f}'} "
            f"| {x['causal'] / d['causal']:.3f}, {cf['causal'] / d['causal']:.3f} "
            f"| {x['simulate'] / d['simulate']:.3f}, {cf['simulate'] / d['simulate']:.3f} "
            f"| {d['causal'] / linear['causal']:.3f}, {x['causal'] / linear['causal']:.3f}, "
            f"{cf['causal'] / linear['causal']:.3f} | {d['fit_seconds']:.0f} -> {x['fit_seconds']:.0f} |")
    n = len(ratios["P30"]["causal"])
    if n:
        lines.append("")
        for variant, label in (("P30", "P30"), ("CF", "P30 with CF")):
            c, s = (np.array(ratios[variant][p]) for p in ("causal", "simulate"))
            lines.append(f"{label} over the default, {n} of {len(cells())} cells: causal {np.exp(np.mean(np.log(c))):.3f}, "
                         f"simulate {np.exp(np.mean(np.log(s))):.3f} (geometric means); causal more than 5 % worse on "
                         f"{int(np.sum(c > 1.05))}, more than 5 % better on {int(np.sum(c < 0.95))}")
        lines.append("CF drops the returned part on: " + (", ".join(
            f"{name} {r} ({length}; P30's part over its floor's kind {ratio:.3f})" for name, r, length, ratio in dropped)
            or "none"))
        if checks:
            lines.append("P30's earlier rows repeated to every digit: " + ", ".join(
                f"{r} ({length}): {'yes' if same else 'no'}" for r, length, same in checks))
    print("\n".join(lines))


if __name__ == "__main__":
    run_or_summarise(run, summary, workers=2)
