"""Errors, engine side: minilazy's messages and exception classes, and its failure handling.

The rule-tagged behaviour (LZ-ERR-001..008) is checked once, by the conformance suite
(``suite/test_errors.py``), on minilazy by default. Here: minilazy's own wording and classes
(``ShapeError``, ``DeviceError``), what the adapter protocol does not pass (NumPy scalars and
host arrays as operands, boolean masks of the wrong shape, unsupported dtypes), a real two-device
run, and a lowering failure injected into the engine.
"""

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
    "bad dtype": (lambda x: ml.astype(x, "datetime64[s]"), TypeError,
                  r"datetime64\[s\] is not supported"),
    "overflow": (lambda x: ml.astype(x, ml.int8) + 300, OverflowError,
                 "300 out of bounds for int8"),
    "setitem": (lambda x: x.__setitem__(0, ml.ones((4,))), ml.ShapeError,
                r"cannot broadcast a value of shape \(4,\) into shape \(3,\)"),
    "empty max": (lambda x: ml.max(x[:, :0], axis=1), ValueError, "zero-size reduction"),
    "bool mask": (lambda x: x[x[0] > 0], IndexError, "boolean index did not match indexed array "
                  "along axis 0; size of axis is 2 but size of corresponding boolean axis is 3"),
    "in-place": (lambda x: x.__iadd__(ml.ones((3, 2, 3), dtype=ml.float32)), ValueError,
                 "does not fit the target"),
    "in-place cast": (lambda x: ml.astype(x, ml.int32).__iadd__(1.5), TypeError, "cannot cast"),
    "unpack offset": (lambda x: ml.unpack(ml.reshape(x, (6,)), [(2,)], offset=1.5), TypeError,
                      "unpack: the offset must be an integer, got 1.5"),
    "unpack bool offset": (lambda x: ml.unpack(ml.reshape(x, (6,)), [(2,)], offset=True),
                           TypeError, "the offset must be an integer, got True"),
    "unpack past the end": (lambda x: ml.unpack(ml.reshape(x, (6,)), [2, 2], offset=3),
                            ml.ShapeError, r"no piece of shape \(2,\) at offset 5 in f32\[6\]"),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_minilazys_error_at_the_call_and_nothing_is_lost(name):
    """minilazy's exception class and message for each bad call (the suite checks LZ-ERR-001 and
    LZ-ERR-003 with any wording), including refusals of its own: datetimes; a boolean mask of the
    wrong shape raises before anything runs (its values are never needed)."""
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


def test_observation_of_a_big_tensor_as_a_scalar_is_a_clear_error():
    """minilazy's messages for LZ-ERR-004 (the suite's rule), and a 0-d float tensor refused
    as a list index."""
    x = ml.ones((2, 2))
    for convert in (float, int, complex):  # NumPy 2's TypeError, for any array not 0-d
        with pytest.raises(TypeError, match=r"needs a 0-d tensor, got shape \(2, 2\)"):
            convert(x)
    with pytest.raises(ValueError, match=r"needs a tensor of size 1, got shape \(2, 2\)"):
        bool(x)
    with pytest.raises(TypeError, match="only 0-d integer tensors"):
        [0, 1][ml.ones(())]
    assert ml.metrics().executions == 0


def test_mixing_devices_is_an_error_naming_both_devices():
    """Two host devices in a subprocess (the suite's LZ-ERR-005 test runs only where an adapter
    has two devices): minilazy's DeviceError and its message, ``.to``, and ``.device``."""
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


def test_a_tensor_that_fails_at_the_barrier_does_not_take_the_others_down(monkeypatch):
    """An engine bug injected into the lowering fails its tensor only: the barrier's others
    materialise, and the failed tensor holds its error."""
    from minilazy.core import lowering
    from minilazy.core.ir import Op

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


# Host data NumPy refuses at the call, with the error NumPy raises: (minilazy call, NumPy call).
# (The suite checks LZ-ERR-006..008 with Python scalars and lists; the protocol passes no NumPy
# scalars or host arrays as operands.)
LIKE_NUMPY = {
    "negative power, NumPy scalar": (lambda: ml.arange(1, 4) ** np.int64(-2),
                                     lambda: np.arange(1, 4) ** np.int64(-2)),
    "negative power, host array": (lambda: ml.pow(ml.arange(1, 4), np.array([1, -1, 2])),
                                   lambda: np.power(np.arange(1, 4), np.array([1, -1, 2]))),
    "index array, second axis": (lambda: ml.ones((2, 3))[:, np.array([3])],
                                 lambda: np.ones((2, 3))[:, np.array([3])]),
}


@pytest.mark.parametrize("name", list(LIKE_NUMPY))
def test_host_data_numpy_refuses_raises_numpys_error_at_the_call(name):
    """Values of NumPy scalars and host arrays are known at the call: checked there, as
    NumPy checks them, with pending work undisturbed."""
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
