"""A table of research/results/defaults_*.jsonl: the default ODGPSSM against the better of ARX() and LGSSM(auto)."""
import json
import sys
from collections import defaultdict

rows = [json.loads(line) for path in sys.argv[1:] for line in open(path)]
cells = defaultdict(dict)
for r in rows:
    cells[(r["data"], r["seed"])][r["model"]] = r
print("| data | seed | protocol | ODGPSSM | ARX | LGSSM | ratio to better linear | floor | GP part | fit s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (data, seed), models in cells.items():
    if len(models) < 3:
        continue
    g = models["odgpssm"]
    for protocol in ("causal", "simulate"):
        lin = min(models["arx"][protocol], models["lgssm"][protocol])
        sel = g["selection"]
        print(f"| {data} | {seed} | {protocol} | {g[protocol]:.4f} | {models['arx'][protocol]:.4f} | "
              f"{models['lgssm'][protocol]:.4f} | {g[protocol] / lin:.3f} | {sel['floor']['kind']} "
              f"{sel['floor']['orders']} | {'kept, ' + str(sel['step']) + ' steps' if sel['gp_part'] else 'no'} | "
              f"{g['fit_seconds']:.0f} |")
