"""Decision Q of research/ablation_plan.md (K's recovery test as a second opinion where the far-field radius rule
drops a GP part), decided on the fresh records 5-10 of the 16 simulated plants.

Cells: the records whose current default fit (rows of research/fresh_records.py: fresh_records_n.jsonl for records 5
and 6, fresh_records_7_10.jsonl for 7-10) kept a GP part in the selection, passed the free-run guard and failed the
radius rule (``guards.far_field_passes``). On each, the default fit (seed 0) is run again with stage 4's guards
recorded and bypassed (``decision_k.fit_bypassing_guards``; ``repeats`` says whether its guard numbers are the row's
to every digit), K's recovery test is applied (``decision_k.recovery``), and Q's model (the refitted one where K
passes, else the floor in the model's form, which is the default's model) and the default's are scored on the
record's second half under causal and simulate. One JSON line per cell, appended (resumable).

Run: python research/decision_q.py research/results/decision_q.jsonl; add --decide to apply the rule.
This script is the research record's; nothing in the package imports it.
"""
import json
import os

import numpy as np

import gpssm_np as gp
from gpssm_np.models import default_fit as df, guards

from decision_k import FACTOR, fit_bypassing_guards, recovery
from decision_m import RESULTS
from defaults_check import decision_cli
from fresh_records import record
from rows import done_keys

#: The current default's rows on the fresh records, and the records the decision reads.
DEFAULT_ROWS = ("fresh_records_n.jsonl", "fresh_records_7_10.jsonl")
RECORDS = range(5, 11)
PROTOCOLS = ("causal", "simulate")


def default_rows():
    """The current default's rows (``DEFAULT_ROWS``: ODGPSSM, seed 0) on ``RECORDS``, in the files' order."""
    for name in DEFAULT_ROWS:
        path = os.path.join(RESULTS, name)
        if os.path.exists(path):
            yield from (row for row in map(json.loads, open(path))
                        if row["model"] == "odgpssm" and row["record"] in RECORDS)


def cells():
    """(plant, record, the default's row) of every cell (module docstring), in the rows' order."""
    for row in default_rows():
        guard = row.get("selection", {}).get("free_run")
        if guard is None:
            continue
        free_run = bool(guard["model"] <= FACTOR * guard["floor"])
        if free_run and not guards.far_field_passes(guard["far_field"]["model"], guard["far_field"]["floor"]):
            yield row["data"], row["record"], row


def run(out):
    done = done_keys(out, "data", "record")
    for name, r, default_row in cells():
        if (name, r) in done:
            continue
        ds = record(name, r)
        model, floor_model, guard, seconds = fit_bypassing_guards(ds, 0)
        then = default_row["selection"]["free_run"]
        repeats = guard is not None and guard["model"] == then["model"] and guard["floor"] == then["floor"] \
            and guard["far_field"] == then["far_field"]
        k_test = recovery(model, floor_model, ds.y_train, ds.u_train, df.Plan().num_particles, 0)
        row = {"data": name, "record": r, "fit_seconds": seconds, "repeats": bool(repeats),
               "recovery": {w: {str(k): v for k, v in k_test[w].items()} for w in ("model", "floor")},
               "k_passed": k_test["passed"],
               "default": {p: gp.evaluate(floor_model, ds, p, seed=0)["rmse"] for p in PROTOCOLS},
               "default_row": {p: default_row[p] for p in PROTOCOLS}}
        row["q"] = ({p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS} if k_test["passed"]
                    else dict(row["default"]))
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def decide(out):
    rows = [json.loads(line) for line in open(out)]
    for r in rows:
        print(f"{r['data']:18s} {r['record']:3d}  K {'passes' if r['k_passed'] else 'fails '}  causal "
              f"{r['q']['causal'] / r['default']['causal']:.3f}  simulate {r['q']['simulate'] / r['default']['simulate']:.3f}"
              f"  (Q over the default; guard repeats: {r['repeats']})")
    second_opinion_rule(rows, "q", "k_passed", "K passes on")


def second_opinion_rule(rows, variant, acted, counted):
    """Q's rule (research/ablation_plan.md; decision S's too) on ``rows``, each with the variant's RMSEs under
    ``variant`` and the default's under "default", and ``acted`` true where the variant returns another model than
    the default: adopted when it acts on at least 3 cells, its geometric mean over the default's is at most 0.99
    under causal and 1.00 under simulate, and no cell it acts on scores non-finite or above 1.5 times the default.
    ``counted``: the words before the count of those cells in the printed line."""
    if not rows:
        print("no cells yet")
        return
    label = variant.upper()
    kept = [r for r in rows if r[acted]]
    geo = {p: float(np.exp(np.mean([np.log(r[variant][p] / r["default"][p]) for r in rows]))) for p in PROTOCOLS}
    safe = all(np.isfinite(r[variant][p]) and r[variant][p] <= 1.5 * r["default"][p] for r in kept for p in PROTOCOLS)
    adopted = len(kept) >= 3 and geo["causal"] <= 0.99 and geo["simulate"] <= 1.0 and safe
    print(f"{len(rows)} cells, {counted} {len(kept)}; {label} over the default, geometric mean: causal "
          f"{geo['causal']:.4f} (rule <= 0.99), simulate {geo['simulate']:.4f} (rule <= 1.00); no kept part "
          f"diverging: {safe}: {'adopted' if adopted else 'not adopted'}")


if __name__ == "__main__":
    decision_cli(run, decide, names=None)
