"""Decision BC of research/ablation_plan.md (the step-size candidates halved once the windows first grow): the 70/30
cuts of the 24 training halves other than the steam generator, training seeds 1-4, scored on each cut's last 30 %
under causal and simulate, against this machine's default rows (``decision_bb.baseline``). One JSON line per (cut,
seed), variant "BC", appended (resumable), each naming the machine's CPU, the fit's training steps and in how many
of its selections (stage 3b's counts apart) the halving stopped a candidate; two workers share the cells (``--worker
k --workers 2``).

Run: python research/decision_bc.py research/results/decision_bc.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import decision_av
from cut_seeds import rows_of
from decision_am import run_variant
from decision_bb import cells, decide_on_baseline
from rows import worker_main

from gpssm_np.models import default_fit

STEPS_RATIO = 0.95
HALVED = {"count": 0}


def halving_live(record, candidates, patience, cut):
    """For each step-size candidate, whether it still trains under BC: AU's rule (``default_fit.live_candidates``),
    and from the evaluation at step ``cut`` on, of the candidates AU left training there, only the one with the
    lowest mean fold error up to it (ties to the earlier candidate)."""
    live = default_fit.live_candidates(record, candidates, patience)
    if not record or record[-1]["step"] < cut:
        return live
    upto = [r for r in record if r["step"] <= cut]
    at_cut = default_fit.live_candidates(upto, candidates, patience)
    if sum(at_cut) < 2:
        return live
    own = [min(r["candidates"][c] for r in upto) for c in range(candidates)]
    leader = min((c for c in range(candidates) if at_cut[c]), key=lambda c: (own[c], c))
    return [alive and c == leader for c, alive in enumerate(live)]


def halving_patch():
    """BC's patch of ``DefaultFit.live_runs`` (the halving at step max_steps / len(seq_lens)), with the training
    steps counted (``decision_av.counting``) and the selections in which the halving stopped a candidate; returns
    the undo."""
    cls = default_fit.DefaultFit
    saved = cls.live_runs
    undo_counting = decision_av.counting()

    def live_runs(self):
        plan = self.plan
        candidates = len(plan.lr_scales)
        per_candidate = len(self.runs) // candidates
        cut = plan.max_steps // len(plan.seq_lens)
        live = halving_live(self.record, candidates, plan.patience, cut)
        if live != default_fit.live_candidates(self.record, candidates, plan.patience) and not getattr(
                self, "_halved", False):
            self._halved = True
            HALVED["count"] += 1
        return [k for k in range(len(self.runs)) if live[k // per_candidate]]

    cls.live_runs = live_runs

    def undo():
        cls.live_runs = saved
        undo_counting()
    return undo


def run(out, worker, workers, reverse=False):
    extra = decision_av.step_extra() + (("halved", decision_av.counted(HALVED, "count")),)
    run_variant(out, "BC", cells()[worker::workers], halving_patch, reverse=reverse, extra=extra)


def decide(out):
    rows = rows_of(out, "BC")
    print(f"{sum(r['halved'] > 0 for r in rows.values())} fits in which the halving stopped a candidate")
    decide_on_baseline(out, "BC", "halved", "in which the halving stopped no candidate", STEPS_RATIO)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
