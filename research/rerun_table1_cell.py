"""One committed Table 1 cell (authors' settings) re-run with the current code, compared digit by digit with the row
of docs/results/table1.json. Run: python research/rerun_table1_cell.py [dataset model seed]"""
import json
import sys

from gpssm_np.experiments import table1

data, model, seed = (sys.argv[1:4] if len(sys.argv) > 3 else ("gas_furnace", "prssm", "0"))
rows = table1.run_one(data, model, int(seed))
committed = [r for r in json.load(open("docs/results/table1.json"))["runs"]
             if r["dataset"] == data and r["model"] == model and r["seed"] == int(seed)]
for row in rows:
    old = next((r for r in committed if r["protocol"] == row["protocol"]), None)
    print(row["protocol"], repr(row["rmse"]), "committed:", None if old is None else repr(old["rmse"]),
          "equal" if old is not None and old["rmse"] == row["rmse"] else "")
