"""The versions (and machine facts) that matter for reproducing a result; ``gpssm-np info`` prints them and the
experiment outputs record them."""
import os
import platform
import subprocess
from importlib import metadata

import numpy as np

from ._config import NUMBA_CACHE
from ._version import __version__
from .ops.threads import kernel_threads


def _distribution_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_commit():
    """The commit of the source tree the package runs from, when it is a git checkout (else None)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def versions():
    """Dict of the package (and its git commit when run from a checkout), Python, NumPy, SciPy, Numba, autograd
    and matplotlib versions, platform, CPU count, kernel threads and the Numba cache switch."""
    import matplotlib
    import numba
    import scipy

    return {"gpssm_np": __version__, "git_commit": _git_commit(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
            "autograd": _distribution_version("autograd"), "matplotlib": matplotlib.__version__,
            "platform": platform.platform(), "numba_cache": str(int(NUMBA_CACHE)),
            "cpu_count": os.cpu_count(), "kernel_threads": kernel_threads()}
