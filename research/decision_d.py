"""Decision D of research/ablation_plan.md (the free-run guard's factor), on training data only.

Each set's training half (research/defaults_check.py's sets) is cut at 70 %: the default ODGPSSM (seed 0) is fitted
to the first 70 % and, beside it, the same model with its floor's parameters (the zero GP residual stage 4 falls
back to); both are scored on the last 30 % under the causal protocol (100-step windows, the state filtered from the
100 steps before each) and the simulate protocol (n_init = 5). The guard's factor f drops a kept GP part when its
free run of the training record is more than f times the floor's (``selection_["free_run"]``), so each variant's
score is the model's or the floor's from the same fit. One JSON line per set, appended (resumable).

Run: python research/decision_d.py OUT.jsonl [--data name ...]; then python research/decision_d.py OUT.jsonl
--decide. This script is the research record's; nothing in the package imports it.
"""
import copy
import json
import math
import time

import gpssm_np as gp
from gpssm_np.models.floor import choose_floor

from defaults_check import decision_cli, held_out_cuts

FACTORS = (1.0, 1.25, 2.0)  # 2.0: the default


def floor_form(model, ds):
    """A copy of the fitted ``model`` with its floor's zero-residual parameters (stage 4's fallback)."""
    sc = model.scaling_
    ys, us = [sc.y_to_model(ds.y_train)], [sc.u_to_model(ds.u_train)]
    other = copy.deepcopy(model)
    other.start_from_floor(choose_floor(ys, us).model, ys, us, 0, gp_share=0.0)
    return other


def held_out_fits(out, names):
    """For each set of ``names`` without a row in ``out``: (name, the 70/30 cut of its training half as a Dataset,
    the default ODGPSSM (seed 0) fitted to the first 70 %, the fit's seconds)."""
    for name, ds in held_out_cuts(out, names):
        start = time.perf_counter()
        model = gp.ODGPSSM(dim_y=ds.y_train.shape[1], dim_u=ds.u_train.shape[1], seed=0)
        model.fit(ds.y_train, ds.u_train, progress=False)
        yield name, ds, model, time.perf_counter() - start


def run(out, names):
    for name, ds, model, seconds in held_out_fits(out, names):
        sel = model.selection_
        row = {"data": name, "fit_seconds": seconds, "gp_part": sel["gp_part"], "free_run": sel["free_run"]}
        for who, m in (("model", model), ("floor", floor_form(model, ds))):
            for protocol in ("causal", "simulate"):
                row[f"{who}_{protocol}"] = gp.evaluate(m, ds, protocol, seed=0)["rmse"]
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in row if k != "free_run"}), flush=True)


def decide(out):
    rows = [json.loads(line) for line in open(out)]

    def score(row, factor, protocol):
        fr = row["free_run"]
        dropped = row["gp_part"] and fr is not None and not fr["model"] <= factor * fr["floor"]
        return row[f"{'floor' if dropped else 'model'}_{protocol}"]

    def gmean(factor, protocol):
        return math.exp(sum(math.log(score(r, factor, protocol)) for r in rows) / len(rows))

    for factor in FACTORS:
        changed = [r["data"] for r in rows if score(r, factor, "causal") != score(r, 2.0, "causal")]
        print(f"factor {factor}: geometric mean over {len(rows)} sets, causal {gmean(factor, 'causal'):.4f}, "
              f"simulate {gmean(factor, 'simulate'):.4f}; sets where it differs from 2.0: {changed}")
    for factor in FACTORS[:-1]:
        sim = gmean(factor, "simulate") / gmean(2.0, "simulate")
        cau = gmean(factor, "causal") / gmean(2.0, "causal")
        adopted = sim <= 0.98 and cau <= 1.01
        print(f"factor {factor} against 2.0: simulate x{sim:.4f}, causal x{cau:.4f}: "
              f"{'adopted' if adopted else 'not adopted'} (rule: simulate <= 0.98 and causal <= 1.01)")


if __name__ == "__main__":
    decision_cli(run, decide)
