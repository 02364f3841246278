import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from gpssm_np import datasets
from gpssm_np.datasets import (
    DATASET_NAMES,
    DatasetNotFoundError,
    car_tracking,
    kink,
    kink_function,
    load,
    sequence_lists,
    window_starts,
    windows,
)
from tests.data_dir import DATA_DIR

SHARED_DATA = Path(DATA_DIR)
needs_data = pytest.mark.skipif(not (SHARED_DATA / "actuator" / "actuator.mat").is_file(),
                                reason=f"the benchmark data are not in {DATA_DIR}")

# name -> (N, training-half y mean, y sd, u mean, u sd), from shared/data/SOURCES.md
EXPECTED = {
    "actuator": (1024, 0.2003, 1.4219, -0.2441, 0.6218),
    "ballbeam": (1000, -0.0369, 0.0630, -0.0000, 0.0075),
    "drive": (500, 1.3250, 0.6865, 0.1600, 0.9871),
    "dryer": (1000, 4.8434, 0.8373, 4.9940, 1.4976),
    "gas_furnace": (296, 52.4162, 3.3590, 0.2393, 1.1564),
}


@pytest.fixture
def shared_data(monkeypatch):
    monkeypatch.setenv("GPSSM_NP_DATA", str(SHARED_DATA))
    return SHARED_DATA


@pytest.fixture
def empty_env(monkeypatch, tmp_path):
    """No GPSSM_NP_DATA and a private, empty cache folder."""
    monkeypatch.delenv("GPSSM_NP_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


@needs_data
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_shapes_split_and_statistics(name, shared_data):
    n, y_mean, y_sd, u_mean, u_sd = EXPECTED[name]
    ds = load(name)
    assert ds.name == name
    assert ds.y_raw.shape == ds.u_raw.shape == (n, 1)
    assert len(ds.y_names) == len(ds.u_names) == 1 and ds.y_names != ds.u_names  # SOURCES.md's channels
    assert ds.y_train.shape == ds.u_train.shape == (n // 2, 1)
    assert ds.y_test.shape == ds.u_test.shape == (n - n // 2, 1)
    for a in (ds.y_train, ds.u_train, ds.y_test, ds.u_test, ds.y_raw, ds.u_raw):
        assert a.dtype == np.float64 and not a.flags.writeable
    np.testing.assert_allclose(ds.y_mean, [y_mean], atol=5e-5)
    np.testing.assert_allclose(ds.y_std, [y_sd], atol=5e-5)
    np.testing.assert_allclose(ds.u_mean, [u_mean], atol=5e-5)
    np.testing.assert_allclose(ds.u_std, [u_sd], atol=5e-5)
    # training half standardised with population std (ddof=0)
    for a in (ds.y_train, ds.u_train):
        np.testing.assert_allclose(a.mean(axis=0), 0.0, atol=1e-12)
        np.testing.assert_allclose(a.std(axis=0), 1.0, rtol=1e-12)
    # test half uses the training statistics
    np.testing.assert_allclose(ds.y_test, (ds.y_raw[n // 2:] - ds.y_mean) / ds.y_std, rtol=1e-13)
    np.testing.assert_allclose(ds.u_test, (ds.u_raw[n // 2:] - ds.u_mean) / ds.u_std, rtol=1e-13)


@needs_data
def test_layouts_match_sources(shared_data):
    act = load("actuator")
    assert act.u_raw.min() == pytest.approx(-1.45457, abs=1e-5)
    assert act.y_raw.max() == pytest.approx(3.51739, abs=1e-5)
    drive = load("drive")
    assert set(np.unique(drive.u_raw)) == {-1.0, 1.0}
    assert drive.y_raw.min() >= 0.0
    dryer = load("dryer")
    np.testing.assert_allclose(np.unique(dryer.u_raw), [3.41, 6.41])
    gas = load("gas_furnace")
    assert gas.y_raw.min() == pytest.approx(45.6) and gas.y_raw.max() == pytest.approx(60.5)


@needs_data
def test_inverse_transform_round_trip(shared_data):
    ds = load("dryer")
    n_train = ds.y_train.shape[0]
    np.testing.assert_allclose(ds.to_original_y(ds.y_train), ds.y_raw[:n_train], rtol=1e-13)
    np.testing.assert_allclose(ds.to_original_y(ds.y_test), ds.y_raw[n_train:], rtol=1e-13)
    np.testing.assert_allclose(ds.to_original_u(ds.u_test), ds.u_raw[n_train:], rtol=1e-13)
    batch = np.stack([ds.y_train[:10], ds.y_train[10:20]])  # (2, 10, 1)
    assert ds.to_original_y(batch).shape == (2, 10, 1)
    with pytest.raises(ValueError, match="y_std_units"):
        ds.to_original_y(np.zeros((5, 2)))


def test_unknown_name_lists_valid_names():
    for bad in ("gasfurnace", "Actuator", "", None):
        with pytest.raises(ValueError) as err:
            load(bad)
        msg = str(err.value)
        assert "name" in msg and all(n in msg for n in DATASET_NAMES)


def test_missing_file_message(empty_env):
    with pytest.raises(DatasetNotFoundError) as err:
        load("drive")
    assert isinstance(err.value, FileNotFoundError)
    msg = str(err.value)
    cache = empty_env / "cache" / "gpssm_np" / "data"
    assert str(cache / "drive" / "drive.mat") in msg
    assert str(cache / "drive.mat") in msg
    assert "GPSSM_NP_DATA" in msg
    assert "github.com/zhenwendai/RGP" in msg
    with pytest.raises(DatasetNotFoundError, match="github.com/robotsorcerer/FARNN"):  # the multi-output records'
        load("winding")


def test_default_dir_without_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert datasets.default_data_dir() == tmp_path / ".cache" / "gpssm_np" / "data"


@needs_data
def test_data_dir_precedence(empty_env, monkeypatch, tmp_path):
    # env var pointing to an empty folder: fails, and says so
    monkeypatch.setenv("GPSSM_NP_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="GPSSM_NP_DATA"):
        load("gas_furnace")
    # the argument wins over the environment variable
    ds = load("gas_furnace", data_dir=SHARED_DATA)
    assert ds.y_raw.shape == (296, 1)
    # and the environment variable wins over the cache folder
    cache = tmp_path / "cache" / "gpssm_np" / "data" / "gas_furnace"
    cache.mkdir(parents=True)
    shutil.copy(SHARED_DATA / "gas_furnace" / "gas_furnace.csv", cache)
    with pytest.raises(FileNotFoundError):
        load("gas_furnace")
    monkeypatch.delenv("GPSSM_NP_DATA")
    assert load("gas_furnace").y_raw.shape == (296, 1)
    # an argument pointing nowhere is not rescued by the cache
    with pytest.raises(FileNotFoundError, match="data_dir argument"):
        load("gas_furnace", data_dir=tmp_path / "nowhere")


@needs_data
def test_flat_layout_and_corrupted_file(tmp_path):
    shutil.copy(SHARED_DATA / "dryer" / "dryer.dat", tmp_path / "dryer.dat")
    assert load("dryer", data_dir=str(tmp_path)).y_raw.shape == (1000, 1)
    bad = tmp_path / "dryer.dat"
    bad.write_bytes(bad.read_bytes().replace(b"3", b"4", 1))
    with pytest.raises(ValueError, match="corrupted"):
        load("dryer", data_dir=tmp_path)


def test_bad_data_dir_type():
    with pytest.raises(ValueError, match="data_dir"):
        load("dryer", data_dir=3)


# ---------------------------------------------------------------------------------------------------------------
# windows
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "T, seq_len, stride, expected",
    [
        (512, 50, 1, 463),  # actuator training windows (SOURCES.md)
        (250, 50, 1, 201),  # drive
        (148, 50, 1, 99),  # gas furnace
        (512, 100, 100, 6),  # actuator test windows: 0..400 plus tail at 412
        (500, 100, 100, 5),  # ballbeam / dryer: no tail
        (250, 100, 100, 3),  # drive: 0, 100, tail 150
        (148, 100, 100, 2),  # gas furnace: 0, tail 48
        (10, 10, 3, 1),
    ],
)
def test_window_counts(T, seq_len, stride, expected):
    y = np.arange(T, dtype=float)[:, None]
    yw, uw = windows(y, None, seq_len, stride)
    assert uw is None
    assert yw.shape == (expected, seq_len, 1)
    starts = window_starts(T, seq_len, stride)
    np.testing.assert_array_equal(yw[:, 0, 0], starts)
    assert starts[-1] == T - seq_len  # the last window always ends at the last sample
    np.testing.assert_array_equal(yw[:, :, 0], starts[:, None] + np.arange(seq_len))


def test_window_tail_positions():
    np.testing.assert_array_equal(window_starts(250, 100, 100), [0, 100, 150])
    np.testing.assert_array_equal(window_starts(148, 100, 100), [0, 48])
    np.testing.assert_array_equal(window_starts(500, 100, 100), [0, 100, 200, 300, 400])


def test_windows_with_inputs_and_lists(rng):
    y1, u1 = rng.standard_normal((30, 2)), rng.standard_normal((30, 3))
    y2, u2 = rng.standard_normal((12, 2)), rng.standard_normal((12, 3))
    yw, uw = windows(y1, u1, 10, 5)
    assert yw.shape == (5, 10, 2) and uw.shape == (5, 10, 3)
    np.testing.assert_array_equal(uw[2], u1[10:20])
    yl, ul = windows([y1, y2], [u1, u2], 10, 5)
    assert yl.shape == (5 + 2, 10, 2) and ul.shape == (7, 10, 3)  # second sequence: start 0 and tail at 2
    np.testing.assert_array_equal(yl[:5], yw)
    np.testing.assert_array_equal(yl[5], y2[:10])
    np.testing.assert_array_equal(ul[6], u2[2:12])
    yn, un = windows([y1, y2], None, 10, 5)
    assert un is None and yn.shape == (7, 10, 2)


def test_windows_errors(rng):
    y = rng.standard_normal((20, 1))
    with pytest.raises(ValueError, match="seq_len.*longer"):
        windows(y, None, 21)
    with pytest.raises(ValueError, match="seq_len.*longer"):
        windows([y, y[:5]], None, 10)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="seq_len"):
            windows(y, None, bad)
        with pytest.raises(ValueError, match="stride"):
            windows(y, None, 5, bad)
    with pytest.raises(ValueError, match="y"):
        windows(y[:, 0], None, 5)
    with pytest.raises(ValueError, match="u"):
        windows(y, y[:10], 5)
    with pytest.raises(ValueError, match="u"):
        windows([y, y], [y], 5)
    wide = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match="y: all sequences must have the same number of columns"):
        windows([y, wide], None, 5)
    with pytest.raises(ValueError, match="u: all sequences must have the same number of columns"):
        windows([y, y], [y, wide], 5)
    with pytest.raises(ValueError, match=r"y\[1\]: "):  # a list's sequence is named by its index
        windows([y, y[:, 0]], None, 5)
    with pytest.raises(ValueError, match="y"):
        windows([], None, 5)


def test_nested_lists_of_numbers_are_one_sequence(rng):
    """y.tolist() of a (T, d) array is one sequence, not T sequences of one row; a list of arrays stays a list."""
    y, u = rng.standard_normal((30, 2)), rng.standard_normal((30, 1))
    ys, us = sequence_lists(y.tolist(), u.tolist())
    assert len(ys) == len(us) == 1
    np.testing.assert_array_equal(windows(y.tolist(), u.tolist(), 10, 5)[0], windows(y, u, 10, 5)[0])
    assert len(sequence_lists(y[:, 0].tolist(), None)[0]) == 1  # a list of numbers: one 1-D sequence
    assert len(sequence_lists([y, y[:12]], [u, u[:12]])[0]) == 2
    assert len(sequence_lists([y.tolist(), y[:12].tolist()], None)[0]) == 2  # a list of nested lists: two
    with pytest.raises(ValueError, match="a list of 1-D entries, was read as one sequence of rows"):
        sequence_lists([y[:, 0], y[:, 1]], [u, u])  # two 1-D outputs: ambiguous with rows, so one sequence
    with pytest.raises(ValueError, match=r"^u: expected 2 input sequence\(s\) to match y, got 3$"):  # no hint
        sequence_lists([y, y[:12]], [u, u, u])
    with pytest.raises(ValueError, match=r"^u\[1\]: "):  # the input sequence named by its index too
        windows([y, y[:12]], [u, np.zeros((12, 1, 1))], 5)
    with pytest.raises(ValueError, match="^u: sequence 1 has 11 steps but y's has 12$"):
        windows([y, y[:12]], [u, u[:11]], 5)


# ---------------------------------------------------------------------------------------------------------------
# your own data
# ---------------------------------------------------------------------------------------------------------------
@needs_data
def test_from_arrays_returns_what_load_returns(shared_data):
    ds = load("gas_furnace")
    mine = datasets.from_arrays(ds.y_raw, ds.u_raw, name="gas_furnace")
    for field in ("y_train", "u_train", "y_test", "u_test", "y_mean", "y_std", "u_mean", "u_std", "y_raw", "u_raw"):
        np.testing.assert_array_equal(getattr(mine, field), getattr(ds, field), err_msg=field)
        assert not getattr(mine, field).flags.writeable
    assert mine.name == "gas_furnace" and mine.y_names is None and ds.y_names == ("CO2 concentration",)


def tanks_table(T=200):
    y, u, _ = datasets.cascaded_tanks(T, seed=1)
    return np.hstack([np.arange(T)[:, None], u, y]), y, u


@pytest.mark.parametrize("header, comments", [("t,flow,level", ""), ("t,flow,level", "# "), (" t , flow , level", "")])
def test_from_csv_reads_named_columns_in_the_order_given(tmp_path, header, comments):
    table, y, u = tanks_table()
    path = tmp_path / "tanks.csv"
    np.savetxt(path, table, delimiter=",", header=header, comments=comments)
    ds = datasets.from_csv(path, outputs=["level", "t"], inputs="flow", train_fraction=0.6)
    assert ds.name == "tanks" and ds.y_names == ("level", "t") and ds.u_names == ("flow",)
    np.testing.assert_allclose(ds.y_raw, np.hstack([y, table[:, :1]]), rtol=1e-15)
    assert ds.y_train.shape == (120, 2) and ds.u_test.shape == (80, 1)
    ref = datasets.from_arrays(ds.y_raw, ds.u_raw, train_fraction=0.6, name="tanks")
    np.testing.assert_array_equal(ds.y_test, ref.y_test)
    np.testing.assert_allclose(ds.y_train.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(ds.to_original_y(ds.y_test), ds.y_raw[120:], rtol=1e-12)


def test_from_csv_reads_the_header_and_the_rows_alike(tmp_path):
    """Quoted fields (a text column holding the delimiter, quoted numbers) and a byte-order mark are read as the
    csv module reads them, header and rows alike; a row with a field more or fewer than the header is an error naming
    its line (a row with an extra field was taken)."""
    path = tmp_path / "plant.csv"
    rows = [f'"note {k}, ok","{0.1 * k:.1f}",{k}' for k in range(8)]
    path.write_text("\ufeffnote,y,u\n" + "\n".join(rows) + "\n", encoding="utf-8")
    ds = datasets.from_csv(path, outputs="y", inputs="u")
    np.testing.assert_allclose(ds.y_raw[:, 0], 0.1 * np.arange(8))
    np.testing.assert_array_equal(ds.u_raw[:, 0], np.arange(8))
    path.write_text("y,u\n" + "\n".join(f"{k},{k % 3}" for k in range(8)) + "\n1.0,2.0,3.0\n")
    with pytest.raises(ValueError, match="path: line 10 of .* has 3 fields, the header 2"):
        datasets.from_csv(path, outputs="y", inputs="u")
    path.write_text("y,u,\n" + "\n".join(f"{k},{k % 3}," for k in range(8)) + "\n\n# a comment\n")
    assert datasets.from_csv(path, outputs="y", inputs="u").y_raw.shape == (8, 1)  # trailing empty fields


def test_simulate_linear_checks_its_arguments():
    system = datasets.random_linear_system(dim_x=2, dim_y=1, dim_u=1, seed=0)
    with pytest.raises(ValueError, match="T: expected a positive integer"):
        datasets.simulate_linear(system, -3)
    with pytest.raises(ValueError, match=r"u: expected shape \(10, 1\)"):
        datasets.simulate_linear(system, 10, u=np.zeros((9, 1)))
    y, u, x = datasets.simulate_linear(system, 10, u=np.ones(10))  # one input as a 1-D array
    assert y.shape == (10, 1) and u.shape == (10, 1) and x.shape == (11, 2)


def test_a_series_without_inputs_fits_and_forecasts(rng):
    y = np.cumsum(rng.normal(size=(120, 1)), axis=0) * 0.1 + np.sin(np.arange(120) / 5)[:, None]
    ds = datasets.from_arrays(y.tolist())
    assert ds.u_train.shape == (60, 0) and ds.u_mean.shape == (0,) and ds.name == "mine"
    empty = datasets.from_arrays(y, np.zeros((120, 0)))  # no input columns: the same as u=None
    np.testing.assert_array_equal(empty.y_train, ds.y_train)
    assert empty.u_train.shape == (60, 0)
    with pytest.raises(ValueError, match="u: expected 120 rows to match y, got 119"):
        datasets.from_arrays(y, np.zeros((119, 0)))
    from gpssm_np import ARX

    model = ARX(na=2, dim_u=0).fit(ds.y_train, ds.u_train)
    assert model.forecast(ds.u_test[:10], y_past=ds.y_train, u_past=ds.u_train).mean.shape == (10, 1)


def test_own_data_errors_name_the_argument(tmp_path, rng):
    table, y, u = tanks_table(60)
    path = tmp_path / "plant.csv"
    np.savetxt(path, table, delimiter=",", header="t,flow,level", comments="")
    with pytest.raises(ValueError, match=r"outputs: no column 'lvl' in .*plant.csv; its columns are \['t', 'flow', "
                                         r"'level'\]"):
        datasets.from_csv(path, outputs=["lvl"], inputs=["flow"])
    with pytest.raises(ValueError, match="inputs: no column 'Flow'"):
        datasets.from_csv(path, outputs="level", inputs="Flow")
    with pytest.raises(ValueError, match="inputs: the columns \\['level'\\] are also outputs"):
        datasets.from_csv(path, outputs="level", inputs=["flow", "level"])
    lines = path.read_text().splitlines()
    lines[3] = "2,,0.5"  # line 4: an empty cell
    lines[5] = "4,abc,0.5"  # line 6: not a number
    lines.insert(2, "# a comment line")  # the lines named are the file's: 5 and 7
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"inputs: column 'flow' .* cells on its lines \[5, 7\]; remove"):
        datasets.from_csv(path, outputs="level", inputs="flow")
    assert datasets.from_csv(path, outputs="level").u_train.shape == (30, 0)  # the damaged column is not read
    with pytest.raises(FileNotFoundError):
        datasets.from_csv(tmp_path / "missing.csv", outputs="level")
    y_nan = y.copy()
    y_nan[[7, 9]] = np.nan
    with pytest.raises(ValueError, match=r"y: NaN or inf in rows \[7, 9\]"):
        datasets.from_arrays(y_nan, u)
    for fraction in (0, 1, 1.5, -0.1, True, "half"):
        with pytest.raises(ValueError, match="train_fraction"):
            datasets.from_arrays(y, u, train_fraction=fraction)
    y100, u100 = rng.normal(size=(100, 1)), rng.normal(size=(100, 1))
    for fraction, rows in ((0.29, 29), (0.57, 57), (0.5, 50), (0.705, 70)):  # 0.29 x 100 is 28.999999999999996
        assert len(datasets.from_arrays(y100, u100, train_fraction=fraction).y_train) == rows
    with pytest.raises(ValueError, match="y: 3 rows .* each part needs at least 2"):
        datasets.from_arrays(y[:3], u[:3])
    with pytest.raises(ValueError, match="u: expected 60 rows to match y, got 59"):
        datasets.from_arrays(y, u[:59])
    with pytest.raises(ValueError, match="u: column 0 is constant in the training part, .*; leave it out of the "
                                         "inputs"):
        datasets.from_arrays(y, np.ones_like(u))
    with pytest.raises(ValueError, match="from_csv"):
        datasets.load("pend.csv")


def test_own_arrays_are_refused_for_each_fault_alone(rng):
    """The shape check (a 3-D or an empty array, each alone), the name (not text, or empty), the rows each part needs
    (two training rows are enough, one test row is not), and the list of bad rows (five in full, six cut short)."""
    y, u = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    for bad in (np.zeros((60, 1, 1)), np.zeros((0, 1))):
        with pytest.raises(ValueError, match=re.escape(f"y: expected a non-empty array of shape (N, d) or (N,), got "
                                                       f"shape {bad.shape}")):
            datasets.from_arrays(bad)
    with pytest.raises(ValueError, match="y: 1 rows split at train_fraction=0.5 leave 0 training and 1 test rows"):
        datasets.from_arrays(y[:1])
    for name in (5, ""):
        with pytest.raises(ValueError, match="name: expected a non-empty str"):
            datasets.from_arrays(y, u, name=name)
    assert len(datasets.from_arrays(y[:4], u[:4]).y_train) == 2
    assert datasets.from_arrays(y[:, 0], u[:, 0]).y_train.shape == (30, 1)  # one column may come as (N,)
    with pytest.raises(ValueError, match="leave 9 training and 1 test rows; each part needs at least 2"):
        datasets.from_arrays(y[:10], u[:10], train_fraction=0.9)
    y_bad = y.copy()
    y_bad[:5] = np.nan
    with pytest.raises(ValueError, match=re.escape("y: NaN or inf in rows [0, 1, 2, 3, 4]; remove")):
        datasets.from_arrays(y_bad, u)
    y_bad[5] = np.inf
    with pytest.raises(ValueError, match=re.escape("y: NaN or inf in rows [0, 1, 2, 3, 4, ...] (6 rows); remove")):
        datasets.from_arrays(y_bad, u)


# ---------------------------------------------------------------------------------------------------------------
# synthetic data
# ---------------------------------------------------------------------------------------------------------------
def test_car_tracking_shapes_and_model():
    data = car_tracking()
    assert data.x.shape == (121, 4) and data.y.shape == (120, 2)
    assert data.u is None and data.dt == 0.1
    np.testing.assert_array_equal(data.x[0], [0.0, 0.0, 1.0, -1.0])
    np.testing.assert_array_equal(data.x0, data.x[0])
    dt = 0.1
    F = np.array([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]])
    Q = np.array([[dt**3 / 3, 0, dt**2 / 2, 0], [0, dt**3 / 3, 0, dt**2 / 2],
                  [dt**2 / 2, 0, dt, 0], [0, dt**2 / 2, 0, dt]])
    np.testing.assert_allclose(data.F, F, rtol=1e-15)
    np.testing.assert_allclose(data.Q, Q, rtol=1e-15)
    np.testing.assert_array_equal(data.H, np.hstack([np.eye(2), np.zeros((2, 2))]))
    np.testing.assert_allclose(data.R, 0.25 * np.eye(2))
    np.testing.assert_array_equal(car_tracking(seed=3).y, car_tracking(seed=3).y)
    assert not np.array_equal(car_tracking(seed=3).y, car_tracking(seed=4).y)
    with pytest.raises(ValueError, match="T"):
        car_tracking(T=0)
    with pytest.raises(ValueError, match="dt"):
        car_tracking(dt=0.0)
    with pytest.raises(ValueError, match="obs_std"):
        car_tracking(obs_std=-1.0)


def test_car_tracking_noise_covariances():
    data = car_tracking(T=50_000, seed=1, q=2.0, obs_std=0.3)
    w = data.x[1:] - data.x[:-1] @ data.F.T
    r = data.y - data.x[1:] @ data.H.T
    scale = np.sqrt(np.outer(np.diag(data.Q), np.diag(data.Q)))
    # sample covariance vs Q, elementwise relative to sqrt(Q_ii Q_jj) (sampling error ~ 1 / sqrt(T) = 0.45 %)
    assert np.max(np.abs(np.cov(w.T) - data.Q) / scale) < 0.03
    np.testing.assert_allclose(w.mean(axis=0) / np.sqrt(np.diag(data.Q)), 0.0, atol=0.03)
    np.testing.assert_allclose(np.cov(r.T), 0.09 * np.eye(2), atol=0.09 * 0.03)


def test_kink_shapes_determinism_and_function():
    data = kink(T=200, seed=5)
    assert data.x.shape == (201, 1) and data.y.shape == (200, 1)
    assert data.x[0, 0] == data.x0 == 0.5
    assert data.u is None
    again = kink(T=200, seed=5)
    np.testing.assert_array_equal(data.x, again.x)
    np.testing.assert_array_equal(data.y, again.y)
    assert not np.array_equal(data.y, kink(T=200, seed=6).y)
    # the function against its textbook form, and availability on the result
    xs = np.linspace(-4, 3, 101)
    np.testing.assert_allclose(kink_function(xs), 0.8 + (xs + 0.2) * (1 - 5 / (1 + np.exp(-2 * xs))), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_array_equal(data.kink_function(xs), kink_function(xs))
    assert np.isfinite(kink_function(np.array([-1e4, 1e4]))).all()
    # noise-free run follows f exactly; the default run stays bounded
    clean = kink(T=50, seed=0, process_noise_std=0.0, obs_noise_std=0.0)
    np.testing.assert_allclose(clean.x[1:, 0], kink_function(clean.x[:-1, 0]), rtol=1e-15)
    np.testing.assert_array_equal(clean.y, clean.x[1:])
    assert np.all(np.abs(kink(T=2000).x) < 5)
    with pytest.raises(ValueError, match="process_noise_std"):
        kink(process_noise_std=-0.1)
    with pytest.raises(ValueError, match="x0"):
        kink(x0=np.nan)


@needs_data
@pytest.mark.parametrize("name,n,d_u,d_y,first_u,first_y", [
    ("cd_player_arm", 2048, 2, 2, [5.31e-2, -3.13e-2], [4.95e-2, 3.42e-2]),
    ("winding", 2500, 5, 2, [-1.2025481, 0.80914798, 1.1288873, -1.0502806, -1.1789349], [0.54410528, -0.51069]),
    ("steamgen", 9600, 4, 4, [0.72356750, 0.69162867, -2.2830564, 1.7982753e-2],  # column 0 is time
     [320.08239, 2.5067739, 3.2701300e-2, 9.3029701]),
    ("dryer2", 867, 3, 3, [-5.9414955, 18.486037, 214.90999], [-3.7847645, -2.5363727, -5.9663389e-2]),
])
def test_multi_output_plants_load_with_named_channels(name, n, d_u, d_y, first_u, first_y, shared_data):
    ds = load(name)
    assert name in DATASET_NAMES
    assert ds.u_raw.shape == (n, d_u) and ds.y_raw.shape == (n, d_y)
    assert len(ds.u_names) == d_u and len(ds.y_names) == d_y
    # the column layout of SOURCES.md: inputs first, outputs after
    np.testing.assert_allclose(ds.u_raw[0], first_u, rtol=1e-7)
    np.testing.assert_allclose(ds.y_raw[0], first_y, rtol=1e-7)
    np.testing.assert_allclose(ds.y_train.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(ds.u_train.std(axis=0), 1.0, rtol=1e-10)
    assert ds.y_train.shape == (n // 2, d_y)


def test_quadruple_tanks_rests_at_johanssons_operating_point_and_couples_the_outputs():
    # noise-free, both pumps at 3 V: the levels stay at the steady state, which is Johansson's (2000) P-
    # (12.4, 12.7, 1.8, 1.4 cm) up to the rounding of his constants
    y, u, h = datasets.quadruple_tanks(200, seed=0, process_std=0.0, obs_std=0.0, input_range=(3.0, 3.0 + 1e-9))
    np.testing.assert_allclose(h[-1], h[0], rtol=1e-6)
    np.testing.assert_allclose(h[0], [12.4, 12.7, 1.8, 1.4], rtol=0.1)
    np.testing.assert_allclose(y, 0.5 * h[1:, :2], rtol=1e-12)
    assert y.shape == (200, 2) and u.shape == (200, 2) and h.shape == (201, 4)
    # pump 2 alone raises the level of lower tank 1, through upper tank 3 (the cross coupling), and tank 2 directly
    step = np.tile([3.0, 4.0], (200, 1))
    step[0] = 3.0
    _, _, h_step = datasets.quadruple_tanks(200, process_std=0.0, obs_std=0.0, u=step)
    np.testing.assert_allclose(h_step[0], h[0], rtol=1e-6)  # the levels start at the steady state of the first inputs
    assert h_step[-1, 0] > h[0, 0] + 1.0 and h_step[-1, 1] > h[0, 1] + 1.0 and h_step[-1, 3] == pytest.approx(h[0, 3])


def test_quadruple_tanks_rejects_a_bad_input_range():
    for bad in ((2.0, 1.0), (1.0, 1.0), (-0.5, 1.0), (1.0, np.inf)):
        with pytest.raises(ValueError, match="input_range: expected 0 <= low < high"):
            datasets.quadruple_tanks(10, input_range=bad)
    assert datasets.quadruple_tanks(10, input_range=(0.0, 1.0))[1].min() >= 0.0
    with pytest.raises(ValueError, match="u: expected"):
        datasets.quadruple_tanks(10, u=np.ones((10, 1)))
    with pytest.raises(ValueError, match="u: expected pump voltages >= 0"):
        datasets.quadruple_tanks(10, u=np.full((10, 2), -1e-3))
    off = np.ones((10, 2))
    off[:3] = 0.0  # pumps off are voltages of 0
    np.testing.assert_array_equal(datasets.quadruple_tanks(10, u=off)[1], off)


@pytest.mark.parametrize("structure", ["hammerstein", "wiener"])
def test_block_oriented_is_its_nonlinearity_in_series_with_the_resonance(structure):
    # noise-free, the output is the static map and the linear system as scipy simulates it (d = C g, c = C F: the
    # package's x_t = F x_{t-1} + g v_t, y_t = x_{t,1} in dlsim's convention with state x_{t-1})
    from scipy.signal import dlsim

    y, u, x = datasets.block_oriented(300, seed=2, structure=structure, process_std=0.0, obs_std=0.0)
    F = 0.9 * np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    g = np.array([[1.0], [0.5]])
    v = np.tanh(2 * u) if structure == "hammerstein" else u
    _, linear, _ = dlsim((F, g, F[:1], g[:1], 1), v)
    np.testing.assert_allclose(y, linear if structure == "hammerstein" else np.tanh(0.8 * linear), atol=1e-10)
    assert u.min() < -0.5 * np.abs(u).max() < 0.5 * u.max()  # both signs of the input are visited


@pytest.mark.parametrize("restoring, balance", [("pendulum", lambda p: 9.81 * np.sin(p)),
                                                ("duffing", lambda p: p + 2 * p ** 3)])
def test_forced_oscillator_settles_where_the_restoring_force_balances_the_input(restoring, balance):
    gain = {"pendulum": 3.0, "duffing": 2.0}[restoring]
    y, u, states = datasets.forced_oscillator(2000, seed=5, restoring=restoring, process_std=0.0, obs_std=0.0,
                                              hold=2000)
    assert np.all(u == u[0]) and abs(u[0, 0]) > 0.1
    assert balance(y[-1, 0]) == pytest.approx(gain * u[0, 0], rel=1e-6)
    assert abs(states[-1, 1]) < 1e-6 and np.ptp(y[:100]) > 0.1  # at rest at the end, moving at the start


def test_nonlinear_simulators_reject_unknown_kinds():
    with pytest.raises(ValueError, match="structure"):
        datasets.block_oriented(10, structure="lure")
    with pytest.raises(ValueError, match="restoring"):
        datasets.forced_oscillator(10, restoring="spring")


@pytest.mark.parametrize("call, match", [
    (lambda: datasets.cascaded_tanks(0), "T: expected a positive integer"),
    (lambda: datasets.cascaded_tanks(2.5), "T: expected a positive integer"),
    (lambda: datasets.random_linear_system(dim_x=0), "dim_x: expected a positive integer"),
    (lambda: datasets.random_linear_system(noise_std=0.0), "noise_std: expected a positive"),
    (lambda: datasets.quadruple_tanks(10, hold=0), "hold: expected a positive integer"),
    (lambda: datasets.two_mass(10, hold=0), "hold: expected a positive integer"),
    (lambda: datasets.block_oriented(10, seed=-1), "seed: expected a non-negative integer"),
    (lambda: datasets.cascaded_tanks(10, obs_std=-1), "obs_std: expected a non-negative"),
    (lambda: datasets.cascaded_tanks(10, dt=0), "dt: expected a positive"),
    (lambda: datasets.stirred_tank_reactor(10, process_std=(0.001, -0.05)), "process_std: expected a non-negative"),
])
def test_simulators_name_a_bad_size(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_stirred_tank_reactor_starts_at_the_textbook_steady_state_and_its_gain_grows_with_temperature():
    # noise-free, T_c = 300 K and C_f = 1: the reactor stays at the literature's operating point (C = 0.8773
    # kmol/m^3, T_r = 324.5 K), where both balances vanish
    def steady(coolant):
        _, u, states = datasets.stirred_tank_reactor(200, process_std=0.0, obs_std=0.0, hold=200,
                                                     coolant_range=(coolant, coolant + 1e-9),
                                                     feed_range=(1.0, 1.0 + 1e-9))
        np.testing.assert_allclose(states[-1], states[0], rtol=1e-6)
        return states[0]

    c, temp = steady(300.0)
    np.testing.assert_allclose([c, temp], [0.8773, 324.5], rtol=2e-4)
    rate = 7.2e10 * np.exp(-8750.0 / temp)
    assert c == pytest.approx(1.0 / (1.0 + rate), rel=1e-6)
    assert (350.0 - temp) + 209.2 * rate * c - 2.092 * (temp - 300.0) == pytest.approx(0.0, abs=1e-4)
    low, high = steady(296.0)[1], steady(301.0)[1]
    assert high - temp > 1.2 * (temp - low) / 4 > 0  # the coolant's gain (K per K) grows with the temperature
    y, u, states = datasets.stirred_tank_reactor(300, seed=1)
    assert y.shape == (300, 2) and states.shape == (301, 2)
    assert 295.0 <= u[:, 0].min() < u[:, 0].max() <= 301.0 and 0.9 <= u[:, 1].min() < u[:, 1].max() <= 1.0
    assert states[:, 1].max() < 340.0  # not ignited
    with pytest.raises(ValueError, match="^coolant_range: expected 0 <= low < high"):
        datasets.stirred_tank_reactor(10, coolant_range=(300.0, 290.0))
    with pytest.raises(ValueError, match="^feed_range: expected two numbers"):
        datasets.stirred_tank_reactor(10, feed_range=1.0)


def test_two_mass_rests_where_the_force_is_balanced_and_the_second_mass_follows():
    y, u, states = datasets.two_mass(3000, seed=3, process_std=0.0, obs_std=0.0, hold=3000)
    assert np.all(u == u[0]) and abs(u[0, 0]) > 0.1
    np.testing.assert_allclose(states[-1], [u[0, 0], 0.0, u[0, 0], 0.0], atol=1e-6)  # the spring unstretched
    np.testing.assert_allclose(y, states[1:, [0, 2]], rtol=1e-12)
    assert np.ptp(y[:200, 1]) > 0.5 * abs(u[0, 0])  # the force reaches the second mass through the spring


def test_three_tanks_settles_at_the_levels_where_the_flows_balance():
    # noise-free, both pumps at q: q20 = 2 q out of tank 2, q32 = q13 = q through the pipes (THREE_TANKS constants)
    q = 0.3e-4
    y, u, h = datasets.three_tanks(3000, seed=0, process_std=0.0, obs_std=0.0, input_range=(q, q * (1 + 1e-9)),
                                   hold=3000)
    root = 5e-5 * np.sqrt(2 * 9.81)
    h2 = (2 * q / (0.6 * root)) ** 2
    h3 = h2 + (q / (0.45 * root)) ** 2
    h1 = h3 + (q / (0.5 * root)) ** 2
    np.testing.assert_allclose(h[-1], [h1, h2, h3], rtol=1e-4)
    np.testing.assert_allclose(y, h[1:], rtol=1e-12)
    np.testing.assert_allclose(u, 0.3, rtol=1e-6)  # in 1e-4 m^3 / s
    with pytest.raises(ValueError, match="input_range"):
        datasets.three_tanks(10, input_range=(1.0, 0.5))


def test_from_csv_names_what_it_cannot_read(tmp_path):
    """Blank lines before the header are skipped (the message called such a file empty); text that is not UTF-8, a
    field beyond the csv module's limit and a delimiter that is not one character are ValueErrors naming the path or
    the argument (they were UnicodeDecodeError, _csv.Error and TypeError)."""
    rows = "\n".join(f"{i},{0.5 * i}" for i in range(20))
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\ny,u\n" + rows + "\n")
    assert len(datasets.from_csv(blank, outputs="y", inputs="u").y_train) == 10
    blank.write_text("\n\ny,u\n" + rows + "\n1,2,3\n")
    with pytest.raises(ValueError, match="^path: line 24 of .* has 3 fields"):
        datasets.from_csv(blank, outputs="y", inputs="u")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("temp\u00e9,u\n".encode("latin-1") + rows.encode())
    with pytest.raises(ValueError, match="^path: .*latin.csv is not UTF-8 text"):
        datasets.from_csv(latin, outputs="y", inputs="u")
    big = tmp_path / "big.csv"
    big.write_text("y,u,note\n" + "\n".join(f"{i},{i},{'x' * 200000 if i == 3 else 'a'}" for i in range(20)))
    with pytest.raises(ValueError, match="^path: .*big.csv cannot be read as CSV"):
        datasets.from_csv(big, outputs="y", inputs="u")
    for delimiter in ("", ";;", None, '"'):
        with pytest.raises(ValueError, match="^delimiter: expected one character"):
            datasets.from_csv(blank, outputs="y", inputs="u", delimiter=delimiter)


def test_a_data_set_shows_its_parts_and_maps_any_shape_of_outputs_back(rng):
    """The repr names the parts and dimensions (not the arrays); ``to_original_y`` takes one step's outputs (d_y,)
    as any other leading shape, and refuses a scalar by its argument's name."""
    ds = datasets.from_arrays(rng.normal(size=(40, 2)), rng.normal(size=(40, 1)), name="plant")
    assert repr(ds) == "Dataset(name='plant', T_train=20, T_test=20, d_y=2, d_u=1)"
    np.testing.assert_allclose(ds.to_original_y(np.zeros(2)), ds.y_mean)
    np.testing.assert_allclose(ds.to_original_y(np.ones((3, 2))), np.tile(ds.y_mean + ds.y_std, (3, 1)))
    with pytest.raises(ValueError, match=re.escape("y_std_units: expected an array whose last axis has length 2, "
                                                   "got shape ()")):
        ds.to_original_y(0.0)


def test_from_csv_drops_empty_trailing_fields_and_refuses_a_name_given_twice(tmp_path):
    """A row's empty fields after the last column are dropped (as a spreadsheet's trailing commas); a column named
    twice, in the header or in the arguments, and a header without rows are refused."""
    path = tmp_path / "plant.csv"
    path.write_text("y,u,w\n" + "\n".join(f"{i},{0.5 * i},{i % 3}," + "," * (i % 2) for i in range(20)) + "\n")
    ds = datasets.from_csv(path, outputs="y", inputs=["u", "w"])
    assert ds.u_train.shape == (10, 2)
    path.write_text("y,u,y\n" + "\n".join(f"{i},{i},{i}" for i in range(20)) + "\n")
    with pytest.raises(ValueError, match=re.escape("path: the header of " + str(path) + " repeats the column names "
                                                   "['y']")):
        datasets.from_csv(path, outputs="y")
    path.write_text("y,u\n" + "\n".join(f"{i},{i}" for i in range(20)) + "\n")
    with pytest.raises(ValueError, match=re.escape("outputs: the columns ['y'] are named more than once")):
        datasets.from_csv(path, outputs=["y", "y"])
    path.write_text("y,u\n")
    with pytest.raises(ValueError, match=re.escape("has a header and no data rows; expected at least 4 rows (2 for the "
                                                   "training part and 2 for the test part)")):
        datasets.from_csv(path, outputs="y")


def test_from_csv_refuses_digit_separators_and_other_digits(tmp_path):
    """Python's float reads "1_000" as 1000 and other scripts' digits as numbers; a CSV cell with an underscore (a
    thousands separator of some exports, or a label) or a character beyond ASCII is not a number of the file and is
    named like any other non-numeric cell."""
    path = tmp_path / "sep.csv"
    odd = {7: "1_000", 11: "\u0661", 3: "\u00a03.0\u00a0"}  # a digit separator, the Arabic-Indic digit one; a
    # number between no-break spaces (some exports pad so) is read
    path.write_text("y,u\n" + "\n".join(f"{odd.get(i, i)},{0.5 * i}" for i in range(20)) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^outputs: column 'y' of .* non-numeric, NaN or inf cells on its lines "
                                         r"\[9, 13\]"):
        datasets.from_csv(path, outputs="y", inputs="u")


def test_simulators_name_a_bad_argument():
    """Each was an error of numpy's or Python's naming another argument or none, or NaN outputs."""
    with pytest.raises(ValueError, match="^amplitude: expected a positive finite number"):
        datasets.two_mass(10, amplitude=-1.0)
    with pytest.raises(ValueError, match="^u: .*NaN"):
        datasets.quadruple_tanks(10, u=np.full((10, 2), np.nan))
    with pytest.raises(ValueError, match="^system: expected a dict with F, G, H, Q and R"):
        datasets.simulate_linear("x", 10)
    with pytest.raises(ValueError, match="^input_range: expected two numbers"):
        datasets.quadruple_tanks(10, input_range=("a", 2.0))


#: (sum y, sum y^2, sum u, last y) of every simulated plant's 1000-step record of the experiments
#: (``experiments.systems.make_system``) and (sum y, sum y^2, last y) of the car-tracking and kink records (seed 0).
SIMULATED_RECORDS = {
    "lin_2x1x1_slow": (-20.724865677243034, 8205.343918504883, 16.36037526165125, 3.9035337296939128),
    "lin_3x1x2_fast": (-271.31039438958385, 39246.482206757355, 57.39932739580336, 0.26608983602220243),
    "lin_4x2x1_slow": (8252.550198868305, 613006.572710068, 85.17703355976514, 20.992376160501752),
    "lin_5x1x1_fast": (1837.9168789433402, 9199347.019469094, -15.120096935771821, -133.1763145066873),
    "lin_6x2x2_slow": (1192.0305441376213, 1417298.8700297948, 65.35004631261309, 1.8270690323138714),
    "tanks": (1265.8192463928317, 2687.409616063599, 998.5842739523268, 0.28598750661419964),
    "quad_tanks": (9608.14082501937, 51648.76408717041, 5196.8364921316115, 4.554016790179971),
    "hammerstein": (14.109581597841741, 6699.058848342591, 59.74502284992104, 0.18163934308814939),
    "wiener": (-27.05792856148695, 434.801732716087, -5.2473700821520275, 0.14796060805719538),
    "pendulum": (-63.9281340882514, 116.06193701517454, -205.11715700365033, -0.1159857587878991),
    "duffing": (-6.524086846772747, 516.9476694782124, -2.176221923618968, 1.012147725155808),
    "three_tanks": (850.3453072132718, 269.30331485395413, 613.3719146802227, 0.40607285753012684),
    "reactor": (322462.41272518865, 103430650.29781514, 299338.33752763487, 0.8799262537752782),
    "two_mass": (-110.04738071069625, 796.3957501204521, -38.6549339363126, 0.4517810725315571),
    "car_tracking": (56.43480215832221, 5453.122148580938, 7.558017372634447),
    "kink": (-95.7163964016307, 277.9685552724343, -0.70691496511768),
}


@pytest.mark.parametrize("name", sorted(SIMULATED_RECORDS))
def test_the_simulated_plants_are_the_ones_the_results_were_computed_on(name):
    """docs/results.md scores fits to these records: a change of a simulator's equations, constants, input design or
    random draws would leave its rows describing another plant, so each record is pinned (to 1e-9 relative, a
    tolerance meant for rounding differences between machines)."""
    from gpssm_np.experiments.systems import make_system

    if name in ("car_tracking", "kink"):
        record = getattr(datasets, name)(seed=0)
        y = record.y
        summary = (np.sum(y), np.sum(y**2), y.ravel()[-1])
    else:
        y, u, _, _ = make_system(name)
        summary = (np.sum(y), np.sum(y**2), np.sum(u), y[-1, 0])
    np.testing.assert_allclose(summary, SIMULATED_RECORDS[name], rtol=1e-9, atol=0)
