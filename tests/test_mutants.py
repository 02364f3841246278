"""Tests for one-line changes the rest of the suite let through (issue 30, "mutations the suite misses"): the run
key of a sweep, the code version's dirty marker, the resumed set of a JSON-lines sweep, and the online Kalman
filter's predicted output variance."""
import shutil

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.experiments import runs, table1


def key(settings, name="authors", options=None):
    return runs.config_key(table1.run_config(settings, name, options))


def test_the_run_key_covers_the_settings_name_protocol_options_and_eval_particles():
    settings = dict(table1.RUN_SETTINGS["authors"])
    base = key(settings)
    assert key(settings, "prssm_style") != base  # the same values under another settings name
    for option, value in table1.PROTOCOL_OPTIONS.items():
        assert key(settings, options=dict(table1.PROTOCOL_OPTIONS, **{option: value + 1})) != base, option
    assert key(dict(settings, eval_num_particles=settings["eval_num_particles"] + 1)) != base
    assert key(dict(settings)) == base
    config = table1.run_config(settings)
    assert config["settings"]["eval_num_particles"] == settings["eval_num_particles"]
    assert config["protocol_options"] == dict(table1.PROTOCOL_OPTIONS) and config["settings_name"] == "authors"


def test_an_untracked_source_file_marks_the_code_dirty(tmp_path, monkeypatch):
    (tmp_path / "new_module.py").write_text("x = 1\n")
    answers = {"rev-parse": b"abc123\n", "diff": b"", "ls-files": b"new_module.py\n"}
    monkeypatch.setattr(runs, "_git", lambda *args: answers[args[0]])
    monkeypatch.setattr(runs, "PACKAGE_DIR", str(tmp_path))
    dirty = runs.code_version()
    assert dirty.startswith("abc123+dirty.")
    (tmp_path / "new_module.py").write_text("x = 2\n")  # another uncommitted state: another version
    assert runs.code_version() not in (dirty, "abc123")
    answers["ls-files"] = b"__pycache__/m.cpython-311.pyc\nstale.pyc\n__pycache__/notes.txt\n"  # compiled files and
    assert runs.code_version() == "abc123"  # the compiler's folder do not count
    answers["diff"] = b"diff --git a/m.py b/m.py\n-x = 1\n+x = 3\n"  # a change to a tracked file
    changed = runs.code_version()
    assert changed.startswith("abc123+dirty.")
    answers["diff"] = b"diff --git a/m.py b/m.py\n-x = 1\n+x = 4\n"
    assert runs.code_version() not in (changed, "abc123")


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_answers_what_it_prints_and_none_where_it_fails():
    assert runs._git("--version").startswith(b"git version")
    assert runs._git("no-such-command") is None


def test_a_resumed_jsonl_sweep_recomputes_rows_of_another_commit(tmp_path, monkeypatch):
    path = str(tmp_path / "cells.jsonl")
    calls = []

    def compute(name):
        calls.append(name)
        return {"name": name}

    monkeypatch.setattr(runs, "versions", lambda: {"git_commit": "aaa"})
    runs.jsonl_sweep(path, [("a",)], lambda r: (r["name"],), compute)
    runs.jsonl_sweep(path, [("a",)], lambda r: (r["name"],), compute)
    assert calls == ["a"]  # the same commit: resumed
    monkeypatch.setattr(runs, "versions", lambda: {"git_commit": "bbb"})
    rows = runs.jsonl_sweep(path, [("a",)], lambda r: (r["name"],), compute)
    assert calls == ["a", "a"] and [r["commit"] for r in rows] == ["aaa", "bbb"]


def test_the_online_kalman_filters_predicted_output_variance_includes_r(rng):
    T = 120
    u = rng.normal(size=(T, 1))
    y = np.zeros((T, 1))
    for t in range(1, T):
        y[t] = 0.8 * y[t - 1] + 0.5 * u[t] + 0.3 * rng.normal()
    model = gp.LGSSM(dim_x=2, num_iters=5).fit(5.0 * y + 2.0, u)
    online = model.online_filter()
    for t in range(10):
        mean, cov = online.mean.copy(), online.cov.copy()
        online.update(5.0 * y[t] + 2.0, u[t])
        _, _, y_mean, y_cov = model.predict_moments(u[t:t + 1], mean, cov)
        np.testing.assert_allclose(online.predicted_mean, y_mean[0], rtol=1e-10)
        np.testing.assert_allclose(online.predicted_var, np.diag(y_cov[0]), rtol=1e-10)
    R = model.params_["R"][0, 0] * model.scaling_.y_std[0] ** 2
    assert online.predicted_var[0] > R  # R is part of it
