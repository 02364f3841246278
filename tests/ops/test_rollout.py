import autograd.numpy as anp
import numpy as np
import pytest

from gpssm_np.ops.rollout import rollout, rollout_example, rollout_reference
from tests.gradcheck import check_vjp_against_reference, check_vjp_finite_differences

DIFFERENTIABLE = (0, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13)  # x0, Z, l, s2, alpha, B, A, sqrt_q, F, G, b
MEANS = ("zero", "identity", "linear")


def with_mean(args, mean):
    """args with (F, G, b) the zero mean, the identity mean (residual dynamics) or the example's linear mean."""
    args = tuple(args)
    dx, du = args[0].shape[1], args[1].shape[2]
    if mean == "linear":
        return args
    F = np.eye(dx) if mean == "identity" else np.zeros((dx, dx))
    return args[:11] + (F, np.zeros((dx, du)), np.zeros(dx))


def symmetric_B(fn):
    """Feed B through (B + B^T)/2 so gradient checks perturb only symmetric directions."""

    def wrapped(x0, U, Z, ell, s2, alpha, B, *rest, **kwargs):
        return fn(x0, U, Z, ell, s2, alpha, 0.5 * (B + anp.swapaxes(B, 1, 2)), *rest, **kwargs)

    return wrapped


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("mean", MEANS)
def test_forward_matches_reference(kind, mean, rng):
    args = with_mean(rollout_example(rng), mean)
    np.testing.assert_allclose(rollout(*args, kind=kind), rollout_reference(*args, kind=kind), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("mean", MEANS)
def test_vjp_matches_autograd_and_finite_differences(kind, mean, rng):
    # all 11 differentiable arguments, also F, G, b at the zero and the identity mean
    args = with_mean(rollout_example(rng), mean)
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, kind=kind)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng, kind=kind)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("du", [0, 2])
def test_linear_mean_value_and_gradients(kind, du, rng, monkeypatch):
    # nonzero F, G, b with no inputs (G is (d_x, 0)) and with two, over several particle blocks
    from gpssm_np.ops import rollout as module

    monkeypatch.setattr(module, "PARTICLE_BLOCK", 4)
    args = list(_bigger_example(rng, du=du))
    dx = args[0].shape[1]
    args[11] = 0.9 * np.eye(dx) + 0.2 * rng.normal(size=(dx, dx))
    args[12] = 0.5 * rng.normal(size=(dx, du))
    args[13] = 0.5 * rng.normal(size=dx)
    args = tuple(args)
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    np.testing.assert_allclose(fn(*args, kind=kind), ref(*args, kind=kind), rtol=1e-12, atol=1e-12)
    argnums = tuple(i for i in DIFFERENTIABLE if args[i].size)  # an empty G has nothing to compare
    check_vjp_against_reference(fn, ref, args, argnums, rng, kind=kind)
    check_vjp_finite_differences(fn, args, argnums, rng, kind=kind)
    if du == 0:
        from autograd import grad

        assert grad(lambda G: anp.sum(fn(*args[:12], G, args[13], kind=kind)))(args[12]).shape == (dx, 0)


@pytest.mark.parametrize("mean", MEANS)
def test_without_the_gp_the_rollout_is_the_linear_recursion(mean, rng):
    # A = 0 leaves only the mean function: x_t = F x_{t-1} + G u_t + b + sqrt_q eps_x. The zero mean gives
    # x_t = sqrt_q eps_x exactly, nothing of x_{t-1}, and no gradient to x0.
    from autograd import grad

    args = list(with_mean(_bigger_example(rng), mean))
    args[7] = np.zeros_like(args[7])
    x0, U, sqrt_q, eps_x, F, G, b = args[0], args[1], args[8], args[10], args[11], args[12], args[13]
    S = x0.shape[0] // U.shape[0]
    x, expected = x0, []
    for t in range(eps_x.shape[0]):
        x = x @ F.T + np.repeat(U[:, t], S, axis=0) @ G.T + b + sqrt_q * eps_x[t]
        expected.append(x)
    X = rollout(*args)
    np.testing.assert_allclose(X, np.stack(expected), rtol=1e-12, atol=1e-12)
    if mean == "zero":
        np.testing.assert_array_equal(X, sqrt_q * eps_x)
        gx0 = grad(lambda x0_: anp.sum(rollout(x0_, *args[1:])))(x0)
        np.testing.assert_array_equal(gx0, np.zeros_like(x0))


def test_mean_shapes_are_checked(rng):
    args = list(rollout_example(rng))
    args[12] = np.zeros((args[0].shape[1], 2))  # d_u is 1
    with pytest.raises(ValueError, match="F, G, b must have shapes"):
        rollout(*args)


def test_variance_floor_blocks_gradient(rng):
    # B = K(Z,Z)^{-1}-like values large enough to drive var below the floor: the sample is then the mean.
    args = list(rollout_example(rng))
    args[6] = 100.0 * np.eye(args[6].shape[1])[None].repeat(args[6].shape[0], axis=0)
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    np.testing.assert_allclose(fn(*args), ref(*args), rtol=1e-12, atol=1e-12)
    check_vjp_against_reference(fn, ref, tuple(args), DIFFERENTIABLE, rng)


def test_no_inputs_and_layout_invariance(rng):
    args = list(rollout_example(rng))
    args[1] = np.zeros((args[1].shape[0], args[1].shape[1], 0))
    args[2] = args[2][:, :, :3]
    args[3] = args[3][:, :3]  # strided slices, and d_u = 0
    args[11] = np.asfortranarray(args[11])
    args[12] = args[12][:, :0]
    out = rollout(*args)
    np.testing.assert_allclose(out, rollout_reference(*args), rtol=1e-12, atol=1e-12)
    f32 = [a.astype(np.float32) for a in args]
    np.testing.assert_allclose(rollout(*f32), rollout_reference(*[a.astype(np.float64) for a in f32]), rtol=1e-12)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_vjp_recomputes_when_tape_is_missing(kind, rng):
    """The reverse pass without its forward pass's tape (recomputed) gives the taped pass's numbers exactly."""
    from gpssm_np.ops import rollout as module

    args = rollout_example(rng)
    X = module._rollout_traced(*args, kind=kind)  # keeps its tape
    assert module._TAPES.lookup(X) is not None
    G = rng.normal(size=X.shape)
    taped = module._rollout_make_vjp(X, *args, kind=kind)(G)
    X_untraced = rollout(*args, kind=kind)  # no tape kept: the reverse pass recomputes it
    assert module._TAPES.lookup(X_untraced) is None
    recomputed = module._rollout_make_vjp(X_untraced, *args, kind=kind)(G)
    for a, b in zip(taped, recomputed):
        if a is not None:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_variance_floor_against_finite_differences(kind, rng):
    """Both branches of the floor (clamped and not) in one rollout, none within a finite-difference step of the
    kink, against the autograd reference and finite differences for both kernels."""
    from gpssm_np._config import VAR_FLOOR
    from gpssm_np.ops.kernels import kernel_matrix_reference

    args = list(rollout_example(rng))
    args[6] = 100.0 * np.eye(args[6].shape[1])[None].repeat(args[6].shape[0], axis=0)
    args = tuple(args)
    x0, U, Z, ell, s2, B = args[0], args[1], args[2], args[3], args[4], args[6]
    X, S = rollout(*args, kind=kind), x0.shape[0] // U.shape[0]
    var = []  # s2_q - k^T B_q k at every step's GP input, before the floor
    for t in range(X.shape[0]):
        inputs = np.concatenate([x0 if t == 0 else X[t - 1], np.repeat(U[:, t, :], S, axis=0)], axis=1)
        K = kernel_matrix_reference(inputs, Z, ell, s2, kind)
        var.append(s2[None, :] - np.einsum("qnm,qmk,qnk->nq", K, B, K))
    var = np.stack(var)
    assert (var <= VAR_FLOOR).any() and (var > VAR_FLOOR).any() and np.min(np.abs(var - VAR_FLOOR)) > 1e-4
    fn, ref = symmetric_B(rollout), symmetric_B(rollout_reference)
    check_vjp_against_reference(fn, ref, args, DIFFERENTIABLE, rng, kind=kind)
    check_vjp_finite_differences(fn, args, DIFFERENTIABLE, rng, kind=kind)


# ---------------------------------------------------------------------------------------------------------------
# Performance machinery: fast exp, BLAS blocks, particle blocks and threads, tape budget and pool
# ---------------------------------------------------------------------------------------------------------------
def test_exp_fast_is_accurate_and_handles_the_edges():
    from gpssm_np.ops._fastmath import exp_fast

    x = np.concatenate([np.linspace(-708.0, 709.0, 200001), -np.logspace(-300, 2.8, 2001)])
    got = np.array([exp_fast(v) for v in x[::50]] + [exp_fast(v) for v in x[-2001:]])
    want = np.exp(np.concatenate([x[::50], x[-2001:]]))
    assert np.max(np.abs(got - want) / want) <= 1.02 * np.finfo(float).eps
    assert exp_fast(0.0) == 1.0
    assert exp_fast(-709.0) == 0.0 and exp_fast(-np.inf) == 0.0  # below -708: flushed to 0, never subnormal
    assert exp_fast(710.0) == np.inf and exp_fast(np.inf) == np.inf
    assert np.isnan(exp_fast(np.nan))


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_on_row_major_blocks(trans_a, trans_b, rng):
    import numba

    from gpssm_np.ops._blas import gemm

    call = numba.njit(lambda *args: gemm(*args))  # an intrinsic: callable from jitted code only
    m, n, k = 3, 4, 5
    a = rng.normal(size=(7, 9))  # op(A) is the block at row 1, column 2 (k x m when transposed)
    b = rng.normal(size=(8, 10))
    c = rng.normal(size=(6, 11))
    A = a[1:1 + (k if trans_a else m), 2:2 + (m if trans_a else k)]
    B = b[2:2 + (n if trans_b else k), 1:1 + (k if trans_b else n)]
    expected = c.copy()
    expected[1:1 + m, 3:3 + n] = 0.5 * c[1:1 + m, 3:3 + n] - 2.0 * (A.T if trans_a else A) @ (B.T if trans_b else B)
    call(trans_a, trans_b, m, n, k, -2.0, a, 1 * 9 + 2, 9, b, 2 * 10 + 1, 10, 0.5, c, 1 * 11 + 3, 11)
    np.testing.assert_allclose(c, expected, rtol=1e-13, atol=1e-13)
    before = c.copy()
    call(trans_a, trans_b, 0, n, k, -2.0, a, 0, 9, b, 0, 10, 0.5, c, 0, 11)  # m = 0: nothing happens
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("trans_a", [False, True])
def test_gemv_on_row_major_blocks(trans_a, rng):
    import numba

    from gpssm_np.ops._blas import gemv

    call = numba.njit(lambda *args: gemv(*args))
    m, n = 3, 4
    a = rng.normal(size=(7, 9))  # op(A) is the block at row 1, column 2 (n x m when transposed)
    x, y = rng.normal(size=8), rng.normal(size=6)
    A = a[1:1 + (n if trans_a else m), 2:2 + (m if trans_a else n)]
    expected = y.copy()
    expected[2:2 + m] = 0.5 * y[2:2 + m] - 2.0 * (A.T if trans_a else A) @ x[3:3 + n]
    call(trans_a, m, n, -2.0, a, 1 * 9 + 2, 9, x, 3, 0.5, y, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-13, atol=1e-13)


def test_blas_calls_give_the_bits_of_np_dot(rng):
    # ops/conditional.py writes its products through gemm and gemv and relies on np.dot's bits
    import numba

    from gpssm_np.ops._blas import gemm, gemv

    @numba.njit
    def products(P, R, v):
        M = P.shape[0]
        out = np.empty((6, M, M))
        gemm(False, False, M, M, M, 1.0, P, 0, M, R, 0, M, 0.0, out, 0, M)
        gemm(True, False, M, M, M, 1.0, P, 0, M, R, 0, M, 0.0, out, M * M, M)
        gemm(False, True, M, M, M, 1.0, P, 0, M, R, 0, M, 0.0, out, 2 * M * M, M)
        gemm(True, True, M, M, M, 1.0, P, 0, M, R, 0, M, 0.0, out, 3 * M * M, M)
        gemv(False, M, M, 1.0, P, 0, M, v, 0, 0.0, out, 4 * M * M)
        gemv(True, M, M, 1.0, P, 0, M, v, 0, 0.0, out, 5 * M * M)
        return out

    @numba.njit
    def dots(P, R, v):
        return np.dot(P, R), np.dot(P.T, R), np.dot(P, R.T), np.dot(P.T, R.T), np.dot(P, v), np.dot(P.T, v)

    P, R, v = rng.normal(size=(13, 13)), rng.normal(size=(13, 13)), rng.normal(size=13)
    got = products(P, R, v)
    for i, want in enumerate(dots(P, R, v)):
        np.testing.assert_array_equal(got[i].ravel()[:want.size], want.ravel())


def _value_and_grads(fn, args, weights, **kwargs):
    from autograd import grad

    value = fn(*args, **kwargs)
    grads = grad(lambda *a: anp.sum(fn(*a, **kwargs) * weights), list(DIFFERENTIABLE))(*args)
    return np.asarray(value), [np.asarray(g) for g in grads]


def _bigger_example(rng, nseq=3, S=5, T=6, du=1):
    """rollout_example's sizes but 15 particles over 3 sequences and 6 steps (and d_u inputs)."""
    args = list(rollout_example(rng))
    dx, (Q, M) = args[0].shape[1], args[5].shape
    N, D = nseq * S, dx + du
    args[0] = rng.normal(size=(N, dx))
    args[1] = rng.normal(size=(nseq, T, du))
    args[2] = rng.uniform(-2, 2, size=(Q, M, D))
    args[3] = rng.uniform(0.7, 2.0, size=(Q, D))
    args[9] = rng.normal(size=(T, N, Q))
    args[10] = rng.normal(size=(T, N, dx))
    args[12] = 0.3 * rng.normal(size=(dx, du))
    return tuple(args)


@pytest.mark.parametrize("kind", ["matern52", "se"])
@pytest.mark.parametrize("mean", MEANS)
def test_fused_matches_reference_to_1e10_over_several_blocks(kind, mean, rng, monkeypatch):
    # fast-math contraction and reassociation, exp_fast and BLAS change only rounding: 1e-10 relative is a bound
    # far tighter than the gradient checks above, and blocks of 4 particles (the last one partly filled) check
    # the block bookkeeping
    from gpssm_np.ops import rollout as module
    from tests.gradcheck import rel_err

    monkeypatch.setattr(module, "PARTICLE_BLOCK", 4)
    args = with_mean(_bigger_example(rng), mean)
    args = args[:6] + (0.5 * (args[6] + np.swapaxes(args[6], 1, 2)),) + args[7:]
    weights = rng.normal(size=(args[9].shape[0],) + args[0].shape)
    X, grads = _value_and_grads(rollout, args, weights, kind=kind)
    X_ref, grads_ref = _value_and_grads(rollout_reference, args, weights, kind=kind)
    np.testing.assert_allclose(X, X_ref, rtol=1e-10, atol=1e-12)
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g, g_ref) <= 1e-10


def test_threads_give_bit_identical_results(rng, monkeypatch):
    from gpssm_np.ops import rollout as module
    from gpssm_np.ops.threads import use_threads

    monkeypatch.setattr(module, "PARTICLE_BLOCK", 2)  # 8 blocks
    args = _bigger_example(rng)
    weights = rng.normal(size=(args[9].shape[0],) + args[0].shape)
    results = []
    for threads in (1, 2):
        with use_threads(threads):
            results.append(_value_and_grads(rollout, args, weights))
    (X1, g1), (X2, g2) = results
    np.testing.assert_array_equal(X1, X2)
    for a, b in zip(g1, g2):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_tape_over_budget_is_recomputed(kind, rng, monkeypatch):
    from gpssm_np.ops import rollout as module

    args = _bigger_example(rng)
    weights = rng.normal(size=(args[9].shape[0],) + args[0].shape)
    X, grads = _value_and_grads(rollout, args, weights, kind=kind)
    nb, L = module.particle_blocks(args[0].shape[0])
    T, Q, M = args[9].shape[0], args[2].shape[0], args[2].shape[1]
    size = 8 * nb * T * Q * M * L
    for budget, kept in ((2 * size, (T, 1)), (0, (1, 1))):  # drop dk/dr2, then also B k
        monkeypatch.setattr(module, "TAPE_BYTES", budget)
        shapes = module.tape_shapes(nb, T, Q, M, L, args[2].shape[2], 1)
        assert (shapes[2][1], shapes[3][1]) == kept
        module._TAPES.clear()
        X2, grads2 = _value_and_grads(rollout, args, weights, kind=kind)
        np.testing.assert_array_equal(X, X2)
        for a, b in zip(grads, grads2):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_untraced_call_keeps_no_tape(rng):
    from gpssm_np.ops import rollout as module

    args = rollout_example(rng)
    module._TAPES.clear()
    X = rollout(*args)
    assert module._TAPES.lookup(X) is None
    assert module._TAPES.pooled_bytes() > 0  # its one-step buffers went straight back to the pool
    np.testing.assert_allclose(X, rollout_reference(*args), rtol=1e-12, atol=1e-12)


def test_tape_store_reuses_memory_for_smaller_requests():
    from gpssm_np.ops._tape import TapeStore

    store = TapeStore(max_bytes=10**6, max_free=2)
    first = store.acquire(((4, 5), (3,)))
    assert [a.shape for a in first] == [(4, 5), (3,)]
    store.release(first)
    smaller = store.acquire(((2, 5), (0,)))
    assert np.shares_memory(smaller[0], first[0])
    store.release(smaller)
    bigger = store.acquire(((5, 5), (3,)))  # does not fit: new memory, the pooled tape stays
    assert not np.shares_memory(bigger[0], first[0]) and store.pooled_bytes() == first[0].nbytes + first[1].nbytes
    out = np.zeros(1)
    store.attach(out, bigger)
    assert store.lookup(out) is bigger and store.lookup(np.zeros(1)) is None
    del out  # freeing the output returns its tape to the pool
    assert store.pooled_bytes() == sum(a.nbytes for a in first + bigger)
    store.release(store.acquire(((10**6,),)))  # over max_bytes: not kept
    assert store.pooled_bytes() <= 10**6


def test_warmup_reports_its_seconds():
    # what it compiles: test_warmup_compiles_every_kernel_of_ops below
    import gpssm_np as gp

    seconds = gp.warmup()
    assert isinstance(seconds, float) and seconds >= 0.0


WARMUP_MISSES = """
import importlib, pkgutil
import numba
import gpssm_np as gp
from gpssm_np import ops
gp.warmup()
kernels = {}
for info in pkgutil.iter_modules(ops.__path__):
    module = importlib.import_module("gpssm_np.ops." + info.name)
    kernels.update({obj: module.__name__ + "." + name for name, obj in vars(module).items()
                    if isinstance(obj, numba.core.registry.CPUDispatcher)
                    and obj.py_func.__module__ == module.__name__})
called = {obj.py_func.__globals__.get(name) for obj in kernels for name in obj.py_func.__code__.co_names}
for obj, name in kernels.items():
    if obj not in called and not obj.signatures:  # one that Python calls: compiled, or loaded from the cache
        print(name)
"""


def test_warmup_compiles_every_kernel_of_ops():
    # in a process of its own: kernels other tests compiled must not hide one that warmup misses (kernels called by
    # other kernels are compiled inside them, and not at all when those come from the cache)
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", WARMUP_MISSES], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []


def test_blas_limit_nests_and_is_restored():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    from gpssm_np.ops.threads import blas_single_threaded

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    # from two BLAS threads (the test environment often starts at one, where a limit that did nothing would pass)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        assert before and all(n == 2 for n in before)
        with blas_single_threaded():
            assert all(n == 1 for n in blas_threads())
            with blas_single_threaded():
                assert all(n == 1 for n in blas_threads())
            assert all(n == 1 for n in blas_threads())
        assert blas_threads() == before


def test_blas_limit_is_not_set_again_when_blas_runs_one_thread(monkeypatch):
    pytest.importorskip("threadpoolctl")
    from gpssm_np.ops import threads

    controller = threads._blas_controller()
    with controller.limit(limits=1, user_api="blas"):
        monkeypatch.setattr(controller, "limit", lambda **kwargs: pytest.fail("the limit was set again"))
        with threads.blas_single_threaded():
            pass
