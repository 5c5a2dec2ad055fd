"""Multi-tensor ops (LZ-NUM-020): ``pack`` and ``unpack``, a group of tensors as one vector.

Beyond the Array API, where an implementation offers them: JAX's ``ravel_pytree``, torch's
``parameters_to_vector`` and ``vector_to_parameters``, and the vector a fused optimizer updates
(``ml.optim`` updates a whole group of weights this way). ``pack(xs)`` is NumPy's
``concatenate`` of the C-order ravels; ``unpack(flat, shapes, offset=0)`` is one reshaped slice
per shape, from ``offset`` on.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies, supports
from minilazy.conformance.oracle.strategies import dtypes_for
from minilazy.conformance.suite.util import counting

Array = np.ndarray[Any, Any]
SHAPES = st.lists(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), min_size=1,
                  max_size=4)


def _offered(adapter: OptionalAdapter) -> None:
    if not (supports(adapter, "pack") and supports(adapter, "unpack")):
        pytest.skip("the implementation offers no pack and unpack")


def _pieces(flat: Array, shapes: list[tuple[int, ...]], offset: int = 0) -> list[Array]:
    """NumPy's unpack: one reshaped slice of ``flat`` per shape."""
    out = []
    for s in shapes:
        out.append(flat[offset:offset + math.prod(s)].reshape(s))
        offset += math.prod(s)
    return out


@pytest.mark.spec("LZ-NUM-020")
@given(shapes=SHAPES, data=st.data())
def test_pack_and_unpack_are_ravel_and_reshape(adapter: OptionalAdapter,
                                               shapes: list[tuple[int, ...]],
                                               data: st.DataObject) -> None:
    """``pack`` is the C-order ravels end to end, ``unpack`` gives them back from any offset.

    Any shapes (0-d and empty ones too) of any declared dtype; nothing runs until the values
    are read. The offsets run back to back (no reset): a program keyed without its piece's
    offset or shape would serve one call another's.
    """
    _offered(adapter)
    dtype = data.draw(st.sampled_from(dtypes_for(adapter)), "dtype")
    arrays = [data.draw(hnp.arrays(dtype, s), f"x{i}") for i, s in enumerate(shapes)]
    ap = adapter.apply
    lazy = [adapter.from_numpy(a) for a in arrays]
    counted = satisfies(capabilities_of(adapter), "executions|compiles")
    with counting(adapter) if counted else nullcontext(None) as d:
        flat = ap("pack", lazy)
        every = [ap("unpack", flat, shapes[k:], offset=sum(a.size for a in arrays[:k]))
                 for k in range(len(shapes))]
    assert d is None or d.ran_nothing(), f"pack/unpack ran something at record time: {d}"
    want = np.concatenate([a.ravel() for a in arrays]).astype(dtype)
    got = adapter.to_numpy(flat)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{got.dtype}{got.shape}"
    np.testing.assert_array_equal(got, want, "pack")
    for k, pieces in enumerate(every):
        assert len(pieces) == len(shapes) - k
        start = sum(a.size for a in arrays[:k])
        for piece, expected in zip(pieces, _pieces(want, shapes[k:], start)):
            got = adapter.to_numpy(piece)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), f"unpack from {k}"
            np.testing.assert_array_equal(got, expected, f"unpack from piece {k}")


@pytest.mark.spec("LZ-NUM-020")
@given(shapes=SHAPES.filter(lambda s: len(s) >= 2), seed=st.integers(0, 2**32 - 1))
def test_pack_and_unpack_differentiate(adapter: OptionalAdapter, shapes: list[tuple[int, ...]],
                                       seed: int) -> None:
    """With capability ``autodiff``: each one's gradient is the other's, on the cotangent.

    The function: ``sum(w * pack(xs)) + sum(unpack(pack(xs), shapes[1:], offset) ** 2)``.
    """
    _offered(adapter)
    if "autodiff" not in adapter.capabilities:
        pytest.skip("needs capability 'autodiff'")
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    w = rng.uniform(-2, 2, sum(a.size for a in arrays)).astype(np.float32)
    ap, size = adapter.apply, arrays[0].size

    def f(*ts: Any) -> Any:
        flat = ap("pack", list(ts))
        total = ap("sum", ap("multiply", flat, adapter.from_numpy(w)))
        for piece in ap("unpack", flat, shapes[1:], offset=size):
            total = ap("add", total, ap("sum", ap("multiply", piece, piece)))
        return total

    grads = adapter.grad(f, tuple(range(len(arrays))))(*map(adapter.from_numpy, arrays))
    wants = _pieces(w, shapes)
    for i, (g, a) in enumerate(zip(grads, arrays)):
        want = wants[i] + (2 * a if i else 0)
        np.testing.assert_allclose(adapter.to_numpy(g), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"the gradient of operand {i}")
