"""Every script in bench/ runs at its ``--small`` size and prints a sound JSON report (each in a subprocess)."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import pytest

from tests.data_dir import DATA_DIR

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")


def run(script, *args, timeout=300, results_dir=None):
    """stdout of the script at its --small size; its result file goes to ``results_dir`` (default: a temporary
    folder, never bench/results)."""
    env = dict(os.environ, GPSSM_NP_DATA=DATA_DIR, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, os.path.join(BENCH, script), "--small", "--results-dir",
                               results_dir or tmp, *args], capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_json(script, *args, repeats=True):
    """The script's JSON report of a --small run; one timed call after the first where it repeats calls."""
    return json.loads(run(script, "--json", *(("--repeats", "1") if repeats else ()), *args))


def test_bench_elbo():
    # the subprocess runs on GPSSM_NP_THREADS (one thread per core by default); --threads 1 adds one thread
    report = run_json("bench_elbo.py", "--threads", "1")
    single = {"fused, 1 thread(s)"} if report["rollout_seconds_by_threads"].keys() != {"1"} else set()
    assert set(report["seconds"]) >= {"fused", "ops", "reference"} | single
    assert all(r["median"] > 0 for r in report["seconds"].values())
    assert report["speedup_of_fused"]["reference"] > 0


def test_bench_enkf():
    report = run_json("bench_enkf.py")
    assert set(report["seconds"]) == {"prior, fused", "enkf, fused", "enkf, ops", "enkf, reference"}
    assert all(r["median"] > 0 for r in report["seconds"].values())
    assert set(report["ratios"]) == {"enkf / prior (fused)", "enkf ops / enkf fused", "enkf reference / enkf fused"}


def test_bench_scaling(tmp_path):
    png = tmp_path / "scaling.png"
    report = run_json("bench_scaling.py", "--out", str(png))
    assert set(report["sweeps"]) == {"T", "M", "Q", "d_x", "S", "d_x=Q", "d_y"}
    for sweep in report["sweeps"].values():
        assert len(sweep["elbo_seconds"]) == len(sweep["values"]) == len(sweep["rollout_seconds"])
        for key in ("elbo_slope", "rollout_slope", "formula_slope", "flops_slope", "asymptotic_slope"):
            assert key in sweep
    assert png.stat().st_size > 1000


def test_bench_flops(tmp_path):
    report = json.loads(run("bench_flops.py", "--json", "--repeats", "1", results_dir=str(tmp_path)))
    saved = json.loads((tmp_path / "bench_flops.json").read_text())
    assert saved["report"] == json.loads(json.dumps(report))
    assert saved["script"] == "bench_flops" and "--small" in saved["argv"]
    assert saved["date"] and saved["code"] and saved["machine"]["cpu_count"] >= 1 and saved["versions"]["numpy"]
    assert report["dense_matmul"]["flops_per_second"] > 0
    assert [r["M"] for r in report["results"]] == [5, 8]
    assert all(0 < r["rollout_fraction"] and r["flops"] > 0 for r in report["results"])


HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed: CI does not install it (700+ MB); "
                                          "pip install torch to run bench_torch's value and gradient check")
def test_bench_torch_value_and_gradient_agree_with_the_fused_backend():
    report = run_json("bench_torch.py")
    assert report["check"]["value_rel_err"] <= 1e-10 and report["check"]["grad_rel_err"] <= 1e-8
    assert report["torch_over_fused"] > 0


@pytest.mark.skipif(HAS_TORCH, reason="PyTorch is installed: the check above runs instead")
def test_bench_torch_says_it_skipped_without_torch(tmp_path):
    out = run("bench_torch.py", "--json", "--repeats", "1", results_dir=str(tmp_path))
    assert "skipped" in out and not any(tmp_path.iterdir())  # no result file for a skipped run


def test_the_benchmarks_time_the_papers_objective_unless_told_otherwise():
    # bench_elbo, bench_flops, bench_scaling and bench_torch time "the paper's configuration", whose ELBO (the prior
    # objective) bench_torch writes out in PyTorch; bench_enkf asks for EnVI's objective by name. The package's
    # default objective is EnVI's: without the harness's default these timed it, and bench_torch compared two
    # different ELBOs.
    sys.path.insert(0, BENCH)
    try:
        import _harness
    finally:
        sys.path.remove(BENCH)
    assert _harness.problem(_harness.SMALL)[0].objective == "prior"
    assert _harness.problem(_harness.SMALL, objective="enkf")[0].objective == "enkf"


def test_bench_readme_is_rendered_from_the_result_files():
    sys.path.insert(0, BENCH)
    try:
        import build_readme
    finally:
        sys.path.remove(BENCH)
    block = build_readme.render()
    assert "bench/results/bench_elbo.json" in block
    with open(os.path.join(BENCH, "README.md")) as fh:
        assert block in fh.read()  # bench/README.md is up to date with the committed result files


@pytest.mark.skipif(not os.path.isdir(os.path.join(DATA_DIR, "actuator")), reason="actuator data not available")
def test_bench_fit():
    report = run_json("bench_fit.py", repeats=False)
    assert report["steps"] > 0 and report["fit_seconds"] < 30
    assert set(report["step_breakdown_seconds"]) == {"rollout", "recognition network", "precompute", "noise",
                                                     "optimizer", "Python overhead"}
    assert report["peak_rss_mb"] >= report["rss_before_fit_mb"] > 0


@pytest.mark.skipif(not os.path.isdir(os.path.join(DATA_DIR, "dryer2")), reason="dryer2 data not available")
def test_bench_default_fit():
    report = run_json("bench_default_fit.py", "--datasets", "dryer2", "--max-steps", "10", repeats=False)
    r, r10, plant, plant10 = report["runs"]  # each series at the (small) default budget, then at 10 steps
    assert plant["data"] == plant10["data"] == "dryer2" and plant["T"] == 433 and plant["dim_x"] >= 3
    assert plant["folds"] == 2 and (plant["max_steps"], plant10["max_steps"]) == (20, 10)
    assert r["T"] == 200 and 0 < r["steps"] <= 20 and r["fit_seconds"] > 0
    assert r10["max_steps"] == 10 and 0 < r10["steps"] <= 10 and r10["data"] == r["data"]
    assert r["folds"] == 2 and r["candidates"] == 2 and r["floor"] in ("arx", "lgssm")
    assert isinstance(r["gp_part"], bool)
    assert r["selected_fold_rmse"] <= r["floor_fold_rmse"]


def test_bench_online_filter():
    report = run_json("bench_online_filter.py", repeats=False)
    assert report["config"]["particles"] == 50 and report["config"]["updates"] == 20
    s = report["update_seconds"]
    parts = [report[f"{name}_seconds"] for name in ("propagate", "draw", "normals")]
    assert 0 < s["p10"] <= s["median"] <= s["p90"] and all(p > 0 for p in parts)
    assert report["rest_seconds"] == pytest.approx(s["mean"] - sum(parts))  # parts timed apart: under load, any sign
    assert report["target_met"] is None  # the target is set at 500 particles: 50 are timed, not judged


def test_the_readme_builder_takes_a_results_folder_and_a_small_run_writes_no_result(tmp_path, monkeypatch):
    """build_readme ignored its arguments (``--help`` rewrote bench/README.md) and named bench/results for any
    folder; a ``--small`` run without ``--results-dir`` replaced the published result file with smoke-test
    numbers."""
    sys.path.insert(0, BENCH)
    try:
        import _harness
        import build_readme
    finally:
        sys.path.remove(BENCH)
    published = tmp_path / "published"
    monkeypatch.setattr(_harness, "RESULTS_DIR", str(published))
    args = _harness.parser("x").parse_args(["--small"])
    _harness.emit(args, {"config": {"a": 1}}, ["table"])
    assert not published.exists()  # --small: no result file unless a folder is named
    _harness.emit(_harness.parser("x").parse_args(["--small", "--results-dir", str(tmp_path / "scratch")]),
                  {"config": {"a": 1}}, ["table"])
    _harness.emit(_harness.parser("x").parse_args([]), {"config": {"a": 1}}, ["table"])
    assert any(published.iterdir())  # a full run writes the published file
    readme = tmp_path / "README.md"
    readme.write_text("# bench\n")
    with pytest.raises(SystemExit):
        build_readme.main(["--help"])
    assert readme.read_text() == "# bench\n"
    build_readme.main(["--results-dir", str(tmp_path / "scratch"), "--readme", str(readme)])
    text = readme.read_text()
    assert build_readme.BEGIN in text and str(tmp_path / "scratch") in text and "bench/results/" not in text


def test_the_first_fit_benchmark_refuses_options_it_cannot_honour():
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "bench_first_fit.py"), "--small"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "--small, --blas-threads" in proc.stderr


@pytest.mark.parametrize("script", ["bench_default_fit.py", "bench_fit.py", "bench_first_fit.py",
                                    "bench_online_filter.py"])
def test_the_benchmarks_of_one_timed_run_take_no_repeats(script):
    """They time one fit or one stream of updates: a --repeats they took would have changed nothing."""
    proc = subprocess.run([sys.executable, os.path.join(BENCH, script), "--repeats", "3"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "unrecognized arguments: --repeats 3" in proc.stderr
