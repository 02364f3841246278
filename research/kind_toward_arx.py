"""The floor's kind by the one-standard-error rule toward the ARX, computed from existing rows (an exploration,
deciding nothing; research/ablation_plan.md, "the kind by the one-standard-error rule toward the ARX").

Run: python research/kind_toward_arx.py. This script is the research record's; nothing in the package imports it.
"""
import json
import os

import numpy as np

from gpssm_np.datasets.folds import mean_error
from gpssm_np.models.training import paired_t

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
PROTOCOLS = ("causal", "simulate")


def rows_of(*names):
    return [json.loads(line) for name in names for line in open(os.path.join(RESULTS, name))]


def rules(t, folds):
    """{rule: kind} from the paired t of the LGSSM's window errors over the ARX's (positive: the ARX better) and the
    folds' kind."""
    return {"folds": folds, "one SE to LGSSM (L)": "arx" if t is not None and t > 1.0 else "lgssm",
            "one SE to ARX": "lgssm" if t is not None and t < -1.0 else "arx", "ARX always": "arx"}


def report(title, cases):
    """``cases``: (held-out errors {kind: {protocol: rmse}}, picks {rule: kind})."""
    print(title, f"({len(cases)})")
    for protocol in PROTOCOLS:
        for rule in cases[0][1]:
            ratios = [held[kind][protocol] / min(held[k][protocol] for k in held) for held, picks in cases
                      for kind in [picks[rule]]]
            print(f"  {protocol:>8} {rule:>20}: geometric mean {np.exp(np.mean(np.log(ratios))):.4f}, within 2 % on "
                  f"{sum(r <= 1.02 for r in ratios)}, worst {max(ratios):.3f}")


def main():
    cuts = []
    for row in rows_of("kind_evidence_a.jsonl", "kind_evidence_b.jsonl"):
        arx, lgssm = row["arx"]["fold_errors"] or [], row["lgssm"]["fold_errors"] or []
        t = paired_t(lgssm, arx) if len(arx) == len(lgssm) and len(arx) > 1 else None
        folds = "arx" if mean_error(arx) <= mean_error(lgssm) else "lgssm"
        held = {k: {p: row[k][p] for p in PROTOCOLS} for k in ("arx", "lgssm")}
        cuts.append((held, rules(t, folds)))
    report("real sets' cuts", cuts)
    for name, title in (("decision_l.jsonl", "records 1-4 (decision L)"), ("decision_r.jsonl", "records 11-14 (R)")):
        cases = [(row["held_out"], rules(row["t"], row["v0"])) for row in rows_of(name)]
        report(title, cases)


if __name__ == "__main__":
    main()
