"""The same training step (ELBO + gradient + Adam) in PyTorch and in gpssm_np's fused backend, and their ratio.

The PyTorch version below is written here for the comparison: CPU, float64, all B S particles batched, one Python
loop over time, autograd for the gradient and ``torch.optim.Adam`` (lr 0.01). It computes the ELBO of
gpssm_np.inference for an ODGPSSM of bench_elbo's configuration with the paper's zero mean function (Matern-5/2,
whitened q(u), shared inducing inputs, free diagonal Gaussian q(x0), unbiased KL weighting) from the same
unconstrained parameters and the same noise, and the script checks that both give the same value and gradient
before timing them. torch is not a dependency of gpssm_np: without it the script prints a message and exits with
status 0. Usage::

    python bench/bench_torch.py [--json] [--small] [--repeats N] [--torch-threads 1] [--T 200 --M 64]
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import PAPER, SMALL, blas_threads, emit, measure, parser, problem, versions  # noqa: E402

from gpssm_np._config import POSITIVE_FLOOR, VAR_FLOOR  # noqa: E402
from gpssm_np.inference import draw_noise  # noqa: E402
from gpssm_np.optim import Adam  # noqa: E402
from gpssm_np.ops.threads import kernel_threads  # noqa: E402


#: Largest relative error of the PyTorch ELBO's value and gradient against the fused backend's for a run to count.
CHECK_TOLERANCE = 1e-8


def torch_elbo(torch, raw, spec, y, u, noise):
    """The ELBO of gpssm_np.inference.elbo (free q(x0), whitened, shared Z, unbiased weighting with the sequences
    as the whole data set) in PyTorch; ``raw`` maps parameter names to unconstrained tensors."""

    def positive(x):
        return torch.logaddexp(torch.zeros_like(x), x) + POSITIVE_FLOOR

    Q, M, dy = spec.num_latent, spec.num_inducing, spec.dim_y
    Z = raw["Z"].expand(Q, M, spec.dim_in)
    ell, s2 = positive(raw["lengthscale"]), positive(raw["variance"])
    A, sqrt_q = raw["A"], torch.sqrt(positive(raw["process_noise"]))
    obs_var = positive(raw["obs_noise"])
    q_mu, q_sqrt = raw["q_mu"], torch.tril(raw["q_sqrt"])

    def kernel(X, Zq):  # X (Q, N, D) or (N, D) -> (Q, N, M), Matern-5/2
        diff = (X.unsqueeze(-2) - Zq.unsqueeze(-3)) / ell[:, None, None, :]
        a = torch.sqrt(5.0 * torch.clamp((diff * diff).sum(-1), min=1e-36))
        return s2[:, None, None] * (1.0 + a + a * a / 3.0) * torch.exp(-a)

    # q(u) whitened: alpha = L^-T mu, B = K^-1 - L^-T S L^-1
    Kzz = kernel(Z, Z) + spec.jitter * torch.eye(M, dtype=torch.float64)
    L = torch.linalg.cholesky(Kzz)
    eye = torch.eye(M, dtype=torch.float64).expand(Q, M, M)
    Linv = torch.linalg.solve_triangular(L, eye, upper=False)
    alpha = (Linv.transpose(1, 2) @ q_mu.unsqueeze(-1)).squeeze(-1)
    V = Linv.transpose(1, 2) @ q_sqrt
    B = Linv.transpose(1, 2) @ Linv - V @ V.transpose(1, 2)
    diag = torch.diagonal(q_sqrt, dim1=-2, dim2=-1)
    kl_u = 0.5 * ((q_sqrt**2).sum() + (q_mu**2).sum() - q_mu.numel() - 2.0 * torch.log(diag.abs()).sum())

    nseq, T = y.shape[:2]
    N = noise["eps0"].shape[0]
    S = N // nseq
    m0, v0 = raw["x0_mean"], positive(raw["x0_var"])
    x = m0 + torch.sqrt(v0) * noise["eps0"]
    kl_x0 = 0.5 * (v0 + m0**2 - 1.0 - torch.log(v0)).sum()
    u_rep = torch.repeat_interleave(u, S, dim=0)  # (N, T, d_u)
    states = []
    for t in range(T):
        xt = torch.cat([x, u_rep[:, t]], dim=1)
        K = kernel(xt, Z)  # (Q, N, M)
        mean = torch.einsum("qnm,qm->nq", K, alpha)
        var = s2 - torch.einsum("qnm,qmk,qnk->nq", K, B, K)
        h = mean + torch.sqrt(torch.clamp(var, min=VAR_FLOOR)) * noise["eps_h"][t]
        x = h @ A.T + sqrt_q * noise["eps_x"][t]
        states.append(x)
    X = torch.stack(states)  # (T, N, d_x)
    Cx = X[:, :, :dy].reshape(T, nseq, S, dy)
    resid = y.permute(1, 0, 2)[:, :, None, :] - Cx
    log_lik = -0.5 * (torch.log(2 * math.pi * obs_var) + resid**2 / obs_var)
    data = log_lik.mean(dim=2).sum(dim=(0, 2))  # (B,)
    return (data - kl_x0).sum() - kl_u


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads (default 1, like BLAS)")
    p.add_argument("--T", type=int, default=None, help="window length (default: the paper's 50)")
    p.add_argument("--M", type=int, default=None, help="inducing points (default: the paper's 20)")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        message = "bench_torch: PyTorch is not installed; skipped (pip install torch to run it)"
        emit(args, {"skipped": message}, [message])
        return 0
    torch.set_num_threads(args.torch_threads)
    cfg = dict(SMALL if args.small else PAPER)
    cfg.update({key: value for key, value in (("T", args.T), ("M", args.M)) if value})
    model, y, u = problem(cfg, mean_function="zero")  # the paper's model, which the torch ELBO writes out
    spec, S = model.spec, cfg["S"]
    noise_np = draw_noise(np.random.default_rng(0), cfg["B"], S, cfg["T"], spec.dim_x, spec.num_latent)
    noise = {k: torch.from_numpy(getattr(noise_np, k)) for k in ("eps0", "eps_h", "eps_x")}
    yt, ut = torch.from_numpy(y), torch.from_numpy(u)
    raw = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in model.get_learned_params().items()}

    # same value and gradient as the fused backend
    value = torch_elbo(torch, raw, spec, yt, ut, noise)
    value.backward()
    fused_value, fused_grad = model.elbo_and_grad(y, u, num_samples=S, seed=0, backend="fused")
    value_err = abs(float(value.detach()) - fused_value) / abs(fused_value)
    grad_err = max(float(np.max(np.abs(raw[k].grad.numpy() - g)) / max(np.max(np.abs(g)), 1e-300))
                   for k, g in fused_grad.items())

    optimizer = torch.optim.Adam(list(raw.values()), lr=0.01)

    def torch_step():
        optimizer.zero_grad()
        loss = -torch_elbo(torch, raw, spec, yt, ut, noise)
        loss.backward()
        optimizer.step()

    adam = Adam(lr=0.01)

    def fused_step():
        _, grads = model.elbo_and_grad(y, u, num_samples=S, seed=0, backend="fused")
        model.set_learned_params(adam.step(model.get_learned_params(), {k: -g for k, g in grads.items()}))

    with blas_threads(args.blas_threads):
        times = {"torch": measure(torch_step, repeats=args.repeats),
                 "fused": measure(fused_step, repeats=args.repeats)}
    ratio = times["torch"]["median"] / times["fused"]["median"]
    report = {"config": cfg, "torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
              "check": {"value_rel_err": value_err, "grad_rel_err": grad_err}, "seconds": times,
              "torch_over_fused": ratio, "fused_kernel_threads": kernel_threads(), "versions": versions()}
    lines = [f"ELBO + gradient + Adam step, B={cfg['B']} T={cfg['T']} S={S} Q={cfg['Q']} M={cfg['M']} "
             f"d_x={cfg['dim_x']} (torch {torch.__version__}, {torch.get_num_threads()} thread(s), float64, CPU; "
             f"fused on {kernel_threads()} kernel thread(s))",
             f"same numbers: ELBO rel. error {value_err:.1e}, gradient rel. error {grad_err:.1e}"]
    lines += [f"{name:<6} median {r['median']:.4f} s  (iqr {r['iqr']:.4f}, first call {r['first_call']:.3f} s)"
              for name, r in times.items()]
    if max(value_err, grad_err) > CHECK_TOLERANCE:  # two different computations: no timing to compare
        print(f"bench_torch: the PyTorch ELBO differs from the fused backend's (value {value_err:.1e}, gradient "
              f"{grad_err:.1e}; tolerance {CHECK_TOLERANCE:g}): not saved", file=sys.stderr)
        return 1
    emit(args, report, lines + [f"PyTorch takes {ratio:.1f}x the time of the fused backend"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
