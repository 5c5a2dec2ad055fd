"""Cumulative sums, triangles and gathers along an axis: NumPy's values, recorded lazily.

``cumulative_sum`` (along any axis, with ``dtype`` and ``include_initial``), ``tril`` and
``triu`` (any ``k``, on stacks of matrices) and ``take_along_axis`` (indices broadcast against
``x`` off the axis) match NumPy 2 in shape, dtype and value (LZ-NUM-016); recording them runs
nothing and knows their shape and dtype (LZ-REC-001, LZ-REC-002); their gradients are the
derivatives of NumPy's definitions (LZ-AD-001); and a bad axis or a wrong number of dimensions
raises at the call, before anything runs (LZ-ERR-001).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.strategies import allowed, arrays, dtypes_for
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.test_autodiff import numeric_grad
from minilazy.conformance.suite.test_errors import names_shape, raised
from minilazy.conformance.suite.util import counting, fresh, settle

Array = np.ndarray[Any, Any]
NEW = ("cumulative_sum", "tril", "triu", "take_along_axis")


def cumulative_sum_bound(x: Array, axis: int | None, include_initial: bool,
                         expected: Array) -> Array | None:
    """The ``reduction`` slack of a cumulative sum: ``n * eps`` times the running sum of ``|x|``.

    ``None`` for non-float results, which must be exact.

    Example:
        >>> b = cumulative_sum_bound(np.float32([1, -2]), None, False, np.float32([1, -1]))
        >>> b is not None and bool((b > 0).all())
        True
    """
    if expected.dtype.kind != "f":
        return None
    eps = float(np.finfo(expected.dtype).eps)
    mag = np.cumulative_sum(np.abs(np.asarray(x, np.float64)), axis=axis,
                            include_initial=include_initial)
    n = x.size if axis is None else x.shape[axis]
    return np.asarray(2 * (n + 2) * eps * mag + eps * np.abs(expected.astype(np.float64)))


@pytest.mark.spec("LZ-NUM-016")
@pytest.mark.parametrize("op", ["cumulative_sum"])
@given(data=st.data())
def test_cumulative_sum_matches_numpy(adapter: OptionalAdapter, op: str,
                                      data: st.DataObject) -> None:
    """Any axis (``None`` for 1-d only), with or without the leading 0; 1-d to 3-d.

    ``dtype`` is ``None`` or one the input casts to safely. 0-d inputs, which NumPy takes and
    the Array API does not, are not drawn.
    """
    fresh(adapter)
    dtypes = [d for d in dtypes_for(adapter) if allowed(adapter, op, d)]
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes), label="dtype"), hnp.array_shapes(
        min_dims=1, max_dims=3, min_side=0, max_side=4), "bounded"), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1) if x.ndim > 1 else st.one_of(
        st.none(), st.integers(-1, 0)), label="axis")
    wider = [d for d in dtypes if np.can_cast(x.dtype, d, "safe") and d != np.bool_]
    dtype = data.draw(st.one_of(st.none(), st.sampled_from(wider)) if wider else st.none(),
                      label="sum dtype")
    initial = data.draw(st.booleans(), label="include_initial")
    kwargs: dict[str, Any] = {"axis": axis, "dtype": dtype, "include_initial": initial}
    want = numpy_apply(op, x, **kwargs)
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), **kwargs))
    bound = cumulative_sum_bound(x.astype(want.dtype) if want.dtype.kind == "f" else x, axis,
                                 initial, want)
    assert_close(got, want, ops()[op].tolerance, bound,
                 what=f"cumulative_sum({x.dtype}{x.shape}, {kwargs})")


@pytest.mark.spec("LZ-NUM-016")
@pytest.mark.parametrize("op", ["tril", "triu"])
@given(data=st.data())
def test_triangles_match_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    """Stacks of matrices (2-d to 4-d, sides 0 to 4), diagonals ``k`` in and out of range."""
    fresh(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype"),
                         hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4)),
                  label="x")
    k = data.draw(st.integers(-5, 5), label="k")
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), k=k))
    assert_close(got, numpy_apply(op, x, k=k), what=f"{op}({x.dtype}{x.shape}, k={k})")


@st.composite
def along_axis(draw: Any, x_shape: tuple[int, ...], axis: int,
               dtypes: list[np.dtype[Any]]) -> Array:
    """Indices for ``take_along_axis(x, i, axis=axis)``: in range, of one of ``dtypes``.

    As many axes as ``x``; off the axis each side is ``x``'s or 1 (broadcast); along it any
    length, or 0 when ``x`` has nothing there to take.
    """
    n = x_shape[axis]
    shape = [draw(st.sampled_from([s, 1])) for s in x_shape]
    shape[axis] = draw(st.integers(0, 4)) if n else 0
    dtype = draw(st.sampled_from(dtypes))
    low = max(-n if dtype.kind == "i" else 0, int(np.iinfo(dtype).min))
    high = min(max(n - 1, 0), int(np.iinfo(dtype).max))
    return np.asarray(draw(hnp.arrays(dtype, tuple(shape), elements=st.integers(low, high))))


@pytest.mark.spec("LZ-NUM-016")
@pytest.mark.parametrize("op", ["take_along_axis"])
@given(data=st.data())
def test_take_along_axis_matches_numpy(adapter: OptionalAdapter, op: str,
                                       data: st.DataObject) -> None:
    """In-range indices (an out-of-range one is LZ-NUM-005's) of any integer dtype."""
    fresh(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype"),
                         hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)),
                  label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    idx = data.draw(along_axis(x.shape, axis, [d for d in dtypes_for(adapter) if d.kind in "iu"]),
                    label="indices")
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), adapter.from_numpy(idx),
                                         axis=axis))
    assert_close(got, numpy_apply(op, x, idx, axis=axis),
                 what=f"take_along_axis({x.shape}, {idx.dtype}{idx.shape}, axis={axis})")


def _record_new_ops(adapter: OptionalAdapter, x: Any, i: Any) -> list[Any]:
    return [adapter.apply("cumulative_sum", x, axis=1, include_initial=True),
            adapter.apply("tril", x, k=-1), adapter.apply("triu", x, k=1),
            adapter.apply("take_along_axis", x, i, axis=1)]


X = np.arange(12, dtype=np.float32).reshape(3, 4)
INDICES = np.array([[3, 0], [1, 1], [-1, 2]], np.int32)


@pytest.mark.spec("LZ-REC-001")
@pytest.mark.ops(*NEW)
def test_recording_the_new_ops_executes_nothing(adapter: OptionalAdapter) -> None:
    x, i = adapter.from_numpy(X), adapter.from_numpy(INDICES)
    settle(adapter)
    with counting(adapter) as d:
        ys = _record_new_ops(adapter, x, i)
    assert d.ran_nothing(), f"recording ran something: {d}"
    want = [np.cumulative_sum(X, axis=1, include_initial=True), np.tril(X, -1), np.triu(X, 1),
            np.take_along_axis(X, INDICES, axis=1)]
    for name, y, w in zip(NEW, ys, want, strict=True):
        assert_close(adapter.to_numpy(y), w, "reduction" if name == "cumulative_sum" else "exact",
                     what=name)


@pytest.mark.spec("LZ-REC-002")
@pytest.mark.requires("metadata")
@pytest.mark.ops(*NEW)
def test_recorded_shapes_and_dtypes_of_the_new_ops_are_numpys(adapter: OptionalAdapter) -> None:
    x8 = np.arange(12, dtype=np.int8).reshape(3, 4)
    cases: list[tuple[str, list[Array], dict[str, Any]]] = [
        ("cumulative_sum", [x8], {"axis": 0, "include_initial": True}),
        ("cumulative_sum", [x8], {"axis": -1, "dtype": np.dtype(np.int16)}),
        ("cumulative_sum", [np.ones(5, np.float32)], {}),
        ("tril", [x8], {"k": 2}), ("triu", [X], {"k": -7}),
        ("take_along_axis", [X, INDICES], {"axis": 1}),
        ("take_along_axis", [X, np.zeros((1, 4), np.int64)], {"axis": 0}),
    ]
    for name, args, kwargs in cases:
        if not all(allowed(adapter, name, a.dtype) for a in args):
            continue
        want = numpy_apply(name, *args, **kwargs)
        got = adapter.apply(name, *map(adapter.from_numpy, args), **kwargs)
        assert (adapter.shape(got), adapter.dtype(got)) == (want.shape, want.dtype), (
            name, kwargs)


def check_gradient(adapter: OptionalAdapter, op: str, args: list[Array],
                   f: Callable[..., Any], f_numpy: Callable[..., Array], rng: np.random.Generator,
                   what: str) -> None:
    """``grad`` of ``sum(f(*args) * w)`` for random weights ``w``, against central differences.

    ``f`` records the op on the adapter's tensors, ``f_numpy`` is its NumPy definition; every
    argument is differentiated. Random weights, not ones: a gradient that sums the cotangent
    the wrong way (a scan run forwards, a filter not reversed) is right for a constant one. The
    tolerance is LZ-AD-001's in float64: these ops are exact or sums (``reduction``), whose
    rounding is far below the finite differences' error.
    """
    fresh(adapter)
    w = rng.standard_normal(np.shape(f_numpy(*args)))
    ww = adapter.from_numpy(w)

    def f_lazy(*xs: Any) -> Any:
        return adapter.apply("sum", adapter.apply("multiply", f(*xs), ww))

    grads = adapter.grad(f_lazy, tuple(range(len(args))))(*map(adapter.from_numpy, args))
    for i, g in enumerate(grads):
        got = adapter.to_numpy(g)
        want = numeric_grad(lambda *xs: float(np.sum(f_numpy(*xs) * w)), args, i)
        assert got.shape == args[i].shape and got.dtype == args[i].dtype, (
            what, i, got.dtype, got.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{op}: argument {i} of {what}")


def _seeded(data: st.DataObject) -> np.random.Generator:
    """A generator seeded by Hypothesis: values for a drawn shape, with no zeros or ties."""
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.ops("multiply", "sum")
@pytest.mark.parametrize("op", ["cumulative_sum"])
@given(data=st.data())
def test_cumulative_sum_gradient_matches_finite_differences(adapter: OptionalAdapter, op: str,
                                                            data: st.DataObject) -> None:
    """Any axis (``None`` for 1-d only), with or without the leading 0; float64, 1-d to 3-d.

    ``x[i]`` is in every sum from ``i`` on, so its gradient sums the weights from ``i`` on.
    """
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                      label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1) if len(shape) > 1 else st.one_of(
        st.none(), st.integers(-1, 0)), label="axis")
    initial = data.draw(st.booleans(), label="include_initial")
    rng = _seeded(data)
    kw: dict[str, Any] = {"axis": axis, "include_initial": initial}
    check_gradient(adapter, op, [rng.standard_normal(shape)],
                   lambda x: adapter.apply(op, x, **kw), lambda x: numpy_apply(op, x, **kw),
                   rng, f"{op}(f64{shape}, {kw})")


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.ops("multiply", "sum")
@pytest.mark.parametrize("op", ["tril", "triu"])
@given(data=st.data())
def test_triangle_gradients_match_finite_differences(adapter: OptionalAdapter, op: str,
                                                     data: st.DataObject) -> None:
    """Stacks of matrices (2-d to 4-d), diagonals ``k`` in and out of range: the mask, again."""
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=4),
                      label="shape")
    k = data.draw(st.integers(-5, 5), label="k")
    rng = _seeded(data)
    check_gradient(adapter, op, [rng.standard_normal(shape)],
                   lambda x: adapter.apply(op, x, k=k), lambda x: numpy_apply(op, x, k=k), rng,
                   f"{op}(f64{shape}, k={k})")


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.ops("multiply", "sum")
@pytest.mark.parametrize("op", ["take_along_axis"])
@given(data=st.data())
def test_take_along_axis_gradient_sums_repeated_indices(adapter: OptionalAdapter, op: str,
                                                        data: st.DataObject) -> None:
    """The gradient with respect to ``x``: each element's weights summed over its picks.

    Along the axis more indices than ``x`` has there (in range, negative ones too), so some
    element is picked twice or more; off the axis the indices have ``x``'s sides or 1.
    """
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                      label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    sides = [data.draw(st.sampled_from([s, 1])) for s in shape]
    sides[axis] = data.draw(st.integers(n + 1, n + 3), label="picks")  # a repeat, at least
    idx = data.draw(hnp.arrays(np.int64, tuple(sides), elements=st.integers(-n, n - 1)),
                    label="indices")
    rng = _seeded(data)
    ii = adapter.from_numpy(idx)
    check_gradient(adapter, op, [rng.standard_normal(shape)],
                   lambda x: adapter.apply(op, x, ii, axis=axis),
                   lambda x: numpy_apply(op, x, idx, axis=axis), rng,
                   f"{op}(f64{shape}, i64{idx.shape}, axis={axis})")


# Bad calls of the new ops: (call on x = f32[2,3], the ops it uses, shapes its message names).
BadCall = Callable[[OptionalAdapter, Any], Any]
BAD_CALLS: dict[str, tuple[BadCall, tuple[str, ...], tuple[tuple[int, ...], ...]]] = {
    "cumulative_sum-axis": (lambda a, x: a.apply("cumulative_sum", x, axis=2),
                            ("cumulative_sum",), ()),
    "cumulative_sum-negative-axis": (lambda a, x: a.apply("cumulative_sum", x, axis=-3),
                                     ("cumulative_sum",), ()),
    "take_along_axis-ndim": (lambda a, x: a.apply(
        "take_along_axis", x, a.from_numpy(np.zeros(2, np.int64)), axis=1),
        ("take_along_axis",), ((2, 3), (2,))),
    "take_along_axis-more-dims": (lambda a, x: a.apply(
        "take_along_axis", x, a.from_numpy(np.zeros((2, 1, 1), np.int64)), axis=1),
        ("take_along_axis",), ((2, 3), (2, 1, 1))),
    "take_along_axis-axis": (lambda a, x: a.apply(
        "take_along_axis", x, a.from_numpy(np.zeros((2, 1), np.int64)), axis=2),
        ("take_along_axis",), ()),
}


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("case", [pytest.param(name, marks=pytest.mark.ops(*used), id=name)
                                  for name, (_, used, _) in BAD_CALLS.items()])
def test_a_bad_call_of_the_new_ops_raises_at_the_call(adapter: OptionalAdapter,
                                                      case: str) -> None:
    """An out-of-range axis, or indices of another number of dimensions than ``x``.

    Raised by the call, naming the shapes where they are what is wrong, before anything runs
    (where the adapter counts runs). Any exception will do (the rule names no type; NumPy
    raises ``AxisError``, a ``ValueError`` and an ``IndexError``, and ``ValueError``).
    """
    call, _, shapes = BAD_CALLS[case]
    x = adapter.from_numpy(X[:2, :3].copy())
    settle(adapter)
    counted = satisfies(capabilities_of(adapter), "executions|compiles")
    with counting(adapter) if counted else nullcontext(None) as d:
        message = str(raised(lambda: call(adapter, x)))
    for shape in shapes:
        assert names_shape(message, shape), f"{case}: {message!r} does not name {shape}"
    assert d is None or d.ran_nothing(), f"{case}: the error came from running: {d}"
