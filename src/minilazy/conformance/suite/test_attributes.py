"""A cache hit across every attribute of every op family (LZ-CACHE-003).

Each op is called on the same operands once per value of each of its attributes (axes, shapes,
keywords, norms, directions...), back to back and with no reset between: the calls share their
structure but for that one field, so a key or a structure check that leaves the field out serves
one call the program compiled for another. Every result is compared with NumPy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.oracle.strategies import dtypes_for
from minilazy.conformance.oracle.variants import ATTRIBUTES, EXTENSIONS
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import fresh

Array = np.ndarray[Any, Any]


def _allowed(adapter: OptionalAdapter, op: str, args: tuple[Any, ...]) -> bool:
    declared = {d.name for d in dtypes_for(adapter)}
    return op != "astype" or np.dtype(args[0]).name in declared


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.parametrize("op", sorted(ATTRIBUTES))
def test_each_attribute_value_gets_its_own_program(adapter: OptionalAdapter, op: str) -> None:
    operands, calls = ATTRIBUTES[op]
    fresh(adapter)  # once: the calls below must not reset between them
    for args, kwargs in calls:
        if not _allowed(adapter, op, args):
            continue
        if op in ("concat", "stack"):
            lazy: tuple[Any, ...] = ([adapter.from_numpy(a) for a in args[0]], *args[1:])
        else:
            lazy = (*(adapter.from_numpy(a) for a in operands), *args)
        want = numpy_apply(op, *operands, *args, **kwargs)
        got = adapter.to_numpy(adapter.apply(op, *lazy, **kwargs))
        _close(got, want, f"{op}{args}{kwargs}, after the other values")


def _close(got: Array, want: Array, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (
        f"{what}: {got.dtype}{list(got.shape)}, NumPy {want.dtype}{list(want.shape)}")
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=what)


def test_every_op_with_attributes_is_varied() -> None:
    """A new op with attributes in the registry must join the table (or say why it need not)."""
    # tensors only: nothing to vary
    positional_only = {"matmul", "matrix_transpose", "where", "stop_gradient", "pack"}
    # unpack returns a list: its offsets and shapes are varied back to back by LZ-NUM-020's test
    positional_only.add("unpack")
    attributed = {n for n, s in ops().items() if s.kind not in ("elementwise", "set")
                  and n not in positional_only and n != "nonzero"}
    missing = attributed - set(ATTRIBUTES) - {"asarray", "zeros", "ones", "zeros_like",
                                               "ones_like"}  # their only fields: shape, dtype
    assert not missing, f"ops with attributes no test varies: {sorted(missing)}"


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.parametrize("name", sorted(EXTENSIONS))
def test_each_attribute_value_of_an_extension_gets_its_own_program(adapter: OptionalAdapter,
                                                                   name: str) -> None:
    capability, method, oracle, operands, calls = EXTENSIONS[name]
    if capability not in adapter.capabilities:
        pytest.skip(f"needs capability {capability!r}")
    fresh(adapter)
    for args, kwargs in calls:
        want = np.asarray(oracle(*operands, *args, **kwargs))
        got = adapter.to_numpy(method(adapter)(*(adapter.from_numpy(a) for a in operands),
                                               *args, **kwargs))
        if want.dtype != got.dtype and want.dtype.kind == got.dtype.kind:
            want = want.astype(got.dtype)  # NumPy's fft and norms widen float32 to float64
        _close(got, want, f"{name}{args}{kwargs}, after the other values")
