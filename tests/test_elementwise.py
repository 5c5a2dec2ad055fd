"""Every elementwise op, on every dtype NumPy defines it for: lazy result == eager NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import assert_matches
from minilazy.conformance.registry import ops
from strategies import DTYPES, SHAPES, arrays, elements, loop_exists, numpy_fn

UNARY = [s for s in ops().values() if s.kind == "elementwise" and s.arity == 1]
BINARY = [s for s in ops().values() if s.kind == "elementwise" and s.arity == 2]


def _expected(spec, *args):
    with np.errstate(all="ignore"):
        return numpy_fn(spec)(*args)


def _actual(spec, device, *args):
    fn = getattr(ml, spec.name)
    return fn(*(ml.asarray(a, device=device) if isinstance(a, np.ndarray) else a
                for a in args)).numpy()


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize(
    ("spec", "dtype"),
    [(s, d) for s in UNARY for d in DTYPES if loop_exists(s, d)],
    ids=lambda v: getattr(v, "name", str(v)),
)
@settings(max_examples=8)
@given(data=st.data())
def test_unary_matches_numpy(spec, dtype, device, data):
    x = data.draw(arrays(dtype, SHAPES, spec.domain))
    assert_matches(_actual(spec, device, x), _expected(spec, x), spec.tolerance)


@pytest.mark.spec("LZ-NUM-001")
@pytest.mark.parametrize(
    ("spec", "dtype"),
    [(s, d) for s in BINARY for d in DTYPES if loop_exists(s, d, d)],
    ids=lambda v: getattr(v, "name", str(v)),
)
@settings(max_examples=8)
@given(data=st.data())
def test_binary_same_dtype_matches_numpy(spec, dtype, device, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = data.draw(arrays(dtype, shapes.input_shapes[0], spec.domain, 0))
    b = data.draw(arrays(dtype, shapes.input_shapes[1], spec.domain, 1))
    assert_matches(_actual(spec, device, a, b), _expected(spec, a, b), spec.tolerance)


@pytest.mark.spec("LZ-NUM-002")
@pytest.mark.parametrize("spec", BINARY, ids=lambda s: s.name)
@settings(max_examples=15)
@given(data=st.data())
def test_binary_mixed_dtypes_promote_like_numpy(spec, device, data):
    da, db = data.draw(st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES))
                       .filter(lambda p: loop_exists(spec, *p)))
    a = data.draw(arrays(da, SHAPES, spec.domain, 0))
    b = data.draw(arrays(db, a.shape, spec.domain, 1))
    assert_matches(_actual(spec, device, a, b), _expected(spec, a, b), spec.tolerance)


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.parametrize("spec", BINARY, ids=lambda s: s.name)
@settings(max_examples=15)
@given(data=st.data())
def test_python_scalars_are_weak_like_numpy(spec, device, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    kind = data.draw(st.sampled_from([bool, int, float]))
    x = data.draw(arrays(dtype, SHAPES, spec.domain, 0))
    if kind is float:
        # no subnormal scalars: XLA flushes them to zero (LZ-NUM-004), so x / 1e-311 is inf
        s = data.draw(st.floats(-1e3, 1e3, allow_subnormal=False) if spec.domain
                      else st.floats(allow_subnormal=False))
    elif kind is int:
        s = data.draw(elements(np.dtype(np.int64), spec.domain, 1) if spec.domain
                      else st.integers(-300, 300))
    else:
        s = data.draw(st.booleans())
    scalar_first = data.draw(st.booleans()) and not spec.domain
    args = (s, x) if scalar_first else (x, s)
    try:
        expected = _expected(spec, *args)
    except (TypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            _actual(spec, device, *args)
        return
    assert_matches(_actual(spec, device, *args), expected, spec.tolerance)


@pytest.mark.spec("LZ-ERR-002")
@pytest.mark.parametrize("spec", UNARY + BINARY, ids=lambda s: s.name)
def test_dtypes_numpy_rejects_raise_at_the_call(spec):
    for dtypes in ([(d,) for d in DTYPES] if spec.arity == 1 else
                   [(a, b) for a in DTYPES for b in DTYPES]):
        if loop_exists(spec, *dtypes):
            continue
        tensors = [ml.zeros((2,), dtype=d) for d in dtypes]
        before = ml.metrics().ops_recorded
        with pytest.raises(TypeError, match=spec.name.split("_")[0][:4]):
            getattr(ml, spec.name)(*tensors)
        assert ml.metrics().ops_recorded == before
