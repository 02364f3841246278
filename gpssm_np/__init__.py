"""gpssm_np: Gaussian process state-space models (ODGPSSM, PRSSM) in NumPy and Numba."""
import logging

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
