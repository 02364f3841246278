"""BLAS ``dgemm`` called from jitted code: :func:`gemm` on row-major blocks of larger arrays, with leading
dimensions and accumulation, and :func:`resolve_blas` to look the symbol up before kernel threads need it."""
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from ._compile import jit


@intrinsic
def _dgemm(typingctx, transa, transb, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc):
    """Fortran (column-major) dgemm, c = alpha op(a) op(b) + beta c, with a, b, c the float64 arrays' data from
    flat element offsets ia, ib, ic. Goes through Numba's own BLAS entry point (the one np.dot uses: SciPy's
    cython_blas), so no symbol is resolved by hand and cached code stays valid."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float64 for x in (a, b, c)):
        return None
    sig = types.void(transa, transb, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc)

    def codegen(context, builder, signature, args):
        from numba.np.linalg import ensure_blas

        ensure_blas()
        tys = signature.args
        char = ir.IntType(8)
        intp = context.get_value_type(types.intp)
        void_p = char.as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [char, char, char, intp, intp, intp, void_p, void_p, intp, void_p,
                                                intp, void_p, void_p, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")

        def arg(i, ty):
            return context.cast(builder, args[i], tys[i], ty)

        def data(i, offset):
            base = make_array(tys[i])(context, builder, args[i]).data
            return builder.bitcast(builder.gep(base, [arg(offset, types.intp)]), void_p)

        def scalar(i):
            return builder.bitcast(cgutils.alloca_once_value(builder, arg(i, types.float64)), void_p)

        def flag(i):
            return builder.trunc(arg(i, types.int64), char)

        builder.call(fn, (ir.Constant(char, ord("d")), flag(0), flag(1), arg(2, types.intp), arg(3, types.intp),
                          arg(4, types.intp), scalar(5), data(6, 7), arg(8, types.intp), data(9, 10),
                          arg(11, types.intp), scalar(12), data(13, 14), arg(15, types.intp)))
        return context.get_dummy_value()

    return sig, codegen


_NO_TRANS = ord("n")
_TRANS = ord("t")


@jit
def gemm(trans_a, trans_b, m, n, k, alpha, a, ia, lda, b, ib, ldb, beta, c, ic, ldc):
    """C = alpha op(A) op(B) + beta C on row-major blocks: C is m x n starting at c.flat[ic] with row stride ldc,
    A (m x k, or k x m when ``trans_a``) at a.flat[ia] with row stride lda, B likewise. Arrays must be C-contiguous
    float64; nothing is allocated. Empty products only scale C (BLAS semantics)."""
    if m == 0 or n == 0:
        return
    # row-major C = op(A) op(B)  <=>  column-major C^T = op(B)^T op(A)^T, with the same leading dimensions
    _dgemm(_TRANS if trans_b else _NO_TRANS, _TRANS if trans_a else _NO_TRANS, n, m, k, alpha, b, ib, max(ldb, 1),
           a, ia, max(lda, 1), beta, c, ic, max(ldc, 1))


_blas_resolved = False


def resolve_blas():
    """Make Numba look up BLAS's dgemm now, in this thread, before kernel threads call it."""
    global _blas_resolved
    if not _blas_resolved:
        one = np.ones(1)
        gemm(False, False, 1, 1, 1, 1.0, one, 0, 1, one, 0, 1, 0.0, np.zeros(1), 0, 1)
        _blas_resolved = True
