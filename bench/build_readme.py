"""Render the result files bench/results/<script>.json into bench/README.md.

Each bench script writes its numbers with their provenance (``_harness.save_result``). This script replaces the
block between the markers ``<!-- begin generated: bench/build_readme.py -->`` and ``<!-- end generated -->`` of
bench/README.md with one subsection per result file: where the numbers come from (file, options, date, commit,
machine, load average) and the numbers themselves. Usage: ``python bench/build_readme.py [--results-dir DIR]
[--readme FILE]`` after running benches (default: bench/results into bench/README.md).
"""
import argparse
import glob
import json
import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _harness import TARGET_OUTCOMES  # noqa: E402

BEGIN = "<!-- begin generated: bench/build_readme.py -->"
END = "<!-- end generated -->"


def _ms(seconds):
    return f"{1e3 * seconds:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"


def _elbo(report):
    lines = ["| backend | median | first call | repeats |", "|---|---|---|---|"]
    for name, r in report["seconds"].items():
        lines.append(f"| {name} | {_ms(r['median'])} | {_ms(r['first_call'])} | {r['repeats']} |")
    for threads, r in report["rollout_seconds_by_threads"].items():
        lines.append(f"| rollout alone (fwd + reverse), {threads} kernel thread(s) | {_ms(r['median'])} | "
                     f"{_ms(r['first_call'])} | {r['repeats']} |")
    speedups = report.get("speedup_of_fused", {})
    if speedups:
        lines += ["", "fused backend faster than: " + ", ".join(f"{b} {x:.1f}x" for b, x in speedups.items())]
    return lines


def _flops(report):
    rate = report["dense_matmul"]["flops_per_second"]
    lines = [f"Dense matmul (one BLAS thread): {rate / 1e9:.1f} GFLOP/s.", "",
             "| M | FLOPs (rollout fwd + rev) | rollout | rate | of matmul | ELBO + grad | of matmul |",
             "|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        lines.append(f"| {r['M']} | {r['flops'] / 1e9:.3g} G | {_ms(r['rollout_seconds'])} | "
                     f"{r['rollout_rate'] / 1e9:.1f} GFLOP/s | {r['rollout_fraction']:.0%} | "
                     f"{_ms(r['elbo_seconds'])} | {r['elbo_fraction']:.0%} |")
    return lines


def _fit(report):
    s = report["settings"]
    lines = [f"{report['steps']} steps ({s['epochs']} epochs, {s['train_points']} training points, M = "
             f"{s['num_inducing']}, seq_len {s['seq_len']}, batch {s['batch_size']}, S = {s['num_samples']}): "
             f"{report['fit_seconds']:.2f} s, {_ms(report['step_seconds'])} per step; kernels compiled or loaded "
             f"in {report['compile_or_cache_seconds']:.2f} s; peak RSS {report['peak_rss_mb']:.0f} MiB "
             f"({report['rss_before_fit_mb']:.0f} MiB before the fit).", "", "| part | per step | share |",
             "|---|---|---|"]
    for part, value in report["step_breakdown_seconds"].items():
        lines.append(f"| {part} | {_ms(value)} | {value / report['step_seconds']:.0%} |")
    return lines


def _scaling(report):
    lines = ["| size | values | ELBO slope | rollout slope | formula | FLOP count | asymptotic |",
             "|---|---|---|---|---|---|---|"]
    for name, r in report["sweeps"].items():
        values = r["values"]
        lines.append(f"| {name} | {values[0]} .. {values[-1]} | {r['elbo_slope']:.2f} | {r['rollout_slope']:.2f} | "
                     f"{r['formula_slope']:.2f} | {r['flops_slope']:.2f} | {r['asymptotic_slope']:.0f} |")
    return lines


def _torch(report):
    times = report["seconds"]
    return [f"Same numbers: ELBO relative error {report['check']['value_rel_err']:.1e}, gradient "
            f"{report['check']['grad_rel_err']:.1e} (torch {report['torch_version']}, "
            f"{report['torch_threads']} thread(s)).", "",
            "| step (ELBO + gradient + Adam) | median |", "|---|---|",
            f"| PyTorch | {_ms(times['torch']['median'])} |",
            f"| fused ({report['fused_kernel_threads']} kernel thread(s)) | {_ms(times['fused']['median'])} |", "",
            f"PyTorch takes {report['torch_over_fused']:.1f}x the time of the fused backend."]


def _enkf(report):
    lines = ["| objective, backend | median | repeats |", "|---|---|---|"]
    lines += [f"| {name} | {_ms(r['median'])} | {r['repeats']} |" for name, r in report["seconds"].items()]
    return lines + ["", "; ".join(f"{name}: {r:.2f}" for name, r in report["ratios"].items())]


def _online_filter(report):
    c, s = report["config"], report["update_seconds"]
    return [f"One update of `model.online_filter(num_particles={c['particles']})` (d_x = {c['dim_x']}, M = "
            f"{c['num_inducing']}, Q = {c['num_latent']}), {c['updates']} updates timed after {c['warmup']}: median "
            f"{_ms(s['median'])}, mean {_ms(s['mean'])} (10th-90th percentile {_ms(s['p10'])} - {_ms(s['p90'])}); "
            f"of the mean, the fused step's `propagate` (transition moments, predicted output, Kalman update and "
            f"weights of the particles) {_ms(report['propagate_seconds'])}, its `draw` (resampling, draws, moments) "
            f"{_ms(report['draw_seconds'])}, the draws' normals {_ms(report['normals_seconds'])} and the rest (checks, "
            f"units, Python) {_ms(report['rest_seconds'])}. The batch filter "
            f"over the same steps: {_ms(report['batch_filter_seconds_per_step'])} per step. Target "
            f"{_ms(report['target_seconds'])}: "
            f"{TARGET_OUTCOMES[report['target_met']]}."]


RENDER = {"bench_elbo": _elbo, "bench_enkf": _enkf, "bench_flops": _flops, "bench_fit": _fit, "bench_scaling": _scaling,
          "bench_torch": _torch, "bench_online_filter": _online_filter}


def _config(report):
    cfg = report.get("config") or report.get("base_config")
    if not cfg:
        return ""
    return " Configuration: " + ", ".join(f"{k}={v}" for k, v in cfg.items()) + "."


def _shown(path):
    """``path`` relative to the repository when it is inside it (bench/results/...), else as it is."""
    relative = os.path.relpath(os.path.abspath(path), os.path.dirname(HERE))
    return path if relative.startswith(os.pardir) else relative


def render(folder=os.path.join(HERE, "results")):
    """Markdown of every result file in ``folder``."""
    lines = ["These numbers are rendered from the result files by `python bench/build_readme.py`; each subsection",
             "names its file, the options of the run, its date, the code version (of the package) and the machine",
             "(with the load average when the file was written: the machine is shared, so timings vary).", ""]
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as fh:
            doc = json.load(fh)
        report, versions, machine = doc["report"], doc.get("versions", {}), doc.get("machine", {})
        load = versions.get("load_average")
        load_text = f", load average {', '.join(f'{x:.2f}' for x in load)}" if load else ""
        name = doc["script"]
        lines += [f"### `{name}.py` (from `{_shown(path)}`)", "",
                  f"`{shlex.join(['python', f'bench/{name}.py'] + doc['argv'])}` on {doc['date']}, "
                  f"code `{doc['code']}`, "
                  f"{machine.get('cpu') or machine.get('platform')} ({machine.get('cpu_count')} cores, kernel "
                  f"threads {versions.get('kernel_threads')}{load_text}), numpy {versions.get('numpy')}, numba "
                  f"{versions.get('numba')}.{_config(report)}", ""]
        lines += RENDER.get(name, lambda r: ["```json", json.dumps(r, indent=1, default=float), "```"])(report)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def build(readme=os.path.join(HERE, "README.md"), folder=os.path.join(HERE, "results")):
    with open(readme) as fh:
        text = fh.read()
    block = f"{BEGIN}\n{render(folder)}{END}"
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n## Numbers from the result files\n\n" + block + "\n"
    with open(readme, "w") as fh:
        fh.write(text)
    return readme


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results-dir", default=os.path.join(HERE, "results"), help="folder of the result files "
                   "(default bench/results)")
    p.add_argument("--readme", default=os.path.join(HERE, "README.md"), help="the file whose generated block is "
                   "replaced (default bench/README.md)")
    args = p.parse_args(argv)
    if not os.path.isdir(args.results_dir):
        p.error(f"--results-dir: {args.results_dir!r} is not a folder")
    print(f"wrote {build(args.readme, args.results_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
