"""The versions (and machine facts) that matter for reproducing a result; ``gpssm-np info`` prints them and the
experiment outputs record them."""
import os
import platform

import numpy as np


def versions():
    """Dict of the package, Python, NumPy, SciPy, Numba, autograd and matplotlib versions, platform, CPU count and
    the Numba cache switch."""
    import autograd
    import matplotlib
    import numba
    import scipy

    from . import __version__

    return {"gpssm_np": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "numba": numba.__version__, "autograd": getattr(autograd, "__version__", "?"),
            "matplotlib": matplotlib.__version__, "platform": platform.platform(),
            "numba_cache": os.environ.get("GPSSM_NP_NUMBA_CACHE", "1"), "cpu_count": os.cpu_count()}
