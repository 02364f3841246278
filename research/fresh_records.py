"""A check of the default fit on fresh records of the 16 simulated plants: the 9 simulators of
research/defaults_check.py (``gpssm_np.experiments.systems.NONLINEAR_SYSTEMS``, generator seed s + 1000 R) and the 7
plants of research/unseen_plants.py (generator seed 2026 + R), with R = 5: records no run has used (the default
check uses R = 0, decision L used R = 1-4). On each, the default ``ODGPSSM`` (seed 0), ``ARX()`` and
``LGSSM(dim_x="auto")`` are fitted to the first half and scored on the second under causal and simulate. No choice
is made from it; it is reported whatever it shows. One JSON line per (plant, model), appended (resumable).

Run: python research/fresh_records.py research/results/fresh_records.jsonl [--record 5] [--data name ...]
[--models arx ...] [--length 4000] (records of the nine simulators four times as long);
``OUT [OUT ...] --summary [--record 5 ...]`` prints the Markdown table of those records from those files, and
``--kept`` instead how often the selection kept a GP part, by the floor's kind and state dimension. This script is
the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.experiments.systems import NONLINEAR_SYSTEMS, T_TOTAL

from defaults_check import SIMULATORS, selection_row
from rows import done_keys, head_commit
from unseen_plants import SYSTEMS

NAMES = SIMULATORS + list(SYSTEMS)


def record(name, r, length=T_TOTAL):
    """The Dataset of plant ``name``'s record ``r`` (module docstring), the first half training; ``length`` steps
    (the nine simulators only: the other plants' generators fix their own lengths)."""
    if name in SYSTEMS:
        if length != T_TOTAL:
            raise ValueError(f"length: plant {name!r} has a fixed record length; only the simulators "
                             f"{sorted(NONLINEAR_SYSTEMS)} take another")
        y, u = SYSTEMS[name](np.random.default_rng(2026 + r))
    else:
        simulate, seed, _ = NONLINEAR_SYSTEMS[name]
        y, u, _ = simulate(length, seed=seed + 1000 * r)
    return gp.datasets.from_arrays(y, u, train_fraction=0.5, name=name)


def run(out, r, names=NAMES, models=("arx", "lgssm", "odgpssm"), length=T_TOTAL):
    done = done_keys(out, "data", "model", "record")
    commit = head_commit()
    for name in names:
        ds = record(name, r, length)
        dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
        for kind, model in (("arx", gp.ARX(dim_y=dy, dim_u=du)), ("lgssm", gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du)),
                            ("odgpssm", gp.ODGPSSM(dim_y=dy, dim_u=du, seed=0))):
            if (name, kind, r) in done or kind not in models:
                continue
            start = time.perf_counter()
            model.fit(ds.y_train, ds.u_train)
            row = {"data": name, "model": kind, "record": r, "length": length, "commit": commit,
                   "fit_seconds": time.perf_counter() - start, "repr": repr(model)}
            if kind == "odgpssm":
                row["selection"] = selection_row(model.selection_)
            append_scored(out, row, model, ds, name, kind)


def append_scored(out, row, model, ds, *label):
    """``row`` with the fitted ``model``'s causal and simulate RMSE on ``ds``'s test part, appended to the row file
    ``out`` and printed after ``label``."""
    for protocol in ("causal", "simulate"):
        row[protocol] = gp.evaluate(model, ds, protocol)["rmse"]
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(*label, {p: round(row[p], 4) for p in ("causal", "simulate")}, f"{row['fit_seconds']:.0f} s", flush=True)


def rows_by_record(outs, records=None, names=NAMES):
    """{(plant, record): {model: row}} of ``records`` (all when None) of the plants ``names`` from the row files
    ``outs``."""
    by = {}
    for x in (json.loads(line) for out in outs for line in open(out)):
        if (not records or x["record"] in records) and x["data"] in names:
            by.setdefault((x["data"], x["record"]), {})[x["model"]] = x
    return by


def kept(outs, records=None):
    """The Markdown table of how often the default's selection kept a GP part on ``records``, by the floor's kind
    and state dimension d_x, with the geometric mean of the causal ratio (as :func:`summary`) in each group."""
    bands, groups = ("d_x <= 5", "d_x 6-11", "d_x >= 12"), {}
    for m in rows_by_record(outs, records).values():
        if len(m) < 3:
            continue
        g, floor = m["odgpssm"], m["odgpssm"]["selection"]["floor"]
        band = bands[int(floor["dim_x"] > 5) + int(floor["dim_x"] > 11)]
        ratio = g["causal"] / min(m["arx"]["causal"], m["lgssm"]["causal"])
        groups.setdefault((floor["kind"], band), []).append((bool(g["selection"]["gp_part"]), ratio))
    lines = ["| floor | state | records | GP part kept | causal ratio, geometric mean |", "|---" * 5 + "|"]
    for (kind, band), v in sorted(groups.items(), key=lambda item: (item[0][0], bands.index(item[0][1]))):
        lines.append(f"| {kind} | {band} | {len(v)} | {sum(k for k, _ in v)} | "
                     f"{np.exp(np.mean(np.log([r for _, r in v]))):.3f} |")
    print("\n".join(lines))


def summary(outs, records=None, names=NAMES):
    """The Markdown table of ``records`` (all when None) of the plants ``names`` from the row files ``outs``, and the
    counts of the records that meet each target."""
    by = rows_by_record(outs, records, names)
    lines = ["Standardised RMSE on the second half of a fresh record; ratio: ODGPSSM over the better of ARX and LGSSM "
             "(below 1: ODGPSSM better).", "",
             "| plant | record | causal: ODGPSSM | ARX | LGSSM | ratio | simulate: ODGPSSM | ARX | LGSSM | ratio "
             "| GP part kept | floor | fit s |", "|---" * 13 + "|"]
    ratios = {"causal": [], "simulate": []}
    for (name, r), m in sorted(by.items(), key=lambda item: (NAMES.index(item[0][0]), item[0][1])):
        if len(m) < 3:
            continue
        g, a, lin = m["odgpssm"], m["arx"], m["lgssm"]
        cells = [name, str(r)]
        for p in ("causal", "simulate"):
            ratios[p].append(g[p] / min(a[p], lin[p]))
            cells += [f"{g[p]:.4f}", f"{a[p]:.4f}", f"{lin[p]:.4f}", f"**{ratios[p][-1]:.3f}**"]
        floor = g["selection"]["floor"]
        cells += ["yes" if g["selection"]["gp_part"] else "no", f"{floor['kind']} {tuple(floor['orders'])}",
                  f"{g['fit_seconds']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    n, causal, simulate = len(ratios["causal"]), np.array(ratios["causal"]), np.array(ratios["simulate"])
    if n:
        lines += ["", "| over the records | count |", "|---|---|",
                  f"| causal <= 1.02 | {np.sum(causal <= 1.02)} of {n} |",
                  f"| causal >= 10 % better | {np.sum(causal <= 0.9)} of {n} |",
                  f"| simulate <= 1.00 | {np.sum(simulate <= 1.0)} of {n} |",
                  f"| geometric mean of the ratios, causal / simulate | {np.exp(np.mean(np.log(causal))):.3f} / "
                  f"{np.exp(np.mean(np.log(simulate))):.3f} |"]
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="+", help="the rows' file (for --summary: one or more)")
    parser.add_argument("--record", type=int, nargs="+", default=[5],
                        help="the record to run (the first given), or the records to summarise")
    parser.add_argument("--data", nargs="+", default=NAMES)
    parser.add_argument("--models", nargs="+", default=["arx", "lgssm", "odgpssm"])
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--kept", action="store_true")
    parser.add_argument("--length", type=int, default=T_TOTAL,
                        help="steps of each simulator's record (the first half trains; rows of one length per file)")
    args = parser.parse_args()
    if args.kept:
        kept(args.out, args.record)
    elif args.summary:
        summary(args.out, args.record, args.data)
    else:
        run(args.out[0], args.record[0], args.data, args.models, args.length)
