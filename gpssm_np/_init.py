"""Initial weights of the neural networks (the recognition networks and the DSSM): the default of PyTorch's linear
and LSTM layers, every weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
import numpy as np


def fan_in_uniform(rng, fan_in, shape):
    """Draws of ``shape`` from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the numpy Generator ``rng``."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape)
