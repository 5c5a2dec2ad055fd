"""Recording: ops record and run nothing; metadata is known at once; in-place ops rebind."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply, numpy_inplace
from minilazy.conformance.oracle.strategies import arrays, dtypes_for
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import counting, settle, typed

Array = np.ndarray[Any, Any]
MIXED = ("multiply", "exp", "sum", "reshape", "getitem", "matmul", "maximum")
BINARY = [n for n, s in ops().items() if s.kind == "elementwise" and s.arity == 2]
UNARY = [n for n, s in ops().items() if s.kind == "elementwise" and s.arity == 1]


def _record_mix(adapter: OptionalAdapter, x: Any, w: Any) -> Any:
    y = adapter.apply("exp", adapter.apply("multiply", x, typed(adapter, 0.5, np.float32)))
    y = adapter.apply("matmul", adapter.apply("reshape", y, (4, 3)), w)
    return adapter.apply("maximum", adapter.apply("sum", y, axis=0), adapter.apply(
        "getitem", y, (0, slice(None, None, -1))))


@pytest.mark.spec("LZ-REC-001")
@pytest.mark.ops(*MIXED)
def test_recording_compiles_and_executes_nothing(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    w = adapter.from_numpy(np.ones((3, 2), np.float32))
    settle(adapter)
    with counting(adapter) as d:
        y = _record_mix(adapter, x, w)
    assert d.ops_recorded is None or d.ops_recorded >= 7, "each op call is recorded"
    assert d.ran_nothing(), f"recording ran something: {d}"
    del y


@pytest.mark.spec("LZ-REC-001")
@pytest.mark.requires("setitem")
@pytest.mark.ops("matmul", "add", "tanh", "setitem", "multiply")
def test_recording_updates_in_place_compiles_and_executes_nothing(
        adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.ones((3, 4), np.float32))
    w = adapter.from_numpy(np.full((4, 2), 0.25, np.float32))
    one, five = typed(adapter, 1.0, np.float32), typed(adapter, 5.0, np.float32)
    settle(adapter)
    with counting(adapter) as d:
        y = adapter.apply("tanh", adapter.apply("add", adapter.apply("matmul", x, w), one))
        adapter.apply("setitem", y, (0, slice(None)), five)  # x[i] = v: recorded, not run
        adapter.inplace("multiply", y, typed(adapter, 2.0, np.float32))  # x *= 2: likewise
    assert d.ops_recorded is None or d.ops_recorded >= 5, "each op call is recorded"
    assert d.ran_nothing(), f"recording an update in place ran something: {d}"
    if "pending" in adapter.capabilities:
        assert adapter.is_pending(y), "the updated tensor is not pending after recording"
    want = np.tanh(np.ones((3, 4), np.float32) @ np.full((4, 2), 0.25, np.float32)
                   + np.float32(1))
    want[0, :] = 5
    assert_close(adapter.to_numpy(y), want * np.float32(2), "ulp")


# Calls whose recorded dtype a promotion bug would get wrong (weak scalars, mixed kinds).
SENTINELS: list[tuple[str, Any, Any]] = [
    ("add", np.ones(2, np.float32), 0.5), ("multiply", np.ones(2, np.int8), 3),
    ("subtract", np.ones(2, np.uint8), True), ("add", np.ones(2, np.int16), 2.5),
    ("maximum", np.ones(2, np.float16), np.ones(2, np.int8)),
    ("less", np.ones(2, np.uint8), 1000), ("divide", np.ones(2, np.int8), 2),
]


def _recorded_matches(adapter: OptionalAdapter, name: str, args: list[Any]) -> None:
    try:
        want = numpy_apply(name, *args)
    except (TypeError, OverflowError):
        return  # NumPy refuses it: LZ-ERR-002 and LZ-NUM-003 check the error
    got = adapter.apply(name, *(adapter.from_numpy(v) if isinstance(v, np.ndarray) else v
                                for v in args))
    shown = ", ".join(f"{type(v).__name__} {v!r}" if not isinstance(v, np.ndarray)
                      else f"{v.dtype}{list(v.shape)}" for v in args)
    assert (adapter.shape(got), adapter.dtype(got)) == (want.shape, want.dtype), (
        f"{name}({shown}) recorded {adapter.dtype(got)}{list(adapter.shape(got))}; NumPy "
        f"gives {want.dtype}{list(want.shape)}")


@pytest.mark.spec("LZ-REC-002")
@pytest.mark.requires("metadata")
@pytest.mark.parametrize("case", range(len(SENTINELS)))
def test_recorded_dtypes_of_promoting_calls_are_numpys(adapter: OptionalAdapter,
                                                       case: int) -> None:
    name, a, b = SENTINELS[case]
    _recorded_matches(adapter, name, [a, b])


@pytest.mark.spec("LZ-REC-002")
@pytest.mark.requires("metadata")
@given(data=st.data())
def test_recorded_shape_and_dtype_are_numpys(adapter: OptionalAdapter, data: st.DataObject
                                             ) -> None:
    dtypes = dtypes_for(adapter)
    name = data.draw(st.sampled_from(BINARY + UNARY), label="op")
    spec = ops()[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a = data.draw(arrays(data.draw(st.sampled_from(dtypes), label="dtype"),
                         shapes.input_shapes[0], spec.domain))
    args: list[Any] = [a]
    if spec.arity == 2:
        other = data.draw(st.one_of(st.sampled_from(dtypes), st.sampled_from([True, 2, 0.5])),
                          label="other")
        args.append(data.draw(arrays(other, shapes.input_shapes[1], spec.domain, 1))
                    if isinstance(other, np.dtype) else other)
    _recorded_matches(adapter, name, args)


@pytest.mark.spec("LZ-REC-003")
@pytest.mark.requires("metadata")
@pytest.mark.ops(*MIXED)
def test_reading_metadata_executes_nothing(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = _record_mix(adapter, x, adapter.from_numpy(np.ones((3, 2), np.float32)))
    with counting(adapter) as d:
        facts = (adapter.shape(y), adapter.dtype(y), repr(y), len(y))
        # The Array API attributes, where the tensors have them (reading is the point here:
        # tinygrad's `size` is a method, which the rule does not judge).
        more = {name: getattr(y, name) for name in ("ndim", "size") if hasattr(y, name)}
    assert facts[:2] == ((2,), np.dtype(np.float32)) and facts[3] == 2
    assert d.ran_nothing(), f"reading metadata ran something: {d}"
    ints = {k: v for k, v in more.items() if isinstance(v, int)}
    assert ints == {k: v for k, v in {"ndim": 1, "size": 2}.items() if k in ints}, ints


@pytest.mark.spec("LZ-REC-004")
@pytest.mark.ops("setitem", "multiply", "add")
def test_setitem_rebinds_the_tensor_for_every_later_use(adapter: OptionalAdapter) -> None:
    base = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = adapter.from_numpy(base)
    two, one = typed(adapter, 2, np.int32), typed(adapter, 1, np.int32)
    before = adapter.apply("multiply", x, two)  # recorded before the update: the old value
    returned = adapter.apply("setitem", x, (0, slice(1, None)), adapter.from_numpy(
        np.array([70, 80], np.int32)))
    after = adapter.apply("add", x, one)  # the handle x now names the updated value
    want = numpy_apply("setitem", base, (0, slice(1, None)), np.array([70, 80], np.int32))
    assert returned is x
    assert_close(adapter.to_numpy(after), want + 1)
    assert_close(adapter.to_numpy(x), want)
    assert_close(adapter.to_numpy(before), base * 2)


@pytest.mark.spec("LZ-REC-004")
@pytest.mark.ops("add", "multiply", "negative")
def test_in_place_arithmetic_rebinds_the_tensor(adapter: OptionalAdapter) -> None:
    base = np.arange(4, dtype=np.float32)
    x = adapter.from_numpy(base)
    first = adapter.inplace("add", x, typed(adapter, 1.5, np.float32))
    second = adapter.inplace("multiply", x, adapter.from_numpy(np.full(4, 2, np.int8)))
    want = numpy_inplace("multiply", numpy_inplace("add", base, np.float32(1.5)),
                         np.full(4, 2, np.int8))
    # `x op= y` rebinds x itself: the handle the caller holds sees both updates, and the value
    # returned is that same handle (not a new tensor the caller would have to pick up).
    assert first is x and second is x, "in-place ops returned a new tensor, x is unchanged"
    assert_close(adapter.to_numpy(adapter.apply("negative", x)), -want)
    assert_close(adapter.to_numpy(x), want)


def _aligned(n: int, dtype: np.dtype[Any], offset: int) -> Array:
    """A zeroed array of ``n`` elements starting ``offset`` bytes past a 64-byte boundary.

    At that alignment a device runtime may adopt host memory instead of copying it.
    """
    raw = np.zeros(n * dtype.itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out: Array = raw[start:start + n * dtype.itemsize].view(dtype)
    return out


@pytest.mark.spec("LZ-REC-007")
@given(n=st.sampled_from([1, 7, 16, 1024, 1 << 17]), offset=st.sampled_from([0, 8]),
       barrier=st.booleans(), data=st.data())
def test_a_later_host_write_changes_no_tensor(adapter: OptionalAdapter, n: int, offset: int,
                                              barrier: bool, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    if offset % dtype.itemsize:
        offset = 0
    host = _aligned(n, dtype, offset)
    before = host.copy()
    x = adapter.from_numpy(host)
    y = adapter.apply("negative" if dtype.kind in "fiuc" else "logical_not", x)
    if barrier:
        adapter.barrier()
    host[...] = 1  # after the call: neither the tensor nor what was recorded from it may see it
    np.testing.assert_array_equal(adapter.to_numpy(x), before, "the tensor sees a host write")
    want = numpy_apply("negative" if dtype.kind in "fiuc" else "logical_not", before)
    np.testing.assert_array_equal(adapter.to_numpy(y), want, "an op read a later host write")
