"""Two default fits on the same cells of the default check (research/defaults_check.py rows): for every (data, seed)
that both hold, the test-half RMSE of the new default fit over the old one's under the causal and simulate
protocols, whether each kept its GP part, and the geometric means over the cells (paired: the same data, seed,
training half and test half).

Run: python research/compare_defaults.py OLD.jsonl ... --new NEW.jsonl ... (a later OLD file's row replaces an
earlier one's for the same cell, as in summarise_defaults.py). This script is the research record's; nothing in
the package imports it.
"""
import json
import math
import sys


def odgpssm_rows(paths):
    """(data, seed) -> the ODGPSSM row of the default check files ``paths`` (a later file's row replaces an earlier
    one's)."""
    rows = {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if r["model"] == "odgpssm":
                rows[(r["data"], r["seed"])] = r
    return rows


def main(old_paths, new_paths):
    old, new = odgpssm_rows(old_paths), odgpssm_rows(new_paths)
    cells = sorted(set(old) & set(new))
    print("| data | seed | causal: new / old | simulate: new / old | GP part kept (old, new) |")
    print("|---|---|---|---|---|")
    logs = {"causal": [], "simulate": []}
    for cell in cells:
        ratio = {p: new[cell][p] / old[cell][p] for p in logs}
        for p in logs:
            logs[p].append(math.log(ratio[p]))
        kept = (old[cell]["selection"]["gp_part"], new[cell]["selection"]["gp_part"])
        print(f"| {cell[0]} | {cell[1]} | {ratio['causal']:.3f} | {ratio['simulate']:.3f} | "
              f"{'yes' if kept[0] else 'no'}, {'yes' if kept[1] else 'no'} |")
    print()
    print(f"Geometric means over {len(cells)} cells: causal {math.exp(sum(logs['causal']) / len(cells)):.3f}, "
          f"simulate {math.exp(sum(logs['simulate']) / len(cells)):.3f}.")


if __name__ == "__main__":
    args = sys.argv[1:]
    split = args.index("--new")
    main(args[:split], args[split + 1:])
