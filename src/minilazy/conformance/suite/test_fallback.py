"""Data-dependent shapes: boolean masks, ``nonzero``, ``unique_*``, ``searchsorted``, fallbacks.

Values are exactly NumPy's (LZ-DYN-001). Such an op materialises at most its inputs: other
pending work stays pending and right, also when the op's input fails (LZ-DYN-002). Where the
implementation counts host fallbacks, each call counts once (LZ-DYN-003); where it can refuse
them, it raises ``RuntimeError`` at the call and loses nothing (LZ-DYN-004). Ops whose shape is
static (``searchsorted``, ``x[mask] = 0``) are recorded like any other (LZ-DYN-005).

Masks reach the adapter as its tensors (host masks are a library's own business). Values are
drawn from a few distinct ones, so that ``unique_*`` meets repeats, and NaNs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.oracle.strategies import dtypes_for, elements, examples, shapes
from minilazy.conformance.suite.test_errors import _impossible, raised
from minilazy.conformance.suite.test_indexing import fits_into
from minilazy.conformance.suite.util import counting, fresh, leave_by_raising

Array = np.ndarray[Any, Any]
Item = tuple[Any, ...]
X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
UNIQUE = ["unique_values", "unique_counts", "unique_inverse", "unique_all"]
def _unique(op: str) -> tuple[Callable[[OptionalAdapter, Any], Any], Callable[[Array], Any]]:
    return (lambda a, x: a.apply(op, a.apply("floor", x)),
            lambda x: getattr(np, op)(np.floor(x)))


# Each data-dependent op, on X: (its call on the adapter, the NumPy value). Ops they use: OPS.
DEPENDENT: dict[str, tuple[Callable[[OptionalAdapter, Any], Any], Callable[[Array], Any]]] = {
    "getitem": (lambda a, x: a.apply("getitem", x, a.apply("greater", x, 0.0)),
                lambda x: x[x > 0]),
    "nonzero": (lambda a, x: a.apply("nonzero", a.apply("greater", x, 0.0)),
                lambda x: np.nonzero(x > 0)),
    **{op: _unique(op) for op in UNIQUE},
}
OPS = ("greater", "floor", "multiply", "add")


def _flat(result: Any) -> list[Any]:
    """A result as a list of arrays (``nonzero`` and ``unique_*`` give tuples, in field order)."""
    return list(result) if isinstance(result, tuple) else [result]


def _same(adapter: OptionalAdapter, got: Any, want: Any, op: str = "") -> None:
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), f"{len(got)} results, NumPy gives {len(want)}"
    # unique_values' order is the implementation's (the standard's words; NumPy 2.4 leaves
    # integers unsorted): compared sorted. The other unique_* functions sort, as NumPy does.
    order = np.sort if op == "unique_values" else np.asarray
    for n, (g, w) in enumerate(zip(got, want)):
        assert_close(order(adapter.to_numpy(g)), order(w), "exact", what=f"result {n}")


@st.composite
def repeats(draw: Any, adapter: OptionalAdapter, shape: Any, min_dims: int = 0) -> Array:
    """An array of a drawn dtype whose values come from a few: repeats (and NaNs) are common."""
    dtype = draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    pool = draw(st.lists(elements(dtype), min_size=1, max_size=4), label="values")
    shape = draw(shapes(min_dims=min_dims)) if shape is None else shape
    return np.asarray(draw(hnp.arrays(dtype, shape, elements=st.sampled_from(pool)), label="x"))


@st.composite
def mask_key(draw: Any, shape: tuple[int, ...]) -> list[Item]:
    """A key holding one boolean mask over axes [a, a + k), alone or among other items.

    Before it: an int or slice per axis, or ``...``; after it: a few ints and slices, maybe a
    one-element index list (it broadcasts against the mask's positions whatever their count).
    """
    ndim = len(shape)
    a = draw(st.integers(0, ndim - 1))
    k = draw(st.integers(1, ndim - a))
    items: list[Item] = []
    ellipsis = a > 0 and draw(st.booleans())
    if ellipsis:
        items.append(("ellipsis",))
    else:
        for n in shape[:a]:
            items.append(("int", draw(st.integers(-n, n - 1))) if n and draw(st.booleans())
                         else ("slice", slice(None, None, draw(st.sampled_from([1, -1, 2])))))
    items.append(("mask", draw(hnp.arrays(np.bool_, shape[a:a + k]), label="mask")))
    after = shape[a + k:] if ellipsis else shape[a + k:a + k + draw(st.integers(0, ndim - a - k))]
    for n in after:
        choice = draw(st.sampled_from(["slice", "int", "list"])) if n else "slice"
        if choice == "int":
            items.append(("int", draw(st.integers(-n, n - 1))))
        elif choice == "list":
            items.append(("list", [draw(st.integers(-n, n - 1))]))
        else:
            items.append(("slice", slice(draw(st.integers(0, n)), None)))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


def _key(items: Sequence[Item], mask: Callable[[Array], Any]) -> tuple[Any, ...]:
    kinds: dict[str, Callable[[Item], Any]] = {
        "int": lambda i: i[1], "slice": lambda i: i[1], "list": lambda i: i[1],
        "none": lambda i: None, "ellipsis": lambda i: Ellipsis, "mask": lambda i: mask(i[1])}
    return tuple(kinds[i[0]](i) for i in items)


# -- LZ-DYN-001: values -------------------------------------------------------------------------

@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.ops("getitem")
@given(data=st.data())
def test_boolean_mask_indexing_matches_numpy(adapter: OptionalAdapter,
                                             data: st.DataObject) -> None:
    x = data.draw(repeats(adapter, None, min_dims=1))
    items = data.draw(mask_key(x.shape), label="key")
    want = x[_key(items, lambda m: m)]
    fresh(adapter)
    got = adapter.apply("getitem", adapter.from_numpy(x), _key(items, adapter.from_numpy))
    assert_close(adapter.to_numpy(got), want)


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.requires("setitem")
@pytest.mark.ops("setitem")
@given(data=st.data())
def test_boolean_mask_assignment_matches_numpy(adapter: OptionalAdapter,
                                               data: st.DataObject) -> None:
    """``x[key] = v``, a mask in the key.

    ``v`` a Python scalar, or a tensor of any shape NumPy assigns: one value per True entry, or
    one broadcast over them.
    """
    x = data.draw(repeats(adapter, None, min_dims=1))
    items = data.draw(mask_key(x.shape), label="key")
    target = x[_key(items, lambda m: m)].shape
    value: Any = data.draw(st.sampled_from([0, 1]), label="scalar")
    value = bool(value) if x.dtype == np.bool_ else value
    if data.draw(st.booleans(), label="a tensor value"):  # any shape NumPy assigns: per entry,
        shape = target if data.draw(st.booleans()) else fits_into(data.draw, target)  # or not
        value = data.draw(hnp.arrays(x.dtype, shape, elements=elements(x.dtype)), label="v")
    want = x.copy()
    try:
        want[_key(items, lambda m: m)] = value
    except TypeError:  # NumPy's x[mask] = v refuses a v of 2+ dims even where it broadcasts
        assume(False)
    fresh(adapter)
    t = adapter.from_numpy(x)
    v = adapter.from_numpy(value) if isinstance(value, np.ndarray) else value
    got = adapter.apply("setitem", t, _key(items, adapter.from_numpy), v)
    assert_close(adapter.to_numpy(got), want)


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.ops("nonzero")
@given(data=st.data())
@examples(0.5)
def test_nonzero_matches_numpy(adapter: OptionalAdapter, data: st.DataObject) -> None:
    x = data.draw(repeats(adapter, None, min_dims=1))
    fresh(adapter)
    _same(adapter, adapter.apply("nonzero", adapter.from_numpy(x)), np.nonzero(x))


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.ops("nonzero", "getitem", "setitem")
def test_a_mask_of_two_axes_selects_in_row_major_order(adapter: OptionalAdapter) -> None:
    """``nonzero``, ``x[mask]`` and ``x[mask] = values`` list a matrix's positions row by row.

    Distinct values, so that any other order shows (the drawn tests' few repeated values hide it).
    """
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    mask = x % 3 != 1
    fresh(adapter)
    _same(adapter, adapter.apply("nonzero", adapter.from_numpy(mask)), np.nonzero(mask))
    t = adapter.from_numpy(x)
    assert_close(adapter.to_numpy(adapter.apply("getitem", t, adapter.from_numpy(mask))),
                 x[mask])
    if "setitem" in adapter.capabilities:
        want, values = x.copy(), np.arange(100, 100 + int(mask.sum()), dtype=np.int32)
        want[mask] = values
        got = adapter.apply("setitem", t, adapter.from_numpy(mask), adapter.from_numpy(values))
        assert_close(adapter.to_numpy(got), want)


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.parametrize("op", UNIQUE)
@given(data=st.data())
def test_unique_functions_match_numpy(adapter: OptionalAdapter, op: str,
                                      data: st.DataObject) -> None:
    x = data.draw(repeats(adapter, None))
    fresh(adapter)
    _same(adapter, adapter.apply(op, adapter.from_numpy(x)), getattr(np, op)(x), op)


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.parametrize("op", UNIQUE)
def test_unique_functions_keep_every_nan_apart(adapter: OptionalAdapter, op: str) -> None:
    """NaNs among repeats, on purpose: drawn arrays rarely hold two (NumPy 2: each is distinct)."""
    x = np.array([[np.nan, 1.0, -0.0], [1.0, np.nan, 0.0]], np.float32)
    fresh(adapter)
    _same(adapter, adapter.apply(op, adapter.from_numpy(x)), getattr(np, op)(x), op)


@pytest.mark.spec("LZ-DYN-001")
@pytest.mark.ops("searchsorted")
@given(data=st.data())
@examples(0.5)
def test_searchsorted_matches_numpy(adapter: OptionalAdapter, data: st.DataObject) -> None:
    """Into a sorted ``x1`` (NaN last, as ``np.sort`` puts it), or one with a ``sorter``."""
    x1 = data.draw(repeats(adapter, st.integers(0, 6).map(lambda n: (n,))))
    pool = [*x1.tolist(), *data.draw(st.lists(elements(x1.dtype), max_size=3))]
    x2 = np.asarray(data.draw(hnp.arrays(x1.dtype, shapes(max_dims=2),
                                         elements=st.sampled_from(pool or [0])), label="x2"))
    side: Literal["left", "right"] = "left" if data.draw(st.booleans(), label="left") else "right"
    fresh(adapter)
    if data.draw(st.booleans(), label="sorter"):
        order = np.argsort(x1, kind="stable")
        want = np.searchsorted(x1, x2, side=side, sorter=order)
        got = adapter.apply("searchsorted", adapter.from_numpy(x1), adapter.from_numpy(x2),
                            side=side, sorter=adapter.from_numpy(order))
    else:
        x1 = np.sort(x1)
        want = np.searchsorted(x1, x2, side=side)
        got = adapter.apply("searchsorted", adapter.from_numpy(x1), adapter.from_numpy(x2),
                            side=side)
    assert_close(adapter.to_numpy(got), want)


# -- LZ-DYN-002: nothing else is materialised or lost --------------------------------------------

@pytest.mark.spec("LZ-DYN-002")
@pytest.mark.ops(*OPS)
@pytest.mark.parametrize("op", sorted(DEPENDENT))
def test_other_pending_work_stays_pending_and_right(adapter: OptionalAdapter, op: str) -> None:
    run, want = DEPENDENT[op]
    x = adapter.from_numpy(X)
    other = adapter.apply("multiply", adapter.from_numpy(X), 3.0)
    _same(adapter, run(adapter, x), want(X), op)
    if "pending" in adapter.capabilities:
        assert adapter.is_pending(other), f"{op} materialised a tensor it does not read"
    assert_close(adapter.to_numpy(other), X * np.float32(3))


@pytest.mark.spec("LZ-DYN-002")
@pytest.mark.ops("ones", "multiply", "nonzero", "add")
def test_an_input_that_fails_to_run_fails_only_the_op(adapter: OptionalAdapter) -> None:
    other = adapter.apply("add", adapter.from_numpy(X), 1.0)
    bad = _impossible(adapter)
    if bad is None:
        pytest.skip(f"{adapter.name} refuses a 4 TiB tensor at the call: nothing fails to run")
    raised(lambda: adapter.apply("nonzero", bad))
    if "pending" in adapter.capabilities:
        assert adapter.is_pending(other), "the failed op materialised a tensor it does not read"
    assert_close(adapter.to_numpy(other), X + np.float32(1))
    later = adapter.apply("nonzero", adapter.apply("add", adapter.from_numpy(X), 1.0))
    _same(adapter, later, np.nonzero(X + np.float32(1)))


# -- LZ-DYN-003: counted once per call ------------------------------------------------------------

def _fallbacks(adapter: OptionalAdapter) -> int:
    found = adapter.counters().fallbacks
    if found is None:
        pytest.skip(f"{adapter.name} declares fallbacks but counters().fallbacks is None")
    return int(found)


@pytest.mark.spec("LZ-DYN-003")
@pytest.mark.requires("dynamic")
@pytest.mark.ops(*OPS)
@pytest.mark.parametrize("op", sorted(DEPENDENT))
def test_each_call_that_runs_on_the_host_counts_once(adapter: OptionalAdapter, op: str) -> None:
    run, _ = DEPENDENT[op]
    x = adapter.from_numpy(X)
    adapter.barrier()  # its inputs' own ops are not what is counted
    before = _fallbacks(adapter)
    run(adapter, x)
    once = _fallbacks(adapter) - before
    assert once in (0, 1), f"one call of {op} counted {once} fallbacks"
    for _ in range(3):
        run(adapter, x)
    assert _fallbacks(adapter) - before == 4 * once, f"{op}: not one count per call"


@pytest.mark.spec("LZ-DYN-003")
@pytest.mark.requires("dynamic", "pending", "setitem")
@pytest.mark.ops("add", "greater", "setitem", "searchsorted")
def test_ops_that_were_recorded_count_no_fallback(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(X)
    before = _fallbacks(adapter)
    y = adapter.apply("add", x, 1.0)
    found = adapter.apply("searchsorted", adapter.from_numpy(np.sort(X.ravel())), y)
    y = adapter.apply("setitem", y, adapter.apply("greater", y, 0.0), 0.0)
    for op, t in (("searchsorted", found), ("x[mask] = 0.0", y)):
        if adapter.is_pending(t):  # recorded, not run: no fallback can have happened
            assert _fallbacks(adapter) == before, f"{op} was recorded, yet counted a fallback"


@pytest.mark.spec("LZ-BAR-013")
@pytest.mark.requires("dynamic", "no_fallback")
@pytest.mark.ops("nonzero")
def test_refusing_fallbacks_ends_with_its_block_also_by_an_exception(
        adapter: OptionalAdapter) -> None:
    for nested in (False, True):
        leave_by_raising(adapter.no_fallback, nested)
        (got,) = adapter.apply("nonzero", adapter.from_numpy(X.ravel() > 0))
        np.testing.assert_array_equal(adapter.to_numpy(got), np.nonzero(X.ravel() > 0)[0])


# -- LZ-DYN-004: refused fallbacks ---------------------------------------------------------------

@pytest.mark.spec("LZ-DYN-004")
@pytest.mark.requires("dynamic")
@pytest.mark.ops(*OPS)
@pytest.mark.parametrize("op", sorted(DEPENDENT))
def test_a_refused_fallback_raises_at_the_call_and_loses_nothing(adapter: OptionalAdapter,
                                                                 op: str) -> None:
    run, want = DEPENDENT[op]
    x = adapter.from_numpy(X)
    if "fallbacks" in capabilities_of(adapter):  # only an op that runs on the host is refused
        before = _fallbacks(adapter)
        run(adapter, x)
        if _fallbacks(adapter) == before:
            pytest.skip(f"{adapter.name} runs {op} without a host fallback")
    other = adapter.apply("multiply", adapter.from_numpy(X), 3.0)
    pending_input = adapter.apply("add", x, 0.0)
    refuse = adapter.no_fallback()
    counts = satisfies(capabilities_of(adapter), "executions|compiles")
    with refuse:
        if counts:
            with counting(adapter) as d:
                error = raised(lambda: run(adapter, pending_input))
            assert d.ran_nothing(), "the refusal came after something ran"
        else:
            error = raised(lambda: run(adapter, pending_input))
    assert isinstance(error, RuntimeError), f"{type(error).__name__}: {error}"
    names = {"getitem": ("getitem", "index", "mask")}.get(op, (op,))
    assert any(n in str(error) for n in names), f"the error does not name {op}: {error}"
    assert_close(adapter.to_numpy(other), X * np.float32(3))
    _same(adapter, run(adapter, pending_input), want(X), op)  # allowed again after the block


# -- LZ-DYN-005: static shapes are recorded -------------------------------------------------------

@pytest.mark.spec("LZ-DYN-005")
@pytest.mark.ops("searchsorted")
def test_searchsorted_is_recorded(adapter: OptionalAdapter) -> None:
    x1, x2 = adapter.from_numpy(np.sort(X.ravel())), adapter.from_numpy(X)
    adapter.barrier()
    with counting(adapter) as d:
        found = adapter.apply("searchsorted", x1, x2)
    assert d.ran_nothing(), "searchsorted ran when recorded"
    assert_close(adapter.to_numpy(found), np.searchsorted(np.sort(X.ravel()), X))


@pytest.mark.spec("LZ-DYN-005")
@pytest.mark.requires("setitem", "dynamic")
@pytest.mark.ops("setitem", "greater")
@pytest.mark.parametrize("value", [0.0, "row"], ids=["scalar", "row"])
def test_assigning_one_value_through_a_mask_is_recorded(adapter: OptionalAdapter,
                                                        value: Any) -> None:
    x, want = adapter.from_numpy(X), X.copy()
    rows = value == "row"  # x[rows] = row: one row for every selected row
    key = X[:, 0] > 0 if rows else X > 0
    want[key] = X[0] * 2 if rows else value
    mask = adapter.apply("greater", adapter.from_numpy(X[:, 0] if rows else X), 0.0)
    value = adapter.from_numpy(X[0] * 2) if rows else value
    with counting(adapter) as d:
        y = adapter.apply("setitem", x, mask, value)
    assert d.ran_nothing(), "x[mask] = v ran when recorded: its shape is x's"
    assert_close(adapter.to_numpy(y), want)
