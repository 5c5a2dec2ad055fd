"""The NumPy reference interpreter means what NumPy means, op by op."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import assert_matches
from minilazy.conformance.registry import ops
from minilazy.core.ir import Op
from minilazy.core.lowering import LOWER
from minilazy.introspect import reference
from strategies import DTYPES, SHAPES, arrays, loop_exists, numpy_fn

ELEMENTWISE = [s for s in ops().values() if s.kind == "elementwise"]


def test_reference_covers_every_op():
    """The interpreter has a NumPy function for every IR op, as the lowering has an XLA one."""
    assert set(reference.REFERENCE) == set(Op) == set(LOWER)


@pytest.mark.parametrize("spec", ELEMENTWISE, ids=lambda s: s.name)
@settings(max_examples=25)
@given(data=st.data())
def test_reference_elementwise_matches_numpy(spec, data):
    """``minilazy.introspect.reference`` interprets every elementwise node as NumPy computes it,
    on mixed dtypes and broadcast shapes: exactly, whatever the op's tolerance class (NumPy)."""
    dts = data.draw(st.tuples(*[st.sampled_from(DTYPES)] * spec.arity)
                    .filter(lambda d: loop_exists(spec, *d)))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=spec.arity, max_side=3))
    args = [data.draw(arrays(d, s, spec.domain, i))
            for i, (d, s) in enumerate(zip(dts, shapes.input_shapes))]
    with np.errstate(all="ignore"):
        expected = numpy_fn(spec)(*args)
    (actual,) = reference.run(getattr(ml, spec.name)(*map(ml.asarray, args)))
    assert_matches(actual, expected, "exact")  # the reference is NumPy: exact, every op


@given(x=arrays(np.dtype(np.float64), SHAPES))
def test_reference_runs_composites_like_numpy(x):
    """A graph of several nodes, interpreted without compiling or executing anything."""
    t = ml.asarray(x)
    (got,) = reference.run(ml.where(t > 0, t * 2.0, -t)[..., None])
    with np.errstate(all="ignore"):
        assert_matches(got, np.where(x > 0, x * 2.0, -x)[..., None])
    assert ml.metrics().executions == 0


@settings(max_examples=25)
@given(data=st.data())
def test_reference_updates_with_out_of_range_device_indices_as_the_engine(data):
    """Out-of-range values of an index array on the device: the engine's scatter drops those
    writes (LZ-NUM-005, implementation-defined), and the reference interpreter must do the same,
    not clamp them onto an element in range."""
    shape = data.draw(st.tuples(st.integers(1, 4), st.integers(1, 4)))
    axis = data.draw(st.integers(0, 1))
    side = shape[axis]
    index = data.draw(hnp.arrays(np.int64, st.integers(1, 5),
                                 elements=st.integers(-2 * side - 1, 2 * side + 1)))
    add = data.draw(st.booleans())
    y = ml.asarray(np.arange(np.prod(shape), dtype=np.float64).reshape(shape)) * 1.0
    key = (ml.asarray(index),) if axis == 0 else (slice(None), ml.asarray(index))
    if add:
        y[key] += 10.0
    else:
        y[key] = -1.0
    (expected,) = reference.run(y)
    np.testing.assert_array_equal(expected, y.numpy())


@settings(max_examples=25)
@given(data=st.data())
def test_reference_reads_and_writes_through_windows_and_0d_arrays_as_the_engine(data):
    """Step-1 slices are windows (their start a parameter): the interpreter cuts them out, reads
    or updates the region and puts it back, as the lowering's dynamic slices do; a 0-d array
    indexed by ``()`` stays an array."""
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    key = tuple(data.draw(st.sampled_from([slice(None), slice(1, None), slice(0, -1),
                                           slice(None, None, 2), 0]))
                for _ in shape)
    y = ml.asarray(x) * 1.0
    read = y[key] * 2.0
    y[key] = -1.0
    y[key] += read
    expected, got = reference.run(read, y), (read.numpy(), y.numpy())
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(e, g)
