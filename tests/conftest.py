import os

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

try:
    from hypothesis import settings

    settings.register_profile("dev", deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
except ImportError:  # hypothesis is a test extra; only the property tests need it
    pass


@pytest.fixture
def rng():
    return np.random.default_rng(20231125)
