"""Natural-gradient steps on q(u) beside Adam on the rest: how fast a fold run's out-of-fold error falls.

An exploration (research/ablation_plan.md, "natural-gradient steps on q(u)"), deciding nothing. The default fit's
fold runs improve until late in their 1500-step budget on the plants where the GP part learns most
(docs/results.md, section 1, "a 500-step default fit within 60 s"), and Adam moves every coordinate of the whitened
q(v_q) = N(m_q, L_q L_q^T) by about its step whatever the curvature. Natural gradients in the exponential-family
parameters of q (Hensman, Fusi and Lawrence, UAI 2013; Salimbeni, Eleftheriadis and Hensman, AISTATS 2018, who
combine them with Adam on the hyperparameters) step along the Fisher geometry: with the prior p(v) = N(0, I) and
gamma = 1, the KL term alone is minimised in one step. The update, per latent GP, with the ELBO's gradients dm and
dS (the full data's: the training loss is -ELBO per window, so its gradients times the number of windows)::

    theta1 = S^-1 m,  theta2 = -S^-1 / 2          natural parameters
    d/d eta1 = dm - 2 dS m,  d/d eta2 = dS          gradient in the expectation parameters (m, S + m m^T)
    theta <- theta + gamma d/d eta;  S = (-2 theta2)^-1,  m = S theta1,  L = chol(S)

dS from the loss's gradient g_L of the lower-triangular L (S = L L^T; Murray 2016, "Differentiation of the
Cholesky decomposition"): X = L^-T Phi(L^T g_L) L^-1 with Phi the lower triangle, diagonal halved; dS = -(X + X^T)
/ 2 times the number of windows. A step whose precision is not positive definite is retried at half gamma. The
other parameters take the candidate's Adam steps as in the default fit.

For the latest fold of a training half (its floor refitted before the origin, ``diagnose_fold_fit.trace``, the
step-size candidate ``--candidate``), every ``--every`` steps the mean causal RMSE of the windows after the origin (the
selection's score) and of windows inside the fold's training part. Training halves only; no test half is read.

Run: python research/explore_natural_gradient.py OUT.jsonl hammerstein [tanks ...] [--kinds arx]
         [--gammas 0 0.01 0.05] [--steps 1500] [--every 50]
         [--candidate default|linear_slow] [--per-window 20] [--psd]   (gamma 0: the default's Adam on q(u) too)
     python research/explore_natural_gradient.py OUT.jsonl --summary
This script is the research record's; nothing in the package imports it.
"""
import argparse
import json

import numpy as np

from gpssm_np import estimator, optim
from gpssm_np.models import default_fit

from diagnose_fold_fit import trace
from rows import done_keys, head_commit

Q_NAMES = ("q_mu", "q_sqrt")


def phi(a):
    """The lower triangle of each matrix of ``a`` (..., M, M) with its diagonal halved."""
    out = np.tril(a)
    idx = np.arange(a.shape[-1])
    out[..., idx, idx] *= 0.5
    return out


def natural_step(m, L, g_m, g_L, gamma, scale, psd=False):
    """(m', L') of one natural-gradient step (module docstring) of q(v_q) = N(m_q, L_q L_q^T) for each q, from the
    loss's gradients g_m (Q, M) and g_L (Q, M, M) times ``scale``; None where a precision is not positive
    definite. ``psd``: the step's target precision, I + Lambda, with Lambda projected onto the positive semidefinite
    matrices (its negative eigenvalues set to 0, as a Gauss-Newton approximation does), and the target mean taken with
    it."""
    Linv = np.linalg.inv(L)
    X = np.swapaxes(Linv, 1, 2) @ phi(np.swapaxes(L, 1, 2) @ g_L) @ Linv
    dS = -scale * 0.5 * (X + np.swapaxes(X, 1, 2))
    dm = -scale * g_m
    prec = np.swapaxes(Linv, 1, 2) @ Linv  # S^-1
    if psd:  # the target precision I + Lambda with Lambda's negative eigenvalues set to 0
        target = prec - 2.0 * dS
        w, V = np.linalg.eigh(target - np.eye(target.shape[-1]))
        target = np.eye(target.shape[-1]) + (V * np.maximum(w, 0.0)[:, None, :]) @ np.swapaxes(V, 1, 2)
        theta1 = (1.0 - gamma) * np.einsum("qij,qj->qi", prec, m) + gamma * (np.einsum("qij,qj->qi", target, m) + dm)
        prec_new = (1.0 - gamma) * prec + gamma * target
    else:
        theta1 = np.einsum("qij,qj->qi", prec, m) + gamma * (dm - 2.0 * np.einsum("qij,qj->qi", dS, m))
        prec_new = prec - 2.0 * gamma * dS  # -2 theta2'
    try:
        np.linalg.cholesky(prec_new)  # positive definite, or no step
    except np.linalg.LinAlgError:
        return None
    S = np.linalg.inv(prec_new)
    S = 0.5 * (S + np.swapaxes(S, 1, 2))
    try:
        L_new = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        return None
    return np.einsum("qij,qj->qi", S, theta1), L_new


class NaturalQ(optim.Adam):
    """Adam on every parameter but q(u)'s, natural-gradient steps of ``gamma`` on q_mu and q_sqrt."""

    def __init__(self, lr=0.01, scales=None, gamma=0.01, reference_length=None, psd=False):
        super().__init__(lr, scales=scales)
        self.gamma, self.num_windows, self.halvings, self.psd = gamma, 1, 0, psd
        # with reference_length n0, the step is gamma n0 / n on windows of n steps (n set by the training step)
        self.reference_length, self.window_length = reference_length, reference_length

    def step(self, params, grads):
        rest = [k for k in params if k not in Q_NAMES]
        new = super().step({k: params[k] for k in rest}, {k: grads[k] for k in rest})
        m, L = np.asarray(params["q_mu"]), np.tril(np.asarray(params["q_sqrt"]))
        gamma = self.gamma
        if self.reference_length is not None:
            gamma *= self.reference_length / self.window_length
        for _ in range(20):
            out = natural_step(m, L, np.asarray(grads["q_mu"]), np.tril(np.asarray(grads["q_sqrt"])), gamma,
                               self.num_windows, self.psd)
            if out is not None:
                break
            gamma *= 0.5
            self.halvings += 1
        new["q_mu"], new["q_sqrt"] = out if out is not None else (m, L)
        return new


def patched(gamma, reference_length=None, psd=False):
    """Patch the default fit's optimiser to :class:`NaturalQ` of ``gamma``, and the models' training step
    (``estimator.train_step``, ``training_loop.train_step`` as the models call it) to tell it the number of
    windows and their length (``reference_length``: :class:`NaturalQ`'s); returns the undo."""
    adam, train_step = default_fit.Adam, estimator.train_step

    def make(lr, scales=None):
        return NaturalQ(lr, scales=scales, gamma=gamma, reference_length=reference_length, psd=psd)

    def step(model, y, u, rng, num_samples, num_windows, optimizer, *args):
        optimizer.num_windows, optimizer.window_length = num_windows, y.shape[1]
        return train_step(model, y, u, rng, num_samples, num_windows, optimizer, *args)

    default_fit.Adam, estimator.train_step = make, step

    def undo():
        default_fit.Adam, estimator.train_step = adam, train_step

    return undo


def summary(path):
    """Per plant and variant: the lowest out-of-fold error and its step, and the first step at which each
    natural-gradient run reaches the Adam run's lowest (the reading of the module docstring's plan entry)."""
    rows = {}
    with open(path) as f:
        for r in map(json.loads, f):
            rows.setdefault(r["data"], {})[r["variant"]] = r["trace"]
    for name, variants in rows.items():
        adam = next((t for v, t in variants.items() if v.endswith("adam")), None)
        target = min(r["out"] for r in adam) if adam else None
        for variant, t in variants.items():
            best = min(t, key=lambda r: r["out"])
            reach = next((r["step"] for r in t if target is not None and r["out"] <= target), None)
            print(f"{name:12s} {variant:28s} lowest {best['out']:.4f} at step {best['step']:5d}   step 0 "
                  f"{t[0]['out']:.4f}   reaches Adam's lowest at {reach}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--summary", action="store_true", help="print the summary of OUT's rows and stop")
    parser.add_argument("--kinds", nargs="+", default=["arx"])
    parser.add_argument("--gammas", nargs="+", type=float, default=[0.0, 0.01, 0.05])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--per-window", type=int, default=None,
                        help="scale gamma by this length over the windows' (the data term grows with the windows)")
    parser.add_argument("--psd", action="store_true", help="the target precision projected (natural_step's psd)")
    parser.add_argument("--candidate", choices=("default", "linear_slow"), default="default",
                        help="the step-size candidate (diagnose_fold_fit's variant: the plain step, or F, G, b at "
                             "a tenth)")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
        return
    done = done_keys(args.out, "data", "kind", "variant")
    for name in args.names:
        for kind in args.kinds:
            for gamma in args.gammas:
                variant = f"{args.candidate}, " + ("adam" if gamma == 0 else f"natural {gamma:g}")
                if gamma and args.per_window:
                    variant += f" x {args.per_window} / window length"
                if gamma and args.psd:
                    variant += ", PSD"
                if (name, kind, variant) in done:
                    continue
                undo = patched(gamma, args.per_window, args.psd) if gamma else (lambda: None)
                try:
                    row = trace(name, kind, args.candidate, args.steps, args.every)
                finally:
                    undo()
                row = dict(row, variant=variant, commit=head_commit())
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
