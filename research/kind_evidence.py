"""What the folds say about the floor's kind on the nine real data sets, on training data only (a check, deciding
nothing; research/ablation_plan.md, "the floor's kind on four cuts of the real sets").

Each real set's training half is cut at 50, 60, 70 and 80 % (the 70 % cut is decision M's, seen by the kind rules
A, G, L, P and R; the others are new); on each cut ``ARX()`` and ``LGSSM(dim_x="auto")`` at their defaults are fitted
to the first part and scored on the rest of the training half under causal and simulate (``gp.evaluate``, seed 0).
Each row keeps both kinds' per-window errors on their own rolling-origin folds (``fold_errors_``, in the
standardised units the floor compares them in; the same models the floor fits, ``models/floor.fit_kind``) and how
many windows each fold holds, so that rules of choosing the kind can be read off the rows without fitting again.
``--summary`` prints, per rule, on how many cuts it picks the kind that is better on the held-out part, and the
geometric mean over the cuts of the picked kind's held-out error over the better kind's:

* folds (the current rule): the lower mean fold error (ties to the ARX);
* one SE: the LGSSM unless the ARX beats it by more than one standard error (decision L);
* last fold: the lower error on the latest origin's windows alone;
* ARX always, LGSSM always; oracle (1 by definition).

Run: python research/kind_evidence.py research/results/kind_evidence.jsonl [--data name ...]; then
``OUT [OUT ...] --summary`` (the rows of two workers: research/results/kind_evidence_a.jsonl and _b.jsonl).
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json
import time

import numpy as np

import gpssm_np as gp
from gpssm_np.datasets.folds import mean_error, rolling_origin
from gpssm_np.models.training import paired_t

from cut_targets import linear_model
from decision_l import model_units
from defaults_check import DATA, held_out_cut as cut
from rows import done_keys

FRACTIONS = (0.5, 0.6, 0.7, 0.8)
KINDS = ("arx", "lgssm")
PROTOCOLS = ("causal", "simulate")


def cuts(out, names):
    """(name, fraction, the cut as a Dataset) for every cut of the sets ``names`` without a row in ``out`` yet (so
    that a run resumes where it stopped)."""
    done = done_keys(out, "data", "fraction")
    for name in names:
        for fraction in FRACTIONS:
            if (name, fraction) not in done:
                yield name, fraction, cut(name, fraction)


def run(out, names):
    for name, fraction, ds in cuts(out, names):
        start = time.perf_counter()
        row = {"data": name, "fraction": fraction}
        for kind in KINDS:
            d_y, d_u = ds.y_train.shape[1], ds.u_train.shape[1]
            model = linear_model(kind, d_y, d_u).fit(ds.y_train, ds.u_train)
            row[kind] = {p: gp.evaluate(model, ds, p, seed=0)["rmse"] for p in PROTOCOLS}
            row[kind]["fold_errors"] = model.fold_errors_
        folds = rolling_origin(*model_units(ds))
        row["fold_windows"] = [len(f.windows) for f in folds]
        row["seconds"] = time.perf_counter() - start
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in ("data", "fraction", "seconds")}), flush=True)


def picks(row):
    """{rule: kind} for one row."""
    arx, lgssm = row["arx"]["fold_errors"] or [], row["lgssm"]["fold_errors"] or []
    last = row["fold_windows"][-1] if row["fold_windows"] else 0
    t = paired_t(lgssm, arx) if len(arx) == len(lgssm) and len(arx) > 1 else None
    return {"folds": "arx" if mean_error(arx) <= mean_error(lgssm) else "lgssm",
            "one SE": "arx" if t is not None and t > 1.0 else "lgssm",
            "last fold": "arx" if mean_error(arx[-last:]) <= mean_error(lgssm[-last:]) else "lgssm",
            "ARX always": "arx", "LGSSM always": "lgssm"}


def summary(outs):
    rows = [json.loads(line) for out in outs for line in open(out)]
    rules = list(picks(rows[0]))
    for protocol in PROTOCOLS:
        print(f"\n{protocol}: per cut, ARX and LGSSM held-out RMSE and each rule's pick")
        ratios = {rule: [] for rule in rules}
        right = {rule: 0 for rule in rules}
        for row in rows:
            errors = {k: row[k][protocol] for k in KINDS}
            best = min(errors.values())
            chosen = picks(row)
            for rule, kind in chosen.items():
                ratios[rule].append(errors[kind] / best)
                right[rule] += errors[kind] == best
            folds = [mean_error(row[k]["fold_errors"] or []) for k in KINDS]
            print(f"  {row['data']:>14} {row['fraction']:.1f}  ARX {errors['arx']:.4f}  LGSSM {errors['lgssm']:.4f}  "
                  f"fold means {folds[0]:.4f} {folds[1]:.4f}  " +
                  " ".join(f"{rule}:{kind}" for rule, kind in chosen.items()))
        for rule in rules:
            geo = float(np.exp(np.mean(np.log(ratios[rule]))))
            print(f"  {rule:>12}: better kind on {right[rule]} of {len(rows)} cuts, geometric mean {geo:.3f}, "
                  f"worst {max(ratios[rule]):.2f}")


def main(run=run, summary=summary):
    """The command line: ``OUT [--data name ...]`` runs ``run(OUT, names)`` (the nine real sets by default);
    ``OUT [OUT ...] --summary`` prints ``summary([OUT, ...])``. research/combined_floor_exploration.py passes its
    own."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="+")
    parser.add_argument("--data", nargs="+", default=DATA)
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
    else:
        run(args.out[0], args.data)


if __name__ == "__main__":
    main()
