"""Bad input raises a clear error at the call that caused it, and nothing pending is lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minilazy as ml
from minilazy.conformance.suite.test_errors import builtin

BAD_CALLS = {
    "broadcast": (lambda x: x + ml.ones((4,)), ml.ShapeError, r"add: cannot broadcast f32\[2,3\] "
                  r"with f64\[4\]"),
    "matmul": (lambda x: x @ x, ml.ShapeError, r"matmul: contracted dimensions differ: f32\[2,3\]"),
    "axis": (lambda x: ml.sum(x, axis=2), np.exceptions.AxisError, "axis 2 is out of bounds"),
    "reshape": (lambda x: ml.reshape(x, (4,)), ml.ShapeError, r"cannot reshape f32\[2,3\]"),
    "index": (lambda x: x[2], IndexError, "index 2 is out of bounds for axis 0 with size 2"),
    "too many indices": (lambda x: x[0, 0, 0], IndexError, "too many indices"),
    "dtype": (lambda x: x & 1, TypeError, r"bitwise_and: not defined for dtypes \(float32"),
    "bad dtype": (lambda x: ml.astype(x, np.complex64), TypeError, "complex64 is not supported"),
    "overflow": (lambda x: ml.astype(x, ml.int8) + 300, OverflowError,
                 "300 out of bounds for int8"),
    "setitem": (lambda x: x.__setitem__(0, ml.ones((4,))), ml.ShapeError,
                r"cannot broadcast a value of shape \(4,\) into shape \(3,\)"),
    "empty max": (lambda x: ml.max(x[:, :0], axis=1), ValueError, "zero-size reduction"),
    "bool mask": (lambda x: x[x > 0], IndexError, "boolean masks have a data-dependent shape"),
    "in-place": (lambda x: x.__iadd__(ml.ones((3, 2, 3), dtype=ml.float32)), ValueError,
                 "does not fit the target"),
    "in-place cast": (lambda x: ml.astype(x, ml.int32).__iadd__(1.5), TypeError, "cannot cast"),
}


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.spec("LZ-ERR-003")
@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_at_the_call_and_nothing_is_lost(name):
    call, error, message = BAD_CALLS[name]
    x = ml.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    pending = ml.exp(x) + 1.0  # recorded before the error
    with pytest.raises(error, match=message):
        call(x)
    assert ml.metrics().executions == 0  # raised while recording, not at a barrier
    after = x * 2.0  # recording goes on normally
    ml.mark_step()
    expected = np.exp(np.arange(6, dtype=np.float32).reshape(2, 3)) + np.float32(1)
    np.testing.assert_allclose(pending.numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(after.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3) * 2)


@pytest.mark.spec("LZ-ERR-004")
def test_observation_of_a_big_tensor_as_a_scalar_is_a_clear_error():
    x = ml.ones((2, 2))
    for convert in (float, int, bool):
        with pytest.raises(ValueError, match=r"needs a tensor of size 1, got shape \(2, 2\)"):
            convert(x)
    with pytest.raises(TypeError, match="only 0-d integer tensors"):
        [0, 1][ml.ones(())]
    assert ml.metrics().executions == 0


@pytest.mark.spec("LZ-ERR-005")
def test_mixing_devices_is_an_error_naming_both_devices():
    script = textwrap.dedent("""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
        import numpy as np, minilazy as ml
        d0, d1 = ml.devices("cpu")[:2]
        a = ml.asarray(np.ones(3), device=d0)
        b = ml.asarray(np.ones(3), device=d1)
        keep = a * 2.0
        try:
            a + b
        except ml.DeviceError as e:
            print("error:", e)
        moved = b.to(d0)
        print((a + moved).tolist(), keep.tolist(), (b * 3).device)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert "error: add: operands are on different devices: f64[3] on cpu:0 and f64[3] on cpu:1" \
        in out
    assert "[2.0, 2.0, 2.0] [2.0, 2.0, 2.0] cpu:1" in out


def test_unknown_platform_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no nonexistent devices available"):
        ml.devices("nonexistent")


@pytest.mark.spec("LZ-ERR-003")
def test_a_tensor_that_fails_at_the_barrier_does_not_take_the_others_down(monkeypatch):
    from minilazy import lowering
    from minilazy.ir import Op

    def broken(xs, node):
        raise RuntimeError("lowering bug")

    monkeypatch.setitem(lowering.LOWER, Op.ATAN, broken)  # stands for any engine bug
    x = ml.asarray(np.arange(7.0))
    bad, good = ml.atan(x), ml.exp(x) + 1.0
    with pytest.raises(RuntimeError, match="lowering bug"):
        ml.mark_step()
    assert not good.is_pending
    np.testing.assert_allclose(good.numpy(), np.exp(np.arange(7.0)) + 1.0)
    with pytest.raises(RuntimeError, match="lowering bug"):  # it holds its error, and only it
        bad.numpy()
    ml.mark_step()  # the failed tensor is no longer pending: barriers work on


# Input NumPy refuses at the call, with the error NumPy raises: (minilazy call, NumPy call).
LIKE_NUMPY = {
    "float shape": (lambda: ml.zeros((2.5, 3)), lambda: np.zeros((2.5, 3))),
    "float size": (lambda: ml.ones(2.9), lambda: np.ones(2.9)),
    "float full": (lambda: ml.full((1.9,), 3.0), lambda: np.full((1.9,), 3.0)),
    "float reshape": (lambda: ml.reshape(ml.ones(6), (2.0, 3.0)),
                      lambda: np.reshape(np.ones(6), (2.0, 3.0))),
    "float axis": (lambda: ml.sum(ml.ones((2, 2)), axis=1.0),
                   lambda: np.sum(np.ones((2, 2)), axis=1.0)),
    "float broadcast": (lambda: ml.broadcast_to(ml.ones(2), (2.0, 2)),
                        lambda: np.broadcast_to(np.ones(2), (2.0, 2))),
    "float permute": (lambda: ml.permute_dims(ml.ones((2, 3)), (1.0, 0)),
                      lambda: np.transpose(np.ones((2, 3)), (1.0, 0))),
    "negative power": (lambda: ml.arange(1, 4) ** -1, lambda: np.arange(1, 4) ** -1),
    "negative power, NumPy scalar": (lambda: ml.arange(1, 4) ** np.int64(-2),
                                     lambda: np.arange(1, 4) ** np.int64(-2)),
    "negative power, host array": (lambda: ml.pow(ml.arange(1, 4), np.array([1, -1, 2])),
                                   lambda: np.power(np.arange(1, 4), np.array([1, -1, 2]))),
    "index list out of range": (lambda: ml.arange(3)[[0, 5]], lambda: np.arange(3)[[0, 5]]),
    "negative index list": (lambda: ml.arange(3)[[-4]], lambda: np.arange(3)[[-4]]),
    "index array, second axis": (lambda: ml.ones((2, 3))[:, np.array([3])],
                                 lambda: np.ones((2, 3))[:, np.array([3])]),
    "setitem index out of range": (lambda: ml.zeros(3).__setitem__([7], 1.0),
                                   lambda: np.zeros(3).__setitem__([7], 1.0)),
    "None operand": (lambda: ml.ones(2) + None, lambda: np.ones(2) + None),
    "None reflected": (lambda: None * ml.ones(2), lambda: None * np.ones(2)),
    "string operand": (lambda: ml.ones(2) - "a", lambda: np.ones(2) - "a"),
    "int too big for any dtype": (lambda: ml.asarray([1, 2**70]),
                                  lambda: np.asarray([1, 2**70], dtype=np.int64)),
    "fill too big for any dtype": (lambda: ml.full((2,), 2**70),
                                   lambda: np.full((2,), 2**70, dtype=np.int64)),
    "too big to exist": (lambda: ml.zeros((10**10, 10**10)),
                         lambda: np.zeros((10**10, 10**10))),
}


@pytest.mark.spec("LZ-ERR-006", "LZ-ERR-007", "LZ-ERR-008")
@pytest.mark.spec("LZ-ERR-003")
@pytest.mark.parametrize("name", list(LIKE_NUMPY))
def test_input_numpy_refuses_raises_numpys_error_at_the_call(name):
    ours, theirs = LIKE_NUMPY[name]
    with pytest.raises(Exception) as numpy_error:
        theirs()
    keep = ml.asarray(np.arange(3.0)) * 2.0  # pending work the error must not disturb
    ml.reset_metrics()
    with pytest.raises(builtin(numpy_error.type)):  # NumPy's subclasses (UFuncTypeError) aside
        ours()
    assert ml.metrics().executions == 0  # raised at the call, before anything ran
    np.testing.assert_array_equal(keep.numpy(), np.arange(3.0) * 2)


def test_errors_name_the_value_the_op_and_the_operand():
    with pytest.raises(OverflowError, match=str(2**70)):
        ml.asarray(2**70)
    with pytest.raises(TypeError, match="add: unsupported operand type 'NoneType'"):
        ml.ones(2) + None
    with pytest.raises(TypeError, match="zeros|full|shape"):
        ml.zeros((2.5, 3))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        ml.arange(3)[[0, 5]]


def test_device_index_arrays_keep_the_documented_clamp():
    # LZ-NUM-005: values of device-side index arrays are data, unknown at the call.
    idx = ml.asarray(np.array([0, 5]))
    assert ml.arange(3)[idx].tolist() == [0, 2]
