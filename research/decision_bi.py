"""Decision BI of research/ablation_plan.md (the other pipeline's GP part kept only by more than ``switch_t``
standard errors over the first pipeline's returned model): on decision BH's 17 touched cells, BH's fit again up to the
end of the other pipeline's selection (its refit skipped), recording the paired t of the other pipeline's windows at
its s* and candidate over the first pipeline's returned model's ("t_returned") and that s* ("other_step", which must
equal BH's row's). BI's row of a cell is then BH's where t_returned > switch_t, else decision BC's; the other 79
cells are BH's rows. One JSON line per (cut, seed), variant "BI-t", appended (resumable); two workers share them.

Run: python research/decision_bi.py research/results/decision_bi.jsonl --worker 0 --workers 2; then --decide.
This script is the research record's; nothing in the package imports it.
"""
import json
import time

import decision_bh
from cut_seeds import rows_of
from decision_bb import steps_rule
from decision_bd import baseline
from decision_bh import MEANS_AT_MOST, STEPS_RATIO, Second, both_fit, returned_at
from decision_m import RESULTS, held_out_cut
from gpssm_np import ODGPSSM
from gpssm_np.models import default_fit
from gpssm_np.models.training import paired_t
from rows import pending, worker_main

VARIANT = "BI-t"
BH_ROWS = f"{RESULTS}/decision_bh.jsonl"
SEEN = {}


class Probe(Second):
    """BH's other pipeline, stopped after its selection: records BH's s* and the t over the first's returned model."""

    def acceptance(self, record):
        step, t, c = super().acceptance(record)
        SEEN["other_step"] = step
        SEEN["t_returned"] = None
        if step:
            at = next(r for r in record if r["step"] == step)
            row, first_c = returned_at(self.first)
            SEEN["t_returned"] = paired_t(row["windows"][first_c], at["windows"][c])
        return 0, t, 0


def touched():
    """BH's touched cells, longest fit first."""
    rows = rows_of(BH_ROWS, "BH")
    return sorted((c for c, r in rows.items() if r["touched"]), key=lambda c: -rows[c]["fit_seconds"])


def run(out, worker, workers, reverse=False):
    saved_fit, saved_second = default_fit.fit, decision_bh.Second
    default_fit.fit, decision_bh.Second = both_fit, Probe
    try:
        for name, seed in pending(out, touched()[worker::workers], lambda c: (c[0], VARIANT, c[1]), reverse):
            ds = held_out_cut(name)
            start = time.perf_counter()
            model = ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=seed)
            model.fit(ds.y_train, ds.u_train, progress=False)
            row = {"data": name, "variant": VARIANT, "seed": seed, "seconds": time.perf_counter() - start,
                   "other_step": SEEN["other_step"], "t_returned": SEEN["t_returned"]}
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    finally:
        default_fit.fit, decision_bh.Second = saved_fit, saved_second


def decide(out):
    """The rule of research/ablation_plan.md, decision BI, on the rows it composes."""
    base, bh, probes = baseline(), rows_of(BH_ROWS, "BH"), rows_of(out, VARIANT)
    rows = dict(bh)
    for cell, p in probes.items():
        same = p["other_step"] == bh[cell]["other_floor"]["step"]
        keep = p["t_returned"] is not None and p["t_returned"] > default_fit.Plan().switch_t
        print(f"{cell[0]:18s} seed {cell[1]}: t over the first's model {p['t_returned']}, s* as BH's: {same}, "
              f"{'BH' if keep else 'default'}'s row")
        # the default's model, at BH's selection steps (both selections ran) and the default's refit
        rows[cell] = bh[cell] if keep else dict(base[cell], touched=0, selection_steps=bh[cell]["selection_steps"])
    missing = [c for c in touched() if c not in probes]
    if missing:
        print(f"not run yet: {missing}")
        return
    steps_rule("BI", rows, base, STEPS_RATIO, MEANS_AT_MOST)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
