"""Amendment F's check (research/ablation_plan.md): every cell of research/results/defaults_v4*.jsonl whose GP part
was kept, refitted with the far-field guard (research/results/defaults_v5_guard.jsonl). A markdown table: the far
field's spectral radii (free run, filter) of the model and of its floor, whether the guard fired, and the test
scores before and after; and a count of the cells whose fit reproduced the earlier one exactly.

Run: python research/summarise_guard.py research/results/defaults_v5_guard.jsonl research/results/defaults_v4*.jsonl
This script is the research record's; nothing in the package imports it.
"""
import json
import sys

from compare_defaults import odgpssm_rows


def main(new_path, old_paths):
    old = odgpssm_rows(old_paths)
    rows = sorted((json.loads(line) for line in open(new_path)), key=lambda r: (r["data"], r["seed"]))
    print("| data | seed | model radii (run, filter) | floor radii (run, filter) | guard fired | causal before | "
          "after | simulate before | after |")
    print("|---|---|---|---|---|---|---|---|---|")
    same = fired = 0
    for r in rows:
        o = old[(r["data"], r["seed"])]
        far = r["selection"]["free_run"]["far_field"]
        drop = not r["selection"]["gp_part"]
        fired += drop
        same += (not drop) and r["causal"] == o["causal"] and r["simulate"] == o["simulate"]
        print(f"| {r['data']} | {r['seed']} | {far['model']['run']:.3f}, {far['model']['filter']:.3f} | "
              f"{far['floor']['run']:.3f}, {far['floor']['filter']:.3f} | {'yes' if drop else 'no'} | "
              f"{o['causal']:.4g} | {r['causal']:.4g} | {o['simulate']:.4g} | {r['simulate']:.4g} |")
    print()
    print(f"{len(rows)} cells refitted; the guard fired on {fired}; of the {len(rows) - fired} others, {same} gave "
          "the same test scores to the last digit as before.")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
