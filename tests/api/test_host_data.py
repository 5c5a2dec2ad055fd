"""Host data in and out: copied at the call, never aliased; host input edge cases as NumPy.

A tensor never sees later writes to the host array it was made from (JAX's CPU client adopts
a 64-byte-aligned NumPy array as a device buffer, so every transfer must copy), and the arrays
``numpy()`` hands out are the caller's alone. Shapes, byte orders, huge ints and pickling
behave as NumPy does, or raise NumPy's error type at the call. Expected values come from NumPy.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from helpers import check, raises_at_the_call

Array = np.ndarray[Any, Any]


def aligned(values: Any, dtype: Any = None) -> Array:
    """A copy of ``values`` at a 64-byte-aligned address: what JAX's CPU client would adopt."""
    src = np.asarray(values, dtype)
    raw = np.empty(src.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + src.nbytes].view(src.dtype).reshape(src.shape)
    out[...] = src
    assert out.ctypes.data % 64 == 0
    return out


def _mesh() -> ml.Mesh:
    return ml.Mesh(ml.devices("cpu"), ("data",))


# Every way host data reaches a device: (name, make the tensor from `a`, NumPy's value of it).
N = 16  # divisible by the test session's 8 CPU devices
PATHS: list[tuple[str, Callable[[Array], ml.Tensor], Callable[[Array], Array]]] = [
    ("asarray", lambda a: ml.asarray(a), lambda a: a),
    ("asarray copy=True", lambda a: ml.asarray(a, copy=True), lambda a: a),
    ("asarray dtype", lambda a: ml.asarray(a, dtype=ml.float32), lambda a: a),
    ("asarray device", lambda a: ml.asarray(a, device=ml.devices("cpu")[-1]), lambda a: a),
    ("asarray sharding", lambda a: ml.asarray(a, sharding=(_mesh(), ("data",))), lambda a: a),
    ("from_dlpack", lambda a: ml.from_dlpack(a), lambda a: a),
    ("tensor + array", lambda a: ml.ones(N, dtype=ml.float32) + a, lambda a: 1 + a),
    ("array + tensor", lambda a: a + ml.ones(N, dtype=ml.float32), lambda a: a + 1),
    ("array * tensor", lambda a: a * ml.ones(N, dtype=ml.float32), lambda a: a * 1),
    ("ml.maximum", lambda a: ml.maximum(ml.zeros(N, dtype=ml.float32), a),
     lambda a: np.maximum(0, a)),
    ("where", lambda a: ml.where(ml.ones(N, dtype=ml.bool), a, 0.0), lambda a: a),
    ("concat", lambda a: ml.concat([ml.zeros(1, dtype=ml.float32), a]),
     lambda a: np.concat([np.zeros(1, np.float32), a])),
    ("setitem", lambda a: _set(ml.zeros(N, dtype=ml.float32), slice(None), a), lambda a: a),
]


def _set(t: ml.Tensor, key: Any, value: Any) -> ml.Tensor:
    t[key] = value
    return t


@pytest.mark.parametrize("name, make, expect", PATHS, ids=[p[0] for p in PATHS])
def test_host_writes_never_reach_a_tensor(name: str, make: Callable[[Array], ml.Tensor],
                                          expect: Callable[[Array], Array]) -> None:
    a = aligned(np.arange(N), np.float32)
    want = np.array(expect(a))
    t = make(a)
    a[...] = -5  # after the call: the tensor must not see it, pending or not
    np.testing.assert_array_equal(t.numpy(), want)
    a[...] = -7
    np.testing.assert_array_equal(t.numpy(), want)


def test_host_index_and_mask_arrays_are_copied_at_the_call() -> None:
    x = ml.asarray(np.arange(6.0))
    index = aligned([5, 0, 2], np.int64)
    mask = aligned([True, False, True, False, False, False])
    picked = x[index]
    filled = _set(ml.asarray(np.arange(6.0)), mask, -1.0)
    index[...] = 1
    mask[...] = True
    np.testing.assert_array_equal(picked.numpy(), [5.0, 0.0, 2.0])
    np.testing.assert_array_equal(filled.numpy(), [-1.0, 1, -1, 3, 4, 5])


@pytest.mark.parametrize("observe", [ml.Tensor.numpy, np.asarray, np.array],
                         ids=["numpy", "np.asarray", "np.array"])
def test_host_copies_handed_out_are_the_callers_alone(observe: Callable[[Any], Array]) -> None:
    x = ml.asarray(np.arange(4.0)) * 2
    ml.mark_step()
    host = observe(x)
    assert host.flags.writeable
    host[...] = 9  # writing into it changes no tensor
    np.testing.assert_array_equal(x.numpy(), [0.0, 2, 4, 6])
    x += 1  # nor does a donated update write into it
    ml.mark_step()
    np.testing.assert_array_equal(host, np.full(4, 9.0))
    np.testing.assert_array_equal(x.numpy(), [1.0, 3, 5, 7])


def _views() -> st.SearchStrategy[Array]:
    """NumPy arrays of every layout: strided, reversed, Fortran, offset, 0-d, swapped bytes."""
    dtypes = st.sampled_from(["<f8", ">f8", "<i4", ">i4", ">u2", ">c8", "<f2", "|b1", "|u1"])

    @st.composite
    def build(draw: st.DrawFn) -> Array:
        dtype = np.dtype(draw(dtypes))
        shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
        base = np.arange(int(np.prod(shape)) * 4 + 1).astype(dtype)
        a = base[draw(st.integers(0, 1)):][:int(np.prod(shape)) * 4].reshape(*shape, 4)
        a = a[..., ::draw(st.sampled_from([1, 2, -1, -2]))]
        if draw(st.booleans()):
            a = np.asfortranarray(a)
        if draw(st.booleans()) and a.ndim >= 2:
            a = a.swapaxes(0, -1)
        if a.size and draw(st.booleans()):
            a = a[(0,) * a.ndim + (...,)]  # a 0-d view
        return a

    return build()


@given(_views())
def test_any_layout_is_copied_as_its_values(view: Array) -> None:
    want = np.array(view)  # the values at the call
    t = ml.asarray(view)
    view[...] = ~want if want.dtype.kind == "b" else want + 1  # every element changes
    assert t.dtype == want.dtype.newbyteorder("=")
    got = t.numpy()
    assert got.dtype.isnative and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("code", [">f2", ">f4", ">f8", ">i2", ">i4", ">i8", ">u2", ">u4",
                                  ">u8", ">c8", ">c16"])
def test_non_native_byte_order_is_accepted_as_numpy_does(code: str) -> None:
    a = np.array([1, 2, 3], code)
    check(lambda: a + 1, lambda: ml.asarray(a) + 1)
    native = a.dtype.newbyteorder("=")
    check(lambda: np.ones(3, native) * a, lambda: ml.ones(3, dtype=native) * a)
    t = ml.asarray([1, 2], dtype=code)  # a dtype argument of either byte order
    assert t.dtype == np.dtype(code).newbyteorder("=")


BAD_SHAPES: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("zeros", np.zeros, ml.zeros),
    ("ones", np.ones, ml.ones),
    ("empty", np.empty, ml.empty),
    ("full", lambda s: np.full(s, 1), lambda s: ml.full(s, 1)),
    ("reshape", lambda s: np.arange(6).reshape(s), lambda s: ml.reshape(ml.arange(6), s)),
    ("broadcast_to", lambda s: np.broadcast_to(np.ones(1), s),
     lambda s: ml.broadcast_to(ml.ones(1), s)),
    ("eye", lambda s: np.eye(*s), lambda s: ml.eye(*s)),
    ("random.normal", lambda s: np.random.default_rng(0).normal(size=s),
     lambda s: ml.random.normal(ml.random.key(0), s)),
    ("random.uniform", lambda s: np.random.default_rng(0).uniform(size=s),
     lambda s: ml.random.uniform(ml.random.key(0), s)),
]


@pytest.mark.parametrize("shape", [(True, 6), (6, False), (np.True_,), (2.0, 3), (-1,),
                                   (-1, -1), (-2, -3), (2, -1), (-6,)], ids=repr)
@pytest.mark.parametrize("name, np_fn, ml_fn", BAD_SHAPES, ids=[b[0] for b in BAD_SHAPES])
def test_bad_shapes_get_numpys_error_at_the_call(name: str, np_fn: Callable[[Any], Any],
                                                 ml_fn: Callable[[Any], Any],
                                                 shape: tuple[Any, ...]) -> None:
    if name == "eye" and len(shape) != 2:
        pytest.skip("eye takes two dimensions")
    if name == "reshape" and shape == (-6,):
        pytest.skip("NumPy reads any negative as -1; minilazy, as the Array API, only -1")
    try:
        want = np_fn(shape)
    except (TypeError, ValueError) as e:
        raises_at_the_call(lambda: ml_fn(shape), type(e))
        return
    assert ml_fn(shape).shape == want.shape  # reshape's -1: random values differ from NumPy's


@pytest.mark.parametrize("k", [2**63, -2**63 - 1, 2**64, 10**30, -10**30, 3, -3, True])
@pytest.mark.parametrize("n, m", [(0, None), (3, None), (2, 5)])
def test_eye_any_int_diagonal(n: int, m: int | None, k: int) -> None:
    check(lambda: np.eye(n, m, k=k), lambda: ml.eye(n, m, k=k))


@pytest.mark.parametrize("args, kwargs", [
    ((2**63 - 2, 2**63), {}), ((2**63, 2**63 + 2), {}), ((2**62, 2**62 + 2), {}),
    ((np.float32(0), 3), {}), ((np.int8(0), np.int8(3), np.int8(1)), {}),
    ((np.float16(0), 2, 0.5), {}), ((True,), {}),
    ((300, 302), {"dtype": np.int8}), ((-1, 1), {"dtype": np.uint8}),
    ((0, 300, 100), {"dtype": np.int8}), ((5, 0, -1), {"dtype": np.uint8}),
    ((0, 10, np.inf), {}), ((0, 10, -np.inf), {}), ((0, 1e-300, 1e300), {}),
    ((np.inf,), {}), ((0, -np.inf, 1), {}), ((np.nan,), {}),
], ids=repr)
def test_arange_dtypes_and_overflow_as_numpy(args: tuple[Any, ...], kwargs: dict[str, Any]
                                             ) -> None:
    check(lambda: np.arange(*args, **kwargs), lambda: ml.arange(*args, **kwargs))


def test_huge_ints_numpy_cannot_hold_either() -> None:
    # NumPy makes object arrays of these; minilazy has no object dtype: OverflowError
    raises_at_the_call(lambda: ml.arange(0, 2**65, 2**64), OverflowError)
    raises_at_the_call(lambda: ml.full(2, 2**64), OverflowError)


@pytest.mark.parametrize("value, dtype", [(300, np.int8), (-1, np.uint8), (2**63, np.int64),
                                          (2**63, None), (255, np.uint8), (1.5, np.int64)])
def test_full_fill_values_as_numpy(value: int, dtype: Any) -> None:
    check(lambda: np.full(2, value, dtype), lambda: ml.full(2, value, dtype=dtype))


@pytest.mark.parametrize("num", [True, 2.0, -1, 0, np.int64(3)], ids=repr)
def test_linspace_num_as_numpy(num: Any) -> None:
    check(lambda: np.linspace(0, 1, num), lambda: ml.linspace(0, 1, num))


@pytest.mark.parametrize("name, clone", [("copy", copy.copy), ("deepcopy", copy.deepcopy)])
def test_copies_are_live_handles_that_run_nothing(name: str,
                                                  clone: Callable[[Any], ml.Tensor]) -> None:
    x = ml.asarray(np.arange(3)) * 2
    y = clone(x)
    assert ml.metrics().barriers == 0 and y.is_pending
    y += 1  # rebinds y only
    ml.mark_step()  # a copy is a live tensor: materialised with the rest
    assert not y.is_pending
    np.testing.assert_array_equal(x.numpy(), [0, 2, 4])
    np.testing.assert_array_equal(y.numpy(), [1, 3, 5])


def test_pickle_materialises_then_restores_values() -> None:
    x = ml.asarray(np.arange(6, dtype=np.int16).reshape(2, 3)) * 3
    data = pickle.dumps(x)
    assert ml.metrics().barriers == 1  # an observation: the pending tensor materialised
    y = pickle.loads(data)
    assert (y.shape, y.dtype, y.device) == ((2, 3), np.dtype(np.int16), ml.default_device())
    np.testing.assert_array_equal((y + 1).numpy(), np.arange(6).reshape(2, 3) * 3 + 1)
    sharded = ml.asarray(np.arange(8.0), sharding=(_mesh(), ("data",)))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(sharded)).numpy(), np.arange(8.0))


def test_from_dlpack_copy_false_is_refused() -> None:
    # copy=False would make the tensor alias the exporter's memory, which its owner can write
    raises_at_the_call(lambda: ml.from_dlpack(aligned(np.ones(4)), copy=False), ValueError)


@pytest.mark.parametrize("call", [
    lambda d: ml.zeros(2, device=d), lambda d: ml.asarray(np.ones(2), device=d),
    lambda d: ml.asarray(ml.ones(2), device=d), lambda d: ml.ones(2).to_device(d),
    lambda d: ml.astype(ml.ones(2), ml.int32, device=d), lambda d: ml.arange(3, device=d),
    lambda d: ml.eye(2, device=d), lambda d: ml.linspace(0, 1, 3, device=d),
    lambda d: ml.full_like(ml.ones(2), 1.0, device=d)])
@pytest.mark.parametrize("device", ["cpu", 0, ml.float32])
def test_a_device_that_is_no_device_is_a_type_error_and_harms_nothing(call, device):
    pending = ml.ones(3) * 2.0
    with pytest.raises(TypeError, match=f"must be a minilazy Device.*{type(device).__name__}"):
        call(device)
    ml.mark_step()  # (a string taken as a device failed every later barrier)
    np.testing.assert_array_equal(pending.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("make", [ml.zeros, ml.ones, ml.empty])
def test_a_bad_shape_names_the_function_called(make):
    with pytest.raises(TypeError, match=f"^{make.__name__}: "):
        make((True, 2))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.float64, np.complex128])
def test_a_transfer_leaves_jax_no_host_memory_to_adopt(monkeypatch, dtype):
    """minilazy's own copy of host data is not what the device buffer holds: JAX copied it (a
    program reading an adopted host buffer would run in the caller's thread, not behind it)."""
    copies: list[Array] = []
    real = np.copyto

    def noted(dst: Array, src: Array, *args: Any, **kwargs: Any) -> None:
        copies.append(dst)
        real(dst, src, *args, **kwargs)

    monkeypatch.setattr(np, "copyto", noted)
    t = ml.asarray(aligned(np.ones(4096), dtype))
    monkeypatch.undo()
    assert copies, "asarray made no copy of its own"
    buffer = t._node.payload
    assert buffer.unsafe_buffer_pointer() not in {c.ctypes.data for c in copies}
    np.testing.assert_array_equal(t.numpy(), np.ones(4096, dtype))
