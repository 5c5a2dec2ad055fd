"""Convolution and pooling (capability ``conv``): the oracle's sliding windows, recorded lazily.

``conv2d``, ``max_pool2d`` and ``avg_pool2d`` in torch's layout match :mod:`windows`' NumPy
references in shape, dtype and value (LZ-NUM-017), and recording them runs nothing
(LZ-REC-001). Implementations without the capability skip, naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minilazy.conformance import windows
from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.strategies import allowed, arrays, dtypes_for
from minilazy.conformance.suite.util import counting, fresh, settle

Array = np.ndarray[Any, Any]


def _floats(adapter: OptionalAdapter, op: str) -> list[np.dtype[Any]]:
    """The float dtypes drawn: float32, and float64 where the adapter computes in 64 bits.

    Less those its dtype policy says ``op`` does not take (``"conv2d:float64"``).
    """
    return [d for d in dtypes_for(adapter) if d.name in ("float32", "float64")
            and allowed(adapter, op, d)]


def _pair(draw: Any, values: st.SearchStrategy[int], label: str) -> Any:
    """An int, or an (H, W) pair, of ``values``."""
    return draw(values | st.tuples(values, values), label=label)


@pytest.mark.spec("LZ-NUM-017")
@given(data=st.data())
def test_conv2d_matches_the_sliding_window_oracle(adapter: OptionalAdapter,
                                                  data: st.DataObject) -> None:
    """Groups 1-2, kernels 1-3, strides 1-2, dilation 1-2, padding 0-2, with or without bias."""
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter, "conv2d")), label="dtype")
    groups, cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = _pair(draw, st.integers(1, 2), "stride")
    padding = _pair(draw, st.integers(0, 2), "padding")
    dilation = _pair(draw, st.integers(1, 2), "dilation")
    # Each side at least one window long, padding included.
    lows = [max(1, (k - 1) * d + 1 - 2 * p) for k, d, p in zip(
        kernel, windows.pair(dilation), windows.pair(padding), strict=True)]
    sides = tuple(draw(st.integers(low, low + 3)) for low in lows)
    x = draw(arrays(dtype, (draw(st.integers(1, 2)), groups * cg, *sides), "bounded"),
             label="x")
    w = draw(arrays(dtype, (groups * og, cg, *kernel), "bounded"), label="w")
    b = draw(st.none() | arrays(dtype, (groups * og,), "bounded"), label="b")
    kw: dict[str, Any] = {"stride": stride, "padding": padding, "dilation": dilation,
                          "groups": groups}
    want = windows.conv2d(x, w, b, **kw)
    mag = windows.conv2d(np.abs(x), np.abs(w), None if b is None else np.abs(b), **kw)
    got = adapter.to_numpy(adapter.conv2d(adapter.from_numpy(x), adapter.from_numpy(w),
                                          None if b is None else adapter.from_numpy(b), **kw))
    assert_close(got, want, "reduction", windows.window_bound(
        want, mag.astype(np.float64), cg * kernel[0] * kernel[1] + 1), what=f"conv2d {kw}")


@pytest.mark.spec("LZ-NUM-017")
@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
@given(data=st.data())
def test_pooling_matches_the_sliding_window_oracle(adapter: OptionalAdapter, pool: str,
                                                   data: st.DataObject) -> None:
    """Kernels 1-3, the default stride or 1-3, padding up to half the kernel (torch's limit)."""
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter, pool)), label="dtype")
    kernel = _pair(draw, st.integers(1, 3), "kernel_size")
    kh, kw = windows.pair(kernel)
    stride = draw(st.none() | st.integers(1, 3) | st.tuples(st.integers(1, 3),
                                                             st.integers(1, 3)), label="stride")
    padding = draw(st.tuples(st.integers(0, kh // 2), st.integers(0, kw // 2)), label="padding")
    sides = tuple(draw(st.integers(max(1, k - 2 * p), k + 4)) for k, p in zip(
        (kh, kw), padding, strict=True))
    x = draw(arrays(dtype, (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sides),
                    "bounded"), label="x")
    reference = getattr(windows, pool)
    want = reference(x, kernel, stride, padding)
    got = adapter.to_numpy(getattr(adapter, pool)(adapter.from_numpy(x), kernel, stride,
                                                  padding))
    if pool == "max_pool2d":
        assert_close(got, want, what=f"{pool}({kernel}, {stride}, {padding})")
        return
    mag = reference(np.abs(x), kernel, stride, padding)
    assert_close(got, want, "reduction", windows.window_bound(want, mag, kh * kw + 1),
                 what=f"{pool}({kernel}, {stride}, {padding})")


@pytest.mark.spec("LZ-REC-001", "LZ-NUM-017")
@pytest.mark.requires("conv")
def test_recording_convolution_and_pooling_executes_nothing(adapter: OptionalAdapter) -> None:
    xs = np.linspace(-1, 1, 2 * 2 * 6 * 6, dtype=np.float32).reshape(2, 2, 6, 6)
    ws = np.linspace(1, -1, 4 * 1 * 3 * 3, dtype=np.float32).reshape(4, 1, 3, 3)
    bs = np.array([0.5, -0.5, 0.25, 0], np.float32)
    x, w, b = adapter.from_numpy(xs), adapter.from_numpy(ws), adapter.from_numpy(bs)
    settle(adapter)
    with counting(adapter) as d:
        y = adapter.conv2d(x, w, b, stride=1, padding=1, groups=2)
        pooled = [adapter.max_pool2d(y, 2), adapter.avg_pool2d(y, 3, 1, 1)]
    assert d.ran_nothing(), f"recording ran something: {d}"
    want = windows.conv2d(xs, ws, bs, padding=1, groups=2)
    mag = windows.conv2d(np.abs(xs), np.abs(ws), np.abs(bs), padding=1, groups=2)
    for got, pool, args in zip(pooled, ("max_pool2d", "avg_pool2d"), ((2,), (3, 1, 1)),
                               strict=True):
        ref, size = getattr(windows, pool)(want, *args), getattr(windows, pool)(mag, *args)
        assert_close(adapter.to_numpy(got), ref, "reduction",
                     windows.window_bound(ref, size, 9 * 9 + 1), what=f"conv2d then {pool}")
