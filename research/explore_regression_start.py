"""The GP residual's mean started at the one-step regression of the floor's residuals (an exploration, deciding
nothing; research/ablation_plan.md, the entry of that name).

The default fit's training runs start the GP residual at zero mean. Variant "regression_start" sets the whitened
inducing means q_mu instead to the posterior mean of a Gaussian linear regression: the floor's smoothed-state residuals
r_t = x'_t - F' x'_{t-1} - G' u_t - b on the states that carry process noise, regressed on
Psi_d(x) = [A_d1 k_1(x, Z_1) L_1^{-T}, ..., A_dQ k_Q(x, Z_Q) L_Q^{-T}] at the GP inputs x = [x'_{t-1}, u_t], prior
N(0, I), noise the warm start's process-noise variance q_d. Everything else is the warm start's.

Traces from ``diagnose_fold_fit.trace`` on the latest fold of the 70/30 cut's training part (``held_out_cut``), so the
cuts' held-out parts stay unread. One JSON line per (data, kind, variant).

Run: python research/explore_regression_start.py OUT.jsonl duffing [wiener ...] [--kinds lgssm arx]
         [--variants default regression_start] [--steps 300] [--every 50]
This script is the research record's; nothing in the package imports it.
"""
import json

import numpy as np

from gpssm_np.models.gpssm import GPSSM
from gpssm_np.models.warm_start import gp_inputs
from gpssm_np.ops.kernels import kernel_matrix_reference

import diagnose_fold_fit
from defaults_check import held_out_cut
from rows import head_commit

VARIANTS = ("default", "regression_start")


def residual_regression(model, start, us):
    """The whitened inducing means (Q, M) of the module docstring's regression, for ``model`` at its warm start
    ``start`` (``warm_start.WarmStart``) on the training inputs ``us``."""
    spec, p = model.spec, model.constrained_params()
    X = gp_inputs(start, us)  # (N, D): [x'_{t-1}, u_t] from the smoothed means
    R = np.concatenate([m[1:] - m[:-1] @ start.F.T - u @ start.G.T - start.b
                        for m, u in zip(start.smoothed_means, us)])  # (N, d_x)
    Z, ell, s2, A = (np.asarray(p[k]) for k in ("Z", "lengthscale", "variance", "A"))
    Q, M = spec.num_latent, spec.num_inducing
    Kzz = kernel_matrix_reference(Z, Z, ell, s2, spec.kernel) + spec.jitter * np.eye(M)
    Kxz = kernel_matrix_reference(X, Z, ell, s2, spec.kernel)  # (Q, N, M)
    phi = np.stack([np.linalg.solve(np.linalg.cholesky(Kzz[q]), Kxz[q].T).T for q in range(Q)])  # k L^{-T}
    noise = np.asarray(p["process_var"])
    precision, rhs = np.eye(Q * M), np.zeros(Q * M)
    for d in np.flatnonzero(start.driven):
        psi = np.concatenate([A[d, q] * phi[q] for q in range(Q)], axis=1)  # (N, Q M)
        precision += psi.T @ psi / noise[d]
        rhs += psi.T @ R[:, d] / noise[d]
    return np.linalg.solve(precision, rhs).reshape(Q, M)


def regression_start(counts=None):
    """Patch ``GPSSM.start_from_floor`` so that a start with a GP part (A not all 0) ends with q_mu at
    :func:`residual_regression`; ``counts["touched"]`` (where given) counts those starts. Returns the undo."""
    original = GPSSM.start_from_floor

    def start_from_floor(self, floor_model, ys, us, seed, **options):
        start = original(self, floor_model, ys, us, seed, **options)
        if np.any(np.asarray(self.params.get("A", 0.0)) != 0):  # a GP part with a prior variance to move
            self.params = dict(self.params, q_mu=residual_regression(self, start, us))
            if counts is not None:
                counts["touched"] += 1
        return start

    GPSSM.start_from_floor = start_from_floor
    return lambda: setattr(GPSSM, "start_from_floor", original)


def summary(path, steps=(0, 150, 300)):
    """Print "out" at ``steps`` of each variant per (data, kind), and the counts the plan's reading asks for."""
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    traces = {(r["data"], r["kind"], r["variant"]): {t["step"]: t["out"] for t in r["trace"]} for r in rows}
    lower_end = not_above_floor = pairs = 0
    for data, kind in dict.fromkeys((d, k) for d, k, _ in traces):
        default, start = traces.get((data, kind, "default")), traces.get((data, kind, "regression_start"))
        if default is None or start is None:
            continue
        pairs += 1
        end = max(default)
        lower_end += start[end] < default[end]
        not_above_floor += start[0] <= default[0]  # the default's step 0 is the floor's form
        print(f"{data:12s} {kind:6s}", "  ".join(f"{s}: {default.get(s, np.nan):.4f} -> {start.get(s, np.nan):.4f}"
                                                  for s in steps))
    print(f"{pairs} traces: regression_start lower at the last step on {lower_end}, "
          f"at step 0 not above the floor's form on {not_above_floor}")


def main():
    parser = diagnose_fold_fit.trace_parser(VARIANTS)
    parser.add_argument("--summary", action="store_true", help="print the rows' reading instead of running")
    args = parser.parse_args()
    if args.summary:
        return summary(args.out)
    diagnose_fold_fit.dataset = held_out_cut  # the cut's training part, not the whole training half
    for name, kind, variant in diagnose_fold_fit.pending_traces(args):
        undo = regression_start() if variant == "regression_start" else None
        try:
            row = diagnose_fold_fit.trace(name, kind, variant, args.steps, args.every)
        finally:
            if undo is not None:
                undo()
        with open(args.out, "a") as f:
            f.write(json.dumps(dict(row, cut=0.7, commit=head_commit())) + "\n")


if __name__ == "__main__":
    main()
