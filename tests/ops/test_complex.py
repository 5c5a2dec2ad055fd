"""Complex dtypes (issue 15): promotion, every elementwise op that takes complex numbers, the
reductions, matmul, ``real``/``imag``/``conj``, the ops that refuse them, and gradients, checked
against NumPy, array-api-strict and ``jax.grad``, lazily and under ``ml.eager()``.

Tolerances: XLA's complex transcendental functions are not NumPy's (they are correctly rounded
in neither), so values agree within ``rtol``/``atol`` of 2e-5 (complex64) and 1e-12 (complex128)
relative to the result's magnitude plus one: a few dozen ulps. Inputs keep both parts at least
0.05 from zero: every branch cut of the standard's functions lies on an axis, where NumPy and
XLA may legitimately pick different sides for a signed zero; both parts stay below 2 in
magnitude, so ``exp``, ``sinh``... stay far from overflow.
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
from minilazy.core import dtypes

xp = pytest.importorskip("array_api_strict")

MODES = ["lazy", "eager"]
ALL = [str(d) for d in dtypes.DTYPES]
COMPLEX = ["complex64", "complex128"]
TOL = {np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12,
       np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def run(mode: str, thunk: Callable[[], Any]) -> Any:
    """``thunk``'s tensors as NumPy arrays, recorded lazily or op by op."""
    with ml.eager() if mode == "eager" else contextlib.nullcontext():
        out = thunk()
    return [t.numpy() for t in out] if isinstance(out, (list, tuple)) else out.numpy()


def part() -> st.SearchStrategy[float]:
    """One part of a complex input: away from the axes (branch cuts), bounded (no overflow)."""
    return st.floats(0.05, 2.0).flatmap(lambda v: st.sampled_from([v, -v]))


def complexes(dtype: str, shape: tuple[int, ...] = (5,)) -> st.SearchStrategy[np.ndarray]:
    element = st.builds(complex, part(), part())
    return hnp.arrays(np.dtype(dtype), shape, elements=element)


def assert_close(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.kind == "b":
        np.testing.assert_array_equal(got, expected)
        return
    tol = TOL[expected.dtype]
    scale = np.abs(expected) + 1.0
    assert np.all(np.abs(got - expected) <= tol * scale), (got, expected)


def strict_dtype(strict: Any) -> np.dtype[Any]:
    """An array-api-strict array's dtype as NumPy's (its dtypes print as ``array_api_strict.x``)."""
    return np.dtype(str(getattr(strict, "dtype", strict)).split(".")[-1])


# -- promotion ------------------------------------------------------------------------------------
def test_promotion_table_matches_numpy_for_every_pair_with_a_complex_dtype():
    for a in ALL:
        for b in ALL:
            if a not in COMPLEX and b not in COMPLEX:
                continue
            expected = np.result_type(a, b)
            assert ml.result_type(getattr(ml, _name(a)), getattr(ml, _name(b))) == expected
            out = ml.zeros((2,), dtype=_name(a)) + ml.zeros((2,), dtype=_name(b))
            assert out.dtype == expected, (a, b)
            if a[0] in "fc" and b[0] in "fc" and "float16" not in (a, b):  # the standard's table
                strict = xp.result_type(getattr(xp, a), getattr(xp, b))
                assert strict_dtype(strict) == expected, (a, b)


def _name(d: str) -> str:
    return "bool" if d == "bool" else d


@pytest.mark.parametrize("d", ["bool", "int8", "uint64", "float16", "float32", "float64",
                               "complex64", "complex128"])
def test_a_python_complex_is_a_weak_scalar(d):
    x = np.zeros(2, d)
    assert (ml.asarray(x) * 1j).dtype == (x * 1j).dtype
    assert (1j + ml.asarray(x)).dtype == (1j + x).dtype
    assert ml.result_type(ml.asarray(x), 2j) == (x * 2j).dtype


def test_asarray_of_complex_values():
    assert ml.asarray(1 + 2j).dtype == ml.complex128 and ml.asarray(1 + 2j).item() == 1 + 2j
    assert ml.asarray(np.complex64(1 - 1j)).dtype == ml.complex64
    assert ml.asarray([1, 2.5, 3j]).tolist() == [1, 2.5, 3j]
    assert ml.asarray([1.0], dtype=ml.complex64).dtype == ml.complex64
    assert ml.full((2,), 1j).dtype == ml.complex128
    z = ml.asarray(np.array([[1 + 1j]], np.complex64))
    assert complex(z[0, 0]) == 1 + 1j and z.item() == 1 + 1j
    with pytest.raises(TypeError):
        float(z)


def test_complex128_is_computed_in_64_bits_without_touching_jaxs_global_flag():
    z = np.array([1 + 1e-300j, 1e-200 + 1j])  # parts complex64 would flush to zero
    got = (ml.asarray(z) * (1 + 0j)).numpy()
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(got, z)
    assert not jax.config.jax_enable_x64


@pytest.mark.parametrize("args,kw", [((0, 2j, 3), {}), ((1 + 1j, -2, 4), {"endpoint": False}),
                                     ((0, 1, 3), {"dtype": "complex64"}), ((1j, 1j, 1), {})])
def test_linspace_of_complex_numbers(args, kw):
    got = ml.linspace(*args, **kw).numpy()
    expected = np.linspace(*args, **kw)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_kinds_finfo_and_inspection():
    assert ml.isdtype(ml.complex64, "complex floating") and ml.isdtype(ml.complex128, "numeric")
    assert not ml.isdtype(ml.complex64, "real floating")
    for name in COMPLEX:
        for kind in ("complex floating", "numeric", "real floating", "integral"):
            assert ml.isdtype(getattr(ml, name), kind) == xp.isdtype(getattr(xp, name), kind)
    assert ml.finfo(ml.complex64) == ml.finfo(ml.float32)
    assert ml.finfo(ml.complex128).eps == xp.finfo(xp.complex128).eps
    info = ml.__array_namespace_info__()
    assert list(info.dtypes(kind="complex floating")) == COMPLEX
    assert ml.can_cast(ml.float32, ml.complex64) and not ml.can_cast(ml.complex64, ml.float64)


# -- elementwise ----------------------------------------------------------------------------------
UNARY = ["negative", "abs", "sign", "sqrt", "square", "exp", "expm1", "log", "log1p", "log2",
         "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
         "acosh", "atanh", "round", "isnan", "isinf", "isfinite", "real", "imag", "conj",
         "logical_not", "positive"]
NUMPY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
         "acosh": np.arccosh, "atanh": np.arctanh, "round": np.round, "pow": np.power,
         "conj": np.conjugate}


def numpy_fn(name: str) -> Callable[..., Any]:
    return NUMPY.get(name) or getattr(np, name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", UNARY)
@settings(max_examples=15, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(complexes))
def test_unary_ops_on_complex_match_numpy(mode, name, z):
    got = run(mode, lambda: getattr(ml, name)(ml.asarray(z)))
    with np.errstate(all="ignore"):
        expected = np.asarray(numpy_fn(name)(z))
    assert_close(got, expected)
    if name not in ("logical_not", "round"):  # the standard: logical_not takes bool; round ok
        assert got.dtype == strict_dtype(getattr(xp, name)(xp.asarray(z)))


def test_round_sign_and_abs_follow_the_standard():
    z = ml.asarray([2.5 + 1.5j, -0.5 - 3.5j, 0j, 3 + 4j])
    assert ml.round(z).tolist() == [2 + 2j, -0 - 4j, 0j, 3 + 4j]
    assert ml.sign(z).tolist()[2:] == [0j, 0.6 + 0.8j]  # x / |x|, and 0 at 0
    assert ml.abs(z).dtype == ml.float64 and ml.abs(z).tolist()[3] == 5.0


def test_special_values_elementwise():
    values = np.array([complex(math.inf, 0), complex(0, math.nan), complex(1, -math.inf), 1 + 1j])
    z = ml.asarray(values)
    np.testing.assert_array_equal(ml.isnan(z).numpy(), np.isnan(values))
    np.testing.assert_array_equal(ml.isinf(z).numpy(), np.isinf(values))
    np.testing.assert_array_equal(ml.isfinite(z).numpy(), np.isfinite(values))


BINARY = ["add", "subtract", "multiply", "divide", "pow", "equal", "not_equal"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=15, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(lambda d: st.tuples(complexes(d), complexes(d))),
       st.sampled_from(["float32", "float64", "complex64", "complex128"]))
def test_binary_ops_on_complex_match_numpy(mode, name, pair, other):
    z, w = pair
    w = w.real.astype(other) if other[0] == "f" else w.astype(other)  # mixed kinds promote
    got = run(mode, lambda: getattr(ml, name)(ml.asarray(z), ml.asarray(w)))
    with np.errstate(all="ignore"):
        expected = np.asarray(numpy_fn(name)(z, w))
    assert_close(got, expected)
    strict = getattr(xp, name)(xp.asarray(z), xp.asarray(w))
    assert got.dtype == strict_dtype(strict)
    if name == "equal":
        assert run(mode, lambda: ml.asarray(z) == ml.asarray(z)).all()


@pytest.mark.parametrize("name", ["real", "imag", "conj"])
@pytest.mark.parametrize("d", ["int8", "float32", "float64"])
def test_real_imag_conj_of_real_tensors_are_numpys(name, d):
    x = np.array([1, -2, 3], d)
    got = getattr(ml, name)(ml.asarray(x)).numpy()
    expected = {"real": np.real, "imag": np.imag, "conj": np.conjugate}[name](x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", MODES)
def test_truth_of_a_complex_number_is_either_part_nonzero(mode):
    # XLA's convert to bool reads the real part only: pure imaginary numbers test the lowering.
    a, b = np.array([0.5j, 0j, -2j, 1 + 0j]), np.array([0j, 1j, 1j, 0j])
    got = run(mode, lambda: [ml.logical_and(ml.asarray(a), ml.asarray(b)),
                             ml.logical_or(ml.asarray(a), ml.asarray(b)),
                             ml.logical_xor(ml.asarray(a), ml.asarray(b)),
                             ml.logical_not(ml.asarray(a)), ml.all(ml.asarray(a[::2])),
                             ml.any(ml.asarray(b[:1] + 1e-3j)), ml.count_nonzero(ml.asarray(a)),
                             ml.astype(ml.asarray(a), ml.bool)])
    expected = [np.logical_and(a, b), np.logical_or(a, b), np.logical_xor(a, b), np.logical_not(a),
                np.all(a[::2]), np.any(b[:1] + 1e-3j), np.count_nonzero(a), a.astype(bool)]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_astype_to_and_from_complex():
    z = ml.asarray([1 + 2j, 0j, 3j])
    assert ml.astype(z, ml.bool).tolist() == [True, False, True]  # either part nonzero
    assert ml.astype(z, ml.complex64).dtype == ml.complex64
    assert ml.astype(ml.asarray([True, False]), ml.complex64).tolist() == [1, 0]
    assert ml.astype(ml.asarray([1.5]), ml.complex128).tolist() == [1.5 + 0j]
    for target in (ml.float32, ml.float64, ml.int32, ml.uint8):
        with pytest.raises(TypeError, match="real\\(x\\)"):
            ml.astype(z, target)


def test_a_complex_one_stays_a_parameter_under_special_scalars():
    z = ml.asarray([1 + 1j])
    with ml.policy(special_scalars=True):
        assert (z * (1 + 0j) + 0j).tolist() == [1 + 1j]


# -- ops that refuse complex numbers --------------------------------------------------------------
REFUSED: list[tuple[str, Callable[[ml.Tensor], Any]]] = [
    ("less", lambda z: z < z), ("less_equal", lambda z: z <= 1j), ("greater", lambda z: 1 > z),
    ("greater_equal", lambda z: ml.greater_equal(z, z)), ("maximum", lambda z: ml.maximum(z, 0)),
    ("minimum", lambda z: ml.minimum(z, z)), ("clip", lambda z: ml.clip(z, 0, 1)),
    ("floor", ml.floor), ("ceil", ml.ceil), ("trunc", ml.trunc),
    ("remainder", lambda z: z % 2), ("floor_divide", lambda z: z // z),
    ("atan2", lambda z: ml.atan2(z, z)), ("copysign", lambda z: ml.copysign(z, z)),
    ("hypot", lambda z: ml.hypot(z, z)), ("logaddexp", lambda z: ml.logaddexp(z, z)),
    ("signbit", ml.signbit), ("bitwise_and", lambda z: z & z),
    ("max", ml.max), ("min", ml.min), ("argmax", ml.argmax), ("argmin", ml.argmin),
    ("sort", ml.sort), ("argsort", ml.argsort), ("searchsorted", lambda z: ml.searchsorted(z, 1)),
    ("var", ml.var), ("std", ml.std),
    ("float32 < complex", lambda z: ml.asarray([1.0], dtype=ml.float32) < 1j),
]


@pytest.mark.parametrize("name,fn", REFUSED, ids=[n for n, _ in REFUSED])
def test_ops_refusing_complex_raise_type_error_at_the_call(name, fn):
    z = ml.asarray([1 + 2j])
    ml.reset_metrics()
    with pytest.raises(TypeError, match="complex|c128"):  # the dtype, named in the message
        fn(z)
    assert ml.metrics().compiles == 0  # raised when recorded, before anything ran


# -- reductions and linear algebra ----------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=20, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(lambda d: complexes(d, (3, 4))), st.sampled_from([0, 1]))
def test_sum_prod_mean_cumulative_sum_match_numpy(mode, z, axis):
    got = run(mode, lambda: [ml.sum(ml.asarray(z), axis=axis), ml.prod(ml.asarray(z), axis=axis),
                             ml.mean(ml.asarray(z), axis=axis), ml.sum(ml.asarray(z)),
                             ml.cumulative_sum(ml.asarray(z), axis=axis)])
    for g, e in zip(got, [np.sum(z, axis=axis), np.prod(z, axis=axis), np.mean(z, axis=axis),
                          np.sum(z), np.cumsum(z, axis=axis)]):
        assert_close(g, np.asarray(e))
    strict = xp.mean(xp.asarray(z), axis=axis)
    assert got[2].dtype == strict_dtype(strict)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=20, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(lambda d: st.tuples(complexes(d, (2, 3)),
                                                            complexes(d, (3, 4)))),
       st.sampled_from(["float32", "float64", "same"]))
def test_matmul_tensordot_and_vecdot_of_complex_match_numpy(mode, pair, other):
    a, b = pair
    b = b if other == "same" else b.real.astype(other)
    got = run(mode, lambda: [ml.asarray(a) @ ml.asarray(b),
                             ml.tensordot(ml.asarray(a), ml.asarray(b), axes=1),
                             ml.vecdot(ml.asarray(a), ml.asarray(a))])
    expected = [a @ b, np.tensordot(a, b, axes=1), np.vecdot(a, a)]  # vecdot conjugates x1
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e))
    assert_close(got[2], np.asarray(xp.vecdot(xp.asarray(a), xp.asarray(a))))


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=10, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(lambda d: complexes(d, (3, 4))))
def test_norms_of_complex_tensors_are_real_and_match_numpy(mode, z):
    orders: list[Any] = [2, 1, math.inf, -math.inf, 0, 3.0]
    got = run(mode, lambda: [ml.linalg.vector_norm(ml.asarray(z), ord=o) for o in orders] + [
        ml.linalg.matrix_norm(ml.asarray(z), ord=o) for o in ("fro", 1, -1, math.inf)])
    expected = [np.linalg.norm(z.ravel(), ord=o) for o in orders] + [
        np.linalg.norm(z, ord=o) for o in ("fro", 1, -1, math.inf)]
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e, g.dtype))
        assert g.dtype == dtypes.PART[np.dtype(z.dtype)]
    strict = xp.linalg.vector_norm(xp.asarray(z))
    assert got[0].dtype == strict_dtype(strict)


def test_spectral_norms_of_complex_matrices_use_the_complex_svd():
    z = np.array([[1j, 2.0], [0.5 - 1j, 3j]])
    for o in ("nuc", 2, -2):
        got = ml.linalg.matrix_norm(ml.asarray(z), ord=o).numpy()
        np.testing.assert_allclose(got, np.linalg.norm(z, ord=o), rtol=1e-12)


def test_shape_ops_where_and_indexing_carry_complex_values():
    z = np.array([[1 + 1j, 2 - 1j], [3j, -4 + 0j]], np.complex64)
    t = ml.asarray(z)
    np.testing.assert_array_equal(ml.concat([t, t.mT]).numpy(), np.concatenate([z, z.T]))
    np.testing.assert_array_equal(ml.where(ml.abs(t) > 2, t, 0j).numpy(),
                                  np.where(np.abs(z) > 2, z, 0j))
    t[0, 1] = 5j
    assert t.dtype == ml.complex64 and t[0].tolist() == [1 + 1j, 5j]
    assert ml.reshape(ml.flip(t, axis=0), (4,)).tolist()[:2] == [3j, -4 + 0j]


def test_unique_of_complex_values_is_sorted_as_numpy_sorts():
    a = np.array([[1 + 2j, -0.5j], [0.3 + 0j, 2 - 1j], [-0.5j, 1 + 2j]])
    np.testing.assert_array_equal(ml.unique_values(ml.asarray(a)).numpy(), np.unique(a))
    r = ml.unique_all(ml.asarray(a))
    np.testing.assert_array_equal(r.values.numpy()[r.inverse_indices.numpy()], a)
    assert r.counts.tolist() == [2, 1, 2, 1]


def test_printers_and_python_source_name_complex_dtypes():
    z = ml.asarray(np.ones(2, np.complex64))
    x = ml.asarray(np.ones(2, np.float32))
    out = ml.real(ml.conj(z) * (2 + 1j)) + ml.imag(z * complex(math.inf, 1)) + ml.abs(x * 1j)
    g = ml.graph(out)
    assert "c64[2]" in g.text() and "conj" in g.text()
    scope: dict[str, Any] = {}
    exec(g.to_python(), scope)  # a non-finite complex number is written as complex(...)
    assert ml.graph(*scope["outputs"]).key == g.key
    one, f32 = np.ones(2, np.complex64), np.ones(2, np.float32)
    with np.errstate(invalid="ignore"):  # 0 * inf in the product's imaginary part: NaN
        expected = (np.real(np.conjugate(one) * (2 + 1j)) + np.imag(one * complex(math.inf, 1))
                    + np.abs(f32 * 1j))
    np.testing.assert_array_equal(out.numpy(), expected)


# -- gradients ------------------------------------------------------------------------------------
def _norm2(f_ml: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda z: ml.sum(ml.real(f_ml(z) * ml.conj(f_ml(z))))


GRADS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("|sin z|^2", _norm2(ml.sin), lambda z: jnp.sum(jnp.real(jnp.sin(z) * jnp.conj(jnp.sin(z))))),
    ("|exp z|^2", _norm2(ml.exp), lambda z: jnp.sum(jnp.real(jnp.exp(z) * jnp.conj(jnp.exp(z))))),
    ("|z^3 + 2z|^2", _norm2(lambda z: z * z * z + 2 * z),
     lambda z: jnp.sum(jnp.abs(z * z * z + 2 * z) ** 2)),
    ("re log z", lambda z: ml.sum(ml.real(ml.log(z))), lambda z: jnp.sum(jnp.real(jnp.log(z)))),
    ("im sqrt z", lambda z: ml.sum(ml.imag(ml.sqrt(z))), lambda z: jnp.sum(jnp.imag(jnp.sqrt(z)))),
    ("|tanh z|", lambda z: ml.sum(ml.abs(ml.tanh(z))), lambda z: jnp.sum(jnp.abs(jnp.tanh(z)))),
    ("re z^w", lambda z: ml.sum(ml.real(z ** (0.5 + 1j))),
     lambda z: jnp.sum(jnp.real(z ** (0.5 + 1j)))),
    ("re(1/z) im(z)", lambda z: ml.sum(ml.real(1 / z) * ml.imag(z)),
     lambda z: jnp.sum(jnp.real(1 / z) * jnp.imag(z))),
    ("vector_norm", lambda z: ml.linalg.vector_norm(z * z), lambda z: jnp.linalg.norm(z * z)),
    ("mean |asin z|^2", lambda z: ml.real(ml.mean(ml.asin(z) * ml.conj(ml.asin(z)))),
     lambda z: jnp.real(jnp.mean(jnp.arcsin(z) * jnp.conj(jnp.arcsin(z))))),
]


@pytest.mark.parametrize("name,f,jf", GRADS, ids=[g[0] for g in GRADS])
@settings(max_examples=8, deadline=None)
@given(st.sampled_from(COMPLEX).flatmap(complexes))
def test_gradients_of_holomorphic_functions_match_jax(name, f, jf, z):
    got = ml.grad(f)(ml.asarray(z)).numpy()
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(jf)(jnp.asarray(z)))
    assert_close(got, expected)


RNG = np.random.default_rng(15)
POINTS = RNG.uniform(0.05, 2, 24) * RNG.choice([-1, 1], 24) + 1j * (
    RNG.uniform(0.05, 2, 24) * RNG.choice([-1, 1], 24))
W = 0.3 - 0.7j  # a complex weight: the loss real(f(z) * W) sees both parts of f(z)
JNP = {"asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan, "asinh": jnp.arcsinh,
       "acosh": jnp.arccosh, "atanh": jnp.arctanh, "pow": jnp.power}


@pytest.mark.parametrize("name", [n for n in UNARY if n not in (
    "isnan", "isinf", "isfinite", "logical_not")] + ["pow", "divide", "multiply", "subtract"])
def test_every_vjp_rule_on_complex_numbers_matches_jax(name):
    f, jf = getattr(ml, name), JNP.get(name) or getattr(jnp, name)
    args = (POINTS,) if name in UNARY else (POINTS, POINTS[::-1].copy())
    argnums = tuple(range(len(args)))
    got = ml.grad(lambda *t: ml.sum(ml.real(f(*t) * W)), argnums)(*map(ml.asarray, args))
    with jax.enable_x64(True):
        expected = jax.grad(lambda *t: jnp.sum(jnp.real(jf(*t) * W)), argnums)(
            *map(jnp.asarray, args))
    for g, e in zip(got, expected):
        assert_close(g.numpy(), np.asarray(e))


def test_reduction_and_shape_vjps_on_complex_numbers_match_jax():
    z = POINTS[:12].reshape(3, 4)

    def loss(ns: Any, t: Any) -> Any:
        parts = [ns.prod(t, axis=1), ns.mean(t, axis=0), ns.cumulative_sum(t, axis=1)[:, 2],
                 ns.concat([t[0], ns.flip(t[1], axis=0)]), ns.where(ns.abs(t) > 1, t, 0j)[2],
                 ns.matrix_transpose(t)[1:3, 0], ns.sum(t * t, axis=1)]
        return sum(ns.sum(ns.real(p * W)) for p in parts)

    got = ml.grad(lambda t: loss(ml, t))(ml.asarray(z))
    with jax.enable_x64(True):
        expected = jax.grad(lambda t: loss(jnp, t))(jnp.asarray(z))
    assert_close(got.numpy(), np.asarray(expected))


def test_gradients_through_matmul_and_a_real_operand_promoted_to_complex():
    a = np.array([[1 + 2j, -0.5j], [0.3, 2 - 1j]])
    x = np.array([0.5, -1.5])  # real: its gradient is the real part of the complex cotangent

    def f(a: Any, x: Any) -> Any:
        return ml.sum(ml.abs(a @ x) ** 2)

    ga, gx = ml.grad(f, argnums=(0, 1))(ml.asarray(a), ml.asarray(x))
    with jax.enable_x64(True):
        ja, jx = jax.grad(lambda a, x: jnp.sum(jnp.abs(a @ x) ** 2), argnums=(0, 1))(
            jnp.asarray(a), jnp.asarray(x))
    assert gx.dtype == ml.float64 and ga.dtype == ml.complex128
    assert_close(ga.numpy(), np.asarray(ja))
    assert_close(gx.numpy(), np.asarray(jx))


def test_grad_needs_a_real_result():
    with pytest.raises(TypeError, match="0-d floating tensor, got complex128.*real\\(\\)"):
        ml.grad(lambda z: ml.sum(z * z))(ml.asarray([1j]))
