"""NumPy and PyTorch habits: array methods, everyday functions, and errors that name the fix.

Each method is checked against NumPy's method of the same name on the same data (values,
shapes and dtypes; NumPy's error class where NumPy refuses), each everyday function against
its formula in NumPy, and the conversions ``float()``/``int()``/``complex()`` against NumPy 2's
rule (0-d only, ``TypeError``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import check, numpy_or_error, raises_at_the_call, value
from strategies import arrays

pytestmark = pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning")
REAL = tuple(np.dtype(d) for d in ("float32", "float64", "int32", "int64", "bool"))


def shapes(min_dims: int = 0, min_side: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4)


def summed(np_thunk, ml_thunk, a: np.ndarray) -> None:
    """As ``check``, with the oracle's sum-order bound on float values: n * eps * sum|a|."""
    want, err = numpy_or_error(np_thunk)
    if err:
        raises_at_the_call(ml_thunk, err)
        return
    got = value(ml_thunk)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    scale = float(np.sum(np.abs(a), dtype=np.float64)) * max(a.size, 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=np.finfo(want.dtype).eps * max(scale, 1))


def _axis(data: st.DataObject, ndim: int) -> int | tuple[int, ...] | None:
    if ndim == 0:
        return None
    return data.draw(st.none() | st.integers(-ndim, ndim - 1)
                     | st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple))


@settings(max_examples=15)
@given(data=st.data(), name=st.sampled_from(["sum", "prod", "max", "min", "any", "all", "mean"]))
def test_reduction_methods_are_numpys(data, name):
    """``x.sum(axis)`` etc., with a positional axis and ``keepdims``: NumPy's method."""
    a = data.draw(arrays(data.draw(st.sampled_from(REAL)), data.draw(shapes(min_side=1)),
                         "bounded"))
    axis, keep = _axis(data, a.ndim), data.draw(st.booleans())
    if name == "mean" and a.dtype == np.bool_:
        a = a.astype(np.int32)  # NumPy's mean of bools is float64: minilazy's too, checked below
    summed(lambda: getattr(a, name)(axis, keepdims=keep),
           lambda: getattr(ml.asarray(a), name)(axis, keepdims=keep), a)


@settings(max_examples=15)
@given(data=st.data(), name=st.sampled_from(["argmax", "argmin"]),
       keep=st.booleans())
def test_arg_methods_are_numpys(data, name, keep):
    a = data.draw(arrays(np.dtype("float64"), data.draw(shapes(min_dims=1, min_side=1)), "bounded"))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    check(lambda: getattr(a, name)(axis, keepdims=keep),
          lambda: getattr(ml.asarray(a), name)(axis, keepdims=keep))


@settings(max_examples=15)
@given(data=st.data(), name=st.sampled_from(["var", "std"]), ddof=st.integers(0, 1))
def test_var_and_std_take_ddof(data, name, ddof):
    a = data.draw(arrays(np.dtype("float64"), data.draw(shapes(min_dims=1, min_side=2)), "bounded"))
    a = a + np.arange(a.size).reshape(a.shape)  # never constant: ddof shows in every example
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    summed(lambda: getattr(a, name)(axis, ddof=ddof),
           lambda: getattr(ml.asarray(a), name)(axis, ddof=ddof), a * a)


@settings(max_examples=15)
@given(data=st.data())
def test_shape_methods_are_numpys(data):
    """reshape (both spellings), flatten, ravel, transpose (none, spread, tuple), swapaxes,
    squeeze (all, one), astype, clip, cumsum (flat and per axis), copy."""
    a = data.draw(arrays(data.draw(st.sampled_from(REAL)), data.draw(shapes(min_dims=1)),
                         "bounded"))
    t = ml.asarray(a)
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    i, j = (data.draw(st.integers(-a.ndim, a.ndim - 1)) for _ in "ij")
    check(lambda: a.reshape(a.size), lambda: t.reshape(a.size))
    check(lambda: a.reshape(a.shape[::-1]), lambda: t.reshape(a.shape[::-1]))
    check(lambda: a.reshape(*a.shape[::-1]), lambda: t.reshape(*a.shape[::-1]))
    check(a.flatten, t.flatten)
    check(a.ravel, t.ravel)
    check(a.transpose, t.transpose)
    check(lambda: a.transpose(*perm), lambda: t.transpose(*perm))
    check(lambda: a.transpose(perm), lambda: t.transpose(perm))
    check(lambda: a.swapaxes(i, j), lambda: t.swapaxes(i, j))
    check(a.squeeze, t.squeeze)
    check(lambda: a.squeeze(i), lambda: t.squeeze(i))
    check(lambda: a.astype(np.float32), lambda: t.astype(ml.float32))
    if a.dtype != np.bool_:
        check(lambda: a.clip(0, 1), lambda: t.clip(0, 1))
        summed(a.cumsum, t.cumsum, a)
        summed(lambda: a.cumsum(i), lambda: t.cumsum(i), a)
    check(a.copy, t.copy)


def test_swapaxes_out_of_range_is_numpys_error():
    raises_at_the_call(lambda: ml.ones((2, 3)).swapaxes(0, 2), (IndexError, ValueError))


def test_methods_record_and_run_nothing():
    x = ml.asarray(np.arange(6.0).reshape(2, 3))
    ml.reset_metrics()
    y = x.sum(1).reshape(2, 1).astype(ml.float32).transpose().clip(0.0, 10.0).mean()
    assert y.is_pending and ml.metrics().barriers == 0
    assert float(y) == pytest.approx(np.clip(np.arange(6.0).reshape(2, 3).sum(1), 0, 10).mean())


@pytest.mark.parametrize("convert", [float, int, complex])
@pytest.mark.parametrize("shape", [(1,), (1, 1), (2,)])
def test_scalar_conversions_take_0d_only_as_numpy(convert, shape):
    """NumPy 2: ``float(np.ones(1))`` is a TypeError; ``float(np.ones(()))`` is 1.0."""
    with pytest.raises(TypeError):
        convert(np.ones(shape))
    message = raises_at_the_call(lambda: convert(ml.ones(shape)), TypeError)
    assert "0-d" in message and str(shape) in message
    assert convert(ml.ones(())) == convert(np.ones(()))


def test_bool_of_many_elements_says_any_or_all():
    with pytest.raises(ValueError):
        bool(np.ones(2))
    assert "x.any() or x.all()" in raises_at_the_call(lambda: bool(ml.ones(2)), ValueError)
    assert bool(ml.ones((1, 1))) is bool(np.ones((1, 1)))


@pytest.mark.parametrize(("call", "fix"), [
    (lambda: ml.sum(ml.ones((2, 3)), 0), "ml.sum(x, axis=0)"),
    (lambda: ml.mean(ml.ones((2, 3)), 1, True), "ml.mean(x, axis=1, keepdims=True)"),
    (lambda: ml.zeros((2, 3), ml.float32), "ml.zeros(shape, dtype=ml.float32)"),
    (lambda: ml.concat([ml.ones(2)], 0), "ml.concat(arrays, axis=0)"),
    (lambda: ml.sort(ml.ones(2), -1), "ml.sort(x, axis=-1)"),
    (lambda: ml.logsumexp(ml.ones(2), 0), "ml.logsumexp(x, axis=0)"),
])
def test_a_keyword_passed_by_position_is_named(call, fix):
    """Python's TypeError, with the call spelled the way that works."""
    assert fix in raises_at_the_call(call, TypeError)


def test_keyword_checks_keep_the_signature():
    """The wrapper is invisible to ``inspect`` (docs, the Array API signature tests)."""
    import inspect
    assert str(inspect.signature(ml.sum)).startswith("(x: 'TensorLike', /, *, axis")


FLOATS = st.floats(-1e3, 1e3, allow_nan=False) | st.sampled_from([-800.0, 800.0, 0.0, -0.0])


@settings(max_examples=20)
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]))
def test_sigmoid_and_softplus_are_their_formulas(data, dtype):
    a = np.asarray(data.draw(st.lists(FLOATS, min_size=1, max_size=8)), dtype)
    with np.errstate(over="ignore"):
        want_sigmoid = np.where(a >= 0, 1 / (1 + np.exp(-np.abs(a))),
                                np.exp(-np.abs(a)) / (1 + np.exp(-np.abs(a))))
        want_softplus = np.logaddexp(a, np.zeros_like(a))
    for got, want in ((ml.sigmoid(a), want_sigmoid), (ml.softplus(a), want_softplus)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=8 * np.finfo(dtype).eps,
                                   atol=np.finfo(dtype).smallest_normal)  # XLA flushes these



@settings(max_examples=20)
@given(data=st.data())
def test_logsumexp_is_the_stable_formula(data):
    a = data.draw(arrays(np.dtype("float64"), data.draw(shapes(min_dims=1, min_side=1)), "bounded"))
    axis, keep = _axis(data, a.ndim), data.draw(st.booleans())
    top = np.max(a, axis=axis, keepdims=True)
    want = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    want = want if keep else np.squeeze(want, axis=axis if axis is not None else None)
    got = ml.logsumexp(a, axis=axis, keepdims=keep).numpy()
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_logsumexp_of_infinities_is_not_nan():
    got = ml.logsumexp(np.array([[-np.inf, -np.inf], [np.inf, 1.0], [1000.0, 1000.0]]), axis=1)
    assert got.tolist() == [-math.inf, math.inf, 1000 + math.log(2)]


def test_the_everyday_functions_have_finite_gradients_where_the_naive_ones_do_not():
    x = ml.asarray([-800.0, -1.0, 0.0, 2.0, 800.0])
    with np.errstate(over="ignore"):  # exp(800): the naive formula's overflow, to inf
        s = 1 / (1 + np.exp(-np.array([-800.0, -1.0, 0.0, 2.0, 800.0])))
    np.testing.assert_allclose(ml.grad(lambda v: ml.sum(ml.sigmoid(v)))(x).numpy(), s * (1 - s),
                               rtol=1e-12)
    np.testing.assert_allclose(ml.grad(lambda v: ml.sum(ml.softplus(v)))(x).numpy(), s,
                               rtol=1e-12)
    w = np.array([1000.0, 1000.0, 0.0])
    np.testing.assert_allclose(ml.grad(ml.logsumexp)(ml.asarray(w)).numpy(),
                               np.exp(w - w.max()) / np.exp(w - w.max()).sum(), rtol=1e-12)


@settings(max_examples=15)
@given(data=st.data())
def test_numpys_concatenate_and_transpose(data):
    a = data.draw(arrays(np.dtype("int32"), data.draw(shapes(min_dims=1)), "bounded"))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    check(lambda: np.concatenate([a, a], axis), lambda: ml.concatenate([a, a], axis))
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    check(lambda: np.transpose(a), lambda: ml.transpose(a))
    check(lambda: np.transpose(a, perm), lambda: ml.transpose(a, perm))


@settings(max_examples=15)
@given(data=st.data())
def test_stop_gradient_is_the_value_and_stops_the_gradient(data):
    """``d/dw sum(w * stop_gradient(w) + w)`` is ``w + 1``: the stopped factor is a constant.
    ``x.detach()`` is the same op; each is one recorded node, nothing runs."""
    a = data.draw(arrays(np.dtype("float64"), data.draw(shapes(min_dims=1, min_side=1)),
                         "bounded"))
    w = ml.asarray(a)
    ml.reset_metrics()
    y = ml.stop_gradient(w * 2.0)
    assert y.is_pending and ml.metrics().executions == 0
    np.testing.assert_array_equal(y.numpy(), a * 2.0)
    for stop in (ml.stop_gradient, lambda t: t.detach()):
        g = ml.grad(lambda v, stop=stop: ml.sum(v * stop(v) + v))(w)
        np.testing.assert_allclose(g.numpy(), a + 1.0, rtol=1e-12)
