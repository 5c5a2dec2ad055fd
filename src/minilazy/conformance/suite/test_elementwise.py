"""Elementwise ops on every dtype NumPy defines them for: the lazy result is eager NumPy's.

Complex dtypes too, where the implementation declares capability ``complex`` (``defined``: not
for the ops the standard orders or rounds real values only).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply, numpy_inplace
from minilazy.conformance.oracle.strategies import (
    COMPLEX,
    allowed,
    arrays,
    castable,
    defined,
    dtypes_for,
    elements,
    examples,
)
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import explain_call, fresh, observe_all

Array = np.ndarray[Any, Any]
UNARY = sorted(n for n, s in ops().items() if s.kind == "elementwise" and s.arity == 1)
BINARY = sorted(n for n, s in ops().items() if s.kind == "elementwise" and s.arity == 2)


def _check(adapter: OptionalAdapter, op: str, calls: list[tuple[Any, ...]]) -> None:
    """Record ``op`` on each argument tuple, run one barrier, compare every result with NumPy's.

    Where NumPy raises ``TypeError`` or ``OverflowError`` (NEP 50: a Python int out of the
    tensor's range), the implementation must raise the same at the call.
    """
    spec = ops()[op]
    fresh(adapter)
    results, wanted = [], []
    calls = [c for c in calls if allowed(adapter, op, *(a.dtype for a in c
                                                         if isinstance(a, np.ndarray)))]
    for args in calls:
        explain_call(op, args, failed=False)
        try:
            want = numpy_apply(op, *args)
        except (TypeError, OverflowError) as e:  # subclasses of these are NumPy's own
            with pytest.raises(TypeError if isinstance(e, TypeError) else OverflowError):
                adapter.apply(op, *(adapter.from_numpy(a) if isinstance(a, np.ndarray) else a
                                    for a in args))
            continue
        results.append(adapter.apply(op, *(adapter.from_numpy(a) if isinstance(a, np.ndarray)
                                           else a for a in args)))
        wanted.append((want, args))
    wrong: list[str] = []  # every call is checked before the test fails: no dtype hides another
    for got, (want, args) in zip(observe_all(adapter, results), wanted):
        kinds = ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a)
                          for a in args)
        try:
            assert_close(got, want, spec.tolerance, what=f"{op}({kinds})")
        except AssertionError as e:
            if not wrong:  # the last program noted is then the first failing call
                explain_call(op, args)
            wrong.append(str(e))
    assert not wrong, f"{len(wrong)} of {len(wanted)} calls differ:\n" + "\n".join(wrong)


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", UNARY)
@examples(0.5)
@given(data=st.data())
def test_unary_on_every_dtype(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    spec = ops()[op]
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    calls = [(data.draw(arrays(d, shape, spec.domain), label=d.name),)
             for d in dtypes_for(adapter, complex_too=True) if defined(spec, d)]
    _check(adapter, op, calls)


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", BINARY)
@examples(0.5)
@given(data=st.data())
def test_binary_on_every_dtype(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    spec = ops()[op]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    calls = [(data.draw(arrays(d, shapes.input_shapes[0], spec.domain, 0), label=d.name),
              data.draw(arrays(d, shapes.input_shapes[1], spec.domain, 1)))
             for d in dtypes_for(adapter, complex_too=True) if defined(spec, d, d)]
    _check(adapter, op, calls)


# Shape pairs where each axis alignment matters: square operands hide a vector broadcast along
# the wrong axis from every shape check (only the values tell).
RANK_PAIRS = [((3,), (3, 3)), ((3, 3), (3,)), ((1, 3), (3, 3)), ((3, 1), (3, 3)),
              ((3,), (2, 3, 3)), ((3, 1, 3), (3, 3)), ((), (3, 3)), ((2, 1), (1, 2))]


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "maximum"])
def test_broadcasting_of_every_rank_pair(adapter: OptionalAdapter, op: str) -> None:
    rng = np.random.default_rng(11)
    calls = [tuple(np.asarray(rng.permutation(np.prod(s, dtype=int)).reshape(s) * 1.5,
                              np.float32) for s in pair) for pair in RANK_PAIRS]
    _check(adapter, op, calls)


@pytest.mark.spec("LZ-NUM-002")
@pytest.mark.parametrize("op", BINARY)
@examples(0.5)
@given(data=st.data())
def test_binary_on_mixed_dtypes_promotes_like_numpy(adapter: OptionalAdapter, op: str,
                                                    data: st.DataObject) -> None:
    spec = ops()[op]
    dtypes = dtypes_for(adapter, complex_too=True)
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(dtypes), st.sampled_from(dtypes))
                               .filter(lambda p: p[0] != p[1] and defined(spec, *p)),
                               min_size=1, max_size=4), label="dtype pairs")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    _check(adapter, op, [(data.draw(arrays(a, shape, spec.domain, 0)),
                          data.draw(arrays(b, shape, spec.domain, 1))) for a, b in pairs])


@pytest.mark.spec("LZ-NUM-002")
@pytest.mark.requires("metadata")
@pytest.mark.parametrize("op", BINARY)
def test_every_dtype_pair_promotes_like_numpy(adapter: OptionalAdapter, op: str) -> None:
    # Every pair, not a sample: one wrong pair of 144 is what a promotion bug looks like. The
    # dtype is read when the op is recorded, so nothing runs (the values are checked above).
    spec = ops()[op]
    dtypes = dtypes_for(adapter, complex_too=True)
    wrong = []
    for a in dtypes:
        for b in dtypes:
            if not defined(spec, a, b) or not allowed(adapter, op, a, b):
                continue
            want = numpy_apply(op, np.zeros(1, a), np.ones(1, b)).dtype
            got = adapter.dtype(adapter.apply(op, adapter.from_numpy(np.zeros(1, a)),
                                              adapter.from_numpy(np.ones(1, b))))
            if got != want:
                wrong.append(f"{a}, {b} -> {got} (NumPy: {want})")
    assert not wrong, f"{op}: " + "; ".join(wrong)


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.parametrize("op", BINARY)
@examples(0.5)
@given(data=st.data())
def test_python_scalars_are_weak(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    spec = ops()[op]
    calls: list[tuple[Any, ...]] = []
    # (NumPy's refusals are checked too: no loop-existence filter, only the standard's)
    dtypes = [d for d in dtypes_for(adapter, complex_too=True)
              if d.kind != "c" or not spec.real_only]
    kinds = [bool, int, float] + [complex] * (COMPLEX[0] in dtypes)
    for _ in range(data.draw(st.integers(1, 4), label="calls")):
        dtype = data.draw(st.sampled_from(dtypes))
        kind = data.draw(st.sampled_from(kinds))
        x = data.draw(arrays(dtype, (2,), spec.domain, 0))
        scalar: Any
        if kind is complex:  # NEP 50: complex64 next to float32, complex128 next to integers
            scalar = complex(data.draw(elements(np.dtype(np.complex128), spec.domain, 1)))
        elif kind is float:
            # never subnormal: whether they flush to zero is the implementation's (LZ-NUM-004);
            # finite next to complex numbers, whose infinite parts are the implementation's
            scalar = data.draw(st.floats(-1e3, 1e3, allow_subnormal=False)
                               if spec.domain or dtype.kind == "c"
                               else st.floats(allow_subnormal=False))
        elif kind is int:  # a shift amount must fit the shifted dtype (C: undefined)
            scalar = data.draw(elements(dtype if dtype.kind in "iu" else np.dtype(np.int8),
                                        spec.domain, 1) if spec.domain
                               else st.integers(-300, 300))
        else:
            scalar = data.draw(st.booleans())
        if dtype.kind == "c" and spec.domain == "divisor" and not scalar:
            scalar = type(scalar)(1)  # no complex zero divisors (strategies.elements)
        first = data.draw(st.booleans()) and not spec.domain  # domains bind the right operand
        calls.append((scalar, x) if first else (x, scalar))
    # Every dtype narrower than 64 bits with every kind of scalar, on every run: a strong scalar
    # shows only next to a dtype narrower than its own (int8 and an int, float32 and a float).
    # 1 fits every dtype and every domain, and is a valid shift.
    calls += [(np.ones(2, d), kind(1)) for d in dtypes if d.itemsize < 8 for kind in kinds]
    _check(adapter, op, calls)


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater",
                                "greater_equal"])
def test_a_comparison_with_an_int_out_of_range_is_exact(adapter: OptionalAdapter,
                                                         op: str) -> None:
    """NumPy 2 compares an integer tensor with any Python int exactly, however big: no overflow.

    Ints just past the dtype's range, past 64 bits, and far past (10**30), on either side. (Not
    int64 with 2**63: exact too in NumPy, but an engine on JAX must then compare int64 with
    uint64 by hand; test_int_edges checks minilazy's.)
    """
    calls: list[tuple[Any, ...]] = []
    for dtype in [d for d in dtypes_for(adapter) if d.kind in "iu"]:
        info = np.iinfo(dtype)
        x = np.array([info.min, 0, info.max], dtype)
        near = {int(info.max) + 1, int(info.min) - 1} - {2**63}
        for big in (*sorted(near), 2**64, -(2**63) - 1, 10**30, -(10**30)):
            calls += [(x, big), (big, x)]
    _check(adapter, op, calls)


# Weak Python scalars that fit every dtype. (NumPy's `where` casts an out-of-range Python int
# unsafely, `where(c, u8, -1)` gives 255, where LZ-NUM-003 wants an OverflowError: the ufunc
# tests check that part of the rule.)
FITTING = st.one_of(st.booleans(), st.integers(0, 100),
                    st.floats(-1e3, 1e3, allow_subnormal=False))  # subnormals: LZ-NUM-004


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", ["where"])
@given(data=st.data())
def test_where_selects_like_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    dtypes = dtypes_for(adapter, complex_too=True)
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=2, max_side=3))
    condition = data.draw(arrays(np.dtype(np.bool_), shapes.input_shapes[0]), label="condition")
    _check(adapter, op, [(condition, *(data.draw(arrays(data.draw(st.sampled_from(dtypes)), s))
                                       for s in shapes.input_shapes[1:]))])


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", ["clip"])
@given(data=st.data())
def test_clip_limits_like_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind != "b"]))
    x = data.draw(arrays(dtype, (3, 2)), label="x")
    # Bounds of x's own dtype (NumPy would promote mixed ones, the Array API keeps x's dtype).
    bound = st.one_of(st.none(), arrays(dtype, (2,)))
    low, high = data.draw(bound, label="min"), data.draw(bound, label="max")
    if low is None and high is None:
        return
    _check(adapter, op, [(x, low, high)])


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.parametrize("op", ["where", "clip"])
@given(data=st.data())
def test_python_scalars_in_where_and_clip_are_weak(adapter: OptionalAdapter, op: str,
                                                   data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind != "b"]))
    x = data.draw(arrays(dtype, (3, 2)), label="x")
    if op == "where":
        condition = data.draw(arrays(np.dtype(np.bool_), (3, 2)), label="condition")
        scalar = data.draw(FITTING, label="scalar")
        args = (condition, x, scalar) if data.draw(st.booleans()) else (condition, scalar, x)
        _check(adapter, op, [args])
    else:  # a bound of x's kind, in range: the result keeps x's dtype
        bound = elements(dtype).map(float if dtype.kind == "f" else int)
        _check(adapter, op, [(x, data.draw(bound, label="min"), None),
                             (x, None, data.draw(bound, label="max"))])


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize("op", ["astype"])
@given(data=st.data())
def test_astype_converts_like_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    dtypes = dtypes_for(adapter)
    source, target = (data.draw(st.sampled_from(dtypes)) for _ in range(2))
    x = data.draw(castable(source, target, hnp.array_shapes(min_dims=0, max_dims=2,
                                                            max_side=3)), label="x")
    _check(adapter, op, [(x, target)])


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.requires("setitem")
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "floor_divide", "bitwise_or"])
@given(data=st.data())
def test_python_scalars_in_place_are_weak(adapter: OptionalAdapter, op: str,
                                          data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    x = data.draw(arrays(dtype, (2, 3)), label="x")
    scalar = data.draw(st.one_of(st.booleans(), st.integers(-300, 300),
                                 st.floats(-1e3, 1e3, allow_subnormal=False)), label="scalar")
    fresh(adapter)
    try:
        want = numpy_inplace(op, x, scalar)
    except (TypeError, OverflowError) as e:  # same_kind casting, or NEP 50's range check
        with pytest.raises(TypeError if isinstance(e, TypeError) else OverflowError):
            adapter.inplace(op, adapter.from_numpy(x), scalar)
        return
    t = adapter.from_numpy(x)
    adapter.inplace(op, t, scalar)
    assert_close(adapter.to_numpy(t), want, what=f"{dtype} {op}= {scalar!r}")
