"""Scans, triangles, gathers along an axis and windows: cumulative_sum, tril, triu,
take_along_axis, conv, and ml.nn's conv2d and pooling. Values and dtypes against NumPy (conv
against lax, in float64), gradients against jax.grad, the reference interpreter alongside, and
nothing compiled or executed before a barrier.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.introspect import reference

DTYPES = [np.float64, np.float32, np.int8, np.int32, np.uint8, np.bool_]


def _values(data: st.DataObject, dtype: object, shape: tuple[int, ...]) -> np.ndarray:
    d = np.dtype(dtype)
    if d.kind == "f":  # small integers: sums are exact in any order, so compare exactly
        elements = st.integers(-8, 8).map(float)
    elif d.kind == "b":
        elements = st.booleans()
    else:
        elements = st.integers(0 if d.kind == "u" else -8, 8)
    return data.draw(hnp.arrays(d, shape, elements=elements))


def _lazy(*tensors: ml.Tensor) -> None:
    """Recording ran nothing since the last reset: no compile, no execution before a barrier."""
    m = ml.metrics()
    assert (m.compiles, m.executions) == (0, 0), tensors


def _grad_against_jax(ml_fn, jax_fn, x: np.ndarray, w: np.ndarray) -> None:
    """d/dx sum(w * f(x)) by minilazy and by jax.grad, in float64."""
    got = ml.grad(lambda t: ml.sum(ml.asarray(w) * ml_fn(t)))(ml.asarray(x))
    with jax.enable_x64(True):
        want = jax.grad(lambda t: jnp.sum(jnp.asarray(w) * jax_fn(t)))(jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


# -- cumulative_sum ---------------------------------------------------------------------------
@given(data=st.data(), dtype=st.sampled_from(DTYPES), include_initial=st.booleans(),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
def test_cumulative_sum_matches_numpy(data, dtype, include_initial, shape):
    x = _values(data, dtype, shape)
    axis = None if x.ndim <= 1 and data.draw(st.booleans()) else \
        data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
    to = data.draw(st.sampled_from([None, np.int64, np.float32, dtype]))
    expected = np.cumulative_sum(x, axis=axis, dtype=to, include_initial=include_initial)
    t = ml.asarray(x)
    ml.reset_metrics()  # per example: the test's fixture resets once per test
    y = ml.cumulative_sum(t, axis=axis, dtype=to, include_initial=include_initial)
    _lazy(y)
    (ref,) = reference.run(y)
    got = y.numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(ref, expected)


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
@settings(max_examples=10)
def test_cumulative_sum_gradient_is_jaxs(data, shape):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)))
    grown = tuple(n + (i == axis) for i, n in enumerate(shape))  # the initial 0 is one more
    w = data.draw(hnp.arrays(np.float64, grown, elements=st.floats(-2, 2)))
    _grad_against_jax(lambda t: ml.cumulative_sum(t, axis=axis, include_initial=True),
                      lambda t: jnp.cumulative_sum(t, axis=axis, include_initial=True), x, w)


def test_cumulative_sum_errors_name_the_operand():
    with pytest.raises(ValueError, match=r"axis is required for f64\[2,3\]"):
        ml.cumulative_sum(ml.ones((2, 3)))
    with pytest.raises(np.exceptions.AxisError, match="axis 1 is out of bounds"):
        ml.cumulative_sum(ml.ones((3,)), axis=1)
    with pytest.raises(TypeError):
        ml.cumulative_sum(ml.ones((3,)), axis=0.5)


def test_cumulative_sum_is_one_op_and_reads_as_one():
    y = ml.cumulative_sum(ml.asarray(np.ones((2, 3))), axis=1)
    assert "cumulative_sum %0 axis=1 :" in ml.graph(y).text()
    assert "ml.cumulative_sum(v0, axis=1)" in ml.graph(y).to_python()
    _lazy(y)


# -- tril, triu -------------------------------------------------------------------------------
@given(data=st.data(), dtype=st.sampled_from(DTYPES), k=st.integers(-4, 4),
       shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4))
def test_tril_and_triu_match_numpy(data, dtype, k, shape):
    x = _values(data, dtype, shape)
    t = ml.asarray(x)
    ml.reset_metrics()
    lo, hi = ml.tril(t, k=k), ml.triu(t, k=k)
    _lazy(lo, hi)
    for got, want in [(lo, np.tril(x, k)), (hi, np.triu(x, k))]:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(reference.run(got)[0], want)


def test_another_diagonal_reuses_the_program():
    ml.clear_cache()  # another test in this process may have compiled it already
    ml.reset_metrics()
    x = ml.asarray(np.ones((3, 3)))
    for k in (-1, 0, 1):
        ml.sync(ml.tril(x, k=k))
    m = ml.metrics()
    assert (m.compiles, m.cache_hits) == (1, 2)  # k is a scalar parameter, not in the key


@given(data=st.data(), k=st.integers(-2, 2),
       shape=hnp.array_shapes(min_dims=2, max_dims=3, max_side=4))
@settings(max_examples=10)
def test_tril_and_triu_gradients_are_jaxs(data, k, shape):
    x, w = (data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2))) for _ in "xw")
    _grad_against_jax(lambda t: ml.tril(t, k=k), lambda t: jnp.tril(t, k), x, w)
    _grad_against_jax(lambda t: ml.triu(t, k=k), lambda t: jnp.triu(t, k), x, w)


def test_tril_needs_a_matrix():
    with pytest.raises(ValueError, match=r"tril: x must have at least two dimensions, got f64"):
        ml.tril(ml.ones((3,)))
    with pytest.raises(TypeError):
        ml.triu(ml.ones((3, 3)), k=1.5)


# -- take_along_axis --------------------------------------------------------------------------
@st.composite
def _along(draw: st.DrawFn, dtypes: tuple[type, ...] = (np.float64,)
           ) -> tuple[np.ndarray, np.ndarray, int]:
    """x, indices with as many axes, broadcasting off ``axis``, in range or negative."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    a = axis % len(shape)
    ishape = tuple(draw(st.integers(0, 4)) if i == a else draw(st.sampled_from([n, 1]))
                   for i, n in enumerate(shape))
    xshape = tuple(n if i == a else draw(st.sampled_from([n, 1])) if ishape[i] == n else n
                   for i, n in enumerate(shape))
    n = xshape[a]
    idx = draw(hnp.arrays(draw(st.sampled_from([np.int64, np.int32, np.uint8])), ishape,
                          elements=st.integers(0, n - 1)))
    if idx.dtype.kind == "i" and draw(st.booleans()):
        idx = idx - n  # negative indices count from the end, as in NumPy
    d = np.dtype(draw(st.sampled_from(dtypes)))
    x = draw(hnp.arrays(d, xshape, elements=st.booleans() if d.kind == "b" else
                        st.integers(-50, 50)))
    return x, idx, axis


@given(case=_along((np.float64, np.int8, np.bool_)))
def test_take_along_axis_matches_numpy(case):
    x, idx, axis = case
    t, i = ml.asarray(x), ml.asarray(idx)
    ml.reset_metrics()
    y = ml.take_along_axis(t, i, axis=axis)
    _lazy(y)
    want = np.take_along_axis(x, idx, axis=axis)
    assert y.dtype == want.dtype and y.shape == want.shape
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(reference.run(y)[0], want)


@given(case=_along(), data=st.data())
@settings(max_examples=10)
def test_take_along_axis_gradient_is_jaxs(case, data):
    x, idx, axis = case
    out = np.take_along_axis(x, idx, axis=axis)
    w = data.draw(hnp.arrays(np.float64, out.shape, elements=st.floats(-2, 2)))
    _grad_against_jax(lambda t: ml.take_along_axis(t, ml.asarray(idx), axis=axis),
                      lambda t: jnp.take_along_axis(t, jnp.asarray(idx), axis=axis), x, w)


def test_take_along_axis_errors_are_numpys():
    x = ml.ones((2, 3))
    with pytest.raises(IndexError, match=r"indices must be integers, got f64\[2,1\]"):
        ml.take_along_axis(x, ml.ones((2, 1)), axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        ml.take_along_axis(x, ml.zeros((2,), dtype=ml.int64), axis=1)
    with pytest.raises(IndexError, match=r"i64\[3,1\] do not broadcast with x f64\[2,3\]"):
        ml.take_along_axis(x, ml.zeros((3, 1), dtype=ml.int64), axis=1)
    with pytest.raises(np.exceptions.AxisError):
        ml.take_along_axis(x, ml.zeros((2, 1), dtype=ml.int64), axis=2)


# -- conv -------------------------------------------------------------------------------------
@st.composite
def _conv_case(draw: st.DrawFn, grad: bool = False) -> dict:
    """Shapes and attributes of a convolution whose window fits its padded input."""
    nd = draw(st.integers(1, 2))
    groups = draw(st.integers(1, 2))
    per_group, out = draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd))
    size = tuple(max(draw(st.integers(1, 6)), (k - 1) * d + 1 - sum(p))
                 for k, d, p in zip(kernel, dilation, padding))
    n = draw(st.integers(1, 2))
    floats = st.floats(-2, 2, width=32)
    return {"x": draw(hnp.arrays(np.float64, (n, groups * per_group, *size), elements=floats)),
            "w": draw(hnp.arrays(np.float64, (out, per_group, *kernel), elements=floats)),
            "stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def _lax_conv(x, w, c: dict):
    return jax.lax.conv_general_dilated(
        x, w, c["stride"], c["padding"], rhs_dilation=c["dilation"],
        feature_group_count=c["groups"], precision=jax.lax.Precision.HIGHEST)


def _ml_conv(x, w, c: dict) -> ml.Tensor:
    return ml.conv(x, w, stride=c["stride"], padding=c["padding"], dilation=c["dilation"],
                   groups=c["groups"])


@given(c=_conv_case())
def test_conv_matches_lax_and_the_reference(c):
    x, w = ml.asarray(c["x"]), ml.asarray(c["w"])
    ml.reset_metrics()
    y = _ml_conv(x, w, c)
    _lazy(y)
    with jax.enable_x64(True):
        want = np.asarray(_lax_conv(c["x"], c["w"], c))
    assert y.shape == want.shape and y.dtype == want.dtype
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(reference.run(y)[0], want, rtol=1e-12, atol=1e-12)


@given(c=_conv_case(), data=st.data())
@settings(max_examples=15)
def test_conv_gradients_are_jaxs_and_convolutions(c, data):
    out = _ml_conv(ml.asarray(c["x"]), ml.asarray(c["w"]), c).shape
    g = data.draw(hnp.arrays(np.float64, out, elements=st.floats(-2, 2, width=32)))
    dx, dw = ml.grad(lambda a, b: ml.sum(ml.asarray(g) * _ml_conv(a, b, c)), argnums=(0, 1))(
        ml.asarray(c["x"]), ml.asarray(c["w"]))
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: jnp.sum(g * _lax_conv(a, b, c)), argnums=(0, 1))(
            c["x"], c["w"])
        got = [dx.numpy(), dw.numpy()]
        ref = reference.run(dx, dw)  # the reference runs the transposed convolutions too
    for mine, theirs, r in zip(got, want, ref):
        np.testing.assert_allclose(mine, np.asarray(theirs), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(r, np.asarray(theirs), rtol=1e-10, atol=1e-10)


def test_conv_errors_name_the_shapes():
    with pytest.raises(ml.ShapeError, match=r"3 input channels are not 1 group\(s\) of the "
                                            r"filter's 2: input \[1, 3, 5\], filter \[4, 2, 3\]"):
        ml.conv(ml.ones((1, 3, 5)), ml.ones((4, 2, 3)))
    with pytest.raises(ml.ShapeError, match=r"window \(7\) does not fit"):
        ml.conv(ml.ones((1, 1, 5)), ml.ones((1, 1, 4)), dilation=2)
    with pytest.raises(ml.ShapeError, match="at least 3"):
        ml.conv(ml.ones((3, 5)), ml.ones((2, 3)))
    with pytest.raises(ValueError, match="stride must be 1 int"):
        ml.conv(ml.ones((1, 1, 5)), ml.ones((1, 1, 2)), stride=0)
    with pytest.raises(TypeError, match=r"conv: needs floating operands, got i64\[1,1,5\]"):
        ml.conv(ml.ones((1, 1, 5), dtype=ml.int64), ml.ones((1, 1, 2), dtype=ml.int64))


def test_conv_prints_as_a_call_and_its_vjp_as_replays():
    x, w = ml.asarray(np.ones((1, 2, 5))), ml.asarray(np.ones((2, 1, 3)))
    y = ml.conv(x, w, stride=2, padding=1, groups=2)
    text = ml.graph(y).text()
    assert "conv %0, %1 strides=(2,) padding=((1, 1),) lhs_dilation=(1,)" in text
    assert "ml.conv(v0, v1, stride=(2,), padding=((1, 1),), dilation=(1,), groups=2)" in \
        ml.graph(y).to_python()
    dx = ml.grad(lambda a: ml.sum(ml.conv(a, w, stride=2, padding=1, groups=2)))(x)
    assert "replay('conv'" in ml.graph(dx).to_python()
    _lazy(y, dx)


# -- ml.nn: conv2d, max_pool2d, avg_pool2d ----------------------------------------------------
@given(c=_conv_case(), data=st.data())
@settings(max_examples=10)
def test_conv2d_is_conv_plus_a_bias_per_channel(c, data):
    if c["x"].ndim != 4:
        c["x"], c["w"] = c["x"][..., None], c["w"][..., None]  # a 1-d case as a (H, 1) image
        c = {**c, **{k: (*c[k], (0, 0) if k == "padding" else 1) for k in
                     ("stride", "padding", "dilation")}}
    b = data.draw(hnp.arrays(np.float64, (c["w"].shape[0],), elements=st.floats(-2, 2)))
    pads = [max(p) for p in c["padding"]]  # conv2d pads symmetrically, as torch
    c = {**c, "padding": tuple((p, p) for p in pads)}
    y = ml.nn.conv2d(ml.asarray(c["x"]), ml.asarray(c["w"]), ml.asarray(b), stride=c["stride"],
                     padding=pads, dilation=c["dilation"], groups=c["groups"])
    with jax.enable_x64(True):
        want = np.asarray(_lax_conv(c["x"], c["w"], c)) + b[None, :, None, None]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)


@st.composite
def _pool_case(draw: st.DrawFn) -> tuple:
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)),
             *(draw(st.integers(max(1, k - 2 * p), 6)) for k, p in zip(kernel, padding)))
    seed = draw(st.integers(0, 2**32 - 1))  # distinct values: no tied maxima
    x = np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) / 8.0
    return x, kernel, stride, padding


def _np_pool(x: np.ndarray, kernel, stride, padding, fn, fill: float) -> np.ndarray:
    xp = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(p, p) for p in padding], constant_values=fill)
    view = np.lib.stride_tricks.sliding_window_view(xp, kernel, axis=(-2, -1))
    return fn(view[..., ::stride[0], ::stride[1], :, :], axis=(-2, -1))


def _jax_pool(x, kernel, stride, padding, op: str):
    dims, steps = (1, 1, *kernel), (1, 1, *stride)
    pads = ((0, 0), (0, 0), *((p, p) for p in padding))
    if op == "max":
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, dims, steps, pads)
    return jax.lax.reduce_window(x, 0.0, jax.lax.add, dims, steps, pads) / (kernel[0] * kernel[1])


@pytest.mark.parametrize("op", ["max", "avg"])
@given(case=_pool_case(), data=st.data())
@settings(max_examples=15)
def test_pooling_matches_numpy_and_its_gradient_jaxs(op, case, data):
    x, kernel, stride, padding = case
    pool = ml.nn.max_pool2d if op == "max" else ml.nn.avg_pool2d
    t = ml.asarray(x)
    ml.reset_metrics()
    y = pool(t, kernel, stride, padding)
    _lazy(y)
    want = _np_pool(x, kernel, stride, padding, np.max if op == "max" else np.mean,
                    -np.inf if op == "max" else 0.0)
    assert y.shape == want.shape and y.dtype == want.dtype
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    w = data.draw(hnp.arrays(np.float64, want.shape, elements=st.floats(-2, 2)))
    _grad_against_jax(lambda a: pool(a, kernel, stride, padding),
                      lambda a: _jax_pool(a, kernel, stride, padding, op), x, w)


def test_pooling_errors_are_torchs():
    x = ml.ones((1, 1, 4, 4))
    with pytest.raises(ValueError, match=r"padding \(2, 2\) must be at most half the kernel"):
        ml.nn.max_pool2d(x, 2, padding=2)
    with pytest.raises(ml.ShapeError, match=r"kernel \(5, 5\) does not fit in f64\[1,1,4,4\]"):
        ml.nn.avg_pool2d(x, 5)
    with pytest.raises(TypeError, match=r"floating tensor .* got i64\[4,4\]"):
        ml.nn.max_pool2d(ml.ones((4, 4), dtype=ml.int64), 2)
    with pytest.raises(ml.ShapeError, match=r"conv2d: expects an input \(N, C, H, W\)"):
        ml.nn.conv2d(ml.ones((1, 4, 4)), ml.ones((1, 1, 2, 2)))
