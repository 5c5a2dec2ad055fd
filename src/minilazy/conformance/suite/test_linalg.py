"""Sorts and the linalg extension (capability ``linalg``): NumPy's values, recorded lazily.

``sort`` and ``argsort`` match :mod:`matrices`' stable references exactly (ties in their original
order, also descending; NaNs last, or first descending); the ``linalg`` functions match NumPy's
``linalg`` on well-conditioned matrices, and ``eigh``, ``qr`` and ``svd`` factor their input
(LZ-NUM-018); recording them runs nothing (LZ-REC-001). Implementations without the capability
skip, naming it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, matrices
from minilazy.conformance.oracle.strategies import allowed, arrays, dtypes_for
from minilazy.conformance.suite.util import counting, fresh, settle

Array = np.ndarray[Any, Any]
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)


def _floats(adapter: OptionalAdapter) -> list[np.dtype[Any]]:
    """float32, and float64 where the adapter computes in 64 bits."""
    return [d for d in dtypes_for(adapter) if d.name in ("float32", "float64")]


def _stack(draw: Any, dtype: np.dtype[Any], kind: str, square: bool = True) -> Array:
    """A stack of well-conditioned matrices (batch (), (2,) or (3, 1); sides 1-4)."""
    batch = draw(st.sampled_from([(), (2,), (3, 1)]), label="batch")
    n = draw(st.integers(1, 4), label="n")
    m = n if square else draw(st.integers(1, 4), label="m")
    a = draw(hnp.arrays(np.float64, (*batch, m, n), elements=st.floats(-1, 1)), label="a")
    return matrices.well_conditioned(a, kind).astype(dtype)


@pytest.mark.spec("LZ-NUM-018")
@pytest.mark.parametrize("op", ["sort", "argsort"])
@given(data=st.data())
def test_sort_and_argsort_match_the_stable_oracle(adapter: OptionalAdapter, op: str,
                                                  data: st.DataObject) -> None:
    """Every real dtype and any values (ties, signed zeros, infinities, NaNs); 1-d to 3-d.

    Any axis, ascending or descending.
    """
    fresh(adapter)
    draw = data.draw
    dtypes = [d for d in dtypes_for(adapter) if d.kind in "iuf" and allowed(adapter, op, d)]
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    x = draw(arrays(dtype, SHAPES), label="x")
    axis = draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    descending = draw(st.booleans(), label="descending")
    want = getattr(matrices, op)(x, axis, descending)
    got = adapter.to_numpy(getattr(adapter, op)(adapter.from_numpy(x), axis=axis,
                                                 descending=descending))
    assert_close(got, want, what=f"{op}(axis={axis}, descending={descending})")
    if op == "sort" and dtype.kind == "f":  # a permutation of x: each zero keeps its sign too
        assert np.array_equal(np.signbit(got), np.signbit(want)), \
            f"sort(axis={axis}, descending={descending}) moved -0.0 and 0.0: {got} != {want}"


@pytest.mark.spec("LZ-NUM-018")
@pytest.mark.ops("sort")
@pytest.mark.parametrize("descending", [False, True])
def test_a_sort_keeps_the_order_of_signed_zeros(adapter: OptionalAdapter,
                                                descending: bool) -> None:
    """-0.0 and 0.0 tie: a stable sort keeps their order, descending too.

    So the sorted values are those of ``x[argsort(x)]``; reversing an ascending sort swaps them.
    """
    x = np.array([[-0.0, 0.0, 0.0, 1.0, np.nan], [0.0, -0.0, 2.0, -0.0, 0.0]], np.float32)
    want = matrices.sort(x, -1, descending)
    got = adapter.to_numpy(adapter.sort(adapter.from_numpy(x), axis=-1, descending=descending))
    assert_close(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want)), f"{got} != {want}"


# name: (matrix kind, square, keyword arguments drawn)
FUNCTIONS: dict[str, tuple[str, bool, st.SearchStrategy[dict[str, Any]]]] = {
    "cholesky": ("spd", True, st.fixed_dictionaries({"upper": st.booleans()})),
    "inv": ("square", True, st.just({})),
    "det": ("square", True, st.just({})),
    "slogdet": ("square", True, st.just({})),
    "eigvalsh": ("spd", True, st.just({})),
    "svdvals": ("any", False, st.just({})),
    "matrix_norm": ("any", False, st.fixed_dictionaries({
        "ord": st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]),
        "keepdims": st.booleans()})),
    "matrix_power": ("square", True, st.fixed_dictionaries({"n": st.integers(-2, 4)})),
    "matrix_rank": ("any", False, st.just({})),
    "pinv": ("any", False, st.just({})),
    "trace": ("any", False, st.fixed_dictionaries({"offset": st.integers(-2, 2)})),
    "diagonal": ("any", False, st.fixed_dictionaries({"offset": st.integers(-2, 2)})),
    "vector_norm": ("any", False, st.fixed_dictionaries({
        "ord": st.sampled_from([2, 1, 0, math.inf, -math.inf, 3]),
        "axis": st.sampled_from([None, -1, (-2, -1)]), "keepdims": st.booleans()})),
    "matrix_transpose": ("any", False, st.just({})),
}


@pytest.mark.spec("LZ-NUM-018")
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@given(data=st.data())
def test_linalg_functions_match_numpy(adapter: OptionalAdapter, name: str,
                                      data: st.DataObject) -> None:
    """Stacks of 1x1 to 4x4 matrices, well conditioned; the standard's keywords drawn."""
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter)), label="dtype")
    kind, square, keywords = FUNCTIONS[name]
    a = _stack(draw, dtype, kind, square)
    kwargs = dict(draw(keywords, label="kwargs"))
    power = kwargs.pop("n", None)
    args = () if power is None else (power,)
    want = getattr(np.linalg, name)(a, *args, **kwargs)
    got = adapter.linalg(name, adapter.from_numpy(a), *args, **kwargs)
    wants = list(want) if isinstance(want, tuple) else [want]
    gots = list(got) if isinstance(got, tuple) else [got]
    assert len(gots) == len(wants), f"linalg.{name}: {len(gots)} results, want {len(wants)}"
    n = max(a.shape[-2:])
    for g, w in zip(gots, wants, strict=True):
        w = np.asarray(w)
        assert_close(adapter.to_numpy(g), w, "loose", matrices.matrix_bound(w, n ** 2),
                     what=f"linalg.{name}({kwargs})")


@pytest.mark.spec("LZ-NUM-018")
@given(data=st.data())
def test_solve_broadcasts_and_takes_vectors(adapter: OptionalAdapter,
                                            data: st.DataObject) -> None:
    """``x2`` a stack of matrices whose batch broadcasts with ``x1``'s, or one vector (M,)."""
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter)), label="dtype")
    a = _stack(draw, dtype, "square")
    n = a.shape[-1]
    shape = draw(st.sampled_from([(n,), (*a.shape[:-1], 2), (2, *([1] * (a.ndim - 2)), n, 1)]),
                 label="x2 shape")
    b = draw(hnp.arrays(dtype, shape, elements=st.floats(-2, 2, width=32)), label="x2")
    want = np.linalg.solve(a, b)
    got = adapter.linalg("solve", adapter.from_numpy(a), adapter.from_numpy(b))
    assert_close(adapter.to_numpy(got), want, "loose", matrices.matrix_bound(want, n ** 2),
                 what=f"linalg.solve({list(a.shape)}, {list(b.shape)})")


@pytest.mark.spec("LZ-NUM-018")
@pytest.mark.parametrize("name", ["eigh", "qr", "svd"])
@given(data=st.data())
def test_factorizations_factor_their_input(adapter: OptionalAdapter, name: str,
                                           data: st.DataObject) -> None:
    """Shapes and dtypes as NumPy's, and the factors factor the input.

    Their product is the input, the orthogonal factors are orthonormal, R is upper triangular
    and the singular values descend.
    """
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter)), label="dtype")
    a = _stack(draw, dtype, "spd" if name == "eigh" else "any", square=name == "eigh")
    kwargs: dict[str, Any] = {}
    if name == "qr":
        kwargs["mode"] = draw(st.sampled_from(["reduced", "complete"]), label="mode")
    if name == "svd":
        kwargs["full_matrices"] = draw(st.booleans(), label="full_matrices")
    want = getattr(np.linalg, name)(a, **kwargs)
    got = [adapter.to_numpy(f) for f in adapter.linalg(name, adapter.from_numpy(a), **kwargs)]
    assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want], name
    limit = 256 * max(a.shape[-2:]) * float(np.finfo(dtype).eps)
    errors = matrices.factor_errors(name, a, got)
    assert max(errors.values()) <= limit, f"linalg.{name}({kwargs}): {errors} > {limit}"


@pytest.mark.spec("LZ-REC-001", "LZ-NUM-018")
@pytest.mark.requires("linalg")
def test_recording_sorts_and_linalg_executes_nothing(adapter: OptionalAdapter) -> None:
    a = matrices.well_conditioned(np.linspace(-1, 1, 9).reshape(3, 3), "spd").astype(np.float32)
    x = adapter.from_numpy(a)
    settle(adapter)
    with counting(adapter) as d:
        ys = [adapter.sort(x, axis=0, descending=True), adapter.argsort(x),
              adapter.linalg("inv", x), adapter.linalg("cholesky", x),
              *adapter.linalg("eigh", x), adapter.linalg("matrix_norm", x, ord="nuc")]
    assert d.ran_nothing(), f"recording ran something: {d}"
    wants = [matrices.sort(a, 0, True), matrices.argsort(a), np.linalg.inv(a),
             np.linalg.cholesky(a), np.linalg.eigvalsh(a)]
    for got, want in zip(ys, wants, strict=False):  # (eigh's vectors are checked above)
        assert_close(adapter.to_numpy(got), want, "loose", matrices.matrix_bound(want, 9))
