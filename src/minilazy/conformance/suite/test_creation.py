"""Creation functions at their edges: fill values, arange and linspace lines, eye, asarray.

``suite/test_shapes.py`` checks every creation op on small, simple arguments; these tests add
the arguments where implementations differ: fill values of every kind and range, ``arange`` and
``linspace`` over wide ranges (compared with a bound on the line, not NumPy's own recipe),
diagonals beyond the matrix, NumPy's type inference of nested Python lists, and bad arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.strategies import WIDE, allowed, arrays, dtypes_for, shapes
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.test_reductions import raised_at_the_call
from minilazy.conformance.suite.util import explain_call, fresh

Array = np.ndarray[Any, Any]
Draw = Callable[..., Any]


def _tensors(adapter: OptionalAdapter, args: list[Any]) -> list[Any]:
    return [adapter.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]


def check(adapter: OptionalAdapter, op: str, args: list[Any], kwargs: dict[str, Any],
          bound: Any = None) -> tuple[Array, Array] | None:
    """``op`` gives NumPy's result, or raises at the call where NumPy raises.

    Values are compared within the op's tolerance class, or ``bound(want)``. Returns both
    results where they were compared.
    """
    dtype = kwargs.get("dtype")
    if dtype is not None and not allowed(adapter, op, dtype):
        return None  # the adapter's dtype policy: not implemented
    fresh(adapter)
    explain_call(op, args, kwargs)
    try:
        want = numpy_apply(op, *args, **kwargs)
    except (TypeError, ValueError, OverflowError) as e:
        with pytest.raises((type(e), TypeError, ValueError, OverflowError)):
            adapter.apply(op, *_tensors(adapter, args), **kwargs)
        return None
    if want.dtype in WIDE and "float64" not in adapter.capabilities:
        return None  # NumPy's dtype here is 64-bit, which the adapter does not have
    got = adapter.to_numpy(adapter.apply(op, *_tensors(adapter, args), **kwargs))
    what = f"{op}({', '.join(map(repr, args))}, **{kwargs})"
    assert_close(got, want, ops()[op].tolerance,
                 bound=None if bound is None else bound(want), what=what)
    return got, want


def dtype_or_none(draw: Draw, choices: list[np.dtype[Any]]) -> np.dtype[Any] | None:
    chosen: np.dtype[Any] | None = draw(st.one_of(st.none(), st.sampled_from(choices)),
                                        label="dtype")
    return chosen


def fill_for(draw: Draw, dtype: np.dtype[Any] | None) -> bool | int | float:
    """A Python fill value for ``dtype`` (None: NumPy types the value itself).

    Ints may be just out of the dtype's range (NumPy 2 raises ``OverflowError``). Floats go into
    integer dtypes only finite and in range (the `cast` domain: C leaves the rest undefined);
    into floats, any value, NaN and infinities included.
    """
    kind = draw(st.sampled_from([bool, int, float]), label="fill kind")
    if kind is bool:
        return bool(draw(st.booleans(), label="fill"))
    if dtype is not None and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if kind is int:
            return int(draw(st.integers(int(info.min) - 2, int(info.max) + 2), label="fill"))
        return float(draw(st.floats(max(float(info.min), -1e6), min(float(info.max), 1e6)),
                          label="fill"))
    if kind is int:
        return int(draw(st.integers(-(2**63), 2**63 - 1), label="fill"))
    return float(draw(st.floats(allow_subnormal=False), label="fill"))  # LZ-NUM-004: subnormals


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["full", "full_like"])
@given(data=st.data())
def test_fill_values_convert_like_numpy(adapter: OptionalAdapter, op: str,
                                        data: st.DataObject) -> None:
    dtypes = dtypes_for(adapter)
    dtype = dtype_or_none(data.draw, dtypes)
    kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    shape = data.draw(shapes(max_dims=2, max_side=3), label="shape")
    if op == "full":
        check(adapter, op, [shape, fill_for(data.draw, dtype)], kwargs)
    else:
        like = data.draw(arrays(data.draw(st.sampled_from(dtypes)), shape), label="like")
        check(adapter, op, [like, fill_for(data.draw, dtype or like.dtype)], kwargs)


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["full"])
def test_full_types_a_big_python_int_as_uint64(adapter: OptionalAdapter, op: str) -> None:
    check(adapter, op, [(2,), 2**63], {})


# -- arange, linspace --------------------------------------------------------------------------
#
# NumPy's arange fills start, start + step, then start + i * delta with delta = (start + step)
# - start computed in the result dtype; linspace computes i * ((stop - start) / div) + start in
# float64, then converts. An implementation may compute start + i * step (maybe fused into one
# FMA). Each recipe is within a few roundings of the exact line: delta is off by at most
# eps * (|start| + |step|), which i multiplies, and the products and sums round at most twice
# more, relative to |start| + |i * step|. The bound is the sum of those for both sides, in the
# result dtype's eps, per element: an ulp comparison would test NumPy's recipe near zero, not
# the line.

def line_bound(start: float, step: float) -> Callable[[Array], Array | None]:
    def bound(want: Array) -> Array | None:
        if want.dtype.kind != "f":
            return None  # integers: exact
        eps = float(np.finfo(want.dtype).eps)
        i = np.arange(want.size, dtype=np.float64)
        return (eps * (i + 1) * (abs(start) + abs(step))
                + 4 * eps * (abs(start) + i * abs(step)))
    return bound


@st.composite
def arange_args(draw: Draw, dtypes: list[np.dtype[Any]]) -> tuple[tuple[Any, ...], Any]:
    """Positional arguments -- (stop,), (start, stop) or (start, stop, step) -- and a dtype.

    At most about 20 values. Integer dtypes get integer arguments only (NumPy's arange of float
    arguments into an integer dtype follows its fill recipe, which the Array API leaves
    unspecified), and unsigned ones positive steps (counting down: ``ARANGE_CASES``).
    """
    dtype = dtype_or_none(draw, [d for d in dtypes if d.kind in "iuf"])
    count = draw(st.integers(-2, 20), label="count")  # about how many values; <= 0: none
    form = draw(st.integers(1, 3), label="arguments")
    if dtype is None and draw(st.booleans(), label="int arguments") or (
            dtype is not None and dtype.kind in "iu"):
        lo = 0 if dtype is not None and dtype.kind == "u" else -100
        start = draw(st.integers(lo, 100)) if form > 1 else 0
        step = draw(st.integers(1 if lo == 0 else -30, 30).filter(bool)) if form == 3 else 1
        stop = start + count * step
        return (stop,) if form == 1 else (start, stop) if form == 2 else (start, stop, step), dtype
    if dtype is None:  # a float start: one argument makes it 0 (an int)
        form = max(form, 2)
    mag = draw(st.sampled_from([1.0, 100.0] if dtype == np.float16 else [1.0, 100.0, 1e4]))
    start = draw(st.floats(-mag, mag) | st.integers(-100, 100)) if form > 1 else 0
    start = float(start) if dtype is None else start
    step = (draw(st.floats(mag / 20, mag) | st.integers(1, 5)) * draw(st.sampled_from([1, -1]))
            if form == 3 else 1)
    stop = start + step * (count + draw(st.floats(0, 1)))
    return (stop,) if form == 1 else (start, stop) if form == 2 else (start, stop, step), dtype


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["arange"])
@given(data=st.data())
def test_arange_lies_on_numpys_line(adapter: OptionalAdapter, op: str,
                                    data: st.DataObject) -> None:
    # Length and dtype exactly NumPy's (default dtypes from the arguments' types); integer
    # values exact, float values on the line within ``line_bound``.
    args, dtype = data.draw(arange_args(dtypes_for(adapter)), label="arange")
    start = args[0] if len(args) > 1 else 0
    check(adapter, op, list(args), {} if dtype is None else {"dtype": dtype},
          line_bound(start, args[2] if len(args) == 3 else 1))


ARANGE_CASES = [
    ((5.0,), None), ((2.5,), None), ((0, 5.0), None), ((1, 4.5, 1), None),  # float64: from stop
    ((5, 0, -1), "uint8"),  # counting down in an unsigned dtype
    ((0, 2), "bool"),  # NumPy: [False, True]
]


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["arange"])
@pytest.mark.parametrize(("args", "dtype"), ARANGE_CASES, ids=str)
def test_arange_edge_cases_match_numpy(adapter: OptionalAdapter, op: str, args: tuple[Any, ...],
                                       dtype: str | None) -> None:
    check(adapter, op, list(args), {} if dtype is None else {"dtype": np.dtype(dtype)})


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["linspace"])
@given(data=st.data())
def test_linspace_lies_on_numpys_line(adapter: OptionalAdapter, op: str,
                                      data: st.DataObject) -> None:
    # Float dtypes (default float64); num 0..12; with or without the endpoint, which NumPy sets
    # to exactly ``stop``.
    start = data.draw(st.floats(-1e3, 1e3) | st.integers(-100, 100), label="start")
    stop = data.draw(st.floats(-1e3, 1e3) | st.integers(-100, 100), label="stop")
    num, endpoint = data.draw(st.integers(0, 12), label="num"), data.draw(st.booleans())
    dtype = dtype_or_none(data.draw, [d for d in dtypes_for(adapter) if d.kind == "f"])
    kwargs: dict[str, Any] = {"endpoint": endpoint}
    if dtype is not None:
        kwargs["dtype"] = dtype
    div = (num - 1) if endpoint else num
    both = check(adapter, op, [start, stop, num], kwargs,
                 line_bound(start, (stop - start) / div if div > 0 else 0.0))
    if both is not None and endpoint and num > 1 and both[1].dtype != np.float16:
        got, want = both  # (float16: the endpoint may round either way from float64's)
        assert got[-1] == want[-1], f"the endpoint {got[-1]} is not stop ({want[-1]})"


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["linspace"])
@pytest.mark.parametrize(("start", "stop", "num"), [(-1, 0, 4), (-7, 3, 5)], ids=str)
def test_linspace_into_integers_floors_like_numpy(adapter: OptionalAdapter, op: str, start: int,
                                                  stop: int, num: int) -> None:
    check(adapter, op, [start, stop, num], {"dtype": np.dtype("int64")})


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["eye"])
@given(data=st.data())
def test_eye_with_diagonals_at_and_beyond_the_edges(adapter: OptionalAdapter, op: str,
                                                    data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 4), label="n_rows")
    m = data.draw(st.one_of(st.none(), st.integers(0, 4)), label="n_cols")
    k = data.draw(st.integers(-5, 5), label="k")  # |k| >= the side: no diagonal at all
    kwargs: dict[str, Any] = {"k": k}
    dtype = dtype_or_none(data.draw, dtypes_for(adapter))
    if dtype is not None:
        kwargs["dtype"] = dtype
    check(adapter, op, [n, m], kwargs)


def nested(draw: Draw, shape: tuple[int, ...]) -> Any:
    """Nested Python lists of bools, ints or floats (one kind, or mixed) of ``shape``."""
    kinds = draw(st.lists(st.sampled_from(["bool", "int", "float"]), min_size=1, max_size=3))
    leaf = st.one_of(*[st.booleans() if k == "bool" else st.integers(-1000, 1000) if k == "int"
                       else st.floats(-1e6, 1e6) for k in kinds])

    def build(dims: tuple[int, ...]) -> Any:
        return draw(leaf) if not dims else [build(dims[1:]) for _ in range(dims[0])]
    return build(shape)


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", ["asarray"])
@given(data=st.data())
def test_asarray_infers_and_converts_like_numpy(adapter: OptionalAdapter, op: str,
                                                data: st.DataObject) -> None:
    # From Python scalars and nested lists of mixed kinds (NumPy's type inference), or from a
    # tensor with ``dtype`` converting on the device (within the `cast` domain: no float into
    # an integer dtype, no float64 into float16, whose double rounding NumPy does not do).
    dtypes = dtypes_for(adapter)
    if data.draw(st.booleans(), label="from Python"):
        obj = nested(data.draw, data.draw(shapes(), label="shape"))
        dtype = dtype_or_none(data.draw, [d for d in dtypes if d.kind in "bf"])
        check(adapter, op, [obj], {} if dtype is None else {"dtype": dtype})
        return
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes)), shapes()), label="x")
    dtype = dtype_or_none(data.draw, [d for d in dtypes if np.can_cast(x.dtype, d, "same_kind")
                                      and not (x.dtype == np.float64 and d == np.float16)])
    check(adapter, op, [x], {} if dtype is None else {"dtype": dtype})


# -- errors at the call ------------------------------------------------------------------------

# Bad arguments NumPy refuses: (op, args, kwargs). (The spec asks an error message to name the
# shapes of incompatible operands, not these arguments: any exception will do, at the call.)
BAD: dict[str, tuple[str, list[Any], dict[str, Any]]] = {
    "zeros-negative": ("zeros", [(2, -1)], {}),
    "ones-negative": ("ones", [(-3,)], {}),
    "full-negative": ("full", [(-1,), 1.0], {}),
    "full-overflow": ("full", [(2,), 300], {"dtype": np.dtype("int8")}),
    "eye-negative": ("eye", [-1], {}),
    "eye-negative-cols": ("eye", [2, -1], {}),
    "linspace-negative-num": ("linspace", [0, 1, -1], {}),
    "arange-zero-step": ("arange", [0, 5, 0], {}),
}


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.ops(BAD[c][0]), id=c)
                                  for c in BAD])
def test_bad_creation_arguments_raise_at_the_call(adapter: OptionalAdapter, case: str) -> None:
    op, args, kwargs = BAD[case]
    with pytest.raises((ValueError, OverflowError, ZeroDivisionError)):
        numpy_apply(op, *args, **kwargs)
    raised_at_the_call(adapter, lambda: adapter.apply(op, *args, **kwargs))
