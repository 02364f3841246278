"""The gpssm-np command, run in-process through cli.main."""
import json
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from gpssm_np.cli import main
from tests.data_dir import DATA_DIR


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "numba" in out and "gpssm_np" in out
    lines = [line for line in out.splitlines() if line.strip()]
    starts = {len(line) - len(line.split(None, 1)[1]) for line in lines if len(line.split(None, 1)) == 2}
    assert len(starts) == 1  # every value in one column (kernel_threads, the longest name, was out of line)


def test_demo_quick_writes_png_and_json(tmp_path, capsys):
    started = time.perf_counter()
    assert main(["demo", "--quick", "--epochs", "30", "--out", str(tmp_path)]) == 0
    elapsed = time.perf_counter() - started
    printed = capsys.readouterr()
    assert f"writing into {tmp_path}" in printed.err
    assert "smoothed latent states against the true states (lower is better)" in printed.out
    better = re.search(r"\nbetter: (\w+) \(mean RMSE over the four states \d\.\d{3} against (\w+) \d\.\d{3}\)",
                       printed.out)
    assert better and {better[1], better[2]} == {"odgpssm", "prssm"} and " mean=" in printed.out
    summary = json.loads((tmp_path / "car_tracking.json").read_text())
    assert set(summary["rmse"]) == {"odgpssm", "prssm"} and summary["epochs"] == 30  # --epochs over --quick's 40
    assert summary["seed"] == 0  # the default --seed
    assert set(summary["rmse"]["odgpssm"]) == {"p1", "p2", "v1", "v2"}
    assert (tmp_path / "car_tracking.png").stat().st_size > 10_000
    assert 0 < summary["wall_seconds"] < elapsed


def test_fit_evaluate_forecast(tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--epochs", "1", "--num-samples", "5",
                 "--out", str(model)]) == 0
    assert model.exists()
    printed = capsys.readouterr()
    # the epoch loop starts from the linear floor too (models/floor.py), and says which
    assert re.search(r"\(floor (arx|lgssm) \([0-9, ]+\), d_x = \d+, \d+ steps, final loss ", printed.out)
    assert "floor: ARX() and LGSSM(dim_x='auto') on rolling-origin folds" in printed.err
    assert re.search(r"floor: (arx|lgssm) \([0-9, ]+\), d_x = \d+ \(fold errors: arx ", printed.err)
    out = tmp_path / "eval.json"
    assert main(["evaluate", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--num-samples", "5",
                 "--out", str(out)]) == 0
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"causal", "simulate", "freerun"}
    assert main(["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--steps", "20",
                 "--num-samples", "5", "--out", str(tmp_path / "fc")]) == 0
    fc = json.loads((tmp_path / "fc" / "forecast.json").read_text())
    assert len(fc["mean"]) == 20 and (tmp_path / "fc" / "forecast.png").exists()


def test_errors_are_reported_not_raised(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "missing.npz"), "--dataset", "actuator", "--data-dir", DATA_DIR]) == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fit", "--dataset", "actuator", "--model", "lstm"])


def test_a_command_is_needed(capsys):
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2 and "the following arguments are required: command" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "gpssm_np", "info"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "numpy" in proc.stdout


def test_forecast_beyond_the_test_half_is_an_error(tmp_path, capsys):
    import gpssm_np as gp

    model = gp.save(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4), tmp_path / "m.npz")
    args = ["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--out", str(tmp_path / "fc")]
    assert main(args + ["--start", "140", "--steps", "20"]) == 2  # the test half has 148 steps
    err = capsys.readouterr().err
    assert "--steps: the test half of gas_furnace has 8 steps from --start 140 on" in err and "got --steps 20" in err
    assert main(args + ["--start", "148", "--steps", "1"]) == 2  # one past the test half's last step
    assert "--start: expected an index into the test half (0..147), got 148" in capsys.readouterr().err
    assert main(args + ["--steps", "0"]) == 2 and "--steps" in capsys.readouterr().err
    assert main(args + ["--steps", "-5"]) == 2 and "expected a positive number" in capsys.readouterr().err
    assert not (tmp_path / "fc").exists()


def test_fit_refuses_zero_epochs_rather_than_training_the_default_length(tmp_path, capsys):
    out = tmp_path / "m.npz"
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--model", "dssm", "--epochs", "0",
                 "--out", str(out)]) == 2
    assert "epochs" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_closed_pipe_ends_the_command_quietly(unbuffered):
    """`gpssm-np info | head` when head has gone: no BrokenPipeError traceback, whether the error comes from a
    print (unbuffered output) or from the flush at the end (buffered)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "gpssm_np", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(env, **({"PYTHONUNBUFFERED": "1"} if unbuffered else {})))
    proc.stdout.close()  # the reader goes away before the command writes
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and b"BrokenPipeError" not in err and b"Traceback" not in err, err.decode()


@pytest.fixture(scope="module")
def tanks_csv(tmp_path_factory):
    """A CSV file of the cascaded tanks (one input, one output), as a user's own data."""
    import numpy as np

    import gpssm_np as gp

    y, u, _ = gp.datasets.cascaded_tanks(300, seed=0)
    path = tmp_path_factory.mktemp("csv") / "tanks.csv"
    np.savetxt(path, np.hstack([u, y]), delimiter=",", header="inflow,level", comments="")
    return str(path)


@pytest.mark.parametrize("model", ["odgpssm", "prssm", "dssm", "arx", "lgssm"])
def test_fit_takes_a_csv_file_and_every_model(tmp_path, tanks_csv, model, capsys):
    import gpssm_np as gp

    out = tmp_path / "models" / "m.npz"  # a folder that does not exist yet
    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    started = time.perf_counter()
    assert main(["fit", *csv, "--model", model, "--epochs", "1", "--num-samples", "3", "--out", str(out)]) == 0
    elapsed = time.perf_counter() - started
    said = re.search(rf"trained {model} on tanks \(.*\) in (\d+\.\d) s", capsys.readouterr().out)
    assert said and float(said[1]) <= elapsed + 0.05  # the fit's own time, rounded to a tenth
    fitted = gp.load(out)
    assert type(fitted).__name__.lower() == model and fitted.data_name_ == "tanks"
    assert (fitted.spec.dim_y, fitted.spec.dim_u) == (1, 1)


def test_errors_name_the_command_line_options(tmp_path, tanks_csv, capsys):
    """A bad value is named as the option the user typed (--batch-size), not as the package's argument
    (batch_size), also inside another option's message; a positional argument keeps its name."""
    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    assert main(["fit", *csv, "--batch-size", "0", "--out", str(tmp_path / "m.npz")]) == 2
    assert "error: --batch-size: expected a positive integer, got 0" in capsys.readouterr().err
    model = tmp_path / "arx.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), *csv, "--protocol", "causal", "--seed", "-1"]) == 2
    assert "error: --protocol causal: --seed: expected a non-negative integer" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "none.npz"), *csv]) == 2
    assert "error: model_file: " in capsys.readouterr().err


def test_evaluate_and_forecast_take_a_csv_file(tmp_path, tanks_csv, capsys):
    import gpssm_np as gp

    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    model = tmp_path / "arx.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    out = tmp_path / "eval.json"
    assert main(["evaluate", str(model), *csv, "--protocol", "causal", "--num-samples", "3", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["dataset"] == "tanks"
    assert main(["forecast", str(model), *csv, "--start", "10", "--steps", "50", "--num-samples", "3",
                 "--out", str(tmp_path / "fc")]) == 0
    fc = json.loads((tmp_path / "fc" / "forecast.json").read_text())
    assert len(fc["mean"]) == 50 and (tmp_path / "fc" / "forecast.png").stat().st_size > 10_000
    # a model of the tanks scored on another record with the same channels: said, not refused
    other = tmp_path / "other_tanks.csv"
    other.write_text(open(tanks_csv).read())
    with pytest.warns(UserWarning, match="fitted on 'tanks' but is evaluated on 'other_tanks'"):
        assert main(["evaluate", str(model), "--csv", str(other), "--outputs", "level", "--inputs", "inflow",
                     "--protocol", "causal", "--num-samples", "3"]) == 0
    assert gp.load(model).data_name_ == "tanks"
    # on a data set whose channels have other names: refused, naming them (after the warning on its name)
    with pytest.warns(UserWarning, match="fitted on 'tanks' but is evaluated on 'gas_furnace'"):
        assert main(["evaluate", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--protocol",
                     "causal", "--num-samples", "3"]) == 2
    assert "the model was fitted on the outputs ['level'], got ['CO2 concentration']" in capsys.readouterr().err


def test_csv_arguments_are_checked(tmp_path, tanks_csv, capsys):
    assert main(["fit", "--csv", tanks_csv, "--inputs", "inflow", "--model", "arx"]) == 2
    assert "--outputs: name the output columns" in capsys.readouterr().err
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--outputs", "y", "--model", "arx"]) == 2
    assert "--outputs: options of a --csv file" in capsys.readouterr().err
    assert main(["fit", "--csv", tanks_csv, "--outputs", "height", "--model", "arx"]) == 2
    assert "no column 'height'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # one source only
        main(["fit", "--csv", tanks_csv, "--dataset", "gas_furnace", "--outputs", "level"])
    with pytest.raises(SystemExit):  # at least one
        main(["fit", "--model", "arx"])
    for bad, option in ((["--dataset", "nope"], "--dataset"), (["--csv", tanks_csv, "--outputs", "level",
                                                                  "--train-fraction", "1.5"], "--train-fraction")):
        with pytest.raises(SystemExit):  # argparse names the option, not the function argument behind it
            main(["fit", *bad, "--model", "arx"])
        assert f"argument {option}" in capsys.readouterr().err


def test_the_demo_writes_into_a_named_folder_not_the_working_directory(tmp_path, monkeypatch):
    from gpssm_np.cli import default_demo_dir, make_parser

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_demo_dir() == str(tmp_path / "gpssm_np" / "demo")
    assert make_parser().parse_args(["demo"]).out is None  # cmd_demo then takes default_demo_dir()


def test_fit_names_the_kept_model(capsys, tmp_path):
    """The last lines of a default fit say what was kept: the GP part after its steps, or the linear floor, with
    the fold errors they were chosen on."""
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--max-steps", "2", "--num-samples", "5",
                 "--out", str(tmp_path / "gf.npz")]) == 0
    out = capsys.readouterr().out
    assert "floor " in out and "kept: " in out and "fold RMSE" in out


def test_fit_says_when_it_replaces_a_model_file_and_names_seq_len_under_the_default_fit(tmp_path, capsys):
    out = tmp_path / "gf.npz"
    args = ["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--model", "arx", "--out", str(out)]
    assert main(args) == 0 and "replacing" not in capsys.readouterr().out
    assert main(args) == 0 and f"wrote {out} (replacing the file that was there)" in capsys.readouterr().out
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--seq-len", "30",
                 "--out", str(tmp_path / "od.npz")]) == 2
    assert "--seq-len: the default fit grows its training windows itself" in capsys.readouterr().err


def test_fit_takes_a_step_budget_under_the_authors_settings_as_fit_does(tmp_path, capsys):
    # --settings authors --max-steps N trains as ODGPSSM(settings="authors").fit(y, u, max_steps=N) does; with
    # --epochs too it names both options
    args = ["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--settings", "authors", "--max-steps", "3",
            "--num-samples", "5", "--out", str(tmp_path / "a.npz")]
    assert main(args) == 0
    import gpssm_np as gp
    assert len(gp.load(tmp_path / "a.npz").history_) <= 3
    capsys.readouterr()
    assert main(args + ["--epochs", "2"]) == 2
    assert "--max-steps, --epochs: give one" in capsys.readouterr().err


@pytest.mark.parametrize("model", ["odgpssm", "dssm"])
def test_fit_under_the_authors_settings_trains_their_epochs(tmp_path, monkeypatch, capsys, model):
    # no --epochs and no --max-steps: the authors' 70 epochs of 50-step windows (the model's own regime)
    import gpssm_np as gp
    from gpssm_np.training_loop import EpochPlan, epoch_plan

    trained = []

    def fit(self, y, u=None, **options):
        plan = (self.training_plan(options["plan"], options.get("max_steps"), options["epochs"])
                if hasattr(self, "training_plan") else epoch_plan(options["plan"], options["epochs"]))
        trained.append(plan)
        return self

    monkeypatch.setattr(gp.ODGPSSM, "fit", fit)
    monkeypatch.setattr(gp.DSSM, "fit", fit)
    assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--settings", "authors", "--model", model,
                 "--out", str(tmp_path / "m.npz")]) == 0
    (plan,) = trained
    assert isinstance(plan, EpochPlan) and (plan.epochs, plan.seq_len) == (70, 50)


def test_forecast_needs_a_burn_in(tmp_path, capsys):
    import gpssm_np as gp

    model = gp.save(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4), tmp_path / "m.npz")
    assert main(["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--burn-in", "0",
                 "--out", str(tmp_path / "fc")]) == 2
    assert "--burn-in: expected at least 1" in capsys.readouterr().err


def test_an_interrupted_command_says_so_without_a_traceback(monkeypatch, capsys):
    import gpssm_np.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_info", interrupted)
    assert main(["info"]) == 130 and capsys.readouterr().err.strip() == "gpssm-np info: interrupted"


@pytest.mark.parametrize("error, code, message", [
    (MemoryError(), 1, "gpssm-np info: error: not enough memory for the arrays the options ask for"),
    (ValueError("--seed: bad"), 2, "gpssm-np info: error: --seed: bad"),
    (OSError("disk full"), 2, "gpssm-np info: error: disk full")])
def test_each_error_has_its_exit_code_and_message(monkeypatch, capsys, error, code, message):
    import gpssm_np.cli as cli

    def failing(args):
        raise error

    monkeypatch.setattr(cli, "cmd_info", failing)
    assert main(["info"]) == code and capsys.readouterr().err.startswith(message)


def test_reproduce_car_names_the_options_it_does_not_take(tmp_path, capsys):
    assert main(["reproduce", "car", "--models", "odgpssm", "--jobs", "2", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--models, --jobs: reproduce car trains ODGPSSM and PRSSM" in err and not any(tmp_path.iterdir())


def test_reproduce_car_runs_the_experiment_with_its_options(tmp_path, monkeypatch, capsys):
    from gpssm_np.experiments import car_tracking

    calls = []

    def reproduce(return_document=False, **options):
        calls.append(options)
        paths = ["a.json", "a.png"]
        return (paths, {"invocations": [{"reused": 0, "computed": 2, "superseded": 0}]}) if return_document else paths

    monkeypatch.setattr(car_tracking, "reproduce", reproduce)
    assert main(["reproduce", "car", "--seeds", "2", "--epochs", "3", "--out", str(tmp_path)]) == 0
    (options,) = calls
    assert (options["seeds"], options["epochs"], options["out"]) == (2, 3, str(tmp_path))
    assert capsys.readouterr().out.splitlines()[-2:] == ["wrote a.json", "wrote a.png"]
    assert main(["reproduce", "car", "--jobs", "2", "--out", str(tmp_path)]) == 2  # --jobs alone
    assert "--jobs: reproduce car trains ODGPSSM and PRSSM" in capsys.readouterr().err and len(calls) == 1


@pytest.mark.parametrize("what, models, datasets, base", [
    ("table1", ["odgpssm", "prssm", "dssm", "arx", "lgssm"], ["actuator", "ballbeam", "drive", "dryer", "gas_furnace"],
     "authors"),
    ("qstudy", [f"odgpssm_q{q}" for q in range(1, 9)], ["actuator", "ballbeam", "drive", "dryer", "gas_furnace"],
     "authors"),
    ("mimo", ["odgpssm", "prssm", "arx", "lgssm"], ["cd_player_arm", "winding", "steamgen", "dryer2"], "default")])
def test_reproduce_runs_each_sweep_with_its_models_data_sets_and_settings(tmp_path, monkeypatch, capsys, what,
                                                                            models, datasets, base):
    from gpssm_np.experiments import q_study, table1

    sweeps, figures = [], []

    def sweep(**options):
        sweeps.append(options)
        return {"invocations": [{"reused": 0, "computed": 1, "superseded": 0}]}

    monkeypatch.setattr(table1, "sweep", sweep)
    monkeypatch.setattr(q_study, "write_figure", lambda doc, path: figures.append(path) or path)
    assert main(["reproduce", what, "--out", str(tmp_path)]) == 0
    (options,) = sweeps
    assert (options["models"], options["datasets"], options["base"], options["name"]) == (models, datasets, base, what)
    assert options["seeds"] == 5  # the default --seeds
    assert figures == ([os.path.join(str(tmp_path), "qstudy.png")] if what == "qstudy" else [])
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {os.path.join(str(tmp_path), what + '.md')}"
    assert main(["reproduce", what, "--name", "mine", "--out", str(tmp_path)]) == 0  # a stem of the user's
    assert sweeps[-1]["name"] == "mine"
    assert capsys.readouterr().out.endswith(f"wrote {os.path.join(str(tmp_path), 'mine.md')}\n")


def test_reproduce_needs_at_least_one_seed(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "table1", "--seeds", "0", "--out", str(tmp_path)])
    assert "argument --seeds: expected a positive integer, got '0'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("option", ["--jobs", "--epochs"])
def test_reproduce_needs_positive_jobs_and_epochs(tmp_path, capsys, option):
    with pytest.raises(SystemExit):
        main(["reproduce", "table1", option, "0", "--out", str(tmp_path)])
    assert f"argument {option}: expected a positive integer, got '0'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_files_and_folders_that_cannot_be_used_are_errors_not_tracebacks(tmp_path, capsys, monkeypatch):
    """A folder given as a CSV file, a file given as an output folder: a message and exit code 2; fit's --out is
    checked before the fit, whose minutes a path that cannot be written would throw away."""
    import gpssm_np.models.gpssm as gpssm_module

    csv = tmp_path / "plant.csv"
    rng = np.random.default_rng(0)
    np.savetxt(csv, np.column_stack([rng.normal(size=200), rng.normal(size=200)]), delimiter=",", header="y,u",
               comments="")
    data = ["--csv", str(csv), "--outputs", "y", "--inputs", "u"]
    assert main(["fit", "--csv", str(tmp_path), "--outputs", "y", "--inputs", "u", "--model", "arx"]) == 2
    assert "gpssm-np fit: error:" in capsys.readouterr().err
    model = str(tmp_path / "arx.npz")
    assert main(["fit", *data, "--model", "arx", "--out", model]) == 0
    assert main(["forecast", model, *data, "--steps", "5", "--out", str(csv)]) == 2
    assert "gpssm-np forecast: error:" in capsys.readouterr().err

    def no_fit(*args, **kwargs):
        raise AssertionError("the fit ran before --out was checked")

    monkeypatch.setattr(gpssm_module.GPSSM, "fit", no_fit)
    for out in (str(tmp_path), str(csv / "m.npz")):  # a folder; a path under a file
        assert main(["fit", *data, "--model", "odgpssm", "--max-steps", "2", "--out", out]) == 2
        assert "gpssm-np fit: error: --out:" in capsys.readouterr().err


def test_output_paths_are_checked_before_the_work(tmp_path, tanks_csv, capsys):
    """evaluate --out, forecast --out and reproduce --name/--out are refused before any evaluation, forecast or run
    (they failed with a bare OS error after it, and reproduce lost its runs)."""
    import gpssm_np as gp

    model = str(gp.save(gp.LGSSM(dim_x=2, dim_y=1, dim_u=1, method="subspace").fit(
        np.random.default_rng(0).normal(size=(200, 1)), np.random.default_rng(1).normal(size=(200, 1))),
        tmp_path / "m.npz"))
    data = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    (tmp_path / "a_folder").mkdir()
    assert main(["evaluate", model, *data, "--out", str(tmp_path / "a_folder")]) == 2
    printed = capsys.readouterr()
    assert "--out:" in printed.err and "is a folder" in printed.err and "RMSE" not in printed.out
    (tmp_path / "a_file").write_text("x")
    assert main(["forecast", model, *data, "--out", str(tmp_path / "a_file")]) == 2
    assert "--out:" in capsys.readouterr().err
    assert main(["forecast", model, *data, "--out", str(tmp_path / "a_file" / "fc")]) == 2  # a folder under a file
    assert f"{str(tmp_path / 'a_file')!r} is not a writable folder" in capsys.readouterr().err
    assert main(["reproduce", "table1", "--datasets", "actuator", "--models", "arx", "--seeds", "1", "--name",
                 "sub/x", "--out", str(tmp_path / "rep")]) == 2
    assert "--name: expected a file stem without a folder" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_fit_out_in_a_folder_that_cannot_be_written_is_refused_before_the_fit(tmp_path, tanks_csv, capsys,
                                                                               monkeypatch):
    import gpssm_np.archive as archive

    monkeypatch.setattr(archive.os, "access", lambda path, mode: False)  # the tests may run as root, who writes anywhere
    data = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    assert main(["fit", *data, "--model", "arx", "--out", str(tmp_path / "m.npz")]) == 2
    printed = capsys.readouterr()
    assert "--out: cannot write to the folder" in printed.err and "RMSE" not in printed.out


def test_fit_does_not_call_a_gradient_trained_model_closed_form(tmp_path, tanks_csv, capsys, monkeypatch):
    """A GP model none of whose training steps was kept was reported as fitted in "closed form", as the ARX is."""
    from gpssm_np.models.gpssm import GPSSM

    original = GPSSM.fit

    def no_step_kept(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.history_ = []  # as when the validation-block loop keeps step 0
        return self

    monkeypatch.setattr(GPSSM, "fit", no_step_kept)
    assert main(["fit", "--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow", "--model", "odgpssm",
                 "--settings", "authors", "--max-steps", "2", "--out", str(tmp_path / "m.npz")]) == 0
    printed = capsys.readouterr().out
    assert "closed form" not in printed and "no training step beat the starting parameters" in printed


def test_demo_names_a_bad_seed(tmp_path, capsys):
    assert main(["demo", "--quick", "--seed", "-1", "--out", str(tmp_path)]) == 2
    assert "seed: expected" in capsys.readouterr().err


def test_fit_says_which_options_a_closed_form_model_ignores(tmp_path, tanks_csv, capsys):
    assert main(["fit", "--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow", "--model", "arx", "--epochs",
                 "3", "--lr", "0.5", "--out", str(tmp_path / "m.npz")]) == 0
    assert "note: --epochs, --lr: the arx model (fitted in closed form or by EM) takes no" in capsys.readouterr().err
    # options it ignores are not checked against each other either
    assert main(["fit", "--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow", "--model", "lgssm", "--epochs",
                 "3", "--max-steps", "5", "--num-samples", "7", "--out", str(tmp_path / "m.npz")]) == 0
    printed = capsys.readouterr()
    assert "note: --epochs, --max-steps, --num-samples: the lgssm model (fitted in closed form or by EM)" in printed.err
    assert re.search(r"trained lgssm on .* \(\d+ EM iterations, final negative log-likelihood ", printed.out)


def test_an_option_of_the_other_data_source_is_refused_not_ignored(tmp_path, tanks_csv, capsys):
    """--train-fraction and --delimiter with --dataset, and --data-dir with --csv, did nothing without a word (a
    user asking for an 80/20 split got 50/50); a --csv that is no file names the option."""
    for extra in (["--train-fraction", "0.8"], ["--delimiter", ";"]):
        assert main(["fit", "--dataset", "gas_furnace", "--data-dir", DATA_DIR, *extra, "--model", "arx",
                     "--out", str(tmp_path / "g.npz")]) == 2
        assert f"{extra[0]}: options of a --csv file" in capsys.readouterr().err
    assert main(["fit", "--csv", tanks_csv, "--outputs", "level", "--data-dir", DATA_DIR, "--model", "arx",
                 "--out", str(tmp_path / "t.npz")]) == 2
    assert "--data-dir: the folder of the benchmarks" in capsys.readouterr().err
    for path, what in ((tmp_path / "nothing.csv", "no file"), (tmp_path, "a folder")):
        assert main(["fit", "--csv", str(path), "--outputs", "level", "--model", "arx"]) == 2
        assert f"--csv: {str(path)!r} is {what}" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.npz"))


def test_a_csv_split_and_delimiter_carry_through_fit_and_evaluate(tmp_path, tanks_csv, capsys):
    """A model fitted at --train-fraction 0.8 is scored on its own test part when evaluate is not told the fraction
    (it was split at 0.5 with a warning); --delimiter reads a file with another separator."""
    semi = tmp_path / "semi.csv"
    semi.write_text(open(tanks_csv).read().replace(",", ";"))
    csv = ["--csv", str(semi), "--outputs", "level", "--inputs", "inflow", "--delimiter", ";"]
    model = str(tmp_path / "arx.npz")
    assert main(["fit", *csv, "--train-fraction", "0.8", "--model", "arx", "--out", model]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of another split
        assert main(["evaluate", model, *csv, "--protocol", "causal", "--out", str(tmp_path / "a.json")]) == 0
        assert main(["evaluate", model, *csv, "--train-fraction", "0.8", "--protocol", "causal",
                     "--out", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert a["results"] == b["results"]
    with pytest.warns(UserWarning, match="fitted on the first 0.8 of the rows, the data are split at 0.5"):
        assert main(["evaluate", model, *csv, "--train-fraction", "0.5", "--protocol", "causal"]) == 0


def test_out_is_never_a_file_the_command_reads(tmp_path, tanks_csv, capsys):
    """fit --out onto the --csv file and evaluate --out onto the model file replaced the user's data or model."""
    data = tmp_path / "data.csv"
    data.write_text(open(tanks_csv).read())
    csv = ["--csv", str(data), "--outputs", "level", "--inputs", "inflow"]
    assert main(["fit", *csv, "--model", "arx", "--out", str(data)]) == 2
    assert "--out: " in capsys.readouterr().err and data.read_text() == open(tanks_csv).read()
    model = tmp_path / "m.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    saved = model.read_bytes()
    for target in (model, data):
        assert main(["evaluate", str(model), *csv, "--protocol", "causal", "--out", str(target)]) == 2
        assert "which this command reads" in capsys.readouterr().err
    assert model.read_bytes() == saved and data.read_text() == open(tanks_csv).read()


def test_commands_name_the_option_behind_an_error(tmp_path, tanks_csv, capsys, monkeypatch):
    """A missing model file, a demo --out that is a file, a bad demo --epochs (which made the folder first), the
    DSSM's --max-steps and an evaluate --out folder each said something that named no option, or the wrong file."""
    import gpssm_np.experiments.car_tracking as car_tracking

    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    for path, what in ((tmp_path / "none.npz", "no file"), (tmp_path, "a folder")):
        assert main(["evaluate", str(path), *csv]) == 2
        assert f"model_file: {str(path)!r} is {what}" in capsys.readouterr().err
    monkeypatch.setattr(car_tracking, "run", lambda **kw: pytest.fail("the demo ran before its options were checked"))
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("x")
    assert main(["demo", "--quick", "--out", str(a_file)]) == 2
    assert "--out: " in capsys.readouterr().err and a_file.read_text() == "x"
    assert main(["demo", "--quick", "--epochs", "0", "--out", str(tmp_path / "d0")]) == 2
    assert "--epochs: expected a positive integer" in capsys.readouterr().err and not (tmp_path / "d0").exists()
    assert main(["fit", *csv, "--model", "dssm", "--max-steps", "5", "--out", str(tmp_path / "d.npz")]) == 2
    assert "--max-steps: the dssm model trains by epochs (--epochs)" in capsys.readouterr().err
    model = tmp_path / "arx.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    (tmp_path / "res").mkdir()
    assert main(["evaluate", str(model), *csv, "--out", str(tmp_path / "res")]) == 2
    assert "results.json" in capsys.readouterr().err


def test_evaluate_writes_strict_json(tmp_path, tanks_csv, monkeypatch):
    """A score that is not finite was written as Infinity, which strict JSON readers refuse: it is null."""
    import gpssm_np.protocols as protocols

    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    model = tmp_path / "arx.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    real = protocols.evaluate

    def diverged(*args, **kwargs):
        result = real(*args, **kwargs)
        return dict(result, rmse=float("inf"), rmse_per_output=np.array([np.nan]))

    monkeypatch.setattr(protocols, "evaluate", diverged)
    out = tmp_path / "res.json"
    assert main(["evaluate", str(model), *csv, "--protocol", "causal", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Infinity" not in text and "NaN" not in text
    result = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the file"))["results"]["causal"]
    assert result["rmse"] is None and result["rmse_per_output"] == [None]
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was moved into place


def test_evaluate_prints_each_protocol_and_names_the_one_the_data_cannot_take(tmp_path, tanks_csv, capsys):
    """A test part of 5 steps cannot be simulated after reading its first 5 outputs: the causal score was lost
    with the simulate protocol's error, which named n_init, no option."""
    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow", "--train-fraction", "0.984"]
    model = tmp_path / "arx.npz"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), *csv, "--protocol", "causal", "simulate"]) == 2
    printed = capsys.readouterr()
    assert printed.out.startswith("causal ") and "--protocol simulate: n_init" in printed.err


def test_evaluate_prints_what_it_writes(tmp_path, tanks_csv, capsys):
    """Each protocol's line holds the numbers of the file, and "-" for those a protocol has none of (envi's one free
    run: no NLPD or coverage)."""
    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    model, out = tmp_path / "arx.npz", tmp_path / "eval.json"
    assert main(["fit", *csv, "--model", "arx", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), *csv, "--protocol", "causal", "envi", "--out", str(out)]) == 0
    causal, envi = capsys.readouterr().out.splitlines()[:2]
    results = json.loads(out.read_text())["results"]
    assert f"RMSE {results['causal']['rmse']:.4f} standardised" in causal
    assert causal.endswith(f"NLPD {results['causal']['nlpd']:.3f}  coverage95 {results['causal']['coverage95']:.2f}")
    assert results["envi"]["nlpd"] is None and envi.endswith("NLPD -  coverage95 -")


def test_out_never_overwrites_the_data_set_file(tmp_path, capsys):
    """``fit``/``evaluate --dataset NAME --out`` onto the data set's own file is refused, as onto a --csv file."""
    import shutil

    from gpssm_np.datasets.files import dataset_path

    source = dataset_path("gas_furnace", DATA_DIR)
    folder = tmp_path / "data" / os.path.relpath(os.path.dirname(source), DATA_DIR)
    folder.mkdir(parents=True)
    copy = folder / os.path.basename(source)
    shutil.copy(source, copy)
    before = copy.read_bytes()
    data = ["--dataset", "gas_furnace", "--data-dir", str(tmp_path / "data")]
    assert main(["fit", *data, "--model", "arx", "--out", str(copy)]) == 2
    assert "which this command reads" in capsys.readouterr().err
    assert main(["fit", *data, "--model", "arx", "--out", str(tmp_path / "m.npz")]) == 0
    assert main(["evaluate", str(tmp_path / "m.npz"), *data, "--out", str(copy)]) == 2
    assert "which this command reads" in capsys.readouterr().err and copy.read_bytes() == before


def test_a_failed_training_and_an_empty_delimiter_are_messages_not_tracebacks(tmp_path, tanks_csv, capsys):
    csv = ["--csv", tanks_csv, "--outputs", "level", "--inputs", "inflow"]
    code = main(["fit", *csv, "--model", "odgpssm", "--epochs", "1", "--lr", "1e10", "--out", str(tmp_path / "m.npz")])
    err = capsys.readouterr().err
    assert code == 1 and "training failed" in err and "Traceback" not in err
    assert main(["fit", *csv, "--delimiter", "", "--model", "arx", "--out", str(tmp_path / "a.npz")]) == 2
    assert "delimiter" in capsys.readouterr().err


def test_forecast_without_steps_takes_what_a_short_test_half_has(tmp_path, capsys):
    """--steps defaults to the protocols' 100, or to what the test half has left after --start."""
    import gpssm_np as gp

    model = gp.save(gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4), tmp_path / "m.npz")
    args = ["forecast", str(model), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--out", str(tmp_path / "fc")]
    assert main(args + ["--start", "140"]) == 0  # 8 steps left
    assert json.loads((tmp_path / "fc" / "forecast.json").read_text())["steps"] == 8


def test_the_forecast_file_and_figure_hold_the_window_they_name(tmp_path, monkeypatch, capsys):
    """forecast's JSON and figure against the package's own forecast of the same window: --start, --steps and
    --burn-in as given (each at its smallest), and by default the protocols' 100 steps after 100 past steps with 50
    samples; a model on the data set's standardised scale is drawn in the file's units."""
    import gpssm_np as gp
    from gpssm_np import plotting

    drawn = []
    original = plotting.plot_forecast_figure
    monkeypatch.setattr(plotting, "plot_forecast_figure",
                        lambda fc, *a, **k: drawn.append((fc.mean, k["y_true"])) or original(fc, *a, **k))
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    path = gp.save(model, tmp_path / "m.npz")
    ds = gp.datasets.load("gas_furnace", data_dir=DATA_DIR)
    y_all, u_all = np.concatenate([ds.y_train, ds.y_test]), np.concatenate([ds.u_train, ds.u_test])
    args = ["forecast", str(path), "--dataset", "gas_furnace", "--data-dir", DATA_DIR, "--out", str(tmp_path / "fc")]
    # burn-in None: more than the steps before the window, which are all read
    for options, start, steps, burn_in, samples in ((["--start", "5", "--steps", "1", "--burn-in", "1",
                                                      "--num-samples", "3"], 5, 1, 1, 3), ([], 0, 100, 100, 50),
                                                    (["--steps", "1", "--burn-in", "100000"], 0, 1, None, 50)):
        drawn.clear()
        assert main(args + options) == 0
        written = json.loads((tmp_path / "fc" / "forecast.json").read_text())
        g = len(ds.y_train) + start
        past = slice(0 if burn_in is None else g - burn_in, g)
        expected = model.forecast(u_all[g:g + steps], y_past=y_all[past], u_past=u_all[past], num_samples=samples,
                                  seed=0)
        assert (written["start"], written["steps"]) == (start, steps)
        np.testing.assert_allclose(written["standardised"]["truth"], ds.y_test[start:start + steps])
        np.testing.assert_allclose(written["standardised"]["mean"], expected.mean, rtol=1e-12)
        np.testing.assert_allclose(written["mean"], ds.to_original_y(expected.mean), rtol=1e-12)
        (mean, truth), = drawn
        np.testing.assert_allclose(mean, written["mean"], rtol=1e-12)
        np.testing.assert_allclose(truth, written["truth"], rtol=1e-12)


def test_forecast_draws_every_output(tmp_path, monkeypatch, capsys):
    import gpssm_np as gp
    from gpssm_np import plotting

    drawn = []
    original = plotting.plot_forecast_figure
    monkeypatch.setattr(plotting, "plot_forecast_figure", lambda fc, u_future, **k: drawn.append(
        (k["output"], u_future is not None, k["u_past"] is not None)) or original(fc, u_future, **k))
    y, u, _ = gp.datasets.three_tanks(200, seed=0)
    ds = gp.datasets.from_arrays(y, u, name="three")
    csv = tmp_path / "three.csv"
    np.savetxt(csv, np.hstack([u, y]), delimiter=",", header="u1,u2,y1,y2,y3", comments="")
    data = ["--csv", str(csv), "--outputs", "y1", "y2", "y3", "--inputs", "u1", "u2"]
    assert main(["fit", *data, "--model", "arx", "--out", str(tmp_path / "m.npz")]) == 0 and ds.y_train.shape[1] == 3
    assert main(["forecast", str(tmp_path / "m.npz"), *data, "--steps", "20", "--out", str(tmp_path / "fc")]) == 0
    assert drawn == [(0, False, False), (1, False, False), (2, True, True)]  # the inputs below the last output


def test_fit_says_how_far_a_gp_part_fell_short(tmp_path, capsys):
    """A floor kept over a GP part with a lower but not significantly lower fold error says so, with the t."""
    assert main(["fit", "--dataset", "actuator", "--data-dir", DATA_DIR, "--max-steps", "10",
                 "--out", str(tmp_path / "m.npz")]) == 0
    out = capsys.readouterr().out
    found = re.search(r"kept: the linear floor \(the GP part's best fold RMSE 0\.\d+ against the floor's (0\.\d+), "
                      r"lower by -?\d+\.\d\d standard errors of the paired test, more than 1 needed\)", out)
    assert found, out
    # the floor it was judged against: the exact floor's fold errors, not the record's step 0
    import gpssm_np as gp
    chosen = gp.load(tmp_path / "m.npz").selection_
    assert float(found[1]) == round(float(np.mean(chosen["floor_errors"])), 4)
    assert float(found[1]) != round(chosen["record"][0]["rmse"], 4)


def test_fit_says_what_it_kept_and_on_what_evidence():
    import gpssm_np as gp
    from gpssm_np.cli import fit_summary

    arx, lgssm = gp.ARX(dim_y=1, dim_u=1), gp.LGSSM(dim_x=2, dim_y=1, dim_u=1)
    assert fit_summary(arx) == "closed form"
    lgssm.history_ = [3.0, 2.75, 2.5]
    assert fit_summary(lgssm) == "3 EM iterations, final negative log-likelihood 2.5000"
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4)
    assert fit_summary(model) == ("no training step beat the starting parameters on the validation score; they were "
                                  "kept")
    model.history_ = [2.0, 1.5, 1.25]
    assert fit_summary(model) == "3 steps, final loss 1.2500"
    floor = {"kind": "arx", "orders": [2, 1]}
    model.selection_ = {"floor": floor}  # the epoch loop from the floor
    assert fit_summary(model) == "floor arx (2, 1), d_x = 2, 3 steps, final loss 1.2500"
    record = [{"step": 0, "rmse": 0.5}, {"step": 50, "rmse": 0.25}, {"step": 100, "rmse": 0.375}]
    default = {"floor": floor, "record": record, "floor_errors": [0.4, 0.6], "free_run": None}
    model.selection_ = dict(default, gp_part=True, step=50, t=2.5)
    assert fit_summary(model) == ("floor arx (2, 1), d_x = 2, kept: the GP part after 50 steps, fold RMSE 0.2500 "
                                  "against the floor's 0.5000")
    model.selection_ = dict(default, gp_part=False, step=0, t=0.75)
    assert fit_summary(model).endswith("kept: the linear floor (the GP part's best fold RMSE 0.2500 against the "
                                       "floor's 0.5000, lower by 0.75 standard errors of the paired test, more than 1 "
                                       "needed)")
    for t in (0.0, None):  # no step below step 0's, or too few evaluations for a test
        model.selection_ = dict(default, gp_part=False, step=0, t=t)
        assert fit_summary(model).endswith("kept: the linear floor (the GP part did not beat it on the folds, floor's "
                                           "fold RMSE 0.5000)")
    model.selection_ = dict(default, gp_part=False, step=0, t=2.5, free_run={
        "model": 0.9, "floor": 0.3, "passed": False, "far_field": {"model": {"run": 0.5, "filter": 0.5},
                                                                 "floor": {"run": 0.5, "filter": 0.5}}})
    assert fit_summary(model).endswith("kept: the linear floor (stage 4 dropped the refitted GP part: its free run "
                                       "of the training data, RMSE 0.9 against the floor's 0.3)")
    model.selection_ = dict(default, gp_part=False, step=0, t=0.5, free_run=dict(model.selection_["free_run"],
                                                                               passed=True))
    assert "lower by 0.50 standard errors" in fit_summary(model)  # a guard that passed is not named


def test_fit_names_the_guard_that_dropped_the_gp_part():
    """Stage 4 keeps one verdict for both guards; fit blamed the free run where only the far field had failed."""
    from gpssm_np.cli import _failed_guards
    stable = {"run": 0.9, "filter": 0.5}
    record = lambda model_error, far_model: {"free_run": {  # noqa: E731
        "model": model_error, "floor": 0.3, "passed": False, "far_field": {"model": far_model, "floor": stable}}}
    assert _failed_guards(record(0.29, {"run": 1.2, "filter": 0.5})).startswith("off the data its transition (spectral "
                                                                                  "radius 1.2)")
    assert _failed_guards(record(0.9, stable)) == "its free run of the training data, RMSE 0.9 against the floor's 0.3"
    assert _failed_guards(record(float("nan"), stable)).startswith("its free run")


@pytest.mark.parametrize("module", ["systems", "filters"])
def test_the_experiment_scripts_refuse_a_count_of_seeds_below_one(module, tmp_path, capsys):
    """``--seeds 0`` ran nothing and wrote empty tables (``gpssm-np reproduce`` refused it already)."""
    import importlib
    main_of = importlib.import_module(f"gpssm_np.experiments.{module}").main
    with pytest.raises(SystemExit) as exit_info:
        main_of(["--seeds", "0", "--out", str(tmp_path)])
    assert exit_info.value.code == 2 and "--seeds: expected a positive integer" in capsys.readouterr().err
