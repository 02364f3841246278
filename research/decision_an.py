"""Decision AN of research/ablation_plan.md (the data term's weight as a candidate of the selection: a third
step-size candidate, the linear part at a tenth of the step with each training output counted once against
KL(q(u) || p(u)), beside the default's two at the "unbiased" weight), on training data only: the 70/30 cuts of the 25
training halves, training seeds 1 and 2, scored on each cut's last 30 % under causal and simulate. The default's
rows are decision AM's "default" rows (research/results/decision_am.jsonl, fitted on this machine by the same
default code). One JSON line per (cut, seed), variant "AN", appended (resumable; two workers share the file with
disjoint cells).

The candidate is carried in the plan's ``lr_scales`` as the key ``"_once"``: :func:`candidate_weights` makes the
training run of such a candidate (its fold runs, and the refit where it is chosen) weight its data term as
``diagnose_fold_fit.kl_once`` does, and gives Adam the step factors without that key.

Run: python research/decision_an.py research/results/decision_an.jsonl [--worker 0 --workers 2] [--reverse]; then
--decide. ``--reverse`` takes a worker's cells last first, so that a second process can share its cells.
This script is the research record's; nothing in the package imports it.
"""
from decision_ac import meets_rule
from decision_am import cut_cells, decide_variant, run_variant
from rows import worker_main

from gpssm_np import inference
from gpssm_np.models import default_fit, gpssm

SEEDS = (1, 2)
TENTH = {"F": 0.1, "G": 0.1, "b": 0.1}
PLAN = {"lr_scales": ({}, TENTH, dict(TENTH, _once=1))}


def check_keeping(check, key):
    """The plan's check of step-size candidates (``GPSSM._check_lr_scale``, given as ``check``) with the marker ``key``
    of a research candidate kept apart: checked without it, put back on the candidates that had it."""
    def check_lr_scale(self, lr_scale, *args):
        candidates = [lr_scale] if isinstance(lr_scale, dict) else lr_scale
        checked = check(self, [{k: v for k, v in c.items() if k != key} for c in candidates], *args)
        return [dict(c, **{key: 1}) if key in given else c for c, given in zip(checked, candidates)]
    return check_lr_scale


def candidate_weights():
    """Patch the package for AN's third candidate (module docstring); returns the undo."""
    weights, training_run = inference.kl_weights, default_fit.DefaultFit.training_run
    check = gpssm.GPSSM._check_lr_scale

    def kl_weights(kl_weighting, num_sequences, T, num_windows=None):
        if kl_weighting == "once":  # the "unbiased" weight over the window length: each output counted once
            c_data, c_inducing = weights("unbiased", num_sequences, T, num_windows)
            return c_data / T, c_inducing
        return weights(kl_weighting, num_sequences, T, num_windows)

    def run(self, model, warm, ys, us, seed, scales):
        scales = dict(scales)
        model.kl_weighting = "once" if scales.pop("_once", None) else "unbiased"
        return training_run(self, model, warm, ys, us, seed, scales)

    inference.kl_weights = gpssm.kl_weights = kl_weights
    default_fit.DefaultFit.training_run = run
    gpssm.GPSSM._check_lr_scale = check_keeping(check, "_once")

    def undo():
        inference.kl_weights = gpssm.kl_weights = weights
        default_fit.DefaultFit.training_run = training_run
        gpssm.GPSSM._check_lr_scale = check
    return undo


def run(out, worker, workers, reverse=False):
    run_variant(out, "AN", cut_cells(SEEDS)[worker::workers], candidate_weights, plan=PLAN, reverse=reverse)


def decide(out):
    def third_candidate(an, pairs):
        once = sorted((n, s) for (n, s), r in an.items() if r["gp_part"] and "_once" in (r["lr_scale"] or {}))
        print(f"  the third candidate chosen (GP part kept) on {len(once)} of {len(an)} cells: {once}")

    decide_variant(out, "AN", SEEDS, lambda geo, bounds, ratio: meets_rule(geo, bounds) and ratio <= 1.5,
                   third_candidate)


if __name__ == "__main__":
    worker_main(__doc__.splitlines()[0], run, decide)
