"""Decision BF of research/ablation_plan.md (decision BE's natural step on q(u) as a challenger): the 70/30 cuts of the
24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 % under causal and
simulate, against this machine's rows of the current default (decision BC's, research/results/decision_bc.jsonl). One
JSON line per (cut, seed), variant "BF", appended (resumable), each naming the machine's CPU, the fit's training steps
and whether the challenger went on at the halving; two workers share the cells (``--worker k --workers 2``).

The third candidate is BE's (:data:`decision_be.PLAN`, :func:`decision_be.natural_candidate`); the selection's
bookkeeping is patched (:func:`challenger_patch`) so that it acts only on clear evidence:

- the first two candidates' stopping, the halving among them and the selection's overall patience are the default's
  (:func:`challenger_live`, the value :meth:`DefaultFit.evaluate` returns to the selection's loop), so their runs are
  the default's bit for bit;
- at the halving the third goes on, and the other two stop, only where its lowest fold error so far beats the halving
  leader's lowest by more than ``switch_t`` standard errors of the paired window differences (``training.paired_t``);
  otherwise it stops there;
- at the end it is chosen only on the same test against the lowest (step, candidate) of the other two
  (:func:`challenger_best_of`); the parameters of its runs at its own lowest step are kept for stage 5.

Run: python research/decision_bf.py research/results/decision_bf.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import numpy as np

import decision_av
from cut_seeds import rows_of, score_difference
from decision_ac import seconds_ratio, statistics, upper_bound, verdict
from decision_am import run_variant
from decision_bb import cells, compare
from decision_bd import baseline
from decision_be import PLAN, natural_candidate
from rows import worker_main

from gpssm_np.models.default_fit import DefaultFit, Plan, live_candidates
from gpssm_np.models.training import paired_t

THIRD = 2  # the challenger's index among the plan's candidates
SWITCH_T = Plan().switch_t
DEFAULT_BEST_OF = DefaultFit.best_of  # the package's, before the patch replaces it
SECONDS_RATIO = 1.7
WORST = 1.05  # no cut more than 5 % worse under causal
HARM_BOUND = 1.02


def halving_at(plan):
    """The step where ``plan``'s candidates are halved (``DefaultFit.live_runs``)."""
    return plan.max_steps // len(plan.seq_lens)


def lowest(record, c):
    """The row of ``record`` with candidate ``c``'s lowest finite mean fold error (ties to the earlier step); None
    where it has none."""
    finite = [r for r in record if np.isfinite(r["candidates"][c])]
    return min(finite, key=lambda r: (r["candidates"][c], r["step"])) if finite else None


def beats(row, c, challenger):
    """Whether the challenger's ``challenger`` row beats candidate ``c`` at ``row`` by more than ``SWITCH_T``
    standard errors of the paired window differences."""
    t = paired_t(row["windows"][c], challenger["windows"][THIRD])
    return t is not None and t > SWITCH_T


def first_two(record):
    """``record`` with the first two candidates only (what the default's bookkeeping reads)."""
    return [dict(r, candidates=r["candidates"][:THIRD], windows=r["windows"][:THIRD]) for r in record]


def challenger_live(record, patience, halve_at):
    """(whether each of the three candidates still trains, whether the challenger went on at the halving): the first
    two as the default's :func:`live_candidates` has them on their own record; the challenger by its own patience
    before the halving; at the first evaluation at or after ``halve_at`` (and after step 0) it goes on, alone, where
    it is still training there and its lowest error up to it beats, by :func:`beats`, the lowest of the halving's
    leader (of the first two, the one still training with the lower lowest error, ties to the earlier; where neither
    trains, the better of both); otherwise it stops."""
    own = live_candidates(record, THIRD + 1, patience)
    main = live_candidates(first_two(record), THIRD, patience, halve_at)
    at = next((r["step"] for r in record if r["step"] >= max(halve_at, 1)), None)
    if at is None:
        return main + [own[THIRD]], False
    upto = [r for r in record if r["step"] <= at]
    if not live_candidates(upto, THIRD + 1, patience)[THIRD]:
        return main + [False], False
    alive = live_candidates(first_two(upto), THIRD, patience)
    lows = {c: lowest(upto, c) for c in range(THIRD)}
    pool = [c for c in range(THIRD) if alive[c] and lows[c] is not None] or [c for c in lows if lows[c] is not None]
    leader = min(pool, key=lambda c: (lows[c]["candidates"][c], c))
    mine = lowest(upto, THIRD)
    if mine is not None and beats(lows[leader], leader, mine):
        return [False] * THIRD + [own[THIRD]], True
    return main + [False], False


def challenger_best_of(record):
    """(row, candidate) of the final choice: the package's :meth:`DefaultFit.best_of` over the first two candidates,
    replaced by the challenger's lowest row where it beats that by :func:`beats`."""
    row, c = DEFAULT_BEST_OF(first_two(record))
    row = next(r for r in record if r["step"] == row["step"])
    mine = lowest(record, THIRD)
    return (mine, THIRD) if mine is not None and beats(row, c, mine) else (row, c)


def challenger_patch():
    """BE's candidate (:func:`decision_be.natural_candidate`, the training steps counted) and BF's bookkeeping
    (module docstring); returns the undo."""
    undo_candidate = natural_candidate()
    saved = {name: DefaultFit.__dict__[name] for name in ("live_runs", "evaluate", "best_of", "acceptance")}

    def live_runs(self):
        live, _ = challenger_live(self.record, self.plan.patience, halving_at(self.plan))
        per_candidate = len(self.runs) // len(self.plan.lr_scales)
        return [k for k in range(len(self.runs)) if live[k // per_candidate]]

    def evaluate(self, step):
        # the selection's loop keeps its best score and patience on what this returns: the first two candidates'
        # lowest mean, as the default has it, or all three's where the challenger went on at the halving
        saved["evaluate"](self, step)
        if step == 0:
            self.kept_challenger = {}
        row = self.record[-1]
        _, switched = challenger_live(self.record, self.plan.patience, halving_at(self.plan))
        if step and lowest(self.record, THIRD) is row:
            self.kept_challenger = {step: [run.params() for _, run, _ in self.runs]}
        return min(row["candidates"] if switched else row["candidates"][:THIRD])

    def acceptance(self, record):
        self.kept.update(getattr(self, "kept_challenger", {}))  # stage 5 reads the chosen step's parameters
        return saved["acceptance"](self, record)

    DefaultFit.live_runs, DefaultFit.evaluate, DefaultFit.acceptance = live_runs, evaluate, acceptance
    DefaultFit.best_of = staticmethod(challenger_best_of)

    def undo():
        for name, value in saved.items():
            setattr(DefaultFit, name, value)
        undo_candidate()
    return undo


def switched(model):
    """A row's extra item: whether the challenger went on at the halving in the fit's (last) selection."""
    return challenger_live(model.selection_["record"], Plan().patience, halving_at(Plan()))[1]


def run(out, worker, workers, reverse=False):
    run_variant(out, "BF", cells(baseline())[worker::workers], challenger_patch, plan=PLAN, reverse=reverse,
                extra=decision_av.step_extra() + (("switched", switched),))


def harm_bound(pairs, protocol):
    """The one-sided 95 % upper bound (``decision_ac.upper_bound``) over the cuts' log-ratios of ``pairs`` clipped at
    0 from below: only the losses counted."""
    d = [np.mean([np.log(a[protocol] / b[protocol]) for a, b in p]) for p in pairs.values()]
    return upper_bound(np.maximum(d, 0.0))


def decide(out):
    """The rule of research/ablation_plan.md, decision BF."""
    rows, default = rows_of(out, "BF"), baseline()
    untouched = [cell for cell, r in rows.items() if not r["switched"] and "_natural" not in (r["lr_scale"] or {})]
    if untouched:
        rel = score_difference(*((rows[c], default[c]) for c in untouched))
        print(f"{len(untouched)} fits where the challenger neither went on nor was chosen; largest relative "
              f"difference from the default's rows {rel:.2e} (0 expected: the first two candidates' runs are the "
              "default's)")
    compared = compare("BF", rows, default)
    if compared is None:
        return
    pairs, missing, _, means = compared
    chosen = sorted(cell for cell, r in rows.items() if r["gp_part"] and "_natural" in (r["lr_scale"] or {}))
    print(f"  the challenger's part kept on {len(chosen)} of {len(rows)} cells: {chosen}")
    print(f"  the challenger went on at the halving on {sum(r['switched'] for r in rows.values())} cells")
    harm = {p: harm_bound(pairs, p) for p in ("causal", "simulate")}
    worst = max(np.exp(np.mean([np.log(a["causal"] / b["causal"]) for a, b in p])) for p in pairs.values())
    print(f"  harm bounds: causal {harm['causal']:.4f}, simulate {harm['simulate']:.4f}; worst cut causal {worst:.4f}")
    statistics("  (the same statistics, for the record)", pairs)
    seconds = seconds_ratio("BF", rows, default, pairs)
    passed = (means["causal"] <= 0.99 and means["simulate"] <= 1.00 and max(harm.values()) <= HARM_BOUND
              and worst <= WORST and seconds <= SECONDS_RATIO)
    verdict("BF", missing, passed,
            f"causal {means['causal']:.4f}, simulate {means['simulate']:.4f} (0.99 and 1.00 asked), harm bounds "
            f"{harm['causal']:.4f} and {harm['simulate']:.4f} ({HARM_BOUND} asked), worst cut {worst:.4f} ({WORST} "
            f"asked), fit seconds {seconds:.2f} times ({SECONDS_RATIO} asked)")


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
