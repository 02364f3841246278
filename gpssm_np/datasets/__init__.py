r"""Benchmark data: the nine real system-identification sets, your own series, synthetic generators, and windowing.

* :mod:`~gpssm_np.datasets.files` -- :func:`load` a real benchmark from disk (checked by sha256), split in halves and
  standardised with the training half's statistics; :class:`Dataset`; where the data folder is.
* :mod:`~gpssm_np.datasets.arrays` -- your own data: :func:`from_arrays` and :func:`from_csv` return the same
  :class:`Dataset`, split at a fraction and standardised with the training part's statistics.
* :mod:`~gpssm_np.datasets.simulators` -- :func:`car_tracking`, :func:`kink`, :func:`random_linear_system` with
  :func:`simulate_linear`, and the nonlinear :func:`cascaded_tanks`, :func:`quadruple_tanks`, :func:`three_tanks`,
  :func:`block_oriented`, :func:`forced_oscillator`, :func:`stirred_tank_reactor` and :func:`two_mass`, synthetic
  trajectories.
* :mod:`~gpssm_np.datasets.windowing` -- :func:`windows` and :func:`window_starts`, the authors' training and test
  windows, and :func:`sequence_lists`, the "one sequence or a list" normaliser of every ``fit``.
"""
from .arrays import from_arrays, from_csv
from .files import (DATA_ENV_VAR, DATA_URL, DATASET_FILES, DATASET_NAMES, DATASET_SHA256, Dataset,
                    DatasetNotFoundError, dataset_path, default_data_dir, load, resolve_data_dir)
from .simulators import (CarTracking, Kink, block_oriented, car_tracking, cascaded_tanks, forced_oscillator, kink,
                         kink_function, multilevel, quadruple_tanks, random_linear_system, simulate_linear,
                         stirred_tank_reactor, three_tanks, two_mass)
from .windowing import sequence_lists, window_starts, windows

__all__ = ["DATA_ENV_VAR", "DATA_URL", "DATASET_FILES", "DATASET_NAMES", "DATASET_SHA256", "CarTracking", "Dataset",
           "DatasetNotFoundError", "Kink", "block_oriented", "car_tracking", "cascaded_tanks", "dataset_path",
           "default_data_dir", "forced_oscillator", "from_arrays", "from_csv", "kink", "kink_function", "load",
           "multilevel", "quadruple_tanks", "random_linear_system", "resolve_data_dir",
           "sequence_lists", "simulate_linear", "stirred_tank_reactor", "three_tanks", "two_mass", "window_starts",
           "windows"]
