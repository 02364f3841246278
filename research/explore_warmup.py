"""Issue #28, no stop before the first window stage ends (research/ablation_plan.md; an exploration, deciding nothing).

Variant BK of the default fit: during the first window stage of the selection (steps before ``max_steps /
len(seq_lens)``, 500 of 1500, where decision BC's halving acts) no step-size candidate stops and the selection does
not stop; from there on the candidates' and the selection's patience as in the package. A candidate whose latest
forecasts are not finite stops at once, as in the package. :func:`no_stop_before` applies it to
``gpssm_np.models.default_fit`` (the package's files unchanged) and fails loudly where the code it patches changed.

Cells: those of records 100-104 of the 16 simulated plants (``fresh_records.record``) whose default row
(research/results/fresh_records_100_a.jsonl, _b.jsonl) has s* at most 250: the returned pipeline stopped before step
500. Each is fitted with BK (seed 0) on the first half and scored on the second, as research/fresh_records.py does.

Run: python research/explore_warmup.py research/results/explore_warmup.jsonl [--worker 1 --reverse]
     python research/explore_warmup.py research/results/explore_warmup.jsonl --summary
Nothing in the package imports this module.
"""
import argparse
import contextlib
import inspect
import json
import textwrap
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit

from defaults_check import selection_row
from fresh_records import NAMES, append_scored, record, rows_by_record
from rows import done_keys, head_commit

DEFAULT_ROWS = ("research/results/fresh_records_100_a.jsonl", "research/results/fresh_records_100_b.jsonl")
RECORDS = (100, 101, 102, 103, 104)
_LOOP = "while self.step < plan.max_steps and self.since < plan.patience:"


def default_rows():
    """{(plant, record): {model: row}} of the default's rows of records 100-104."""
    return rows_by_record(DEFAULT_ROWS, RECORDS)


def cells():
    """(plant, record) of the cells run: the default's s* at most 250, in the order of the plants and records."""
    by = default_rows()
    return [(name, r) for name in NAMES for r in RECORDS
            if (name, r) in by and by[name, r]["odgpssm"]["selection"]["step"] <= 250]


@contextlib.contextmanager
def no_stop_before():
    """Variant BK (module docstring) on ``default_fit`` inside the block."""
    original_live, original_selection = default_fit.live_candidates, default_fit.DefaultFit.selection

    def live_candidates(record, candidates, patience, halve_at=None):
        if record and halve_at is not None and record[-1]["step"] < halve_at:
            return [bool(np.isfinite(record[-1]["candidates"][c])) for c in range(candidates)]
        return original_live(record, candidates, patience, halve_at)

    source = textwrap.dedent(inspect.getsource(original_selection))
    if source.count(_LOOP) != 1:
        raise RuntimeError("DefaultFit.selection changed: the patched loop condition is not found once")
    source = source.replace(_LOOP, "while self.step < plan.max_steps and (self.since < plan.patience or "
                                   "self.step < plan.max_steps // len(plan.seq_lens)):")
    namespace = {}
    exec(compile(source, default_fit.__file__, "exec"), vars(default_fit), namespace)
    default_fit.live_candidates, default_fit.DefaultFit.selection = live_candidates, namespace["selection"]
    try:
        yield
    finally:
        default_fit.live_candidates, default_fit.DefaultFit.selection = original_live, original_selection


def run(out, reverse=False):
    commit = head_commit()
    for name, r in reversed(cells()) if reverse else cells():
        if (name, r) in done_keys(out, "data", "record"):
            continue
        ds = record(name, r)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        model = gp.ODGPSSM(dim_y=dy, dim_u=du, seed=0)
        start = time.perf_counter()
        with no_stop_before():
            model.fit(ds.y_train, ds.u_train, progress=False)
        row = {"data": name, "record": r, "variant": "BK", "seed": 0, "commit": commit,
               "fit_seconds": time.perf_counter() - start, "selection": selection_row(model.selection_),
               "last_step": model.selection_["record"][-1]["step"]}
        append_scored(out, row, model, ds, name, r)


def summary(out):
    """The Markdown table of BK's rows against the default's, and the geometric means."""
    by = default_rows()
    rows = {}
    for x in map(json.loads, open(out)):  # the first row of a cell (two workers can meet on one; the fit is the same)
        rows.setdefault((x["data"], x["record"]), x)
    rows = list(rows.values())
    lines = ["| plant | record | default s* -> BK s* | GP part | causal BK / default | simulate BK / default | "
             "causal: default / BK over the better linear | simulate: default / BK over the better linear | fit s |",
             "|---" * 9 + "|"]
    ratios = {"causal": [], "simulate": []}
    for x in sorted(rows, key=lambda x: (NAMES.index(x["data"]), x["record"])):
        m = by[x["data"], x["record"]]
        d = m["odgpssm"]
        cells_ = [x["data"], str(x["record"]), f"{d['selection']['step']} -> {x['selection']['step']}",
                  f"{'yes' if d['selection']['gp_part'] else 'no'} -> {'yes' if x['selection']['gp_part'] else 'no'}"]
        linear = {p: min(m["arx"][p], m["lgssm"][p]) for p in ratios}
        for p in ratios:
            ratios[p].append(x[p] / d[p])
            cells_.append(f"{ratios[p][-1]:.3f}")
        for p in ratios:
            cells_.append(f"{d[p] / linear[p]:.3f} / {x[p] / linear[p]:.3f}")
        cells_.append(f"{d['fit_seconds']:.0f} -> {x['fit_seconds']:.0f}")
        lines.append("| " + " | ".join(cells_) + " |")
    c, s = np.array(ratios["causal"]), np.array(ratios["simulate"])
    if len(c):
        lines += ["", f"{len(c)} of {len(cells())} cells; geometric means BK / default: causal "
                      f"{np.exp(np.mean(np.log(c))):.3f}, simulate {np.exp(np.mean(np.log(s))):.3f}; causal more than "
                      f"5 % worse on {int(np.sum(c > 1.05))}, more than 5 % better on {int(np.sum(c < 0.95))}"]
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reverse", action="store_true", help="the cells last first (a second worker)")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    summary(args.out) if args.summary else run(args.out, args.reverse)
