"""Decision AY of research/ablation_plan.md (stage 4's free-run guard at parity with the floor:
``Plan.free_run_factor`` 1.0 instead of 2.0), on training data only: the 96 cells of decision AX (the 70/30 cuts of
the 24 training halves other than the steam generator, training seeds 1-4). The guard acts after the selection and
the refit, and a part it drops leaves the chosen floor's form, so AY's row of a cell is AX's row
(research/results/decision_ax.jsonl, the current default's code) or, where the factor 1.0 drops that row's part, the
chosen floor's form on that cut. This script fits the floor forms (one JSON line per cut, appended, resumable:
the default fit with no step accepted, scored on the cut's last 30 % under causal and simulate) and applies the rule.

Run: python research/decision_ay.py research/results/decision_ay_floors.jsonl; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import os
import time

import numpy as np

import gpssm_np as gp

from cut_seeds import rows_of, score_difference
from decision_ac import print_targets, statistics
from decision_as import LEFT_OUT, SEEDS
from decision_m import NAMES, RESULTS, held_out_cut
from default_rows_machine import machine
from rows import done_keys, head_commit

#: The current default's rows on the cuts (decision AX's, adopted), and their variant name.
BASELINE = (os.path.join(RESULTS, "decision_ax.jsonl"), "AX")
FACTOR, OTHER_FACTOR, DEFAULT_FACTOR = 1.0, 1.25, 2.0
#: No step accepted (stage 3 needs t > switch_t), in both pipelines: the fit returns the chosen floor's form.
FLOOR_ONLY = {"max_steps": 1, "switch_t": 1e9}
#: How close the floor form computed here must be to a stored row that returned the floor (relative).
AGREEMENT = 1e-6
#: AY's rule (research/ablation_plan.md): the most AY's geometric mean and upper bound over the default may be.
MEAN_AT_MOST = {"simulate": 0.98, "causal": 1.01}
BOUND_AT_MOST = {"simulate": 1.00, "causal": 1.02}


def cuts():
    return [n for n in NAMES if n != LEFT_OUT]


def run(out):
    """The chosen floor's form of every cut without a row in ``out``, scored as the decision rows are."""
    done, cpu, commit = done_keys(out, "data"), machine(), head_commit()
    for name in cuts():
        if name in done:
            continue
        ds = held_out_cut(name)
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=1)
        model.fit(ds.y_train, ds.u_train, plan=FLOOR_ONLY, progress=False)
        sel = model.selection_
        if sel["gp_part"]:
            raise RuntimeError(f"{name}: the floor-only fit kept a GP part")
        row = {"data": name, "floor": sel["floor"]["kind"], "orders": sel["floor"]["orders"],
               "fit_seconds": time.perf_counter() - start, "machine": cpu, "commit": commit}
        for protocol in ("causal", "simulate"):
            row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def ratio(row):
    """The guard's free-run ratio (model over floor) of a row that returned a GP part; None otherwise."""
    fr = row["free_run"]
    return None if not row["gp_part"] or fr is None else fr["model"] / fr["floor"]


def dropped(row, factor):
    """Whether the guard at ``factor`` drops the part ``row`` returned (a NaN or inf ratio is dropped, as the guard's
    ``<=`` does)."""
    r = ratio(row)
    return r is not None and not r <= factor


def as_variant(row, floor, factor):
    """The row of the default with the guard at ``factor``: ``row`` itself, or the floor form's scores where the
    guard at ``factor`` drops its part."""
    if not dropped(row, factor):
        return row
    return dict(row, gp_part=False, causal=floor["causal"], simulate=floor["simulate"])


def check_floors(default, floors):
    """The check of the plan: on every cut where a row returned no GP part and no stage-3b model, the computed floor
    form's scores equal that row's within :data:`AGREEMENT`; a cut that fails takes that row's scores instead.
    Returns the floors to use."""
    used = dict(floors)
    for (name, seed), row in sorted(default.items()):
        other = row["other_floor"] or {}
        if row["gp_part"] or other.get("kept") or name not in floors:
            continue
        mine = floors[name]
        diff = score_difference((mine, row))
        kinds = "" if mine["floor"] == row["floor"] else f" (kinds {mine['floor']} here, {row['floor']} in the row)"
        if diff > AGREEMENT or kinds:
            print(f"  check: {name} seed {seed}: floor form here differs from the row's by {diff:.2e}{kinds}; "
                  "the row's scores are used")
            used[name] = dict(mine, causal=row["causal"], simulate=row["simulate"])
    checked = sorted({n for (n, _), r in default.items() if not r["gp_part"] and not (r["other_floor"] or {})
                      .get("kept")} & set(floors))
    print(f"  check: floor forms compared with the rows that returned the floor on {len(checked)} cuts")
    return used


def decide(out):
    default = rows_of(*BASELINE)
    floors = {r["data"]: r for r in map(json.loads, open(out))} if os.path.exists(out) else {}
    missing = [n for n in cuts() if n not in floors or any((n, s) not in default for s in SEEDS)]
    if missing:
        print(f"not run yet: {missing}; nothing decided")
        return
    floors = check_floors(default, floors)
    for factor in (FACTOR, OTHER_FACTOR):
        cells = [(k, ratio(r)) for k, r in sorted(default.items()) if dropped(r, factor)]
        print(f"  the factor {factor} drops {len(cells)} parts: "
              + ", ".join(f"{n} seed {s} ({x:.3f})" for (n, s), x in cells))
    pairs = {n: [(as_variant(default[n, s], floors[n], FACTOR), default[n, s]) for s in SEEDS] for n in cuts()}
    bounds, means = statistics("AY over the default, seeds 1-4", pairs)
    for protocol in ("causal", "simulate"):
        d = {n: np.exp(np.mean([np.log(a[protocol] / b[protocol]) for a, b in p])) for n, p in pairs.items()}
        moved = {n: v for n, v in d.items() if abs(v - 1) > 0.05}
        print(f"  more than 5 % changed under {protocol}: "
              + (", ".join(f"{n} {v:.3f}" for n, v in sorted(moved.items(), key=lambda nv: nv[1])) or "none"))
    print_targets(pairs)
    adopted = all(means[p] <= MEAN_AT_MOST[p] and bounds[p] <= BOUND_AT_MOST[p] for p in MEAN_AT_MOST)
    print("AY adopted" if adopted else "AY not adopted")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    decide(args.out) if args.decide else run(args.out)
