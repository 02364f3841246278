"""Soak test (slow, outside CI): aggressive learning rates on every data set and several seeds; no parameter may
ever become non-finite, and every run must either finish or stop with TrainingError (never return NaN).

Run with ``python -m pytest -m slow tests/test_soak.py`` (docs/guide.md, "Errors, checkpoints and reliability").
"""
import numpy as np
import pytest

import gpssm_np as gp
from gpssm_np.experiments.table1 import make_model
from gpssm_np.estimator import TrainingError
from tests.data_dir import DATA_DIR


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["actuator", "ballbeam", "drive", "dryer", "gas_furnace"])
@pytest.mark.parametrize("model_name", ["odgpssm", "prssm"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aggressive_training_never_produces_non_finite_parameters(dataset, model_name, seed):
    ds = gp.datasets.load(dataset, DATA_DIR)
    model = make_model(model_name, ds, seed)
    original_step = model.train_step
    checked = {"steps": 0}

    def step_and_check(*args):
        original_step(*args)
        checked["steps"] += 1
        for name, value in model.params.items():
            assert np.all(np.isfinite(value)), f"{name} became non-finite at step {checked['steps']}"

    model.train_step = step_and_check
    try:
        model.fit(ds.y_train, ds.u_train, epochs=3, plan=dict(seq_len=50, batch_size=16, lr=0.2, num_samples=20))
    except TrainingError:
        pass  # a clear stop is acceptable; the parameters are still checked below
    for name, value in model.params.items():
        assert np.all(np.isfinite(value)), name
    assert checked["steps"] > 0
