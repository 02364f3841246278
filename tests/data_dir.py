"""Where the tests read the benchmark data: ``GPSSM_NP_DATA`` when it is set, else ``shared/data`` beside the
checkout (the folder ``.ci/run`` points ``GPSSM_NP_DATA`` at). Tests that need a data set skip without it and say
where they looked."""
import os

DATA_DIR = os.environ.get("GPSSM_NP_DATA") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"))
