"""Sweeps keyed on everything that determines a run (data set, model, seed, settings, protocol options, code
version), with per-row provenance that survives resuming, and mixing code versions only on request."""
import json
import os

import pytest

from gpssm_np.cli import main
from gpssm_np.experiments import car_tracking, runs, table1

DATA = os.environ.get("GPSSM_NP_DATA") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
TINY = {"num_samples": 4, "eval_num_samples": 4, "eval_num_particles": 30}
PROVENANCE = {"code", "commit", "versions", "machine", "command", "started", "finished", "wall_seconds"}


@pytest.fixture
def tiny(monkeypatch):
    for name in ("authors", "prssm_style"):
        monkeypatch.setitem(table1.RUN_SETTINGS, name, dict(table1.RUN_SETTINGS[name], **TINY))


def cli(tmp_path, capsys, *extra, epochs=2, seeds=1):
    argv = ["reproduce", "table1", "--datasets", "gas_furnace", "--models", "prssm", "--seeds", str(seeds),
            "--epochs", str(epochs), "--out", str(tmp_path), "--data-dir", DATA, *extra]
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err, json.loads((tmp_path / "table1.json").read_text())


def test_changed_epochs_or_settings_recompute_and_supersede(tmp_path, capsys, tiny):
    code, out, first = cli(tmp_path, capsys, epochs=2)
    assert code == 0 and "reused 0" in out and "computed 1" in out
    assert first["config"]["settings"]["epochs"] == 2 and len(first["runs"]) == 5

    code, out, second = cli(tmp_path, capsys, epochs=3)  # the stale 2-epoch run must not be returned
    assert code == 0 and "reused 0" in out and "computed 1" in out and "1 runs with other settings" in out
    assert second["config"]["settings"]["epochs"] == 3
    assert all(r["config_key"] == second["config_key"] for r in second["runs"])
    assert {r["train_seconds"] for r in second["runs"]} != {r["train_seconds"] for r in first["runs"]}
    assert [r["rmse"] for r in second["superseded_runs"]] == [r["rmse"] for r in first["runs"]]

    code, out, third = cli(tmp_path, capsys, epochs=3)
    assert code == 0 and "reused 1" in out and "computed 0" in out
    assert third["runs"] == second["runs"]

    code, out, fourth = cli(tmp_path, capsys, "--settings", "prssm_style", epochs=3)
    assert code == 0 and "computed 1" in out
    assert fourth["config"]["settings_name"] == "prssm_style"
    assert fourth["config"]["settings"]["mean_function"] == "identity"
    assert len(fourth["superseded_runs"]) == 10

    # back to settings run before with this code: that run is reused, not recomputed (it was, from scratch)
    code, out, fifth = cli(tmp_path, capsys, epochs=2)
    assert code == 0 and "reused 1" in out and "computed 0" in out
    assert [r["rmse"] for r in fifth["runs"]] == [r["rmse"] for r in first["runs"]]
    assert len(fifth["superseded_runs"]) == 10 and all(r["config_key"] != fifth["config_key"]
                                                       for r in fifth["superseded_runs"])


def test_rows_keep_their_own_provenance_when_resumed(tmp_path, capsys, tiny):
    _, _, first = cli(tmp_path, capsys, epochs=2, seeds=1)
    _, out, second = cli(tmp_path, capsys, epochs=2, seeds=2)
    assert "reused 1" in out and "computed 1" in out
    seed0 = [r for r in second["runs"] if r["seed"] == 0]
    seed1 = [r for r in second["runs"] if r["seed"] == 1]
    assert seed0 == first["runs"]  # untouched, provenance included
    for row in second["runs"]:
        prov = row["provenance"]
        assert set(prov) >= PROVENANCE
        assert prov["wall_seconds"] > 0 and prov["started"] <= prov["finished"]
        assert prov["versions"]["numpy"] and prov["machine"]["cpu_count"] >= 1
        assert row["code"] == runs.code_version()
    assert "--seeds 1" in seed0[0]["provenance"]["command"] and "--seeds 2" in seed1[0]["provenance"]["command"]
    assert [inv["computed"] for inv in second["invocations"]] == [1, 1]
    assert second["invocations"][1]["reused"] == 1


def test_mixing_code_versions_needs_the_flag(tmp_path, capsys, monkeypatch, tiny):
    cli(tmp_path, capsys, epochs=2)
    monkeypatch.setattr(runs, "code_version", lambda: "0000000")  # as if the code had changed since
    code, out, _ = cli(tmp_path, capsys, epochs=2)
    assert code == 2 and "out:" in out and "--allow-mixed-versions" in out and "0000000" in out
    code, out, doc = cli(tmp_path, capsys, "--allow-mixed-versions", epochs=2)
    assert code == 0 and "reused 1" in out and "computed 0" in out
    assert "(1 of them from other code versions)" in out  # it said "with the same settings and code"
    assert {r["code"] for r in doc["runs"]} != {"0000000"}  # the reused rows keep their own version
    assert doc["invocations"][-1]["code"] == "0000000"


def test_legacy_files_are_read_with_their_file_level_provenance(tmp_path, capsys, tiny):
    _, _, doc = cli(tmp_path, capsys, epochs=2)
    legacy = {"runs": [{k: v for k, v in r.items() if k not in ("provenance", "config_key", "code")}
                       for r in doc["runs"]],
              "settings": doc["config"]["settings"], "versions": {"numpy": "1.0", "git_commit": None},
              "command": {"models": ["prssm"]}, "wall_seconds": 5.0}
    (tmp_path / "table1.json").write_text(json.dumps(legacy))
    read = table1.read_document(str(tmp_path / "table1.json"))
    assert all(r["code"] == "legacy" and r["provenance"]["versions"] == {"numpy": "1.0", "git_commit": None}
               for r in read["runs"])
    code, out, _ = cli(tmp_path, capsys, epochs=2)
    assert code == 2 and "legacy" in out
    code, out, resumed = cli(tmp_path, capsys, "--allow-mixed-versions", epochs=2)
    assert code == 0 and "reused 1" in out
    assert all(r["provenance"]["code"] == "legacy" for r in resumed["runs"])
    assert "Runs by code version: `legacy, commit not recorded` 1" in (tmp_path / "table1.md").read_text()


@pytest.mark.parametrize("name", ["table1", "table1_prssm_style", "qstudy"])
def test_committed_results_stay_readable(name):
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "results", f"{name}.json")
    document = table1.read_document(path)
    assert document["runs"] and all(set(r["provenance"]) >= PROVENANCE for r in document["runs"])
    assert document["config"]["settings_name"] in table1.RUN_SETTINGS
    md = table1.markdown(document)
    assert "population std" in md
    with open(path[:-5] + ".md") as fh:
        assert fh.read() == md  # the committed summaries are what markdown() makes of the committed JSON


def test_car_tracking_keys_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(car_tracking, "CAR_TRACKING_SETTINGS", dict(car_tracking.CAR_TRACKING_SETTINGS, T=30,
                        pretrain_iterations=3, num_particles=30, num_trajectories=5, num_samples=3))
    paths, doc = car_tracking.reproduce(seeds=1, out=str(tmp_path), epochs=1, return_document=True)
    assert [r["model"] for r in doc["runs"]] == ["prssm", "odgpssm"] and len(paths) == 3
    assert doc["config"]["settings"]["epochs"] == 1 and all(set(r["provenance"]) >= PROVENANCE for r in doc["runs"])
    _, again = car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=1, return_document=True)
    assert again["invocations"][-1]["reused"] == 1 and again["invocations"][-1]["computed"] == 1
    assert again["runs"][:2] == doc["runs"]
    _, longer = car_tracking.reproduce(seeds=1, out=str(tmp_path), epochs=2, return_document=True)
    assert longer["invocations"][-1]["computed"] == 1 and len(longer["superseded_runs"]) == 4
    summary = (tmp_path / "car_tracking.md").read_text()
    assert "paired" in summary and summary.startswith("Settings (`experiments/car_tracking.py`): 2 epochs on T = 30")


def test_jsonl_sweep_streams_rows_and_resumes(tmp_path):
    from gpssm_np.experiments.runs import jsonl_sweep

    path = tmp_path / "sub" / "cells.jsonl"
    calls = []

    def compute(name, seed):
        calls.append((name, seed))
        return {"name": name, "seed": seed, "value": seed * 2}

    def key(row):
        return row["name"], row["seed"]

    rows = jsonl_sweep(str(path), [("a", 0), ("b", 1)], key, compute)
    assert calls == [("a", 0), ("b", 1)] and [r["value"] for r in rows] == [0, 2]
    assert len(path.read_text().splitlines()) == 2
    rows = jsonl_sweep(str(path), [("a", 0), ("b", 1), ("c", 2)], key, compute)  # resumed: only the new cell
    assert calls[2:] == [("c", 2)] and len(rows) == 3


@pytest.mark.parametrize("foreign", ['{"runs": [1, 2', "[1, 2]", '{"rmse": 0.3}', '{"runs": [{"a": 1}]}',
                                     '{"runs": [], "superseded_runs": {}}'])
def test_a_file_that_is_not_a_sweeps_is_named_and_kept(tmp_path, capsys, tiny, foreign):
    """Not JSON, or JSON of another kind (another command's results): refused by name, never overwritten."""
    (tmp_path / "table1.json").write_text(foreign)
    code, out = main(["reproduce", "table1", "--datasets", "gas_furnace", "--models", "arx", "--seeds", "1",
                      "--out", str(tmp_path), "--data-dir", DATA]), capsys.readouterr()
    assert code == 2 and f"out: {tmp_path / 'table1.json'} is not a sweep's JSON file" in out.err
    assert (tmp_path / "table1.json").read_text() == foreign


def stopping_at_the_second(run):
    """``run`` (a sweep's one-run function) made to raise KeyboardInterrupt at its second call, as Ctrl-C would."""
    calls = []

    def stopped(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run(*args, **kwargs)
    return stopped


def test_the_summary_is_written_with_each_run(tmp_path, capsys, tiny, monkeypatch):
    """A sweep stopped after its first run leaves a Markdown summary of the rows its JSON holds."""
    monkeypatch.setattr(table1, "run_one", stopping_at_the_second(table1.run_one))
    code = main(["reproduce", "table1", "--datasets", "gas_furnace", "--models", "arx", "lgssm", "--seeds", "1",
                 "--out", str(tmp_path), "--data-dir", DATA])
    assert code == 130
    document = table1.read_document(str(tmp_path / "table1.json"))
    assert {r["model"] for r in document["runs"]} == {"arx"}
    assert (tmp_path / "table1.md").read_text() == table1.markdown(document)


@pytest.mark.parametrize("name", ["odgpssm_q0", "odgpssm_q01", "odgpssm_q-1"])
def test_a_q_model_name_is_q_from_one_without_leading_zeros(tmp_path, name):
    with pytest.raises(ValueError, match="models: unknown"):
        table1.sweep(["gas_furnace"], [name], 1, out=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_the_car_summary_is_written_with_each_seed(tmp_path, monkeypatch):
    monkeypatch.setattr(car_tracking, "CAR_TRACKING_SETTINGS", dict(car_tracking.CAR_TRACKING_SETTINGS, T=30,
                        pretrain_iterations=3, num_particles=30, num_trajectories=5, num_samples=3))
    monkeypatch.setattr(car_tracking, "run_rows", stopping_at_the_second(car_tracking.run_rows))
    with pytest.raises(KeyboardInterrupt):
        car_tracking.reproduce(seeds=2, out=str(tmp_path), epochs=1)
    document = car_tracking.read_document(str(tmp_path / "car_tracking.json"))
    assert {r["seed"] for r in document["runs"]} == {0}
    assert (tmp_path / "car_tracking.md").read_text() == car_tracking.markdown(document)


# -- runs.py's sorting of earlier rows, by hand ---------------------------------------------------------------------
CONFIG, OTHER = {"settings": {"epochs": 2}}, {"settings": {"epochs": 3}}


def rows_of(run, code, parts=("causal", "simulate"), config=CONFIG):
    return [{"run": run, "part": p, "config_key": runs.config_key(config), "code": code} for p in parts]


def test_revive_brings_back_superseded_rows_of_this_configuration_and_code_only():
    back, stay_a, stay_b = rows_of("a", "new"), rows_of("b", "old"), rows_of("c", "new", config=OTHER)
    current = rows_of("d", "new")
    rows, superseded = runs.revive({"runs": current, "superseded_runs": back + stay_a + stay_b}, CONFIG, "new")
    assert rows == current + back and superseded == stay_a + stay_b


@pytest.mark.parametrize("this_code_first", [True, False])
def test_reconcile_keeps_one_finished_run_per_identity_this_codes_first(this_code_first):
    ours, theirs = rows_of("x", "new"), rows_of("x", "old")  # run x by both codes
    only_theirs, older = rows_of("y", "old"), rows_of("y", "older")  # run y by two other codes: the first kept
    unfinished, other_config = rows_of("z", "new", parts=("causal",)), rows_of("w", "new", config=OTHER)
    rows = (ours + theirs if this_code_first else theirs + ours) + only_theirs + older + unfinished + other_config
    args = (lambda r: r["run"], lambda r: r["part"], ("causal", "simulate"), CONFIG, "new")
    kept, superseded, done = runs.reconcile(rows, *args, True, "out.json")
    assert done == {"x", "y"} and sorted(map(str, kept)) == sorted(map(str, ours + only_theirs))
    assert sorted(map(str, superseded)) == sorted(map(str, theirs + older + other_config))  # unfinished z dropped
    with pytest.raises(ValueError, match=r"from other code versions \['old', 'older'\]; this code is new"):
        runs.reconcile(rows, *args, False, "out.json")


def test_a_sweep_file_whose_rows_have_exactly_the_keys_asked_is_read(tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"runs": [{"dataset": "d", "model": "m"}], "superseded_runs": []}))
    assert runs.read_sweep_file(str(path), ("dataset", "model"))["runs"] == [{"dataset": "d", "model": "m"}]
    with pytest.raises(ValueError, match="not a sweep's JSON file"):
        runs.read_sweep_file(str(path), ("dataset", "model", "seed"))


def test_legacy_rows_take_a_stated_commit_over_the_files():
    document = {"runs": [{"model": "odgpssm", "seconds": 3.0}, {"model": "prssm", "seconds": 4.0}],
                "versions": {"git_commit": "file"}, "command": "sweep"}
    stated = {"odgpssm": {"commit": "stated", "command": "theirs", "source": "docs/results.md"}}
    odgpssm, prssm = (row["provenance"] for row in runs.legacy_rows(document, CONFIG, stated))
    assert (odgpssm["commit"], odgpssm["command"]) == ("stated", "theirs") and "from docs/results.md" in odgpssm["note"]
    assert (prssm["commit"], prssm["command"]) == ("file", "sweep") and "last invocation" in prssm["note"]
    assert prssm["wall_seconds"] == 4.0
