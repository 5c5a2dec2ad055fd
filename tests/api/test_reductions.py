"""minilazy's own side of reductions and linear algebra: operators, error messages, NumPy quirks.

The values, shapes and dtypes of every reduction, ``matmul`` and ``tensordot`` (rules LZ-NUM-010
and LZ-NUM-011), and that bad axes and shapes raise at the call (LZ-ERR-001), are checked by the
conformance suite (``suite/test_reductions.py``). Here: the ``@`` operator of ``ml.Tensor``,
the exception types and wording of minilazy's messages, and NumPy's legacy axes on 0-d arrays,
which minilazy accepts as NumPy does (the Array API does not).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import check, names_shape, raises_at_the_call, value
from minilazy.conformance.oracle import assert_close, reduction_bound
from strategies import DTYPES, arrays

pytestmark = pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning")
REDUCTIONS = ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var", "std")


@settings(max_examples=10)
@given(data=st.data())
def test_matmul_operators_of_tensors_and_ndarrays(device, data):
    """``t @ u`` and ``ndarray @ t`` (``Tensor.__rmatmul__``, which NumPy defers to) are
    ``ml.matmul``: NumPy's result within the reduction bound."""
    shapes = data.draw(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature,
                                                         max_dims=2, max_side=4))
    a, b = (data.draw(arrays(data.draw(st.sampled_from(DTYPES)), s, "bounded"))
            for s in shapes.input_shapes)
    host = data.draw(st.booleans())
    got = value(lambda: (a if host else ml.asarray(a, device=device))
                @ ml.asarray(b, device=device))
    want = np.matmul(a, b)
    assert_close(got, want, "reduction", bound=reduction_bound("matmul", [a, b], {}, want))


@pytest.mark.parametrize(("name", "axis"), [
    pytest.param(n, a, id=f"{n}-{a}") for n in REDUCTIONS
    for a in (2, -3, (0, 0), (1, -1)) if not (n.startswith("arg") and isinstance(a, tuple))])
def test_bad_axes_messages_name_the_function_and_the_axis(name, axis, device):
    """minilazy raises NumPy's classes (ValueError or IndexError, as ``AxisError`` is both),
    naming the function, and for an axis out of range the axis and the number of dimensions."""
    x = ml.asarray(np.zeros((2, 3), np.float32), device=device)
    msg = raises_at_the_call(lambda: getattr(ml, name)(x, axis=axis), (ValueError, IndexError))
    assert name in msg, msg
    if isinstance(axis, int):
        assert str(axis) in msg and "dimension 2" in msg, msg


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((2, 0), 1), ((0, 3), 0)], ids=str)
def test_zero_size_reduction_errors_are_value_errors_naming_the_shape(name, shape, axis, device):
    """As NumPy: a ``ValueError``; minilazy's message names the empty operand's shape."""
    x = ml.asarray(np.zeros(shape, np.float32), device=device)
    msg = raises_at_the_call(lambda: getattr(ml, name)(x, axis=axis), ValueError)
    assert names_shape(msg, shape), msg


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3, 4), (5, 4, 2)),
                                        ((2, 3), ()), ((4,), (2, 3))], ids=str)
def test_matmul_shape_errors_are_value_errors(sa, sb, device):
    """As NumPy: a ``ValueError`` from ``@``, naming both shapes."""
    a, b = (ml.asarray(np.ones(s, np.float32), device=device) for s in (sa, sb))
    msg = raises_at_the_call(lambda: a @ b, ValueError)
    assert names_shape(msg, sa) and names_shape(msg, sb), msg


@pytest.mark.parametrize(("sa", "sb", "axes"), [
    ((2, 3), (4, 5), 1), ((2, 3), (3, 4), 3), ((2, 3), (2, 3), ([0, 1], [1, 0])),
    ((2, 3), (3, 2), ([0], [0, 1])), ((2, 3), (3, 2), ([2], [0]))], ids=str)
def test_tensordot_errors_name_tensordot(sa, sb, axes, device):
    """NumPy's classes (ValueError or IndexError), the message naming the function."""
    a, b = (ml.asarray(np.ones(s, np.float32), device=device) for s in (sa, sb))
    msg = raises_at_the_call(lambda: ml.tensordot(a, b, axes=axes), (ValueError, IndexError))
    assert "tensordot" in msg, msg


@pytest.mark.parametrize(("name", "axis"), [
    pytest.param(n, a, id=f"{n}-{a}") for n in REDUCTIONS[:8] for a in (0, -1)])
def test_numpys_int_axis_on_a_0d_array_is_accepted(name, axis, device):
    """NumPy accepts axis 0 and -1 on a 0-d array for these (a legacy quirk), and so does
    minilazy, with NumPy's value. (Where NumPy raises, the suite checks that minilazy does.)"""
    x = np.array(2.5, np.float32)
    check(lambda: getattr(np, name)(x, axis=axis),
          lambda: getattr(ml, name)(ml.asarray(x, device=device), axis=axis), device)
