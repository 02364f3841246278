"""The five-seed table's fits that ran stage 3b, fitted again under the current default (research/ablation_plan.md,
"the table's stage 3b fits under the halving": a check, deciding nothing).

docs/results.md section 1 assembles the default's rows from several files (:data:`TABLE_FILES`, a later file's row
replacing an earlier one's); all but two of its fits predate decision BC's halving of the step-size candidates, which
leaves the first selection of 88 of the 90 fits as it was (read off their selection records) but may change stage
3b's second selection, whose record the rows do not keep. This fits again, with the package code of HEAD, every cell
of the table whose current row ran stage 3b (``selection.other_floor`` set) and predates the halving, other than the
steam generator's (two fits of 700-1900 s; ``--steam-generator`` fits those): one JSON line per cell in the row
format of research/defaults_check.py (``defaults_check.run_cells``; the committed rows also carry ``"variant":
"BC"``, which nothing reads); two workers share the cells, the longest first. One
control cell (:data:`CONTROL`), whose first selection the halving leaves as it was and which ran no stage 3b, is
fitted too: its row must equal the table's (to the machine's rounding).

Run: python research/rerun_stage_3b.py research/results/defaults_bc_3b.jsonl --worker 0 --workers 2; then
--decide (here: the comparison with the rows they replace). This script is the research record's; nothing in the
package imports it.
"""
import json
import math
import os

from defaults_check import DATA, SIMULATORS, run_cells
from rows import worker_main
from seed_spread import FILES, RESULTS

#: Files whose fits already ran the halving.
HALVED = ("defaults_bc_actuator.jsonl",)
#: The ODGPSSM row files of docs/results.md section 1's table, in its order (a later row replaces an earlier one).
TABLE_FILES = FILES + HALVED
#: A cell the halving cannot change (research/halving_on_defaults.py: not halved, no stage 3b).
CONTROL = (("quad_tanks", 0),)


def table_rows():
    """{(data, seed): (file, row)} of the table's current ODGPSSM rows."""
    rows = {}
    for name in TABLE_FILES:
        for r in map(json.loads, open(os.path.join(RESULTS, name))):
            if r["model"] == "odgpssm":
                rows[r["data"], r["seed"]] = (name, r)
    return rows


def cells(steam_generator=False):
    """The (data, seed) cells to fit again, the longest fit first; ``steam_generator``: the steam generator's
    instead (no control)."""
    table = {"steamgen"} if steam_generator else set(DATA + SIMULATORS) - {"steamgen"}
    chosen = [(key, r) for key, (name, r) in table_rows().items()
              if key[0] in table and name not in HALVED and r["selection"].get("other_floor") is not None]
    ordered = [key for key, r in sorted(chosen, key=lambda item: -item[1]["fit_seconds"])]
    return ordered if steam_generator else ordered + list(CONTROL)


def run(out, worker, workers, reverse=False, steam_generator=False):
    mine = cells(steam_generator)[worker::workers]
    for name, seed in reversed(mine) if reverse else mine:
        run_cells(out, [seed], [name], ["odgpssm"])  # resumable: skips a cell with a row


def decide(out, steam_generator=False):
    """Each refitted cell beside the row it replaces: equal to every digit, within 1e-9 relative, or changed; the
    ratios of the new causal and simulate errors over the old; what stage 3b kept before and after."""
    old = table_rows()
    new = {(r["data"], r["seed"]): r for r in map(json.loads, open(out))}
    missing = [c for c in cells() + cells(True) if c not in new]
    logs = {"causal": [], "simulate": []}
    same = close = 0
    for key in sorted(new):
        a, b = old[key][1], new[key]
        equal = all(a[p] == b[p] for p in logs)
        near = all(abs(b[p] / a[p] - 1) < 1e-9 for p in logs)  # the machine's rounding, not another model
        same, close = same + equal, close + near
        for p in logs:
            logs[p].append(math.log(b[p] / a[p]))
        sa, sb = a["selection"]["other_floor"], b["selection"]["other_floor"]
        label = ("control " if key in CONTROL else "") + f"{key[0]} {key[1]}"
        print(f"{label:22s} causal {b['causal'] / a['causal']:.4f}  simulate {b['simulate'] / a['simulate']:.4f}  "
              f"{'equal' if equal else 'within 1e-9' if near else 'changed'}  "
              f"3b kept {sa and sa.get('kept')} -> {sb and sb.get('kept')}  "
              f"GP part {a['selection']['gp_part']} -> {b['selection']['gp_part']}")
    n = len(new)
    print(f"{n} cells ({len(missing)} missing), {same} equal to every digit, {close} within 1e-9 relative; "
          "geometric means of new over old: "
          + ", ".join(f"{p} {math.exp(sum(v) / n):.4f}" for p, v in logs.items() if n))


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide,
                lambda parser: parser.add_argument("--steam-generator", action="store_true",
                                                   help="the steam generator's two cells instead"))
