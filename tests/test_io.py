"""Model files: round trips, exact paths, atomic writes and refusal of damaged, modified or foreign files."""
import hashlib
import json
import os
import re
import zipfile

import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np import archive, io
from gpssm_np.io import FORMAT_VERSION, ModelFileError, load, save
from gpssm_np.estimator import GradientTrainedModel
from gpssm_np.units import Scaling

MODELS = {
    "odgpssm-shared-lstm": lambda: gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, shared_inducing=True,
                                              recognition="lstm", recognition_options={"hidden": 3}, seed=1),
    "odgpssm-per-gp-lstm": lambda: gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_latent=3, num_inducing=4,
                                              shared_inducing=False, recognition="lstm",
                                              recognition_options={"hidden": 3, "num_layers": 1}, seed=2),
    "prssm-mlp": lambda: gp.PRSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, recognition="mlp",
                                  recognition_options={"hidden": 3, "num_steps": 3}, mean_function="identity",
                                  seed=3),
    "odgpssm-free-x0": lambda: gp.ODGPSSM(dim_x=2, dim_y=1, num_inducing=4, seed=4),
}


def trained_like(model, rng):
    """The model with perturbed parameters and a history, as if it had been fitted."""
    model.set_learned_params({k: v + 0.1 * rng.normal(size=v.shape) for k, v in model.get_learned_params().items()})
    model.history_ = [float(v) for v in rng.normal(size=7)]
    return model


def data(model, rng):
    y = rng.normal(size=(2, 6, model.spec.dim_y))
    u = rng.normal(size=(2, 6, model.spec.dim_u)) if model.spec.dim_u else None
    return y, u


def rewrite(path, change):
    """Rewrite the npz at ``path`` with ``change(entries)`` applied to its entries (meta left as it was)."""
    with np.load(path, allow_pickle=False) as npz:
        entries = {key: npz[key] for key in npz.files}
    change(entries)
    with open(path, "wb") as f:
        np.savez_compressed(f, **entries)


def change_meta(**updates):
    """An edit of the metadata whose checksum is made again, so that the check behind it is what refuses the file
    (an edit without it is refused by the metadata checksum: test_edited_metadata_is_refused_by_its_checksum)."""
    def change(entries):
        meta = json.loads(str(entries["__meta__"][()]))
        meta.update(updates)
        meta["meta_checksum"] = archive.meta_checksum(meta)
        entries["__meta__"] = np.array(json.dumps(meta))

    return change


@pytest.fixture
def saved(tmp_path, rng):
    model = trained_like(MODELS["odgpssm-shared-lstm"](), rng)
    path = tmp_path / "model.npz"
    save(model, path)
    return model, path


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_round_trip_restores_params_config_history_and_elbo(kind, tmp_path, rng):
    model = trained_like(MODELS[kind](), rng)
    path = tmp_path / "model.npz"
    assert save(model, path) == path
    loaded = load(path)
    assert type(loaded) is type(model)
    assert loaded.get_config() == model.get_config()
    assert loaded.history_ == model.history_
    original, restored = model.get_learned_params(), loaded.get_learned_params()
    assert set(restored) == set(original)
    for name in original:
        assert restored[name].dtype == np.float64
        np.testing.assert_array_equal(restored[name], original[name])
    y, u = data(model, rng)
    assert loaded.elbo(y, u, num_samples=5, seed=0) == model.elbo(y, u, num_samples=5, seed=0)


def test_a_format_1_file_of_a_warm_started_model_loads_with_the_same_q_x0(tmp_path, rng):
    """Format 1 stored every free q(x0) by its variances (x0_var); a warm-started GP model now holds a full q(x0)
    (x0_sqrt), and its older file loads as the diagonal Gaussian it held."""
    model = trained_like(MODELS["odgpssm-free-x0"](), rng)
    assert model.spec.x0_covariance == "full"
    path = tmp_path / "model.npz"
    save(model, path)
    variances_raw = np.array([0.3, -1.2])

    def as_format_1(entries):
        del entries["params/x0_sqrt"]
        entries["params/x0_var"] = variances_raw
        meta = json.loads(str(entries["__meta__"][()]))
        meta.update(format_version=1, checksum=io.checksum(entries))
        del meta["meta_checksum"]  # format 1 had none
        entries["__meta__"] = np.array(json.dumps(meta))

    rewrite(path, as_format_1)
    mean, cov = load(path).q_x0(full_cov=True)
    np.testing.assert_allclose(cov, np.diag(np.log1p(np.exp(variances_raw)) + 1e-6), rtol=1e-12)
    np.testing.assert_array_equal(mean, model.q_x0()[0])


def test_a_format_1_checkpoint_whose_parameters_changed_is_refused(tmp_path, rng):
    """A training checkpoint resumes bit for bit only with the parameters (and Adam moments) it was written with: a
    format-1 checkpoint of a warm-started model (x0_var, now x0_sqrt) is refused with a ModelFileError that says
    to start again; a format-1 checkpoint of a model whose parameters did not change still reads."""
    for kind, refused in (("odgpssm-free-x0", True), ("prssm-mlp", False)):
        model = trained_like(MODELS[kind](), rng)
        moments = {f"{s}:{k}": np.zeros_like(v) for k, v in model.get_learned_params().items() for s in "mv"}
        path = tmp_path / f"{kind}.ckpt"
        archive.write_model(model, type(model).__name__, path, training={"arrays": moments, "info": {"adam_t": 1}})

        def as_format_1(entries):
            if "params/x0_sqrt" in entries:
                for key in ("params/x0_sqrt", "train/m:x0_sqrt", "train/v:x0_sqrt"):
                    entries[key.replace("x0_sqrt", "x0_var")] = np.diag(entries.pop(key)).copy()
            meta = json.loads(str(entries["__meta__"][()]))
            meta.update(format_version=1, checksum=io.checksum(entries))
            del meta["meta_checksum"]  # format 1 had none
            entries["__meta__"] = np.array(json.dumps(meta))

        rewrite(path, as_format_1)
        if refused:
            with pytest.raises(ModelFileError, match="start the fit again"):
                io.read_checkpoint(path)
        else:
            loaded, training = io.read_checkpoint(path)
            assert set(training["arrays"]) == set(moments)


def test_meta_records_format_class_versions_and_documented_checksum(saved):
    model, path = saved
    with np.load(path, allow_pickle=False) as npz:
        entries = {key: npz[key] for key in npz.files}
    meta_entry = entries.pop("__meta__")
    assert meta_entry.ndim == 0 and meta_entry.dtype.kind == "U"
    meta = json.loads(str(meta_entry[()]))
    assert meta["format_version"] == FORMAT_VERSION == 2
    assert meta["class"] == "ODGPSSM"
    assert meta["config"] == model.get_config()
    assert meta["gpssm_np_version"] == gp.__version__
    assert meta["numpy_version"] == np.__version__
    assert meta["created_at"].endswith("+00:00")
    assert sorted(entries) == sorted(["history/loss"] + [f"params/{name}" for name in model.params])
    digest = hashlib.sha256()  # the recipe of the io module docstring, written out
    for name in sorted(entries):
        a = entries[name]
        digest.update(name.encode() + b"\0" + a.dtype.str.encode() + b"\0"
                      + ",".join(map(str, a.shape)).encode() + b"\0" + np.ascontiguousarray(a).tobytes())
    assert meta["checksum"] == digest.hexdigest() == io.checksum(entries)


def test_a_loaded_model_gives_the_constructor_arguments_as_given(tmp_path, rng):
    """get_params() of a loaded model is the saved model's (the file's "arguments"), not the fitted configuration it
    is rebuilt from (an LGSSM's dim_x chosen from "auto", a GP model's floor kind and d_x); a clone of it builds the
    same unfitted model; a file without "arguments" (older) gives the configuration."""
    y, u = rng.normal(size=(150, 1)), rng.normal(size=(150, 1))
    for model in (gp.LGSSM(dim_x="auto", num_iters=2), gp.ODGPSSM(dim_y=1, dim_u=1, lengthscale=np.float64(1.5))):
        if isinstance(model, gp.LGSSM):
            model.fit(y, u)
        else:  # a GP model's fit chooses its floor and d_x; start from one without training
            model.initialise(y, u)
        given = model.get_params()
        loaded = load(save(model, tmp_path / "m.npz"))
        assert loaded.get_config() != type(model)(**given).get_config()  # the file rebuilds the fitted choice
        assert json.dumps(loaded.get_params(), default=np.ndarray.tolist) == json.dumps(given,
                                                                                        default=np.ndarray.tolist)
        assert type(loaded)(**loaded.get_params()).get_config() == type(model)(**given).get_config()
    path = save(gp.LGSSM(dim_x="auto", num_iters=2).fit(y, u), tmp_path / "old.npz")
    with np.load(path) as f:
        arrays = dict(f)
    meta = json.loads(str(arrays["__meta__"][()]))
    del meta["arguments"], meta["meta_checksum"]  # a file of an older version: neither entry
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)
    assert load(path).get_params()["dim_x"] == load(path).spec.dim_x


def test_untrained_model_round_trips_with_empty_history(tmp_path):
    model = MODELS["odgpssm-free-x0"]()
    save(model, tmp_path / "m.npz")
    assert load(tmp_path / "m.npz").history_ == []


def test_path_without_npz_suffix_is_written_exactly(tmp_path, rng):
    model = trained_like(MODELS["prssm-mlp"](), rng)
    path = str(tmp_path / "model.bin")
    save(model, path)
    assert os.path.exists(path) and not os.path.exists(path + ".npz")
    assert sorted(os.listdir(tmp_path)) == ["model.bin"]
    assert load(path).history_ == model.history_


def test_scaling_is_saved_and_restored(tmp_path, rng):
    model = trained_like(MODELS["prssm-mlp"](), rng)
    model.scaling_ = Scaling(np.array([0.5]), np.array([2.0]), np.array([-1.0]), np.array([3.0]))
    save(model, tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    for name in ("y_mean", "y_std", "u_mean", "u_std"):
        np.testing.assert_array_equal(getattr(loaded.scaling_, name), getattr(model.scaling_, name))
    with np.load(tmp_path / "m.npz") as npz:
        assert {"extra/scaling_y_mean", "extra/scaling_u_std"} <= set(npz.files)
    u = rng.normal(size=(10, 1))
    np.testing.assert_array_equal(loaded.forecast(u, seed=1).samples, model.forecast(u, seed=1).samples)


def test_a_file_with_the_old_output_scaling_loads_without_it(tmp_path, monkeypatch, caplog):
    """Files written with set_output_scaling (which only labelled forecasts) load as models in their own units."""
    monkeypatch.setattr(gp.ODGPSSM, "extra_state", lambda self: {"y_mean": np.ones(1), "y_std": np.ones(1)},
                        raising=False)
    save(MODELS["odgpssm-free-x0"](), tmp_path / "m.npz")
    monkeypatch.undo()
    with caplog.at_level("WARNING", logger="gpssm_np.units"):
        assert load(tmp_path / "m.npz").scaling_ is None
    assert "set_output_scaling, removed" in caplog.text
    caplog.clear()
    rng = np.random.default_rng(0)
    save(gp.ARX(na=1, nb=1).fit(rng.normal(size=(60, 1)), rng.normal(size=(60, 1))), tmp_path / "new.npz")
    with caplog.at_level("WARNING", logger="gpssm_np.units"):  # a file with the statistics of now: nothing said
        assert load(tmp_path / "new.npz").scaling_ is not None
    assert "set_output_scaling" not in caplog.text


def test_a_file_with_an_argument_renamed_since_loads_under_the_new_name(tmp_path, monkeypatch, rng):
    """ARX's count of rolling origins was called ``folds``: a file written then loads with it as ``origins``."""
    y, u = rng.normal(size=(150, 1)), rng.normal(size=(150, 1))
    model = gp.ARX(origins=3).fit(y, u)
    config = gp.ARX.get_config
    renamed = lambda self: {("folds" if k == "origins" else k): v for k, v in config(self).items()}
    monkeypatch.setattr(gp.ARX, "get_params", renamed)
    monkeypatch.setattr(gp.ARX, "get_config", renamed)
    save(model, tmp_path / "old.npz")
    monkeypatch.undo()
    loaded = load(tmp_path / "old.npz")
    assert loaded.origins == 3 and loaded.get_params()["origins"] == 3 and "folds" not in loaded.get_params()
    np.testing.assert_array_equal(loaded.forecast(u[:5], seed=1).samples, model.forecast(u[:5], seed=1).samples)


def test_a_format_1_file_of_a_linear_model_loads_as_written(tmp_path, rng):
    """Only GP models convert older formats' parameters (``params_from_format``); a linear model's format-1 file,
    whose parameters are this format's, loads unchanged."""
    y, u = rng.normal(size=(150, 1)), rng.normal(size=(150, 1))
    model = gp.ARX().fit(y, u)
    path = save(model, tmp_path / "arx.npz")

    def as_format_1(entries):
        meta = json.loads(str(entries["__meta__"][()]))
        meta["format_version"] = 1
        del meta["meta_checksum"]  # format 1 had none
        entries["__meta__"] = np.array(json.dumps(meta))

    rewrite(path, as_format_1)
    loaded = load(path)
    for name, value in model.get_learned_params().items():
        np.testing.assert_array_equal(loaded.get_learned_params()[name], value)


def test_extra_state_goes_through_the_model_hooks(tmp_path, monkeypatch):
    state = {"y_mean": np.array([0.5]), "counts": np.arange(3)}
    restored = {}
    monkeypatch.setattr(gp.ODGPSSM, "extra_state", lambda self: state, raising=False)
    monkeypatch.setattr(gp.ODGPSSM, "set_extra_state", lambda self, extra: restored.update(extra), raising=False)
    save(MODELS["odgpssm-free-x0"](), tmp_path / "m.npz")
    load(tmp_path / "m.npz")
    assert sorted(restored) == ["counts", "y_mean"]
    for name, value in state.items():
        np.testing.assert_array_equal(restored[name], value)
        assert restored[name].dtype == value.dtype


def test_extra_state_the_model_cannot_take_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(gp.ODGPSSM, "extra_state", lambda self: {"scaling_y_mean": np.zeros(1)}, raising=False)
    save(MODELS["odgpssm-free-x0"](), tmp_path / "m.npz")
    with pytest.raises(ModelFileError, match="extra state.*does not fit"):  # the other statistics missing
        load(tmp_path / "m.npz")
    monkeypatch.setattr(gp.ODGPSSM, "extra_state", lambda self: {"counts": np.arange(3)}, raising=False)
    save(MODELS["odgpssm-free-x0"](), tmp_path / "m.npz")
    with pytest.raises(ModelFileError, match="cannot take"):
        load(tmp_path / "m.npz")


def test_missing_file_raises_file_not_found_naming_the_path(tmp_path):
    path = tmp_path / "absent.npz"
    with pytest.raises(FileNotFoundError, match="absent.npz"):
        load(path)


def test_saving_into_a_missing_folder_names_the_given_path(tmp_path):
    path = tmp_path / "missing" / "x.npz"
    with pytest.raises(FileNotFoundError) as info:
        save(gp.ARX(), path)
    assert info.value.filename == str(path) and str(path) in str(info.value) and ".tmp" not in str(info.value)
    assert not (tmp_path / "missing").exists()


def test_saving_to_a_folder_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="path: .* is a folder; expected a file path in it") as info:
        save(gp.ARX(), tmp_path)
    assert repr(str(tmp_path)) in str(info.value) and os.listdir(tmp_path) == []
    assert not [name for name in os.listdir(tmp_path.parent) if name.startswith("." + tmp_path.name)]  # no temp file
    with pytest.raises(ValueError, match="is a folder"):
        load(tmp_path)
    y, u = np.zeros((60, 1)), np.zeros((60, 1))
    y[:, 0] = np.sin(np.arange(60))
    for model, options in ((gp.ODGPSSM(dim_y=1, dim_u=1), {}), (gp.ODGPSSM(dim_y=1, dim_u=1, settings="authors"),
                                                               {"epochs": 1})):
        with pytest.raises(ValueError, match="checkpoint: .* is a folder"):  # before any training
            model.fit(y, u, checkpoint=tmp_path, progress=False, **options)


def test_truncated_file_is_refused(saved):
    _, path = saved
    raw = path.read_bytes()
    path.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(ModelFileError, match="not a valid gpssm_np model file"):
        load(path)


def test_corrupted_member_data_is_refused(saved):
    _, path = saved
    raw = bytearray(path.read_bytes())
    start = raw.index(b"params/") + 200  # inside the compressed data of the first parameters
    raw[start:start + 16] = bytes(16)
    path.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="not a valid gpssm_np model file"):
        load(path)


def test_any_flipped_byte_is_refused_or_harmless(saved, tmp_path):
    model, path = saved
    raw = path.read_bytes()
    damaged = tmp_path / "damaged.npz"
    for position in np.linspace(0, len(raw) - 1, 60).astype(int):
        flipped = bytearray(raw)
        flipped[position] ^= 0xFF
        damaged.write_bytes(bytes(flipped))
        try:
            loaded = load(damaged)
        except ModelFileError:
            continue
        # a byte outside the data (e.g. a zip timestamp) may change without effect on the model
        assert loaded.get_config() == model.get_config() and loaded.history_ == model.history_
        for name, value in model.get_learned_params().items():
            np.testing.assert_array_equal(loaded.params[name], value)


def test_unparsable_array_header_is_refused(saved, tmp_path):
    """An array header that cannot be parsed (here a dict left open, which numpy's tokenizer meets as a
    ``tokenize.TokenError``, not a ValueError) is a ModelFileError like any damage."""
    _, path = saved
    damaged = tmp_path / "damaged.npz"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            member = source.read(name)
            start = member.index(b"{'descr'")
            end = member.index(b"}", start)  # the header dict left open
            target.writestr(name, member[:end] + b" " + member[end + 1:])
    with pytest.raises(ModelFileError, match="cannot be read as an npz archive"):
        load(damaged)


def declared_larger(source, target):
    """Copy the archive ``source`` to ``target`` with the first dimension of every array's shape declared as 1e11,
    each header kept at its length (its padding shortened)."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for name in src.namelist():
            member = src.read(name)
            end = member.index(b"\n")
            header = re.sub(rb"'shape': \(\d+", b"'shape': (99999999999", member[:end], count=1)
            header = header.rstrip(b" ").ljust(end, b" ")
            assert len(header) == end
            dst.writestr(name, header + member[end:])


def test_an_array_declared_larger_than_its_data_is_refused_before_it_is_allocated(saved, tmp_path):
    """A damaged shape in an array's header (here 1e11 rows, 745 GiB) is a ModelFileError naming the entry, not a
    MemoryError; a state file's too."""
    _, path = saved
    declared_larger(path, tmp_path / "damaged.npz")
    with pytest.raises(ModelFileError, match="declares shape \\(99999999999"):
        load(tmp_path / "damaged.npz")
    archive.write_state(tmp_path / "state.npz", "test", {"step": 1}, {"x": np.zeros((3, 2))})
    declared_larger(tmp_path / "state.npz", tmp_path / "damaged_state.npz")
    with pytest.raises(ModelFileError, match="declares shape \\(99999999999, 2\\)"):
        archive.read_state(tmp_path / "damaged_state.npz", "test")


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_an_array_of_either_header_version_declared_a_few_times_its_data_is_refused(tmp_path, version):
    """The size check reads both header versions (version 2 holds headers beyond 64 KiB) and refuses any shape
    declaring more bytes than its entry holds, not only one far beyond it: 20 times the data here."""
    path = archive.write_state(tmp_path / "state.npz", "test", {"step": 1}, {"x": np.zeros((1000, 1))})
    damaged = tmp_path / "damaged.npz"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            member = source.read(name)
            if name == "x.npy":
                header = {"descr": "<f8", "fortran_order": False, "shape": (20000, 1)}
                with target.open(name, "w") as f:
                    getattr(np.lib.format, "write_array_header_%d_%d" % version)(f, header)
                    f.write(np.zeros(1000).tobytes())
            else:
                target.writestr(name, member)
    with pytest.raises(ModelFileError, match="its entry 'x.npy' declares shape \\(20000, 1\\)"):
        archive.read_state(damaged, "test")


def test_file_that_is_not_an_npz_is_refused(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("not a model\n")
    with pytest.raises(ModelFileError, match="not a valid gpssm_np model file.*not an npz"):
        load(path)
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(ModelFileError, match="not an npz"):
        load(tmp_path / "array.npy")


def test_tampered_parameter_is_refused_by_checksum(saved):
    _, path = saved

    def tamper(entries):
        entries["params/A"] = entries["params/A"].copy()
        entries["params/A"][0, 0] += 1e-9

    rewrite(path, tamper)
    with pytest.raises(ModelFileError, match="corrupted or was modified"):
        load(path)


def test_edited_metadata_is_refused_by_its_checksum(saved, tmp_path):
    """The metadata's own checksum: an edited configuration or argument is refused; a file of an older version,
    without the entry, loads."""
    model, path = saved
    for edit in ({"config": dict(model.get_config(), kernel="se")}, {"arguments": {"dim_x": 7}}):
        edited = tmp_path / "edited.npz"
        edited.write_bytes(open(path, "rb").read())

        def change(entries):
            meta = json.loads(str(entries["__meta__"][()]))
            meta.update(edit)
            entries["__meta__"] = np.array(json.dumps(meta))

        rewrite(edited, change)
        with pytest.raises(ModelFileError, match="metadata checksum does not match"):
            load(edited)

    def older(entries):
        meta = json.loads(str(entries["__meta__"][()]))
        del meta["meta_checksum"]
        entries["__meta__"] = np.array(json.dumps(meta))

    rewrite(path, older)
    assert load(path).get_config() == model.get_config()


def test_added_or_removed_entry_is_refused_by_checksum(saved):
    _, path = saved
    rewrite(path, lambda entries: entries.update({"params/extra": np.zeros(2)}))
    with pytest.raises(ModelFileError, match="checksum"):
        load(path)


def test_newer_format_version_is_refused_with_upgrade_hint(saved):
    _, path = saved
    rewrite(path, change_meta(format_version=FORMAT_VERSION + 1))
    with pytest.raises(ModelFileError, match="newer gpssm_np.*upgrade"):
        load(path)


def test_unknown_class_is_refused_listing_known_classes(saved):
    _, path = saved
    rewrite(path, change_meta(**{"class": "os.system"}))
    known = r"\['ARX', 'DSSM', 'LGSSM', 'ODGPSSM', 'PRSSM'\]"
    with pytest.raises(ModelFileError, match=r"unknown model class 'os.system'.*" + known):
        load(path)


@pytest.mark.parametrize("change, message", [
    (lambda entries: entries.pop("__meta__"), "no '__meta__'"),
    (lambda entries: entries.update({"__meta__": np.array("{not json")}), "not valid JSON"),
    (lambda entries: entries.update({"__meta__": np.array(json.dumps([1, 2]))}), "JSON object"),
    (lambda entries: entries.update({"__meta__": np.zeros(2)}), "not a JSON string"),
    (change_meta(format_version="1"), "format_version"),
])
def test_missing_or_malformed_meta_is_refused(saved, change, message):
    _, path = saved
    rewrite(path, change)
    with pytest.raises(ModelFileError, match=message):
        load(path)


def resealed(change):
    """An edit of the data entries, then of the metadata, whose two checksums are made again, so that the layout
    or metadata check behind them is what refuses the file."""
    def edit(entries):
        meta = json.loads(str(entries["__meta__"][()]))
        change(entries, meta)
        meta["checksum"] = io.checksum(entries)
        meta["meta_checksum"] = archive.meta_checksum(meta)
        entries["__meta__"] = np.array(json.dumps(meta))

    return edit


def _set_entry(name, value):
    return lambda entries, meta: entries.__setitem__(name, value)


@pytest.mark.parametrize("change, message", [
    # each fault of a condition alone: a string entry that is no scalar, a scalar that is no string, ...
    (lambda entries: entries.update({"__meta__": np.array(["{}", "{}"])}), "not a JSON string"),
    (lambda entries: entries.update({"__meta__": np.array(0.0)}), "not a JSON string"),
    (resealed(lambda entries, meta: meta.pop("created_at")), "must be a JSON object with the keys"),
    (change_meta(config=[1, 2]), "'config' must be a JSON object and its 'checksum' a string"),
    (change_meta(checksum=7), "'config' must be a JSON object and its 'checksum' a string"),
    (resealed(lambda entries, meta: entries.pop("history/loss")), "'history/loss' entry is missing or not a 1-D"),
    (resealed(_set_entry("history/loss", np.zeros((2, 1)))), "'history/loss' entry is missing or not a 1-D"),
    (resealed(_set_entry("history/loss", np.zeros(2, dtype=np.int64))), "'history/loss' entry is missing or not a"),
    (resealed(_set_entry("notes/x", np.zeros(2))), r"unexpected entries \['notes/x'\]"),
])
def test_each_fault_of_the_metadata_and_layout_is_refused_alone(saved, change, message):
    _, path = saved
    rewrite(path, change)
    with pytest.raises(ModelFileError, match=message):
        load(path)


def test_config_that_does_not_build_the_model_is_refused(saved):
    model, path = saved
    rewrite(path, change_meta(config=dict(model.get_config(), num_inducing=5)))
    with pytest.raises(ModelFileError, match="do not fit a ODGPSSM"):
        load(path)


calls = []


def _record(value):
    calls.append(value)
    return value


class Payload:
    """Unpickling this object would call _record: the test checks that it never happens."""

    def __reduce__(self):
        return _record, ("unpickled",)


def test_object_array_is_refused_without_unpickling(saved):
    _, path = saved

    def add_object(entries):
        entries["params/A"] = np.array([Payload()], dtype=object)

    with np.load(path, allow_pickle=False) as npz:
        entries = {key: npz[key] for key in npz.files}
    add_object(entries)
    with open(path, "wb") as f:
        np.savez_compressed(f, **entries)  # np.save pickles object arrays
    with pytest.raises(ModelFileError, match="it contains pickled"):
        load(path)
    assert calls == []


@pytest.mark.parametrize("target", ["savez_compressed", "replace"])
def test_failed_write_leaves_previous_file_intact(saved, monkeypatch, rng, target):
    model, path = saved
    before = path.read_bytes()

    def failing_savez(file, **arrays):
        file.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    def failing_replace(src, dst):
        raise OSError("rename failed")

    if target == "savez_compressed":
        monkeypatch.setattr(np, "savez_compressed", failing_savez)
    else:
        monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        save(trained_like(MODELS["odgpssm-shared-lstm"](), rng), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]  # the temporary file was removed
    assert load(path).history_ == model.history_


def test_save_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="model: expected an instance of one of"):
        save(object(), tmp_path / "m.npz")
    with pytest.raises(ValueError, match="path: expected a str or os.PathLike"):
        save(MODELS["odgpssm-free-x0"](), 3)
    with pytest.raises(ValueError, match="path: expected"):
        load(None)


def test_extra_state_with_object_values_is_rejected_on_save(tmp_path, monkeypatch):
    monkeypatch.setattr(gp.ODGPSSM, "extra_state", lambda self: {"bad": np.array([{}], dtype=object)}, raising=False)
    with pytest.raises(ValueError, match="model: extra_state"):
        save(MODELS["odgpssm-free-x0"](), tmp_path / "m.npz")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("make", [lambda: gp.ARX(dim_y=1, dim_u=0), lambda: gp.LGSSM(dim_x=2, dim_y=1, dim_u=0),
                                  lambda: gp.ODGPSSM(dim_y=1, dim_u=0, seed=0)])
def test_a_model_without_inputs_round_trips_after_fit(make, tmp_path):
    """Its scaling keeps empty input statistics, which a model file must take back."""
    t = np.arange(200)
    y = (np.sin(t / 6) + 0.05 * np.random.default_rng(0).standard_normal(200))[:, None]
    model = make()
    model.fit(y, **({"max_steps": 2, "progress": False} if isinstance(model, GradientTrainedModel) else {}))
    loaded = load(save(model, tmp_path / "m.npz"))
    assert loaded.scaling_.u_mean.shape == (0,)
    np.testing.assert_array_equal(loaded.forecast(steps=10, seed=0).samples, model.forecast(steps=10, seed=0).samples)


def test_what_the_default_fit_chose_is_kept_in_the_model_file(tmp_path):
    y, u, _ = gp.datasets.cascaded_tanks(150, seed=0)
    model = gp.ODGPSSM(dim_y=1, dim_u=1, dim_x=[2, 4], seed=0).fit(y, u, max_steps=2, progress=False)
    loaded = load(save(model, tmp_path / "m.npz"))
    assert loaded.selection_ == json.loads(json.dumps(model.selection_, allow_nan=True)) | {
        "floor": model.selection_["floor"]}  # the candidate d_x are ints again
    assert (loaded.warm_start_, loaded.warm_start_scores_, loaded.dim_x_scores_) == (
        model.warm_start_, model.warm_start_scores_, model.dim_x_scores_)
    assert loaded.validation_ == loaded.selection_["record"] and len(loaded.validation_) >= 1
    model.selection_["t"] = np.float32(1.5)  # NumPy scalars, should a stage leave one, are written as numbers
    assert load(save(model, tmp_path / "m.npz")).selection_["t"] == 1.5


def test_a_loaded_linear_model_keeps_how_its_orders_were_chosen(tmp_path, rng):
    """The ARX's and the LGSSM's selection records (candidate -> fold error, the chosen orders' window errors) are
    in the file: a loaded model says how it was chosen as the fitted one does (its repr too)."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    y[:, 0] += np.convolve(u[:, 0], [0.0, 0.5, 0.3], mode="same")
    for model, record in ((gp.ARX(dim_y=1, dim_u=1).fit(y, u), "selection_scores_"),
                          (gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1).fit(y, u), "dim_x_scores_")):
        assert len(getattr(model, record)) > 1 and model.fold_errors_
        loaded = load(save(model, tmp_path / "m.npz"))
        assert getattr(loaded, record) == getattr(model, record) and loaded.fold_errors_ == model.fold_errors_
        assert repr(loaded) == repr(model)


def test_a_loaded_gp_model_keeps_how_it_trained(tmp_path, rng):
    """The record of a fit (validation scores, each run's best score, the refit's steps and seed, the step size and
    its candidates' tests) is in the file, for the validation-block loop and for the default fit."""
    y, u = rng.normal(size=(120, 1)), rng.normal(size=(120, 1))
    block = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, recognition="mlp",
                       recognition_options={"hidden": 3, "num_steps": 3}).fit(
        y, u, plan=gp.BlockPlan(max_steps=4, eval_every=2, seq_len=10, batch_size=4, num_samples=3), progress=False)
    default = gp.ODGPSSM(dim_y=1, dim_u=1, seed=0).fit(y, u, max_steps=2, plan={"eval_every": 1}, progress=False)
    for model in (block, default):
        assert model.validation_ and model.refit_ is not None
        loaded = load(save(model, tmp_path / "m.npz"))
        for name in gp.ODGPSSM.FIT_RECORD:
            assert json.dumps(getattr(loaded, name)) == json.dumps(getattr(model, name), default=float), name


def test_a_damaged_state_file_is_refused_as_a_state_file(tmp_path):
    """A checkpoint (``archive.write_state``) that is no zip, has no metadata, holds pickled data or is cut short is a
    ModelFileError that says which, as a model file's damage is."""
    read_state = archive.read_state
    path = archive.write_state(tmp_path / "state.ckpt", "test", {"a": 1}, {"x": np.arange(3.0)})
    assert read_state(path, "test")[0] == {"a": 1}
    with pytest.raises(ModelFileError, match="not a 'other' file"):
        read_state(path, "other")
    cases = {"not a zip": (b"not a zip at all", "it is not an npz"),
             "cut short": (open(path, "rb").read()[:-40], "cannot be read as a state file")}
    np.savez(tmp_path / "no_meta.npz", x=np.arange(3.0))
    np.savez(tmp_path / "pickled.npz", __meta__=np.array([{"kind": "test"}], dtype=object))
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ModelFileError, match=message):
            read_state(tmp_path / name, "test")
    with pytest.raises(ModelFileError, match="has no '__meta__' entry"):
        read_state(tmp_path / "no_meta.npz", "test")
    with pytest.raises(ModelFileError, match="it contains pickled"):
        read_state(tmp_path / "pickled.npz", "test")
    np.savez(tmp_path / "bad_json.npz", __meta__=np.array("{not json"))  # a ValueError that is not about pickles
    with pytest.raises(ModelFileError, match="cannot be read as a state file \\(JSONDecodeError"):
        read_state(tmp_path / "bad_json.npz", "test")


@pytest.mark.parametrize("make", [lambda: gp.ODGPSSM(dim_y=1, dim_u=1, seed=0),
                                  lambda: gp.LGSSM(dim_x="auto", dim_y=1, dim_u=1)])
def test_a_loaded_model_fits_again_as_a_new_one(tmp_path, make):
    """A model file's configuration holds what the fit chose (d_x, the floor's kind); a loaded model fitted again
    chooses afresh from its constructor arguments, as the model it was saved from would, not from those choices."""
    y, u, _ = gp.datasets.cascaded_tanks(260, seed=1)
    other_y, other_u, _ = gp.datasets.block_oriented(260, seed=2, structure="wiener")
    options = {"max_steps": 4, "plan": {"eval_every": 2}, "progress": False} if isinstance(
        make(), GradientTrainedModel) else {}
    loaded = load(save(make().fit(y, u, **options), tmp_path / "m.npz"))
    assert repr(loaded) != repr(make())  # the fitted choices show in brackets
    loaded.fit(other_y, other_u, **options)
    fresh = make().fit(other_y, other_u, **options)
    assert loaded.get_config() == fresh.get_config() and repr(loaded) == repr(fresh)
    np.testing.assert_array_equal(loaded.forecast(other_u[:20], seed=0).mean, fresh.forecast(other_u[:20], seed=0).mean)


def test_nested_numpy_arguments_are_kept_in_the_model_file(tmp_path):
    """A NumPy number inside a dict argument (recognition_options) was no plain JSON type, and the file kept no
    arguments at all: the loaded model then reported the saved fit's choices as its arguments."""
    model = gp.ODGPSSM(dim_x=2, dim_y=1, dim_u=1, num_inducing=4, recognition="mlp",
                       recognition_options={"num_steps": np.int64(3), "hidden": 4}, settings="authors")
    loaded = load(save(model, tmp_path / "m.npz"))
    assert loaded.get_params()["recognition_options"] == {"num_steps": 3, "hidden": 4}
    assert loaded.get_params()["init"] is None and loaded.get_params() == dict(model.get_params(),
                                                                             recognition_options={"num_steps": 3,
                                                                                                  "hidden": 4})


def test_an_unfitted_model_copies_with_q_following_d_x(tmp_path, rng):
    """ODGPSSM(dim_x=8) takes Q = min(d_x, max(5, 3 d_y)) = 5 when its floor is set; its configuration, file and repr
    said num_latent = 8 (the spec's placeholder), so a copy trained with Q = 8. And a loaded model's initialise
    chooses afresh, as its fit does."""
    y, u = rng.normal(size=(200, 1)), rng.normal(size=(200, 1))
    model = gp.ODGPSSM(dim_x=8, dim_y=1, dim_u=1)
    assert model.get_config()["num_latent"] is None and repr(model) == "ODGPSSM(dim_x=8)"
    for copy in (gp.ODGPSSM(**model.get_config()), load(save(model, tmp_path / "m.npz"))):
        assert copy.initialise(y, u).spec.num_latent == model.initialise(y, u).spec.num_latent == 5
    fitted = load(save(gp.ODGPSSM(dim_y=1, dim_u=1).initialise(y, u), tmp_path / "i.npz"))
    other_y, other_u, _ = gp.datasets.cascaded_tanks(200, seed=3)
    assert fitted.initialise(other_y, other_u).spec == gp.ODGPSSM(dim_y=1, dim_u=1).initialise(other_y, other_u).spec
    with pytest.raises(ValueError, match="fixed: expected parameter names"):
        gp.ODGPSSM(dim_y=1, dim_u=1).fit(y, u, max_steps=2, plan={"fixed": 5})


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, "2"])
def test_a_state_file_of_a_newer_or_malformed_format_is_refused(tmp_path, version):
    """The checkpoints' files (``archive.write_state``) carry a model file's format version, read the same way."""
    path = archive.write_state(tmp_path / "state.npz", "test", {"step": 3}, {"x": np.arange(3.0)})
    state, arrays = archive.read_state(path, "test")
    assert state == {"step": 3} and np.array_equal(arrays["x"], np.arange(3.0))
    rewrite(path, change_meta(format_version=version))
    with pytest.raises(ModelFileError, match=f"its format_version {version!r} is not one this gpssm_np reads"):
        archive.read_state(path, "test")


@pytest.mark.parametrize("arrays", [{"__meta__": np.zeros(2)}, {"x": np.array([{}], dtype=object)},
                                    {"x": np.array(["text"])}])
def test_a_state_file_takes_numeric_arrays_under_other_names_than_its_metadata(tmp_path, arrays):
    with pytest.raises(ValueError, match="arrays: entry '(__meta__|x)' must be a numeric array"):
        archive.write_state(tmp_path / "state.npz", "test", {"step": 3}, arrays)
    assert not (tmp_path / "state.npz").exists()


def test_a_written_file_has_the_permissions_of_any_new_file(tmp_path, saved):
    """The temporary file of the atomic write is created private (mode 0o600); the file renamed into place has the
    mode a plain ``open(path, "w")`` would give it under the process's umask."""
    _, path = saved
    plain = tmp_path / "plain.txt"
    plain.write_text("")
    assert (os.stat(path).st_mode & 0o777) == (os.stat(plain).st_mode & 0o777)
    state = archive.write_state(tmp_path / "state.npz", "test", {"step": 1}, {"x": np.zeros(2)})
    assert (os.stat(state).st_mode & 0o777) == (os.stat(plain).st_mode & 0o777)


@pytest.mark.parametrize("odd", [float("nan"), object()])
def test_arguments_that_are_no_plain_json_leave_the_file_with_the_configuration_alone(tmp_path, monkeypatch, odd):
    """A constructor argument that JSON cannot hold exactly (a NaN, an object) does not stop the save: the file
    keeps no "arguments", and the loaded model gives its configuration as its arguments."""
    model = gp.ARX(dim_y=1, dim_u=1)
    params = model.get_params()
    monkeypatch.setattr(gp.ARX, "get_params", lambda self: dict(params, na=odd))
    path = save(model, tmp_path / "m.npz")
    monkeypatch.undo()
    with np.load(path) as npz:
        assert "arguments" not in json.loads(str(npz["__meta__"][()]))
    assert load(path).get_params() == model.get_config()
