"""Transcendental functions for the hot loops that LLVM can vectorise: :func:`exp_fast`, :func:`sigmoid_fast`,
:func:`tanh_fast`.

LLVM has no vector ``exp`` without Intel's SVML, so a loop that calls libm's ``exp`` runs one element at a time.
These are written with arithmetic, a floor and a bit cast only, and inlined into their callers (``jit(inline=True)``)
so that the callers' loops vectorise.
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._config import FASTMATH
from ._compile import jit


def _bitcast(source, numba_target, ir_target, doc):
    """An intrinsic that reinterprets a ``source`` (a Numba type class: Integer or Float) value, first cast to 64
    bits, as ``numba_target`` (whose LLVM type is ``ir_target``): the same 64 bits, another type."""
    wide = types.int64 if source is types.Integer else types.float64

    def reinterpret(typingctx, value):
        if not isinstance(value, source):
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(context.cast(builder, args[0], signature.args[0], wide), ir_target)

        return numba_target(value), codegen

    reinterpret.__doc__ = doc
    return intrinsic(reinterpret)


_f64_from_bits = _bitcast(types.Integer, types.float64, ir.DoubleType(),
                          "The float64 whose IEEE-754 bit pattern is the int64 ``bits``.")
_bits_from_f64 = _bitcast(types.Float, types.int64, ir.IntType(64),
                          "The int64 whose bit pattern is that of the float64 ``value``.")


_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125  # 16 significant bits: k * _LN2_HI is exact for |k| < 2^37
_LN2_LO = 1.42860682030941723212e-6  # ln 2 - _LN2_HI
_EXP_MIN = -708.0  # exp below this is returned as 0 (the true value is below 3.3e-308, at the edge of the normal range)
_EXP_MAX = 709.0
_EXP_BIAS = 1023.0 + 2.0**52  # k + _EXP_BIAS holds k + 1023 in its low bits, above the bits of 2^52 itself
_BITS_2_52 = 0x4330000000000000  # the bit pattern of 2^52
_C = [1.0 / math.factorial(i) for i in range(14)]
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C[2:]


@jit(fastmath=FASTMATH, inline=True)
def exp_fast(x):
    """exp(x) within 1.01 ulp (measured against libm over [-708, 0]), written so that loops calling it vectorise.

    exp(x) = 2^k exp(r) with k = round(x / ln 2), r = x - k ln 2 (|r| <= ln 2 / 2, Cody-Waite two-part ln 2) and
    exp(r) by its degree-13 Taylor polynomial (truncation below 1e-17); 2^k is built from its bit pattern, the
    exponent k + 1023 read from the low bits of the float k + 1023 + 2^52 (exact), because a conversion of a float to
    an integer does not vectorise without AVX-512. Below -708 the result is 0 (flushing the subnormal range), above
    709 it overflows to inf; NaN stays NaN."""
    xc = x if x > _EXP_MIN else _EXP_MIN
    xc = xc if xc < _EXP_MAX else _EXP_MAX
    k = np.floor(xc * _LOG2E + 0.5)  # a float (math.floor gives an integer)
    r = (xc - k * _LN2_HI) - k * _LN2_LO
    p = _C13
    p = p * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    p = p * r + 1.0
    e = p * _f64_from_bits((_bits_from_f64(k + _EXP_BIAS) - _BITS_2_52) << 52)
    if x >= _EXP_MIN:
        return e if x <= _EXP_MAX else math.inf
    return 0.0 if x < _EXP_MIN else x  # the last case is NaN


TANH_SERIES = 0.125  # below this |z|, tanh by its Taylor series (the exp formula would lose relative accuracy)


@jit(fastmath=FASTMATH, inline=True)
def sigmoid_fast(z):
    """1 / (1 + e^-z) with :func:`exp_fast`: accurate for every z (e^-z = inf gives 0); vectorises."""
    return 1.0 / (1.0 + exp_fast(-z))


@jit(fastmath=FASTMATH, inline=True)
def tanh_fast(z):
    """tanh within a few ulp: (1 - e) / (1 + e), e = exp(-2|z|), and the series to z^15 near 0; vectorises."""
    az = abs(z)
    e = exp_fast(-2.0 * az)
    big = (1.0 - e) / (1.0 + e)
    z2 = z * z
    p = -929569.0 / 638512875.0
    p = p * z2 + 21844.0 / 6081075.0
    p = p * z2 - 1382.0 / 155925.0
    p = p * z2 + 62.0 / 2835.0
    p = p * z2 - 17.0 / 315.0
    p = p * z2 + 2.0 / 15.0
    p = p * z2 - 1.0 / 3.0
    small = z + z * z2 * p
    return small if az < TANH_SERIES else math.copysign(big, z)
