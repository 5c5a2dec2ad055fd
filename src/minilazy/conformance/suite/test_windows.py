"""Convolution and pooling (capability ``conv``): the oracle's sliding windows, recorded lazily.

``conv2d``, ``max_pool2d`` and ``avg_pool2d`` in torch's layout match :mod:`windows`' NumPy
references in shape, dtype and value (LZ-NUM-017), and recording them runs nothing
(LZ-REC-001). Their gradients (capability ``autodiff`` too) are the derivatives of those
references (LZ-AD-001), and a convolution or a window that cannot be applied raises at the call,
naming the shapes, before anything runs (LZ-ERR-001). Implementations without the capability
skip, naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, windows
from minilazy.conformance.oracle.strategies import allowed, arrays, dtypes_for
from minilazy.conformance.suite.test_errors import names_shape, raised
from minilazy.conformance.suite.test_scans import check_gradient
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


def _pool_case(draw: Any, extra: int) -> tuple[Any, Any, tuple[int, int], tuple[int, ...]]:
    """A pooling drawn: (kernel 1-3, stride None or 1-3, padding up to half the kernel, sides).

    Each side is at least one window long (padding included), up to ``extra`` more.
    """
    kernel = _pair(draw, st.integers(1, 3), "kernel_size")
    kh, kw = windows.pair(kernel)
    stride = draw(st.none() | st.integers(1, 3) | st.tuples(st.integers(1, 3),
                                                             st.integers(1, 3)), label="stride")
    padding = draw(st.tuples(st.integers(0, kh // 2), st.integers(0, kw // 2)), label="padding")
    sides = tuple(draw(st.integers(max(1, k - 2 * p), k + extra)) for k, p in zip(
        (kh, kw), padding, strict=True))
    return kernel, stride, padding, sides


def _conv_case(draw: Any, extra: int) -> tuple[int, int, int, tuple[int, int],
                                                tuple[int, ...], dict[str, Any]]:
    """A convolution drawn: (groups, channels and filters per group, kernel, sides, keywords).

    Groups 1-2 (of 1-2 channels and 1-2 filters each), a 1-3 kernel, strides 1-2, padding 0-2,
    dilation 1-2, and input sides at least one window long (padding included), up to ``extra``
    more.
    """
    groups, cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = _pair(draw, st.integers(1, 2), "stride")
    padding = _pair(draw, st.integers(0, 2), "padding")
    dilation = _pair(draw, st.integers(1, 2), "dilation")
    lows = [max(1, (k - 1) * d + 1 - 2 * p) for k, d, p in zip(
        kernel, windows.pair(dilation), windows.pair(padding), strict=True)]
    sides = tuple(draw(st.integers(low, low + extra)) for low in lows)
    kw = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return groups, cg, og, kernel, sides, kw


@pytest.mark.spec("LZ-NUM-017")
@given(data=st.data())
def test_conv2d_matches_the_sliding_window_oracle(adapter: OptionalAdapter,
                                                  data: st.DataObject) -> None:
    """Groups 1-2, kernels 1-3, strides 1-2, dilation 1-2, padding 0-2, with or without bias."""
    fresh(adapter)
    draw = data.draw
    dtype = draw(st.sampled_from(_floats(adapter, "conv2d")), label="dtype")
    groups, cg, og, kernel, sides, kw = _conv_case(draw, extra=3)
    x = draw(arrays(dtype, (draw(st.integers(1, 2)), groups * cg, *sides), "bounded"),
             label="x")
    w = draw(arrays(dtype, (groups * og, cg, *kernel), "bounded"), label="w")
    b = draw(st.none() | arrays(dtype, (groups * og,), "bounded"), label="b")
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
    kernel, stride, padding, sides = _pool_case(draw, extra=4)
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
    terms = math.prod(windows.pair(kernel)) + 1
    assert_close(got, want, "reduction", windows.window_bound(want, mag, terms),
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


def _at_most(n: int) -> settings:
    """The profile's ``max_examples``, but at most ``n``.

    Each example of a gradient test compiles a new forward and backward graph (about 0.4 s on
    a CPU): the ``thorough`` profile's 200 would outrun ``--lazy-timeout`` (60 s a test).
    """
    return settings(max_examples=min(settings().max_examples, n))


def _float64(adapter: OptionalAdapter, op: str) -> None:
    """Skip a gradient test where ``op`` takes no float64: LZ-AD-001 is checked in float64."""
    if np.dtype(np.float64) not in _floats(adapter, op):
        pytest.skip(f"{adapter.name} has no float64 {op}: LZ-AD-001 is checked in float64")


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.requires("conv")
@pytest.mark.ops("multiply", "sum")
@_at_most(50)
@given(data=st.data())
def test_conv2d_gradients_match_finite_differences(adapter: OptionalAdapter,
                                                   data: st.DataObject) -> None:
    """With respect to the input, the filter and the bias, in float64.

    Groups 1-2, kernels 1-3, strides 1-2, dilation 1-2, padding 0-2: the input's gradient is a
    convolution with the filter reversed, spread by the strides; the filter's, a correlation
    of the input with the cotangent, group by group.
    """
    _float64(adapter, "conv2d")
    draw = data.draw
    groups, cg, og, kernel, sides, kw = _conv_case(draw, extra=2)
    bias = draw(st.booleans(), label="bias")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    args = [rng.standard_normal((draw(st.integers(1, 2)), groups * cg, *sides)),
            rng.standard_normal((groups * og, cg, *kernel))]
    if bias:
        args.append(rng.standard_normal(groups * og))
    check_gradient(adapter, "conv2d", args,
                   lambda x, w, b=None: adapter.conv2d(x, w, b, **kw),
                   lambda x, w, b=None: windows.conv2d(x, w, b, **kw), rng,
                   f"conv2d(f64{args[0].shape}, f64{args[1].shape}, bias={bias}, {kw})")


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.requires("conv")
@pytest.mark.ops("multiply", "sum")
@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
@_at_most(50)
@given(data=st.data())
def test_pooling_gradients_match_finite_differences(adapter: OptionalAdapter, pool: str,
                                                    data: st.DataObject) -> None:
    """Kernels 1-3, the default stride or 1-3, padding up to half the kernel, in float64.

    Windows overlap when the stride is less than the kernel: an element's gradient sums over
    every window it is in. The inputs of ``max_pool2d`` are distinct (no ties inside a window,
    and 0.1 apart, far more than the finite differences' step): at a tie the maximum has no
    derivative, and implementations split the gradient (minilazy, JAX) or give it to one
    element (torch) as they like.
    """
    _float64(adapter, pool)
    draw = data.draw
    kernel, stride, padding, sides = _pool_case(draw, extra=3)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *sides)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    size = int(np.prod(shape))
    x = (rng.permutation(size) - size / 2).reshape(shape) * 0.1 if pool == "max_pool2d" \
        else rng.standard_normal(shape)
    check_gradient(adapter, pool, [x],
                   lambda t: getattr(adapter, pool)(t, kernel, stride, padding),
                   lambda t: getattr(windows, pool)(t, kernel, stride, padding), rng,
                   f"{pool}(f64{shape}, {kernel}, {stride}, {padding})")


def _f32(a: OptionalAdapter, shape: tuple[int, ...]) -> Any:
    return a.from_numpy(np.zeros(shape, np.float32))


# Convolutions and windows that cannot be applied: (call, the shapes its message must name).
BAD_WINDOWS: dict[str, tuple[Callable[[OptionalAdapter], Any], tuple[tuple[int, ...], ...]]] = {
    "channels": (lambda a: a.conv2d(_f32(a, (1, 3, 5, 5)), _f32(a, (2, 2, 3, 3))),
                 ((1, 3, 5, 5), (2, 2, 3, 3))),
    "groups-split-no-channels": (lambda a: a.conv2d(_f32(a, (1, 3, 5, 5)),
                                                     _f32(a, (2, 1, 3, 3)), groups=2),
                                 ((1, 3, 5, 5), (2, 1, 3, 3))),
    "groups-split-no-filters": (lambda a: a.conv2d(_f32(a, (1, 4, 5, 5)),
                                                    _f32(a, (3, 2, 3, 3)), groups=2),
                                ((1, 4, 5, 5), (3, 2, 3, 3))),
    "kernel-larger-than-input": (lambda a: a.conv2d(_f32(a, (1, 3, 5, 5)),
                                                     _f32(a, (2, 3, 6, 3))),
                                 ((1, 3, 5, 5), (2, 3, 6, 3))),
    "kernel-larger-than-padded": (lambda a: a.conv2d(_f32(a, (1, 3, 4, 4)),
                                                      _f32(a, (2, 3, 3, 7)), padding=1),
                                  ((1, 3, 4, 4), (2, 3, 3, 7))),
    "dilated-kernel-larger": (lambda a: a.conv2d(_f32(a, (1, 3, 5, 5)), _f32(a, (2, 3, 3, 3)),
                                                 dilation=3),
                              ((1, 3, 5, 5), (2, 3, 3, 3))),
    "max_pool2d-kernel": (lambda a: a.max_pool2d(_f32(a, (1, 3, 5, 5)), 6), ((1, 3, 5, 5),)),
    "avg_pool2d-kernel": (lambda a: a.avg_pool2d(_f32(a, (1, 3, 5, 5)), (2, 6)),
                          ((1, 3, 5, 5),)),
}


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.requires("conv")
@pytest.mark.parametrize("case", sorted(BAD_WINDOWS))
def test_a_convolution_that_cannot_apply_raises_at_the_call(adapter: OptionalAdapter,
                                                            case: str) -> None:
    """Channels, groups or a window the input cannot take: raised at the call, naming shapes.

    Channels the filter does not take, groups that divide neither the channels nor the filters,
    a (dilated) kernel larger than the padded input: the message names the input's shape (and
    the filter's), and nothing runs first (where the adapter counts runs). Any exception will
    do: the rule names no type (minilazy raises ``ValueError``).
    """
    call, shapes = BAD_WINDOWS[case]
    settle(adapter)
    counted = satisfies(capabilities_of(adapter), "executions|compiles")
    with counting(adapter) if counted else nullcontext(None) as d:
        message = str(raised(lambda: call(adapter)))
    for shape in shapes:
        assert names_shape(message, shape), f"{case}: {message!r} does not name {shape}"
    assert d is None or d.ran_nothing(), f"{case}: the error came from running: {d}"
