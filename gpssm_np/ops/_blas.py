"""BLAS called from jitted code: :func:`gemm` and :func:`gemv` on row-major blocks of larger arrays, with leading
dimensions and accumulation, and :func:`resolve_blas` to look the symbols up before kernel threads need them.

Both are intrinsics: the call is emitted straight into the calling kernel, so no function of its own is compiled
(a jitted wrapper compiled once more for every combination of constant arguments, a third of a second each). They
go through Numba's own BLAS entry points (those np.dot uses: SciPy's cython_blas), so no symbol is resolved by hand,
cached code stays valid, and a product written as ``np.dot(a, b)`` gives the same bits as the same product through
:func:`gemm` or :func:`gemv` (np.dot passes a transposed view as a transposed operand, as these do).
"""
import ctypes

import numpy as np
from llvmlite import ir
from numba import _helperlib, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

_CHAR = ir.IntType(8)
_VOID_P = _CHAR.as_pointer()


def _f64_arrays(*arrays):
    return all(isinstance(x, types.Array) and x.dtype == types.float64 for x in arrays)


def _operands(context, builder, signature, args):
    """Helpers of a codegen: arg(i) as intp, data(i, offset) the address of an array's element, scalar(i) a
    float64 on the stack, flag(i) 't' or 'n' for a boolean, ld(i) max(arg(i), 1)."""
    from numba.np.linalg import ensure_blas

    ensure_blas()
    tys = signature.args
    intp = context.get_value_type(types.intp)

    def arg(i):
        return context.cast(builder, args[i], tys[i], types.intp)

    def data(i, offset):
        base = make_array(tys[i])(context, builder, args[i]).data
        return builder.bitcast(builder.gep(base, [arg(offset)]), _VOID_P)

    def scalar(i):
        return builder.bitcast(cgutils.alloca_once_value(builder, context.cast(builder, args[i], tys[i],
                                                                               types.float64)), _VOID_P)

    def flag(i):
        trans = context.cast(builder, args[i], tys[i], types.boolean)
        return builder.select(trans, ir.Constant(_CHAR, ord("t")), ir.Constant(_CHAR, ord("n")))

    def ld(i):
        value = arg(i)
        one = ir.Constant(intp, 1)
        return builder.select(builder.icmp_signed("<", value, one), one, value)

    return intp, arg, data, scalar, flag, ld


@intrinsic
def gemm(typingctx, trans_a, trans_b, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc):
    """C = alpha op(A) op(B) + beta C on row-major blocks: C is m x n starting at c.flat[ic] with row stride ldc,
    A (m x k, or k x m when ``trans_a``) at a.flat[ia] with row stride lda, B likewise. Arrays must be C-contiguous
    float64; nothing is allocated. Empty products only scale C (BLAS semantics); nothing happens when m or n is 0.

    Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T with the same leading dimensions: Fortran dgemm
    (through Numba's ``numba_xxgemm``) with the operands swapped."""
    if not _f64_arrays(a, b, c):
        return None
    sig = types.void(trans_a, trans_b, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc)

    def codegen(context, builder, signature, args):
        intp, arg, data, scalar, flag, ld = _operands(context, builder, signature, args)
        fnty = ir.FunctionType(ir.IntType(32), [_CHAR, _CHAR, _CHAR, intp, intp, intp, _VOID_P, _VOID_P, intp,
                                                _VOID_P, intp, _VOID_P, _VOID_P, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        zero = ir.Constant(intp, 0)
        nonempty = builder.and_(builder.icmp_signed("!=", arg(2), zero), builder.icmp_signed("!=", arg(3), zero))
        with builder.if_then(nonempty):
            builder.call(fn, (ir.Constant(_CHAR, ord("d")), flag(1), flag(0), arg(3), arg(2), arg(4), scalar(5),
                              data(9, 10), ld(11), data(6, 7), ld(8), scalar(12), data(13, 14), ld(15)))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def gemv(typingctx, trans_a, m, n, alpha, a, ia, lda, x, ix, beta, y, iy):
    """y = alpha op(A) x + beta y on row-major blocks: y (m,) from y.flat[iy], x (n,) from x.flat[ix], A (m x n, or
    n x m when ``trans_a``) at a.flat[ia] with row stride lda; unit strides. Arrays must be C-contiguous float64.

    Row-major A is column-major A^T: Fortran dgemv (through Numba's ``numba_xxgemv``) with the other transpose
    flag, as np.dot calls it."""
    if not _f64_arrays(a, x, y):
        return None
    sig = types.void(trans_a, m, n, alpha, a, ia, lda, x, ix, beta, y, iy)

    def codegen(context, builder, signature, args):
        intp, arg, data, scalar, flag, ld = _operands(context, builder, signature, args)
        fnty = ir.FunctionType(ir.IntType(32), [_CHAR, _CHAR, intp, intp, _VOID_P, _VOID_P, intp, _VOID_P, _VOID_P,
                                                _VOID_P])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemv")
        trans = context.cast(builder, args[0], signature.args[0], types.boolean)
        flag_ = builder.select(trans, ir.Constant(_CHAR, ord("n")), ir.Constant(_CHAR, ord("t")))
        rows = builder.select(trans, arg(1), arg(2))  # of the column-major matrix
        cols = builder.select(trans, arg(2), arg(1))
        builder.call(fn, (ir.Constant(_CHAR, ord("d")), flag_, rows, cols, scalar(3), data(4, 5), ld(6),
                          data(7, 8), scalar(9), data(10, 11)))
        return context.get_dummy_value()

    return sig, codegen


_blas_resolved = False


def resolve_blas():
    """Make Numba look up BLAS's dgemm and dgemv now, in this thread, before kernel threads call them: one call of
    each of Numba's entry points on 1 x 1 arrays (through ctypes: no kernel to compile for it)."""
    global _blas_resolved
    if not _blas_resolved:
        ssize, char, ptr = ctypes.c_ssize_t, ctypes.c_char, ctypes.c_void_p
        xxgemm = ctypes.CFUNCTYPE(ctypes.c_int, char, char, char, ssize, ssize, ssize, ptr, ptr, ssize, ptr, ssize,
                                  ptr, ptr, ssize)(_helperlib.c_helpers["xxgemm"])
        xxgemv = ctypes.CFUNCTYPE(ctypes.c_int, char, char, ssize, ssize, ptr, ptr, ssize, ptr, ptr,
                                  ptr)(_helperlib.c_helpers["xxgemv"])
        one, zero, out = np.ones(1), np.zeros(1), np.zeros(1)
        p = [arr.ctypes.data for arr in (one, zero, out)]
        xxgemm(b"d", b"n", b"n", 1, 1, 1, p[0], p[0], 1, p[0], 1, p[1], p[2], 1)
        xxgemv(b"d", b"n", 1, 1, p[0], p[0], 1, p[0], p[1], p[2])
        _blas_resolved = out[0] == 1.0
