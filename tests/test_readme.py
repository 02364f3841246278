"""The README's python code blocks run as written: "Your own data" in order and in one namespace, in an empty folder
(the section keeps its fit to a small budget, so this takes seconds); "Quick start" with the default fit's plan
shortened to a few steps (its fit as written takes minutes), on the actuator data."""
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.datasets import DatasetNotFoundError

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Your own data"


def section_code(section=SECTION):
    """The python code blocks of the README's ``section``, in order."""
    text = README.read_text()
    assert section in text, f"README.md has no section {section!r}"
    start = text.index(section)
    end = text.find("\n## ", start + len(section))
    return re.findall(r"```python\n(.*?)```", text[start:end if end >= 0 else len(text)], flags=re.S)


def test_the_section_goes_from_a_csv_file_to_a_score():
    code = "\n".join(section_code())
    for step in ("np.savetxt(", "gp.datasets.from_csv(", ".fit(", "max_steps=", "plot_forecast(", "gp.evaluate(",
                 ".online_filter(", ".update(", ".state()"):
        assert step in code, step


def test_the_code_blocks_run_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    for k, block in enumerate(section_code()):
        exec(compile(block, f"README.md, {SECTION!r}, block {k + 1}", "exec"), namespace)
    assert (tmp_path / "tanks_forecast.png").stat().st_size > 10_000 and (tmp_path / "tanks_odgpssm.npz").exists()
    res, ds = namespace["res"], namespace["ds"]
    assert res["window"] == 100 and res["windows"] == [0, 100, 200]
    assert res["rmse_original_units"] == res["rmse"] * ds.y_std[0] and 0 < res["rmse"] < 1
    assert "(300, 1) (300, 1) ('level',) ('inflow',)" in capsys.readouterr().out
    assert np.all(np.isfinite(namespace["fc"].mean))
    assert abs(np.mean(namespace["fc"].mean) - ds.y_mean[0]) < 3 * ds.y_std[0]  # in the file's units
    assert namespace["f2"].step == 50 and np.isfinite(namespace["mean"]).all()


@dataclass(frozen=True)
class ShortPlan(gp.Plan):
    """The default fit's plan with a budget of a few steps."""

    max_steps: int = 2
    eval_every: int = 1


def test_the_quick_start_runs(monkeypatch, capsys):
    try:
        gp.datasets.load("actuator")
    except DatasetNotFoundError:
        pytest.skip("the actuator data are not found (GPSSM_NP_DATA)")
    monkeypatch.setattr("gpssm_np.models.gpssm.Plan", ShortPlan)
    namespace = {"__name__": "__main__"}
    (block,) = section_code("## Quick start")
    exec(compile(block, "README.md, Quick start", "exec"), namespace)
    assert namespace["m"].selection_["record"][-1]["step"] <= 2  # the short plan ran, through fit's own dispatch
    printed = capsys.readouterr().out.splitlines()
    scores = [float(v) for line in printed[:3] for v in line.split()]
    assert len(scores) == 6 and all(np.isfinite(scores))
    assert "'kind'" in printed[3]
