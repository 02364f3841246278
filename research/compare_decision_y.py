"""Decision Y (research/ablation_plan.md) on the five-seed check's cells that met an ARX floor: the default with Y
(research/results/defaults_y_*.jsonl, research/defaults_check.py at the code they name) beside the default before Y
(seed 0: refitted on the same machine, research/results/defaults_v9_machine2_s0_*.jsonl; seeds 1-4: the table's
rows, defaults_v9_s1.jsonl, defaults_v9_s234.jsonl and stage_3b_refits.jsonl, from the project's earlier machine),
each also over the better of the linear models' rows (defaults_v4*.jsonl, defaults_v7_arx.jsonl, as
summarise_defaults.py). Prints a Markdown table; nothing is chosen from it.

Run: python research/compare_decision_y.py
This script is the research record's; nothing in the package imports it.
"""
import numpy as np

from compare_machines import rows_of

PROTOCOLS = ("causal", "simulate")
BEFORE = ("defaults_v9.jsonl", "defaults_v9_s1.jsonl", "defaults_v9_s234.jsonl", "stage_3b_refits.jsonl",
          "defaults_v9_machine2_s0_*.jsonl")


def describe(selection):
    kind = selection["floor"]["kind"] if isinstance(selection["floor"], dict) else selection["floor"]
    return f"{kind}, {'part at ' + str(selection['step']) if selection['gp_part'] else 'floor only'}"


if __name__ == "__main__":
    before = rows_of(BEFORE)
    after = rows_of(["defaults_y_*.jsonl"])
    linear = rows_of(["defaults_v4*.jsonl", "defaults_v7_arx.jsonl"], models=("arx", "lgssm"))
    print("| data | seed | before | with Y | causal: before | with Y | Y / before | simulate: before | with Y "
          "| Y / before | causal over linear: before | with Y |")
    print("|---" * 12 + "|")
    ratios = {p: [] for p in PROTOCOLS}
    for key in sorted(after):
        name, seed, _ = key
        b, a = before[key], after[key]
        cells = [name, str(seed), describe(b["selection"]), describe(a["selection"])]
        for p in PROTOCOLS:
            ratios[p].append(a[p] / b[p])
            cells += [f"{b[p]:.4f}", f"{a[p]:.4f}", f"{a[p] / b[p]:.3f}"]
        best = min(linear[name, 0, k]["causal"] for k in ("arx", "lgssm"))
        cells += [f"{b['causal'] / best:.3f}", f"{a['causal'] / best:.3f}"]
        print("| " + " | ".join(cells) + " |")
    geo = {p: float(np.exp(np.mean(np.log(v)))) for p, v in ratios.items()}
    same = sum(r == 1.0 for r in ratios["causal"])
    print(f"\n{len(after)} cells, {same} equal to every digit under causal; Y over before, geometric mean (range): "
          + ", ".join(f"{p} {geo[p]:.3f} ({min(v):.3f}-{max(v):.3f})" for p, v in ratios.items()))
