"""sort, argsort and the ``linalg`` extension, checked against NumPy and array-api-strict (values,
dtypes, shapes; lazily and under ``ml.eager()``), their VJP rules against ``jax.grad``, the
reference interpreter and the Python printer.

Factors that are unique only up to signs or order (eigenvectors, ``qr``, ``svd``) are checked by
what defines them: reconstructions, orthonormality, triangularity.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.autodiff.vjps import VJP
from minilazy.core.ir import Op, ShapeError
from minilazy.introspect import reference

xp = pytest.importorskip("array_api_strict")

MODES = ["lazy", "eager"]
FLOATS = [np.float32, np.float64]
# Batch shapes of the stacks of matrices, and the matrices' sizes.
BATCHES = st.sampled_from([(), (2,), (3, 1)])
SIZES = st.integers(1, 4)


def run(mode: str, thunk: Callable[[], Any]) -> Any:
    """``thunk``'s tensors as NumPy arrays, recorded lazily or op by op."""
    with ml.eager() if mode == "eager" else contextlib.nullcontext():
        out = thunk()
    if isinstance(out, (list, tuple)):
        return [t.numpy() for t in out]
    return out.numpy()


def tol(dtype: Any) -> float:
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def close(got: np.ndarray, expected: Any, dtype: Any = None, scale: float = 1.0) -> None:
    expected = np.asarray(np.from_dlpack(expected) if hasattr(expected, "__dlpack__")
                          and not isinstance(expected, np.ndarray) else expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape,
                                                                         expected.dtype,
                                                                         expected.shape)
    t = tol(dtype or got.dtype) * scale
    np.testing.assert_allclose(got, expected, rtol=t, atol=t)


@st.composite
def matrices(draw: st.DrawFn, kind: str = "general", dtype: Any = None,
             square: bool = True) -> np.ndarray:
    """Well-conditioned stacks of matrices: ``"spd"`` A Aᵀ + n I, ``"general"`` A + n I (both
    far from singular); ``square=False`` draws any (M, N) with a full-rank shift."""
    dtype = dtype or draw(st.sampled_from(FLOATS))
    batch, n = draw(BATCHES), draw(SIZES)
    m = n if square else draw(SIZES)
    a = draw(hnp.arrays(np.float64, (*batch, m, n), elements=st.floats(-1, 1)))
    if kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif square:
        a = a + 2 * n * np.eye(n)  # strictly diagonally dominant
    else:
        a = a + 2 * np.eye(m, n)
    return a.astype(dtype)


# -- sort and argsort ------------------------------------------------------------------------
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0]


def sortable() -> st.SearchStrategy[np.ndarray]:
    """Floats with many ties, signed zeros, infinities and NaNs, or small integers."""
    shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)
    floats = st.sampled_from(FLOATS).flatmap(lambda d: hnp.arrays(
        d, shapes, elements=st.sampled_from(SPECIAL) | st.floats(-3, 3, width=32)))
    ints = st.sampled_from([np.int8, np.uint8, np.int32, np.int64]).flatmap(
        lambda d: hnp.arrays(d, shapes))
    return floats | ints


@pytest.mark.parametrize("mode", MODES)
@given(sortable(), st.data())
def test_sort_and_argsort_match_strict(mode, x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    descending = data.draw(st.booleans())
    t = ml.asarray(x)
    got_sort, got_arg = run(mode, lambda: [ml.sort(t, axis=axis, descending=descending),
                                           ml.argsort(t, axis=axis, descending=descending)])
    s = xp.asarray(x)
    want_sort = np.from_dlpack(xp.sort(s, axis=axis, descending=descending))
    want_arg = np.from_dlpack(xp.argsort(s, axis=axis, descending=descending))
    assert got_sort.dtype == want_sort.dtype and got_sort.shape == want_sort.shape
    np.testing.assert_array_equal(got_sort, want_sort)  # NaNs where NumPy puts them
    assert got_arg.dtype == want_arg.dtype == np.int64
    np.testing.assert_array_equal(got_arg, want_arg)  # stable: ties in their original order
    if not descending:
        np.testing.assert_array_equal(got_arg, np.argsort(x, axis=axis, stable=True))


def test_sort_details():
    x = ml.asarray([1.0, -0.0, 0.0, math.nan, -math.inf, 1.0])
    assert ml.argsort(x).tolist() == [4, 1, 2, 0, 5, 3]  # -0.0 == 0.0 keep their order
    assert ml.argsort(x, descending=True).tolist() == [3, 0, 5, 1, 2, 4]
    assert ml.argsort(x, stable=False).tolist() == [4, 1, 2, 0, 5, 3]  # always stable
    assert ml.sort(x, descending=True).tolist()[1:] == [1.0, 1.0, 0.0, -0.0, -math.inf]
    with pytest.raises(np.exceptions.AxisError, match="sort"):
        ml.sort(ml.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError, match="argsort"):
        ml.argsort(ml.ones((2, 3)), axis=2)
    flags = ml.asarray([True, False, True, False])  # bools sort as NumPy's (False first)
    assert ml.argsort(flags, descending=True).tolist() == [0, 2, 1, 3]
    assert ml.sort(flags).tolist() == [False, False, True, True]
    assert ml.metrics().executions == 6  # errors raise at the call, without running
    assert VJP[Op.ARGSORT] is VJP[Op.ARGMAX]  # integer-valued: not differentiable


@pytest.mark.parametrize("descending", [False, True])
@settings(max_examples=8)
@given(hnp.arrays(np.float64, st.sampled_from([(5,), (3, 4), (2, 3, 2)]),
                  elements=st.floats(-4, 4), unique=True), st.data())
def test_sort_vjp_matches_jax(descending, x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    w = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(-1, 1)))
    g = ml.grad(lambda t: ml.sum(ml.sort(t, axis=axis, descending=descending) * w))(
        ml.asarray(x))
    with jax.enable_x64(True):
        want = jax.grad(lambda t: jnp.sum(jnp.sort(t, axis=axis, descending=descending) * w))(x)
    np.testing.assert_allclose(g.numpy(), np.asarray(want), rtol=1e-12, atol=1e-12)


# -- linalg: primitives against NumPy and array-api-strict -----------------------------------
@pytest.mark.parametrize("mode", MODES)
@given(matrices("spd"), st.booleans())
def test_cholesky_inv_det_slogdet_match_strict(mode, a, upper):
    t, s = ml.asarray(a), xp.asarray(a)
    got = run(mode, lambda: [ml.linalg.cholesky(t, upper=upper), ml.linalg.inv(t),
                             ml.linalg.det(t), *ml.linalg.slogdet(t)])
    sign, logabs = xp.linalg.slogdet(s)
    expected = [xp.linalg.cholesky(s, upper=upper), xp.linalg.inv(s), xp.linalg.det(s), sign,
                logabs]
    for g, e in zip(got, expected):
        close(g, e, scale=10)


@pytest.mark.parametrize("mode", MODES)
@given(matrices("general"), st.data())
def test_solve_matches_strict_with_broadcasting_and_vectors(mode, a, data):
    n = a.shape[-1]
    form = data.draw(st.sampled_from(["vector", "matrix", "broadcast"]))
    shape = {"vector": (n,), "matrix": (*a.shape[:-1], 2),
             "broadcast": (2, *([1] * (a.ndim - 2)), n, 3)}[form]
    b = data.draw(hnp.arrays(a.dtype, shape, elements=st.floats(-2, 2, width=32)))
    got = run(mode, lambda: ml.linalg.solve(ml.asarray(a), ml.asarray(b)))
    close(got, xp.linalg.solve(xp.asarray(a), xp.asarray(b)), scale=10)


@pytest.mark.parametrize("mode", MODES)
@given(matrices("spd"))
def test_eigh_values_match_and_vectors_reconstruct(mode, a):
    t = ml.asarray(a)
    w, v, w2 = run(mode, lambda: [*ml.linalg.eigh(t), ml.linalg.eigvalsh(t)])
    s = xp.asarray(a)
    close(w, xp.linalg.eigvalsh(s), scale=10 * a.shape[-1])
    np.testing.assert_array_equal(w, w2)
    assert v.shape == a.shape and v.dtype == a.dtype
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending, as NumPy (the standard leaves it open)
    t_ = tol(a.dtype) * 10 * a.shape[-1]
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=t_, atol=t_ * np.abs(a).max())
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(
        np.eye(a.shape[-1]), a.shape), atol=t_)


@pytest.mark.parametrize("mode", MODES)
@given(matrices("general", square=False), st.sampled_from(["reduced", "complete"]))
def test_qr_reconstructs_with_strict_shapes(mode, a, qr_mode):
    q, r = run(mode, lambda: ml.linalg.qr(ml.asarray(a), mode=qr_mode))
    sq, sr = xp.linalg.qr(xp.asarray(a), mode=qr_mode)
    assert (q.shape, r.shape) == (sq.shape, sr.shape) and q.dtype == r.dtype == a.dtype
    t_ = tol(a.dtype) * 10
    np.testing.assert_allclose(q @ r, a, atol=t_ * 4)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(
        np.eye(q.shape[-1]), (*a.shape[:-2], q.shape[-1], q.shape[-1])), atol=t_)
    np.testing.assert_array_equal(r, np.triu(r))


@pytest.mark.parametrize("mode", MODES)
@given(matrices("general", square=False), st.booleans())
def test_svd_reconstructs_and_svdvals_match_strict(mode, a, full):
    u, s, vh, sv = run(mode, lambda: [*ml.linalg.svd(ml.asarray(a), full_matrices=full),
                                      ml.linalg.svdvals(ml.asarray(a))])
    su, ss, svh = xp.linalg.svd(xp.asarray(a), full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (su.shape, ss.shape, svh.shape)
    close(s, ss, scale=10)
    close(sv, xp.linalg.svdvals(xp.asarray(a)), scale=10)
    k = s.shape[-1]
    t_ = tol(a.dtype) * 10
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               atol=t_ * 4)


# -- linalg: composed functions -------------------------------------------------------------
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]
VECTOR_ORDS = [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1]


@pytest.mark.parametrize("mode", MODES)
@given(matrices("general", square=False), st.sampled_from(MATRIX_ORDS), st.booleans())
def test_matrix_norm_matches_strict(mode, a, ord, keepdims):
    got = run(mode, lambda: ml.linalg.matrix_norm(ml.asarray(a), ord=ord, keepdims=keepdims))
    close(got, xp.linalg.matrix_norm(xp.asarray(a), ord=ord, keepdims=keepdims), scale=10)


@pytest.mark.parametrize("mode", MODES)
@given(hnp.arrays(st.sampled_from(FLOATS), hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-3, 3, width=32)),
       st.sampled_from(VECTOR_ORDS), st.booleans(), st.data())
def test_vector_norm_matches_strict(mode, x, ord, keepdims, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) | st.just(
        tuple(range(x.ndim))[-2:]))
    with np.errstate(all="ignore"):
        want = xp.linalg.vector_norm(xp.asarray(x), axis=axis, keepdims=keepdims, ord=ord)
    got = run(mode, lambda: ml.linalg.vector_norm(ml.asarray(x), axis=axis, keepdims=keepdims,
                                                  ord=ord))
    close(got, want, scale=10)


@pytest.mark.parametrize("mode", MODES)
@given(matrices("general"), st.integers(-3, 5))
def test_matrix_power_matches_strict(mode, a, n):
    a = a / a.shape[-1]  # keep powers near 1 in size
    got = run(mode, lambda: ml.linalg.matrix_power(ml.asarray(a), n))
    close(got, xp.linalg.matrix_power(xp.asarray(a), n), scale=100)


@pytest.mark.parametrize("mode", MODES)
@given(st.sampled_from(FLOATS), BATCHES, SIZES, SIZES, st.integers(0, 4), st.data())
def test_matrix_rank_and_pinv_match_strict(mode, dtype, batch, m, n, rank, data):
    rank = min(rank, m, n)
    left = data.draw(hnp.arrays(np.float64, (*batch, m, rank), elements=st.floats(-1, 1)))
    right = data.draw(hnp.arrays(np.float64, (*batch, rank, n), elements=st.floats(-1, 1)))
    # A matrix of a known rank: its nonzero singular values kept well away from zero
    u, _, vh = np.linalg.svd(left @ right + np.eye(m, n)[..., :, :], full_matrices=False)
    s = np.where(np.arange(min(m, n)) < rank, 1.0 + np.arange(min(m, n)), 0.0)
    a = ((u * s[..., None, :]) @ vh).astype(dtype)
    got_rank, got_pinv = run(mode, lambda: [ml.linalg.matrix_rank(ml.asarray(a)),
                                            ml.linalg.pinv(ml.asarray(a))])
    strict_rank = np.from_dlpack(xp.linalg.matrix_rank(xp.asarray(a)))
    assert got_rank.dtype == strict_rank.dtype and got_rank.shape == strict_rank.shape
    np.testing.assert_array_equal(got_rank, strict_rank)
    close(got_pinv, xp.linalg.pinv(xp.asarray(a)), scale=100)


@pytest.mark.parametrize("mode", MODES)
@given(hnp.arrays(st.sampled_from([np.int8, np.int32, np.uint16, np.float32, np.float64]),
                  hnp.array_shapes(min_dims=2, max_dims=4, max_side=4),
                  elements=st.integers(0, 5)),
       st.integers(-4, 4), st.booleans())
def test_diagonal_and_trace_match_strict(mode, x, offset, with_dtype):
    dtype = {"f": ml.float64, "i": ml.int64, "u": ml.uint64}[x.dtype.kind] if with_dtype else None
    got = run(mode, lambda: [ml.linalg.diagonal(ml.asarray(x), offset=offset),
                             ml.linalg.trace(ml.asarray(x), offset=offset, dtype=dtype)])
    s = xp.asarray(x)
    want_trace = xp.linalg.trace(s, offset=offset, dtype=None if dtype is None else getattr(
        xp, str(dtype)))
    for g, e in zip(got, [xp.linalg.diagonal(s, offset=offset), want_trace]):
        e = np.from_dlpack(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("mode", MODES)
@given(st.sampled_from([np.int32, np.float32, np.float64]),
       st.sampled_from([((3,), (3,), -1), ((2, 3), (3,), -1), ((3, 2), (1, 3, 2), -2),
                        ((4, 3), (4, 3), -1)]), st.data())
def test_cross_and_outer_match_strict(mode, dtype, shapes, data):
    s1, s2, axis = shapes
    a = data.draw(hnp.arrays(dtype, s1, elements=st.integers(-4, 4)))
    b = data.draw(hnp.arrays(dtype, s2, elements=st.integers(-4, 4)))
    got = run(mode, lambda: ml.linalg.cross(ml.asarray(a), ml.asarray(b), axis=axis))
    close(got, xp.linalg.cross(xp.asarray(a), xp.asarray(b), axis=axis))
    u, v = a.reshape(-1)[:3], b.reshape(-1)[:2]
    got = run(mode, lambda: ml.linalg.outer(ml.asarray(u), ml.asarray(v)))
    close(got, xp.linalg.outer(xp.asarray(u), xp.asarray(v)))


def test_namespace_has_the_whole_extension():
    assert set(xp.linalg.__all__) <= set(ml.linalg.__all__)
    assert all(callable(getattr(ml.linalg, n)) for n in xp.linalg.__all__)
    assert ml.linalg.matmul is ml.matmul and ml.linalg.vecdot is ml.vecdot
    assert ml.linalg.matrix_transpose is ml.matrix_transpose
    assert ml.linalg.tensordot is ml.tensordot
    assert isinstance(ml.linalg.eigh(ml.eye(2)), ml.linalg.EighResult)
    assert ml.linalg.qr(ml.eye(2))._fields == ("Q", "R")
    assert ml.linalg.svd(ml.eye(2))._fields == ("U", "S", "Vh")
    assert ml.linalg.slogdet(ml.eye(2))._fields == ("sign", "logabsdet")


def test_errors_at_the_call_name_the_shapes_and_dtypes():
    with pytest.raises(ValueError, match=r"linalg.inv: needs square matrices, got f64\[2,3\]"):
        ml.linalg.inv(ml.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ml.linalg.det(ml.ones((3,)))
    with pytest.raises(TypeError, match=r"floating-point tensor, got i64\[2,2\]"):
        ml.linalg.cholesky(ml.asarray([[1, 0], [0, 1]]))
    with pytest.raises(TypeError, match="float16 is unsupported"):
        ml.linalg.eigh(ml.ones((2, 2), dtype=ml.float16))
    with pytest.raises(ValueError, match="cannot solve"):
        ml.linalg.solve(ml.eye(3), ml.ones((2,)))
    with pytest.raises(ShapeError, match="broadcast"):
        ml.linalg.solve(ml.ones((2, 3, 3)), ml.ones((4, 3, 1)))
    with pytest.raises(ValueError, match="mode"):
        ml.linalg.qr(ml.eye(2), mode="r")
    with pytest.raises(ValueError, match="norm order"):
        ml.linalg.matrix_norm(ml.eye(2), ord=3)
    with pytest.raises(ValueError, match="size 3"):
        ml.linalg.cross(ml.ones((2,)), ml.ones((2,)))
    with pytest.raises(ValueError, match="1-D"):
        ml.linalg.outer(ml.ones((2, 2)), ml.ones((2,)))
    assert ml.metrics().executions == 0


def test_empty_and_degenerate_matrices():
    assert ml.linalg.matrix_rank(ml.ones((2, 0, 3))).tolist() == [0, 0]
    assert ml.linalg.diagonal(ml.ones((2, 3)), offset=5).shape == (0,)
    assert ml.linalg.matrix_power(ml.ones((2, 2)), 0).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    s = ml.linalg.slogdet(ml.zeros((2, 2)))
    assert s.sign.item() == 0.0 and s.logabsdet.item() == -math.inf


# -- VJP rules against jax.grad -------------------------------------------------------------
RNG = np.random.default_rng(7)


def _spd(n: int, batch: tuple[int, ...] = (), complex_: bool = False) -> np.ndarray:
    """A symmetric (Hermitian, if ``complex_``) positive-definite stack of matrices."""
    a = RNG.standard_normal((*batch, n, n))
    if complex_:
        a = a + 1j * RNG.standard_normal(a.shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], int]] = {
    # name: (minilazy function, jax function, number of matrix arguments)
    "inv": (ml.linalg.inv, jnp.linalg.inv, 1),
    "det": (ml.linalg.det, jnp.linalg.det, 1),
    "slogdet": (lambda a: ml.linalg.slogdet(a).logabsdet,
                lambda a: jnp.linalg.slogdet(a)[1], 1),
    # the sign: piecewise constant for real matrices, a phase e^{i arg det} for complex ones
    "slogdet_sign": (lambda a: ml.linalg.slogdet(a).sign, lambda a: jnp.linalg.slogdet(a)[0], 1),
    "cholesky": (ml.linalg.cholesky, jnp.linalg.cholesky, 1),
    "cholesky_upper": (lambda a: ml.linalg.cholesky(a, upper=True),
                       lambda a: jnp.linalg.cholesky(a, upper=True), 1),
    "eigvalsh": (ml.linalg.eigvalsh, jnp.linalg.eigvalsh, 1),
    # eigenvectors are unique up to sign (phase): a loss of their moduli does not see it
    "eigh_vectors": (lambda a: ml.abs(ml.linalg.eigh(a).eigenvectors) ** 2,
                     lambda a: jnp.abs(jnp.linalg.eigh(a)[1]) ** 2, 1),
    "svdvals": (ml.linalg.svdvals, lambda a: jnp.linalg.svd(a, compute_uv=False), 1),
    "solve": (ml.linalg.solve, jnp.linalg.solve, 2),
    "matrix_norm_nuc": (lambda a: ml.linalg.matrix_norm(a, ord="nuc"),
                        lambda a: jnp.linalg.matrix_norm(a, ord="nuc"), 1),
    "vector_norm": (lambda a: ml.linalg.vector_norm(a, axis=-1, ord=3),
                    lambda a: jnp.linalg.vector_norm(a, axis=-1, ord=3), 1),
    "matrix_power": (lambda a: ml.linalg.matrix_power(a, -3),
                     lambda a: jnp.linalg.matrix_power(a, -3), 1),
}


SYMMETRIC = {"cholesky", "cholesky_upper", "eigvalsh", "eigh_vectors"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_linalg_vjp_matches_jax(name, batch, complex_):
    # complex matrices: the loss is the real part of a complex-weighted sum, and the cotangent
    # is JAX's (the conjugate of the gradient) for holomorphic and non-holomorphic rules alike
    mine, theirs, arity = CASES[name]
    n = 3
    args = [_spd(n, batch, complex_) for _ in range(arity)]
    if name not in SYMMETRIC:  # a general matrix where the function takes one
        args[0] = args[0] + 0.5 * RNG.standard_normal(args[0].shape)
    with jax.enable_x64(True):
        out_shape = jax.eval_shape(theirs, *args).shape
        w = RNG.standard_normal(out_shape) + (1j * RNG.standard_normal(out_shape) if complex_
                                              else 0)
        want = jax.grad(lambda *a: jnp.sum(jnp.real(theirs(*a) * w)),
                        argnums=tuple(range(arity)))(*args)
    got = ml.grad(lambda *a: ml.sum(ml.real(mine(*a) * w)), argnums=tuple(range(arity)))(
        *map(ml.asarray, args))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-8, atol=1e-10)


def test_factors_without_a_vjp_rule_refuse_gradients():
    a = ml.asarray(_spd(3))
    with pytest.raises(TypeError, match="linalg.qr_q is not differentiable"):
        ml.grad(lambda t: ml.sum(ml.linalg.qr(t).Q))(a)
    with pytest.raises(TypeError, match="linalg.svd_u is not differentiable"):
        ml.grad(lambda t: ml.sum(ml.linalg.svd(t).U))(a)
    with pytest.raises(TypeError, match="argsort is not differentiable"):
        VJP[Op.ARGSORT](a, a, (a,), ml.argsort(a)._node)
    # an integer path carries no cotangent at all (as in JAX): argsort's indices used as data
    g = ml.grad(lambda t: ml.sum(ml.astype(ml.argsort(t), ml.float64) * t))(a)
    np.testing.assert_array_equal(g.numpy(), np.argsort(a.numpy(), axis=-1))


# -- complex matrices ------------------------------------------------------------------------
@st.composite
def complex_matrices(draw: st.DrawFn, hermitian: bool, square: bool = True) -> np.ndarray:
    """complex64/complex128 stacks: Hermitian positive-definite, or diagonally dominant."""
    dtype = draw(st.sampled_from([np.complex64, np.complex128]))
    batch, n = draw(BATCHES), draw(SIZES)
    m = n if square else draw(SIZES)
    parts = [draw(hnp.arrays(np.float64, (*batch, m, n), elements=st.floats(-1, 1)))
             for _ in range(2)]
    a = parts[0] + 1j * parts[1]
    if hermitian:
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    else:
        a = a + 2 * n * np.eye(m, n)
    return a.astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@given(complex_matrices(hermitian=True), complex_matrices(hermitian=False))
def test_complex_matrices_match_strict(mode, h, a):
    ta, th, sa, sh = ml.asarray(a), ml.asarray(h), xp.asarray(a), xp.asarray(h)
    got = run(mode, lambda: [ml.linalg.cholesky(th), ml.linalg.eigvalsh(th), ml.linalg.inv(ta),
                             ml.linalg.det(ta), *ml.linalg.slogdet(ta),
                             ml.linalg.solve(ta, ta[..., 0, :, None]), ml.linalg.svdvals(ta),
                             ml.linalg.matrix_rank(ta), ml.linalg.trace(ta),
                             ml.linalg.matrix_power(ta, -2), ml.linalg.pinv(ta),
                             *[ml.linalg.matrix_norm(ta, ord=o) for o in MATRIX_ORDS]])
    expected = [xp.linalg.cholesky(sh), xp.linalg.eigvalsh(sh), xp.linalg.inv(sa),
                xp.linalg.det(sa), *xp.linalg.slogdet(sa), xp.linalg.solve(sa, sa[..., 0, :, None]),
                xp.linalg.svdvals(sa), xp.linalg.matrix_rank(sa), xp.linalg.trace(sa),
                xp.linalg.matrix_power(sa, -2), xp.linalg.pinv(sa),
                *[xp.linalg.matrix_norm(sa, ord=o) for o in MATRIX_ORDS]]
    for g, e in zip(got, expected):
        close(g, e, scale=10)
    # the factors that are unique only up to phases: by what defines them
    w, v = run(mode, lambda: list(ml.linalg.eigh(th)))
    np.testing.assert_allclose(h @ v, v * w[..., None, :].astype(v.dtype), atol=tol(h.dtype) * 50)
    q, r = run(mode, lambda: list(ml.linalg.qr(ta)))
    u, sv, vh = run(mode, lambda: list(ml.linalg.svd(ta, full_matrices=False)))
    for rebuilt in (q @ r, (u * sv[..., None, :].astype(u.dtype)) @ vh):
        np.testing.assert_allclose(rebuilt, a, atol=tol(a.dtype) * 50)
    assert (v.dtype, w.dtype) == (h.dtype, h.real.dtype)
    assert (q.dtype, u.dtype, sv.dtype) == (a.dtype, a.dtype, a.real.dtype)
    u_upper = run(mode, lambda: ml.linalg.cholesky(th, upper=True))
    np.testing.assert_allclose(np.conj(np.swapaxes(u_upper, -1, -2)) @ u_upper, h,
                               rtol=tol(h.dtype) * 10, atol=tol(h.dtype) * 50)


# -- the reference interpreter and the Python printer ---------------------------------------
def test_reference_interpreter_agrees():
    a = _spd(3, (2,))
    t = ml.asarray(a)
    outs = [ml.sort(t, axis=1, descending=True), ml.argsort(t, axis=0), ml.linalg.cholesky(t),
            *ml.linalg.eigh(t), *ml.linalg.qr(t), *ml.linalg.svd(t), ml.linalg.inv(t),
            ml.linalg.solve(t, t), ml.linalg.det(t), *ml.linalg.slogdet(t)]
    ref = reference.run(*outs)
    for o, r in zip(outs, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
    for o, r in zip(outs[:3] + outs[3:4] + outs[10:], ref[:4] + ref[10:]):
        np.testing.assert_allclose(o.numpy(), r, rtol=1e-10, atol=1e-12)


def test_to_python_round_trips_to_the_same_key():
    t = ml.asarray(_spd(3, (2,)))
    w, v = ml.linalg.eigh(t)
    q, r = ml.linalg.qr(t, mode="complete")
    outs = [ml.sort(t, axis=0), ml.argsort(t, descending=True), w, v, q, r,
            ml.linalg.cholesky(t), ml.linalg.solve(t, ml.ones((3,))), *ml.linalg.slogdet(t),
            ml.linalg.svdvals(t), ml.linalg.svd(t, full_matrices=False).Vh,
            ml.grad(lambda a: ml.sum(ml.linalg.det(a)) + ml.sum(ml.sort(a)[..., 0]))(t)]
    code = ml.graph(*outs).to_python()
    scope: dict[str, object] = {}
    exec(code, scope)
    assert ml.graph(*scope["outputs"]).key == ml.graph(*outs).key, code
    assert "ml.linalg.cholesky(" in code and "ml.sort(" in code
    assert ml.metrics().executions == 0
