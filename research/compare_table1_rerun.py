"""Compare a rerun of Table 1's sweep with the committed rows, run by run and protocol by protocol.

`python research/compare_table1_rerun.py RERUN.json [--committed docs/results/table1.json] [--superseded]` prints,
for every (model, data set, seed, protocol) the two files share, the relative difference of each score
(standardised RMSE, RMSE in original units, NLPD, 95 % coverage, final training loss), then how many are equal to
every digit, within 1e-12 and within 1e-9 relative, the largest difference, and the rerun's protocols the committed
rows lack.
``--superseded`` compares with the committed file's ``superseded_runs`` instead (the rows a rerun replaced).
research/ablation_plan.md, "Table 1's GP models rerun with the authors' settings at the current code".
"""
import argparse
import json

SCORES = ("rmse", "rmse_original_units", "nlpd", "coverage95", "final_loss")


def _key(row):
    return row["model"], row["dataset"], int(row["seed"]), row["protocol"]


def _relative(a, b):
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def compare(committed_rows, rerun_rows):
    """[(key, score, committed, rerun, relative difference)] over the scores both rows hold, and the rerun's keys
    the committed rows lack."""
    committed = {_key(r): r for r in committed_rows}
    pairs, new = [], []
    for row in rerun_rows:
        old = committed.get(_key(row))
        if old is None:
            new.append(_key(row))
            continue
        for score in SCORES:
            if old.get(score) is not None and row.get(score) is not None:
                pairs.append((_key(row), score, old[score], row[score], _relative(old[score], row[score])))
    return pairs, new


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rerun")
    ap.add_argument("--committed", default="docs/results/table1.json")
    ap.add_argument("--superseded", action="store_true", help="compare with the rows the rerun replaced")
    args = ap.parse_args()
    with open(args.committed) as f:
        committed = json.load(f)["superseded_runs" if args.superseded else "runs"]
    with open(args.rerun) as f:
        rerun = json.load(f)
    pairs, new = compare(committed, rerun["runs"])
    for key, score, old, now, rel in sorted(pairs, key=lambda p: -p[4]):
        if rel > 1e-12:
            print(f"{'/'.join(map(str, key)):40s} {score:20s} {old:.12g} -> {now:.12g}  rel {rel:.2e}")
    n = len(pairs)
    print(f"{n} scores compared: equal {sum(p[4] == 0 for p in pairs)}, within 1e-12 "
          f"{sum(p[4] <= 1e-12 for p in pairs)}, within 1e-9 {sum(p[4] <= 1e-9 for p in pairs)}; largest "
          f"{max((p[4] for p in pairs), default=0.0):.2e}")
    runs = sorted({p[0][:3] for p in pairs})
    print(f"{len(runs)} runs; rerun wall seconds {rerun.get('wall_seconds')}")
    protocols = sorted({k[3] for k in new})
    print(f"rerun rows the committed file lacks: {len(new)} ({', '.join(protocols)})")


if __name__ == "__main__":
    main()
