"""Decision AC of research/ablation_plan.md (the held-out rule's resolution, and decision Z's variant Z2 replicated
on new seeds), on training data only: on the 70/30 cuts of the 25 training halves, training seeds 1 and 2, the
current default (variant "default") and the default fit with the step-size candidate F, G, b at a tenth alone
(variant "AC"), scored on the last 30 % under causal and simulate. One JSON line per (cut, variant, seed), appended
(resumable; two workers can share the file with disjoint seeds).

Run: python research/decision_ac.py research/results/decision_ac.jsonl --seed 1
[--data name ...]; then ``--decide``. This script is the research record's; nothing in the package imports it.
"""
import argparse
import json

import numpy as np
from scipy.stats import t as student_t

from decision_m import NAMES, held_out_row
from decision_y import current_rows
from rows import done_keys

PLANS = {"default": None, "AC": {"lr_scales": ({"F": 0.1, "G": 0.1, "b": 0.1},)}}
SEEDS = (1, 2)
BOUND = 1.02
TARGETS = ("reactor", "two_mass", "drive", "dryer2", "ballbeam")  # the sets issue #28 names


def run(out, names, seed, plans=PLANS):
    """Every variant of ``plans`` (name -> plan changes; both of :data:`PLANS` by default) on every cut of ``names``
    with training seed ``seed``, cut by cut (a cut's variants finish together)."""
    done = done_keys(out, "data", "variant", "seed")
    for name in names:
        for variant, plan in plans.items():
            if (name, variant, seed) not in done:
                held_out_row(out, name, variant, plan=plan, seed=seed)


def upper_bound(d):
    """The one-sided 95 % upper confidence bound of exp(mean d) over the cuts' log-ratios ``d`` (t, n - 1 df)."""
    d = np.asarray(d)
    return float(np.exp(d.mean() + student_t.ppf(0.95, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))))


def meets_rule(geo, bounds):
    """The held-out rule of the decisions on several training seeds per cut (AL, AM, AN): the geometric means
    ``geo`` of the variant over the default at most 0.99 under causal and 1.00 under simulate, and the upper bounds
    ``bounds`` of both (:func:`upper_bound`) at most :data:`BOUND` (as :func:`statistics` returns them)."""
    return (geo["causal"] <= 0.99 and geo["simulate"] <= 1.00 and bounds["causal"] <= BOUND
            and bounds["simulate"] <= BOUND)


def print_cuts(variant, pairs, seeds):
    """One line per cut of ``pairs`` ({cut: [(the variant's row, the default's row) for each of ``seeds``]}): each
    seed's s* under both and the variant's causal RMSE over the default's."""
    for name, p in pairs.items():
        cells = [f"{s}: {d['step']:4d}/{v['step']:4d} {v['causal'] / d['causal']:.3f}" for s, (v, d) in zip(seeds, p)]
        print(f"{name:18s} seed, s* default/{variant}, causal {variant} over default: " + "; ".join(cells))


def statistics(label, pairs):
    """Print, under causal and simulate, the geometric mean of the ratios ``pairs`` ({cut: [(numerator row,
    denominator row), ...]}: each cut's ratios averaged in log), its upper bound (:func:`upper_bound`), the worst cut
    and how many cuts are more than 5 % worse; returns ({protocol: upper bound}, {protocol: geometric mean})."""
    bounds, means = {}, {}
    for protocol in ("causal", "simulate"):
        d = {c: np.mean([np.log(a[protocol] / b[protocol]) for a, b in p]) for c, p in pairs.items()}
        ratios = np.exp(np.array(list(d.values())))
        worst = max(d, key=d.get)
        bounds[protocol] = upper_bound(list(d.values()))
        means[protocol] = float(np.exp(np.mean(list(d.values()))))
        print(f"{label}, {protocol}: {len(d)} cuts, geometric mean {means[protocol]:.4f}, upper "
              f"bound {bounds[protocol]:.4f}, worst {worst} {np.exp(d[worst]):.4f}, more than 5 % worse on "
              f"{int(np.sum(ratios > 1.05))}, changed on {int(np.sum(np.abs(ratios - 1) > 1e-12))}")
    return bounds, means


def decide(out):
    """AC's rule (research/ablation_plan.md): adopted if every (cut, variant, seed) of seeds 1 and 2 has a row and,
    under causal and under simulate, the upper bound of AC's geometric-mean ratio over the default is at most
    :data:`BOUND`. Beside it, deciding nothing: the default's seed 2 over its seed 1, and each over seed 0's rows."""
    rows = {(r["data"], r["variant"], r["seed"]): r for r in map(json.loads, open(out))}
    missing = [(n, v, s) for n in NAMES for v in PLANS for s in SEEDS if (n, v, s) not in rows]
    names = [n for n in NAMES if all((n, v, s) in rows for v in PLANS for s in SEEDS)]
    pairs = {n: [(rows[n, "AC", s], rows[n, "default", s]) for s in SEEDS] for n in names}
    print_cuts("AC", pairs, SEEDS)
    if not names:
        print("no complete cut yet")
        return
    bounds, _ = statistics("AC over the default", pairs)
    seed0 = current_rows()
    statistics("null: the default's seed 2 over its seed 1", {n: [(rows[n, "default", 2], rows[n, "default", 1])]
                                                             for n in names})
    for s in SEEDS:
        statistics(f"null: the default's seed {s} over its seed 0", {n: [(rows[n, "default", s], seed0[n])]
                                                                    for n in names})
    fit_seconds("AC", pairs)
    verdict("AC", missing, all(b <= BOUND for b in bounds.values()), "the default keeps both candidates")


def fit_seconds(variant, pairs):
    """Print the geometric mean of the variant's fit seconds over the default's in ``pairs`` (:func:`print_cuts`)."""
    seconds = [v["fit_seconds"] / d["fit_seconds"] for p in pairs.values() for v, d in p]
    print(f"fit seconds, {variant} over the default: geometric mean {np.exp(np.mean(np.log(seconds))):.3f} (not a "
          "clean timing)")


def against_default(variant, rows, default, cells, seeds):
    """({cut: [(the variant's row, the default's row) for each of ``seeds``]}, the missing cells): the cuts of
    :data:`NAMES` where ``rows`` and ``default`` ({(cut, seed): row}) hold every seed, printed by :func:`print_cuts`;
    a cell of ``cells`` ((cut, seed)) without its row in ``rows`` is missing."""
    missing = [(n, s) for n, s in cells if (n, s) not in rows]
    names = [n for n in NAMES if all((n, s) in rows and (n, s) in default for s in seeds)]
    pairs = {n: [(rows[n, s], default[n, s]) for s in seeds] for n in names}
    print_cuts(variant, pairs, seeds)
    return pairs, missing


def print_targets(pairs):
    """Print the causal ratios of the target sets of issue #28 (:data:`TARGETS`) among ``pairs``."""
    for n in TARGETS:
        if n in pairs:
            print(f"  {n}: causal " + ", ".join(f"{a['causal'] / d['causal']:.3f}" for a, d in pairs[n]))


def seconds_ratio(variant, rows, default, names):
    """Print the variant's and the default's fit seconds summed over the cuts ``names`` (any container of cut names,
    such as the ``pairs`` of :func:`against_default`) of ``rows`` and ``default`` ({(cut, seed): row}); returns the
    variant's over the default's."""
    seconds = {v: sum(r["fit_seconds"] for k, r in rs.items() if k[0] in names)
               for v, rs in ((variant, rows), ("default", default))}
    ratio = seconds[variant] / seconds["default"]
    print(f"  fit seconds over the complete cuts: {variant} {seconds[variant]:.0f}, default {seconds['default']:.0f} "
          f"({ratio:.2f} times)")
    return ratio


def verdict(variant, missing, passed, otherwise):
    """Print a decision's verdict: nothing adopted while fits are ``missing``, else adopted when ``passed``."""
    if missing:
        print(f"not run yet: {len(missing)} fits; nothing adopted")
    elif passed:
        print(f"{variant} adopted")
    else:
        print(f"{variant} not adopted: {otherwise}")


def seeded_cli(run, decide, seeds):
    """The command line of a decision with several training seeds per cut: ``OUT --seed S [--data name ...]`` runs
    ``run(OUT, names, S)``; ``OUT --decide`` runs ``decide(OUT)``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--data", nargs="+", default=NAMES)
    parser.add_argument("--seed", type=int, choices=seeds)
    parser.add_argument("--decide", action="store_true")
    args = parser.parse_args()
    if args.decide:
        decide(args.out)
    elif args.seed is None:
        parser.error("--seed is required to run")
    else:
        run(args.out, args.data, args.seed)


if __name__ == "__main__":
    seeded_cli(run, decide, SEEDS)
