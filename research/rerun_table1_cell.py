"""One Table 1 cell (authors' settings) re-run with the current code, compared digit by digit with the committed row
of docs/results/table1.json (written on another machine: it differs in the 13th significant digit) and with this
machine's reference rows in research/results/table1_cell_reference.json (written by ``--write`` with the code
and machine they record). Run: python research/rerun_table1_cell.py [--write] [dataset model seed]"""
import json
import os
import sys

from gpssm_np.experiments import table1

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "table1_cell_reference.json")
args = [a for a in sys.argv[1:] if a != "--write"]
data, model, seed = args[:3] if len(args) > 2 else ("gas_furnace", "prssm", "0")
rows = table1.run_one(data, model, int(seed))
committed = [r for r in json.load(open("docs/results/table1.json"))["runs"]
             if r["dataset"] == data and r["model"] == model and r["seed"] == int(seed)]
reference = json.load(open(REFERENCE)) if os.path.exists(REFERENCE) else []
reference = [r for r in reference if r["dataset"] == data and r["model"] == model and r["seed"] == int(seed)]
for row in rows:
    for name, rows_of in (("committed", committed), ("reference", reference)):
        old = next((r for r in rows_of if r["protocol"] == row["protocol"]), None)
        print(row["protocol"], repr(row["rmse"]), f"{name}:", None if old is None else repr(old["rmse"]),
              "equal" if old is not None and old["rmse"] == row["rmse"] else "")
if "--write" in sys.argv:
    keep = ("dataset", "model", "seed", "protocol", "rmse", "provenance")
    with open(REFERENCE, "w") as f:
        json.dump([{k: r[k] for k in keep if k in r} for r in rows], f, indent=1)
