"""Smoke tests of the reproduction commands (tiny sweeps that check the files they write and resuming), and one
committed Table 1 run repeated by the current code."""
import json
import logging
import os
import time

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.cli import main
from gpssm_np.experiments import table1
from tests.data_dir import DATA_DIR

#: The committed Table 1 sweep (docs/results.md, section 2).
COMMITTED_TABLE1 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results", "table1.json")
TINY = {"epochs": 1, "num_samples": 4, "eval_num_samples": 4, "eval_num_particles": 50}


def car_rows(seed, rmse=lambda model: 0.5):
    """The rows of one car-tracking seed as ``car_tracking.run_rows`` makes them (and no results), each model's
    RMSE ``rmse(model)`` on every state: what the tests of the sweep put in place of training."""
    from gpssm_np.experiments import car_tracking

    return [{"seed": seed, "model": name, "rmse": dict.fromkeys(car_tracking.STATE_NAMES, rmse(name)),
             "seconds": 1.0, "provenance": {}} for name in car_tracking.MODELS], None


def test_table1_tiny_sweep_writes_json_and_markdown_and_resumes(tmp_path):
    out = str(tmp_path)
    doc = table1.sweep(datasets=["gas_furnace"], models=["odgpssm", "prssm"], seeds=1, settings=TINY, out=out,
                       data_dir=DATA_DIR)
    runs = json.loads((tmp_path / "table1.json").read_text())["runs"]
    assert len(runs) == 2 * 5 == len(doc["runs"])  # two models, five protocols
    for row in runs:
        assert set(row) >= {"dataset", "model", "seed", "protocol", "rmse", "rmse_original_units", "nlpd", "seconds"}
        assert row["dataset"] == "gas_furnace" and row["protocol"] in ("paper", "causal", "freerun", "envi", "simulate")
    md = (tmp_path / "table1.md").read_text()
    assert "0.3225" in md and "Protocol `causal`" in md
    # a second call finds every run done and does not redo it
    again = table1.sweep(datasets=["gas_furnace"], models=["odgpssm", "prssm"], seeds=1, settings=TINY, out=out,
                         data_dir=DATA_DIR)
    assert again["runs"] == doc["runs"]


def test_interrupted_sweep_resumes_only_missing_runs(tmp_path):
    out = str(tmp_path)
    table1.sweep(datasets=["gas_furnace"], models=["prssm"], seeds=2, settings=TINY, out=out, data_dir=DATA_DIR)
    path = tmp_path / "table1.json"
    doc = json.loads(path.read_text())
    kept = [r for r in doc["runs"] if not (r["seed"] == 1 and r["protocol"] == "freerun")]  # seed 1 half-written
    path.write_text(json.dumps(dict(doc, runs=kept)))
    resumed = table1.sweep(datasets=["gas_furnace"], models=["prssm"], seeds=2, settings=TINY, out=out,
                           data_dir=DATA_DIR)
    seed0 = [r for r in resumed["runs"] if r["seed"] == 0]
    assert seed0 == [r for r in doc["runs"] if r["seed"] == 0]  # untouched
    assert len(resumed["runs"]) == 10


def test_cli_reproduce_qstudy_tiny(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(table1.RUN_SETTINGS, "authors", dict(table1.AUTHORS_SETTINGS, **TINY))
    assert main(["reproduce", "qstudy", "--datasets", "gas_furnace", "--models", "odgpssm_q1", "odgpssm_q2",
                 "--seeds", "1", "--epochs", "1", "--out", str(tmp_path), "--data-dir", DATA_DIR]) == 0
    assert (tmp_path / "qstudy.png").exists() and (tmp_path / "qstudy.json").exists()
    err = capsys.readouterr().err  # the sweep's progress without -v, one line per finished run
    assert "finished gas_furnace/odgpssm_q1 seed 0 (1 of 2)" in err and "(2 of 2)" in err
    log = logging.getLogger("gpssm_np.experiments")  # as it was before the command
    assert log.level == logging.NOTSET and not log.handlers


def test_bad_names_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="datasets"):
        table1.sweep(datasets=["mnist"], models=["odgpssm"], seeds=1, out=str(tmp_path))
    with pytest.raises(ValueError, match="models"):
        table1.sweep(datasets=["dryer"], models=["gpt"], seeds=1, out=str(tmp_path))


def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed; the test extra "
                                                                "(CI) installs it")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster:
        doc = table1.sweep(datasets=["gas_furnace"], models=["prssm"], seeds=1, settings=TINY, out=str(tmp_path),
                           data_dir=DATA_DIR, scheduler=cluster.scheduler_address)
    assert len(doc["runs"]) == 5  # one run, five protocols


def test_prssm_style_settings_build_residual_models():
    ds = __import__("gpssm_np").datasets.load("gas_furnace", DATA_DIR)
    model = table1.make_model("odgpssm", ds, 0, table1.PRSSM_STYLE_SETTINGS)
    assert model.spec.mean_function == "identity" and model.constrained_params()["process_var"][0] < 1e-4
    assert table1.make_model("prssm", ds, 0).spec.mean_function == "zero"
    with pytest.raises(ValueError, match="base"):
        table1.sweep(datasets=["dryer"], models=["odgpssm"], seeds=1, out="unused", base="best")


def test_default_settings_build_the_package_defaults(tmp_path):
    ds = gp.datasets.load("gas_furnace", DATA_DIR)
    model = table1.make_model("odgpssm", ds, 0, table1.DEFAULT_SETTINGS)
    assert model.settings == "default" and model.spec.mean_function == "linear" and model.init == "linear"
    assert table1.make_model("odgpssm", ds, 0).settings == "authors"
    doc = table1.sweep(datasets=["gas_furnace"], models=["prssm"], seeds=1, settings=dict(TINY, epochs=1),
                       out=str(tmp_path), data_dir=DATA_DIR, base="default")
    assert {r["protocol"] for r in doc["runs"]} == {"paper", "causal", "freerun", "envi", "simulate"}
    assert table1.make_model("odgpssm", ds, 0, table1.DEFAULT_SETTINGS).objective == "enkf"
    assert table1.make_model("odgpssm", ds, 0).objective == "prior"  # the authors' settings


def test_cli_reproduce_mimo_tiny(tmp_path, monkeypatch):
    # a small step: one epoch of 4 particles at the default step can diverge on dryer2 (the default fit would keep
    # its warm start; this epoch loop has no validation block)
    monkeypatch.setitem(table1.RUN_SETTINGS, "default", dict(table1.DEFAULT_SETTINGS, **TINY, lr=1e-4))
    assert main(["reproduce", "mimo", "--datasets", "dryer2", "--models", "odgpssm", "lgssm", "arx", "--seeds", "1",
                 "--epochs", "1", "--out", str(tmp_path), "--data-dir", DATA_DIR]) == 0
    runs = json.loads((tmp_path / "mimo.json").read_text())["runs"]
    assert {r["model"] for r in runs} == {"odgpssm", "lgssm", "arx"} and {r["dataset"] for r in runs} == {"dryer2"}
    for row in runs:
        assert len(row["rmse_per_output"]) == 3 and len(row["rmse_original_units_per_output"] or [0] * 3) == 3
        assert row["rmse"] == pytest.approx(float(np.mean(row["rmse_per_output"])), rel=0.5)
    text = (tmp_path / "mimo.md").read_text()
    assert "dryer2" in text and "Coverage of the 95 % intervals" in text
    gp_dim_x = next(r["dim_x"] for r in runs if r["model"] == "odgpssm" and r["protocol"] == "causal")
    assert f"| odgpssm | {gp_dim_x} |" in text  # the table of the chosen state dimensions
    gp_row = next(r for r in runs if r["model"] == "odgpssm")
    # the default dim_x="auto": the floor's d_x (at least the three outputs), Q = min(d_x, 9) latent GPs
    assert len(gp_row["gp_singular_values"]) == min(gp_row["dim_x"], 9)
    assert gp_row["dim_x"] == len(gp_row["process_std"]) >= 3
    assert next(r for r in runs if r["model"] == "lgssm")["dim_x"] >= 3
    assert next(r for r in runs if r["model"] == "arx")["dim_x"] is None and "| arx |" not in text.split(
        "State dimension")[1].split("###")[0]  # lags, no state: no row in the table of state dimensions
    assert "gp_singular_values" not in next(r for r in runs if r["model"] == "arx")
    # dryer2's validation block holds one window: the fit trained the plain step only (step 8 of training.py)
    assert gp_row["lr_scale"] == {} and gp_row["lr_scale_t"] == []
    assert "lr_scale" not in next(r for r in runs if r["model"] == "arx")


def test_gp_part_structure_by_hand():
    # one direction: s = (3, 0) -> (9)^2 / 81 = 1; two equal directions: (2 * 4)^2 / (2 * 16) = 2
    one = table1.gp_part_structure({"gp_singular_values": [3.0, 0.0], "process_std": [1.0, 2.0]})
    assert one == {"gp_directions": pytest.approx(1.0), "gp_over_noise": pytest.approx(1.5)}
    two = table1.gp_part_structure({"gp_singular_values": [2.0, 2.0], "process_std": [0.5, 0.25]})
    assert two == {"gp_directions": pytest.approx(2.0), "gp_over_noise": pytest.approx(4.0)}
    # s = (1, 1/2): (1 + 1/4)^2 / (1 + 1/16) = 25/17
    assert table1.gp_part_structure({"gp_singular_values": [1.0, 0.5], "process_std": [1.0]})["gp_directions"] == \
        pytest.approx(25 / 17)
    assert table1.gp_part_structure({"model": "arx"}) == {}  # no GP part: no cell in the table
    assert table1.gp_part_structure({"gp_singular_values": [0.0, 0.0], "process_std": [1.0, 1.0]}) == {}  # 0/0
    rows = [{"dataset": "winding", "model": m, "protocol": "causal", "seed": 0, "rmse": 0.5,
             "gp_singular_values": [2.0, 2.0], "process_std": [0.5, 0.25]} for m in ("odgpssm", "arx")]
    del rows[1]["gp_singular_values"]
    text = table1.markdown({"runs": rows})
    section = text.split("### The GP part")[1].split("###")[0]
    assert "| odgpssm | 2.00 (4.00) |" in section and "arx" not in section  # a model without a GP part: no row


def test_a_sweep_refuses_unknown_settings_and_no_seeds(tmp_path):
    # a misspelled setting ran the base configuration (and keyed the runs by the stray name); no seeds wrote empty
    # tables
    with pytest.raises(ValueError, match=r"settings: unknown \['epoch'\]"):
        table1.sweep(datasets=["gas_furnace"], models=["arx"], seeds=1, settings={"epoch": 2}, out=str(tmp_path))
    for seeds in (0, -2, []):
        with pytest.raises(ValueError, match="seeds: expected a positive count"):
            table1.sweep(datasets=["gas_furnace"], models=["arx"], seeds=seeds, out=str(tmp_path))
    # a name given twice ran twice and counted twice in the tables' n and std
    for argname, kwargs in (("datasets", {"datasets": ["gas_furnace", "gas_furnace"]}),
                            ("models", {"models": ["arx", "lgssm", "arx"]}), ("seeds", {"seeds": [0, 1, 0]})):
        with pytest.raises(ValueError, match=rf"{argname}: \[.*\] named more than once"):
            table1.sweep(**dict({"datasets": ["gas_furnace"], "models": ["arx"], "seeds": 1}, **kwargs),
                         out=str(tmp_path))
    assert not any(tmp_path.iterdir())


def test_the_car_tracking_sweep_keeps_each_finished_seed(tmp_path, monkeypatch):
    """reproduce car writes each seed's rows as it finishes, so a sweep stopped in its second seed resumes there
    (its file was written once, after the last seed: a stop lost every finished run)."""
    from gpssm_np.experiments import car_tracking

    computed = []

    def fake_rows(seed, epochs, command=None):
        computed.append(seed)
        if seed == 1:
            raise KeyboardInterrupt
        return car_rows(seed, lambda model: 0.1)

    monkeypatch.setattr(car_tracking, "run_rows", fake_rows)
    with pytest.raises(KeyboardInterrupt):
        car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=3)
    saved = json.loads((tmp_path / "car_tracking.json").read_text())
    assert sorted({row["seed"] for row in saved["runs"]}) == [0]
    computed.clear()
    with pytest.raises(KeyboardInterrupt):
        car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=3)
    assert computed == [1]  # seed 0 reused


def test_the_tables_show_each_outputs_original_units_and_flag_a_few_seeds_pairs():
    """A data set of several outputs has no pooled RMSE in original units: its rows in the original-units tables were
    left empty; a paired interval over fewer than 5 seeds (one: [x, x]) read as a bootstrap interval."""
    rows = [{"dataset": "dryer2", "model": m, "protocol": "freerun", "seed": s, "rmse": 0.5 + 0.1 * s,
             "rmse_original_units": None, "rmse_original_units_per_output": [1.0 + s, 20.0 + s, 300.0]}
            for m in ("odgpssm", "arx") for s in (0, 1)]
    text = table1.markdown({"runs": rows})
    section = text.split("### Protocol `freerun` in original units")[1].split("###")[0]
    assert "| arx | 1.5 / 20.5 / 300 (each output's mean, n=2) |" in section
    paired = text.split("paired by seed")[1]
    assert "(n=2)" in paired


def test_the_mixing_summary_by_hand():
    # A diag(sqrt(s2)) with A = [[1, 1], [1, -1], [0, 0]] (d_x 3, Q 2) and s2 = (4, 1): columns (2, 2, 0) and
    # (1, -1, 0), orthogonal, so the singular values are their norms sqrt(8) and sqrt(2)
    model = gp.ODGPSSM(dim_x=3, dim_y=1, dim_u=1, num_latent=2, num_inducing=4)
    params = model.constrained_params()
    changed = dict(params, A=np.array([[1.0, 1.0], [1.0, -1.0], [0.0, 0.0]]), variance=np.array([4.0, 1.0]),
                         process_var=np.array([0.25, 1.0, 4.0]))
    model.constrained_params = lambda: changed
    summary = table1.mixing_summary(model)
    np.testing.assert_allclose(summary["gp_singular_values"], [np.sqrt(8.0), np.sqrt(2.0)], rtol=1e-12)
    np.testing.assert_allclose(summary["process_std"], [0.5, 1.0, 2.0], rtol=1e-12)
    assert table1.mixing_summary(gp.ARX(dim_y=1, dim_u=1)) == {}


def test_a_sweep_records_the_times_it_took(tmp_path):
    """Each run's training and protocol seconds within its own wall time, that within the call's, and the document's
    wall time the sum over its invocations."""
    out = str(tmp_path)
    for seeds in (1, 2):  # the second call adds seed 1
        started = time.perf_counter()
        doc = table1.sweep(datasets=["gas_furnace"], models=["arx"], seeds=seeds, settings=TINY, out=out,
                           data_dir=DATA_DIR)
        elapsed = time.perf_counter() - started
        new = [r for r in doc["runs"] if r["seed"] == seeds - 1]
        for row in new:
            assert 0 < row["train_seconds"] <= row["seconds"] <= row["provenance"]["wall_seconds"] <= elapsed
        assert 0 < doc["invocations"][-1]["wall_seconds"] <= elapsed
    assert doc["wall_seconds"] == pytest.approx(sum(i["wall_seconds"] for i in doc["invocations"]), rel=1e-12)


def test_the_car_tracking_models_start_from_the_true_states():
    """build_models: inducing inputs at the true states before the 20 pre-training pairs (evenly spaced over 1..T),
    q(x0) at the first true state with variance 1e-4, and ODGPSSM's A = I + 0.1 noise."""
    from gpssm_np.datasets import car_tracking as car_data
    from gpssm_np.experiments import car_tracking
    from gpssm_np.transforms import positive

    idx = car_tracking.pretraining_indices(120)
    assert len(idx) == 20 and (idx[0], idx[-1]) == (1, 120) and np.all(np.diff(idx) >= 6)
    data = car_data(T=120, seed=0)
    models = car_tracking.build_models(data, seed=0)
    for model in models.values():
        params = model.get_learned_params()
        np.testing.assert_array_equal(params["Z"], data.x[idx - 1])
        np.testing.assert_array_equal(params["x0_mean"], data.x[0])
        np.testing.assert_allclose(positive(params["x0_var"]), 1e-4, rtol=1e-10)
    A = models["odgpssm"].get_learned_params()["A"]
    assert A.shape == (4, 4) and 0 < np.abs(A - np.eye(4)).max() < 0.5  # noise of scale 0.1 around the identity


def test_the_car_tracking_summary_by_hand(tmp_path, monkeypatch):
    from gpssm_np.experiments import car_tracking

    def fake_rows(seed, epochs, command=None):  # ODGPSSM 0.1 lower than PRSSM on every state and seed
        return car_rows(seed, lambda model: 1.0 + seed - 0.1 * (model == "odgpssm"))

    monkeypatch.setattr(car_tracking, "run_rows", fake_rows)
    car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=3)
    started = time.perf_counter()
    _, document = car_tracking.reproduce(seeds=3, out=str(tmp_path), epochs=3, return_document=True)
    assert 0 < document["invocations"][-1]["wall_seconds"] <= time.perf_counter() - started
    assert document["wall_seconds"] == pytest.approx(sum(i["wall_seconds"] for i in document["invocations"]),
                                                     rel=1e-12)
    summary = (tmp_path / "car_tracking.md").read_text()
    assert summary == car_tracking.markdown(document)
    assert summary.startswith("Settings (`experiments/car_tracking.py`): 3 epochs on T = 120 steps, 500 particles")
    assert "| prssm | 2.000 +- 0.816 |" in summary and "| odgpssm | 1.900 +- 0.816 |" in summary  # seeds 0, 1, 2
    assert "| odgpssm - prssm, paired | -0.100 [-0.100, -0.100] |" in summary
    assert "wall time 7 s." in car_tracking.markdown(dict(document, wall_seconds=7.4))
    assert "wall time 0 s." in car_tracking.markdown(dict(document, wall_seconds=None))


def test_a_car_tracking_run_scores_each_state_and_times_itself():
    from gpssm_np.experiments import car_tracking

    started = time.perf_counter()
    rows, res = car_tracking.run_rows(0, 1, command="test")
    elapsed = time.perf_counter() - started
    for row, (name, model) in zip(rows, res["models"].items()):
        assert row["model"] == name and row["rmse"] == model["rmse"]
        rmse = np.sqrt(np.mean((model["mean"] - res["truth"]) ** 2, axis=0))  # over time, one per state
        assert list(model["rmse"].values()) == pytest.approx(rmse, rel=1e-12)
        assert 0 < row["seconds"] <= row["provenance"]["wall_seconds"] <= elapsed


def test_a_legacy_car_tracking_file_is_read_with_this_modules_settings_at_its_epochs_and_length(tmp_path):
    from gpssm_np.experiments import car_tracking, runs

    rows = [{"seed": 0, "model": name, "rmse": dict.fromkeys(car_tracking.STATE_NAMES, 0.5), "seconds": 2.0}
            for name in car_tracking.MODELS]
    path = tmp_path / "car_tracking.json"
    path.write_text(json.dumps({"runs": rows, "epochs": 7, "T": 60, "wall_seconds": 9.0,
                                "versions": {"git_commit": "abc"}}))
    document = car_tracking.read_document(str(path))
    settings = dict(car_tracking.CAR_TRACKING_SETTINGS, epochs=7, T=60)
    assert document["config"] == {"settings": settings}
    assert all(r["code"] == "legacy" and r["config_key"] == runs.config_key({"settings": settings})
               and r["provenance"]["commit"] == "abc" for r in document["runs"])
    assert document["invocations"] == [{"legacy": True, "wall_seconds": 9.0}]
    current = dict(document, runs=[dict(r, provenance={"code": "x"}) for r in rows])  # rows of the current form
    path.write_text(json.dumps(current))
    assert car_tracking.read_document(str(path)) == current  # read as they are
    assert car_tracking.read_document(str(tmp_path / "none.json")) is None


def test_a_car_tracking_invocation_counts_the_runs_it_reused_from_other_code(tmp_path, monkeypatch):
    from gpssm_np.experiments import car_tracking, runs

    monkeypatch.setattr(car_tracking, "run_rows", lambda seed, epochs, command=None: car_rows(seed))
    monkeypatch.setattr(runs, "code_version", lambda: "old")
    car_tracking.reproduce(seeds=1, out=str(tmp_path), epochs=3)
    monkeypatch.setattr(runs, "code_version", lambda: "new")
    _, document = car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=3, allow_mixed_versions=True,
                                         return_document=True)
    last = document["invocations"][-1]
    assert (last["reused"], last["reused_other_code"], last["computed"]) == (1, 1, 1)
    assert last["command"] == {"function": "gpssm_np.experiments.car_tracking.reproduce", "seeds": 2, "epochs": 3}


@pytest.mark.skipif(not os.path.isdir(os.path.join(DATA_DIR, "gas_furnace")), reason="gas_furnace data not available")
def test_table1_committed_rows_are_the_current_codes():
    """One committed Table 1 run (PRSSM, gas furnace, seed 0, the authors' 70 epochs) is repeated by the current code
    under every protocol. The tolerance, 1e-9 relative, admits a change of machine or of summation order (the 13th
    significant digit here, docs/results.md section 2) and nothing that changes the authors' configuration, its
    training or its evaluation: such a change moves this run's scores by far more."""
    with open(COMMITTED_TABLE1) as f:
        committed = json.load(f)["runs"]
    rows = table1.run_one("gas_furnace", "prssm", 0, data_dir=DATA_DIR)
    for row in rows:
        old = [r for r in committed if (r["dataset"], r["model"], r["seed"], r["protocol"])
               == ("gas_furnace", "prssm", 0, row["protocol"])]
        assert len(old) == 1, row["protocol"]
        for score in ("rmse", "rmse_original_units", "nlpd"):  # the envi protocol has no NLPD (None)
            expected = old[0][score] if old[0][score] is None else pytest.approx(old[0][score], rel=1e-9, abs=0)
            assert row[score] == expected, (row["protocol"], score)
