"""One-line mutants of the package, each run against the tests of what it breaks: does the suite notice code broken
on purpose? Nothing in the package imports this script.

Each mutant replaces one exact piece of a module (it must occur once) in a copy of the package and its tests, runs
the named test files there and stops at the first failure; the module is restored afterwards. A mutant is killed
when the tests fail. A mutant of an ops/ kernel runs with Numba's disk cache off (``GPSSM_NP_NUMBA_CACHE=0``: the
mutated kernel is compiled, never loaded); the others share the copy's cache.

The ops/ mutants (0-28) aim at what the reference, finite-difference and autograd checks could miss: constants of
the reverse passes, branches that small examples may not reach (an odd number of inducing points, tapes past the
memory budget, the latent variance floor, missing outputs) and the ensemble Kalman update's statistics. The default
fit's mutants (29-40) break its rules: the candidates' patience and halving, the refit's passes, Q, stage 1's form
check, the acceptance's paired test and threshold, stage 4's guards and the calibration's widening only. Mutants
41-49 break what keeps the choices honest: the folds' training parts and windows (no fold fitted on its
future), the causal and simulate protocols' pasts, and the choice of the orders and of the floor's kind; 50-55
the exact linear forecasts and smoother and the particle filters' resampling rule; 56-60 what a checkpoint restores;
61-66 units, the calibration in model files and forecasts, and the online filters' state.

Three survived the tests of their time, and each is now killed by a test added for it: 21 (the fused particle-filter
step without its latent variance floor; tests/ops/test_adapted_step.py), 56 (a resumed default fit back at the step
size it had before its rejected steps; tests/test_default_fit_checkpoint.py) and 65 (the GP models' online filter
restored from a state with its step count at 0; tests/test_online_filter.py). Their rows were run after the test
was added.

Rows (JSON lines, resumable; one worker at a time, since the copy is shared) in OUT. Before the pending mutants, the
tests they run are run unmutated and must pass: a test that errs for want of data would count as a kill, so set
GPSSM_NP_DATA. The rows of mutants 0-40, 50-52 and 54-62 were written before that control existed and without the
data; their test files, run unmutated without the data afterwards, pass (but for one test of 41-49's, whose rows
were therefore run again with the data, as were 53 and 63-66)::

    GPSSM_NP_DATA=../shared/data python research/mutants.py research/results/mutants.jsonl [--summary]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from rows import done_keys, head_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: ops/ kernels: (module of gpssm_np/ops, original piece, mutated piece, test file of tests/ops).
OPS_MUTANTS = [
    ("enkf", "        mbar[d] /= S\n    for d in range(dx):\n        for k in range(dy):\n            Pxy[d, k] = 0.0",
     "        mbar[d] /= S - 1\n    for d in range(dx):\n        for k in range(dy):\n            Pxy[d, k] = 0.0",
     "test_enkf"),
    ("enkf", "            Pxy[d, k] /= S - 1", "            Pxy[d, k] /= S", "test_enkf"),
    ("enkf", "    LL[t, b] = -0.5 * (dy * _LOG_2PI + logdet + quad)", "    LL[t, b] = -0.5 * (dy * _LOG_2PI + quad)",
     "test_enkf"),
    ("enkf", "Lc[0, k] = Y[b, t, k] + sqrt_r[k] * eps_y[t, j, k]", "Lc[0, k] = Y[b, t, k] - sqrt_r[k] * eps_y[t, j, k]",
     "test_enkf"),
    ("enkf", "gr[k] += v * eps_y[t, n, k] * 0.5 / sqrt_r[k]", "gr[k] += v * eps_y[t, n, k] / sqrt_r[k]", "test_enkf"),
    ("enkf", "(Sinv[k, m] - vec[0, k] * vec[0, m])", "(Sinv[k, m] + vec[0, k] * vec[0, m])", "test_enkf"),
    ("enkf", "        gr[k] += gS[k, k]", "        gr[k] += 0.0", "test_enkf"),
    ("enkf", "            GA[d, c] = v * inv", "            GA[d, c] = v", "test_enkf"),
    ("enkf", "shift = gl * vec[0, d] / S if d < dy", "shift = gl * vec[0, d] if d < dy", "test_enkf"),
    ("enkf", "            if d < dy:\n                for e in range(dx):",
     "            if d < 0:\n                for e in range(dx):", "test_enkf"),
    ("rollout", "prow[i] = -(5.0 / 6.0) * (1.0 + a) * e", "prow[i] = -(5.0 / 6.0) * (1.0 + 0.5 * a) * e",
     "test_rollout"),
    ("rollout", "            var = s2 - kbk[i]", "            var = s2 - 0.5 * kbk[i]", "test_rollout"),
    ("rollout", "                    acc_l += w0 * diff0\n                gZ[q, M - 1, d] -= acc_z0",
     "                    acc_l += w0\n                gZ[q, M - 1, d] -= acc_z0", "test_rollout"),
    ("rollout", "krow[i] / (1.0 + sa + sa * sa * _THIRD)", "krow[i] / (1.0 + sa + sa * sa)", "test_rollout"),
    ("rollout", "            BKq = BK[blk, 0, q]\n            gemm(False, False, M, nl, M, 1.0,",
     "            BKq = BK[blk, 0, q]\n            gemm(False, False, M, nl, M, 2.0,", "test_rollout"),
    ("rollout", "v = 0.0 if sd < 0.0 else", "v = 0.0 if sd < -2.0 else", "test_rollout"),
    ("rollout", "                    c[i] = -0.5 * kbar * k", "                    c[i] = -kbar * k", "test_rollout"),
    ("rollout", "krow[i] = s2 * exp_fast(-0.5 * r2[i])", "krow[i] = s2 * exp_fast(-r2[i])", "test_rollout"),
    ("rollout", "                sd = floor_sd\n", "                sd = 0.0\n", "test_rollout"),
    ("adapted_step", "for l0 in range(0, j - 3, 4):", "for l0 in range(0, j - 4, 4):", "test_adapted_step"),
    ("adapted_step", "            if ya != ya:  # missing", "            if ya != ya and ya == 0.0:  # missing",
     "test_adapted_step"),
    ("adapted_step", "srow[i] = var if var > VAR_FLOOR else VAR_FLOOR", "srow[i] = var if var > VAR_FLOOR else 0.0",
     "test_adapted_step"),
    ("adapted_step", "acc[i] = q_diag[d] if d == e else 0.0", "acc[i] = q_diag[d]", "test_adapted_step"),
    ("conditional", "var[q, n] = max(kxx[q, n] - s, var_floor)", "var[q, n] = kxx[q, n] - s", "test_conditional"),
    ("conditional", "gkxx = np.where(var > var_floor, g_var, 0.0)", "gkxx = g_var.copy()", "test_conditional"),
    ("lmc", "            gs[n, q] = 0.5 * quad", "            gs[n, q] = quad", "test_lmc"),
    ("likelihood", "(sq * inv_r / S - T) * 0.5 * inv_r", "(sq * inv_r / S - T) * inv_r", "test_likelihood"),
    ("gaussian_condition", "(k * _LOG_2PI + 2.0 * logdet + quad)", "(k * _LOG_2PI + logdet + quad)",
     "test_gaussian_update"),
    ("kalman", "                Pp[i, j] = 0.5 * (A[i, j] + A[j, i])", "                Pp[i, j] = A[i, j]",
     "test_kalman"),
]

#: The default fit's rules: (module of gpssm_np, original piece, mutated piece).
PIPELINE_MUTANTS = [
    ("models/default_fit.py", "live.append(since < patience)", "live.append(since <= patience)"),
    ("models/default_fit.py", "    if sum(at_halving) < 2:\n        return live",
     "    if sum(at_halving) < 3:\n        return live"),
    ("models/default_fit.py", "return max(1.0, sum(len(y) for y in ys) / fold_steps)", "return 1.0"),
    ("models/default_fit.py", "return min(dim_x, max(5, 3 * dim_y))", "return max(5, 3 * dim_y)"),
    ("models/default_fit.py", 'if held["ratio"] > FORM_TOLERANCE and other',
     'if held["ratio"] > 10 * FORM_TOLERANCE and other'),
    ("models/default_fit.py", "ratio = form / max(own, FORM_RESOLUTION) if", "ratio = form / own if"),
    ("models/default_fit.py", 't = paired_t(floor_errors, best["windows"][c])',
     't = paired_t(floor_errors, best["windows"][0])'),
    ("models/training.py", "se = d.std(ddof=1) / np.sqrt(len(d) // 2)", "se = d.std(ddof=1) / np.sqrt(len(d))"),
    ("models/training.py", "return t is not None and t > switch_t", "return t is not None and t > -switch_t"),
    ("models/guards.py", "return bool(model_error <= factor * floor_error)",
     "return bool(model_error <= 10 * factor * floor_error)"),
    ("models/guards.py", "model_radii[k] < 1.0 or model_radii[k] <= floor_radii[k]",
     "model_radii[k] < 10.0 or model_radii[k] <= floor_radii[k]"),
    ("metrics.py", "return np.clip(factors, 1.0, MAX_WIDENING)", "return np.clip(factors, 0.5, MAX_WIDENING)"),
]
#: The test files every mutant of the default fit runs against.
PIPELINE_TESTS = ("test_default_fit_stages", "test_floor", "test_default_refit", "test_other_floor", "test_calibration",
                  "test_linear_calibration", "test_lr_scale_candidates", "test_metrics", "test_refit",
                  "test_growing_windows")
#: What keeps the choices honest: the folds (no fold fitted on its future), the protocols' pasts, and the choice of
#: the linear models' orders and the floor's kind (module of gpssm_np, original piece, mutated piece).
HONESTY_MUTANTS = [
    ("datasets/folds.py", "                train_y.append(y[:origin])\n                train_u.append(u[:origin])",
     "                train_y.append(y[:origin + 1])\n                train_u.append(u[:origin + 1])"),
    ("datasets/folds.py", "past = slice(max(0, g - burn_in), g)", "past = slice(max(0, g - burn_in), g + 1)"),
    ("datasets/folds.py", "for g in range(origin, end, max(1, H // 2)):", "for g in range(origin, end, max(1, H)):"),
    ("datasets/folds.py", "min(horizon, int((1.0 - first) * length) // 2))",
     "min(horizon, int((1.0 - first) * length)))"),
    ("protocols.py", "_past(y_all, u_all, max(0, g - burn_in), g)",
     "_past(y_all, u_all, max(0, g - burn_in) + 1, g + 1)"),
    ("protocols.py", "y_past=y[:n_init], u_past=u[:n_init]", "y_past=y[1:n_init + 1], u_past=u[1:n_init + 1]"),
    ("models/floor.py", "ranked = sorted(models, key=lambda k: (scores[k], FLOOR_KINDS.index(k)))",
     "ranked = sorted(models, key=lambda k: (-scores[k], FLOOR_KINDS.index(k)))"),
    ("baselines/lgssm_order.py", "chosen = min(finite, key=lambda d: (scores[d], d))",
     "chosen = max(finite, key=lambda d: (scores[d], d))"),
    ("baselines/arx.py", "best = min(self.selection_scores_, key=self.selection_scores_.get)",
     "best = max(self.selection_scores_, key=self.selection_scores_.get)"),
]
#: The test files every honesty mutant runs against.
HONESTY_TESTS = ("test_folds", "test_no_lookahead", "test_floor", "test_lgssm_order", "test_baselines", "test_forecast")
#: The filters, smoothers and exact linear forecasts (module of gpssm_np, original piece, mutated piece).
FILTER_MUTANTS = [
    ("kalman.py", "gaussian_draws(np.zeros(d), covs[k] - J @ FP, num_samples, rng)",
     "gaussian_draws(np.zeros(d), covs[k], num_samples, rng)"),
    ("kalman.py", "+ means[k] + (x - pred_means[k + 1]) @ J.T)", "+ means[k] + (x - means[k + 1]) @ J.T)"),
    ("kalman.py", "        P = symmetrise(F @ P @ F.T + Q)", "        P = symmetrise(F @ P @ F.T)"),
    ("kalman.py", "    states += means - states.mean(axis=0)", "    states += 0.0 * means"),
    ("filtering.py", "resampled = ess < ess_threshold * x.shape[0]",
     "resampled = ess < 0.5 * ess_threshold * x.shape[0]"),
    ("filtering.py", "    if ess < ess_threshold * N:", "    if ess < 0.5 * ess_threshold * N:"),
]
#: The test files every filter mutant runs against.
FILTER_TESTS = ("test_linear_filter", "test_linear_forecast", "test_filtering", "test_online_filter",
                "test_resampling")
#: What a checkpoint restores (module of gpssm_np, original piece, mutated piece).
RESUME_MUTANTS = [
    ("training_loop.py", '        self.optimizer.lr = float(info["lr"])',
     "        self.optimizer.lr = self.optimizer.lr"),
    ("training_loop.py", '        self.rng.bit_generator.state = info["rng_state"]',
     "        self.rng.bit_generator.state"),
    ("training_loop.py", "        if self.mean is not None:\n            self.mean = {key[5:]",
     "        if self.mean is None:\n            self.mean = {key[5:]"),
    ("training_loop.py", 'self.order = np.asarray(arrays["order"], dtype=np.intp) if "order" in arrays else None',
     "self.order = None"),
    ("optim.py", "        self.t, self._m, self._v = int(t), m, v", "        self.t, self._m, self._v = 0, m, v"),
]
#: The test files every resume mutant runs against.
RESUME_TESTS = ("test_resume", "test_default_fit_checkpoint", "test_optim")
#: Units, model files and the online filters (module of gpssm_np, original piece, mutated piece).
SURFACE_MUTANTS = [
    ("units.py", "        return a * self.y_std**power", "        return a * self.y_std"),
    ("units.py", "        return -((~np.isnan(np.asarray(y, dtype=np.float64))) @ np.log(self.y_std))",
     "        return ((~np.isnan(np.asarray(y, dtype=np.float64))) @ np.log(self.y_std))"),
    ("forecast.py", "return std if self.std_scale is None else std * self.std_scale", "return std"),
    ("estimator.py", '        if self.interval_scale_ is not None:\n            state["interval_scale"]',
     '        if False:\n            state["interval_scale"]'),
    ("online.py", 'np.asarray(state["log_weights"], dtype=np.float64), rng, state["step"],',
     'np.asarray(state["log_weights"], dtype=np.float64), rng, 0,'),
    ("online.py", "        self._step += 1", "        self._step += 2"),
]
#: The test files every surface mutant runs against.
SURFACE_TESTS = ("test_units", "test_io", "test_online_filter", "test_forecast", "test_calibration",
                 "test_linear_surface")
#: Every mutant: (path under gpssm_np, original piece, mutated piece, test files under tests).
MUTANTS = [(f"ops/{m}.py", old, new, (f"ops/{t}",)) for m, old, new, t in OPS_MUTANTS] + [
    (path, old, new, tests)
    for group, tests in ((PIPELINE_MUTANTS, PIPELINE_TESTS), (HONESTY_MUTANTS, HONESTY_TESTS),
                         (FILTER_MUTANTS, FILTER_TESTS), (RESUME_MUTANTS, RESUME_TESTS),
                         (SURFACE_MUTANTS, SURFACE_TESTS))
    for path, old, new in group]


def run_mutant(index, copy):
    """The row of mutant ``index`` in ``copy`` (a folder holding copies of gpssm_np/ and tests/): killed (the tests
    failed), the tests' last line."""
    name, old, new, tests = MUTANTS[index]
    path = os.path.join(copy, "gpssm_np", name)
    with open(path) as f:
        source = f.read()
    if source.count(old) != 1:
        raise ValueError(f"mutant {index}: the piece to change occurs {source.count(old)} times in {path}")
    with open(path, "w") as f:
        f.write(source.replace(old, new))
    try:
        result = run_tests(copy, tests, cache=not name.startswith("ops/"))
    finally:
        with open(path, "w") as f:
            f.write(source)
    lines = result.stdout.strip().splitlines()
    return {"mutant": index, "path": name, "tests": list(tests), "killed": result.returncode != 0,
            "outcome": lines[-1] if lines else result.stderr[-300:], "commit": head_commit()}


def summary(out):
    with open(out) as f:
        rows = {r["mutant"]: r for r in map(json.loads, f)}
    for i, (path, old, new, tests) in enumerate(MUTANTS):
        r = rows.get(i)
        state = "not run" if r is None else ("killed" if r["killed"] else "SURVIVED")
        print(f"{i:3d} {path:25s} {state:9s} {' '.join(new.split())[:70]}")
    print(f"killed {sum(r['killed'] for r in rows.values())} of {len(rows)} run ({len(MUTANTS)} mutants)")


def run_tests(copy, tests, cache=True):
    """pytest's result for the ``tests`` (names under tests/) in ``copy``, stopping at the first failure."""
    env = dict(os.environ, PYTHONPATH=copy, OPENBLAS_NUM_THREADS="1", GPSSM_NP_THREADS="1",
               GPSSM_NP_NUMBA_CACHE="1" if cache else "0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "2"]
                          + [f"tests/{t}.py" for t in tests], cwd=copy, env=env, capture_output=True, text=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--summary", action="store_true")
    args = p.parse_args(argv)
    if args.summary:
        return summary(args.out)
    if not os.environ.get("GPSSM_NP_DATA"):
        raise SystemExit("GPSSM_NP_DATA: set it to the data folder (some tests read the data sets)")
    with tempfile.TemporaryDirectory() as copy:
        for part in ("gpssm_np", "tests"):
            shutil.copytree(os.path.join(ROOT, part), os.path.join(copy, part),
                            ignore=shutil.ignore_patterns("__pycache__"))
        done = done_keys(args.out, "mutant")
        pending = [i for i in range(len(MUTANTS)) if i not in done]
        for tests in dict.fromkeys(MUTANTS[i][3] for i in pending):  # the control: unmutated, every test passes
            control = run_tests(copy, tests)
            if control.returncode != 0:
                raise SystemExit(f"the unmutated tests {tests} do not pass here: {control.stdout[-500:]}")
        for index in pending:
            row = run_mutant(index, copy)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(index, "killed" if row["killed"] else "SURVIVED", row["outcome"], flush=True)


if __name__ == "__main__":
    sys.exit(main())
