"""Hypothesis strategies for arrays and op inputs, shared by the numerics tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.registry import OpSpec

DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float16", "float32", "float64")]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def elements(dtype: np.dtype, domain: str = "", operand: int = 0) -> st.SearchStrategy[Any]:
    """Values of ``dtype`` in the op's input ``domain`` (see ops.toml)."""
    if domain == "shift" and operand == 1 and dtype.kind in "iu":
        return st.integers(0, dtype.itemsize * 8 - 1)
    if domain == "exponent" and operand == 1 and dtype.kind in "iu":
        return st.integers(0, 6)
    if dtype.kind == "f" and domain == "divisor" and operand == 1:
        limit = 0.5 / float(np.finfo(dtype).smallest_normal)  # the reciprocal stays normal
        return st.floats(-limit, limit, allow_subnormal=False, width=dtype.itemsize * 8) | \
            st.sampled_from([float("inf"), float("-inf"), float("nan")])
    if dtype.kind == "f":
        bound = 1e4 if domain == "trig" else None
        return st.floats(min_value=-bound if bound else None, max_value=bound,
                         allow_nan=bound is None, allow_infinity=bound is None,
                         allow_subnormal=False, width=dtype.itemsize * 8)
    return hnp.from_dtype(dtype)


def arrays(dtype: np.dtype, shape: Any, domain: str = "", operand: int = 0
           ) -> st.SearchStrategy[np.ndarray]:
    """Arrays of ``dtype`` and ``shape`` with values in ``domain``."""
    return hnp.arrays(dtype, shape, elements=elements(dtype, domain, operand))


def numpy_fn(spec: OpSpec) -> Any:
    """The NumPy function an op is defined by."""
    return getattr(np, spec.numpy)


def loop_exists(spec: OpSpec, *dts: np.dtype) -> bool:
    """Whether NumPy defines the op for these dtypes."""
    fn = numpy_fn(spec)
    try:
        if isinstance(fn, np.ufunc):
            fn.resolve_dtypes((*dts, None))
        else:
            fn(*(np.zeros(1, d) for d in dts))
    except TypeError:
        return False
    return True
