"""Writes into what NumPy would make a view: minilazy's tensors are values, and it says so.

LZ-REC-005 is implementation-defined; minilazy's choice (values, as JAX) is warned at the write
(``ml.ViewWriteWarning``), once per site, while the tensor the view came from is alive. The
values are NumPy's for the written tensor, and the base keeps its own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minilazy as ml

BASE = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize(("name", "view", "key"), [
    ("index", lambda x: x[0], slice(None)),
    ("slice", lambda x: x[:, 1:], (0, 0)),
    ("reshape", lambda x: ml.reshape(x, (3, 2)), (0, 0)),
    ("method reshape", lambda x: x.reshape(6), 2),
    ("transpose", lambda x: x.T, (1, 0)),
])
def test_a_write_into_a_view_of_a_live_tensor_warns_and_leaves_the_base(name, view, key):
    x = ml.asarray(BASE)
    v = view(x)
    want = np.array(view(BASE))  # NumPy's view, copied: what v holds after the write
    want[key] = -1.0
    with pytest.warns(ml.ViewWriteWarning, match="LZ-REC-005") as record:
        v[key] = -1.0
    assert record[0].filename == __file__  # at the user's line
    np.testing.assert_array_equal(v.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), BASE)  # unlike NumPy: the base is unchanged


@pytest.mark.parametrize("make", [
    lambda: ml.zeros((2, 3)),  # a fresh tensor (a broadcast): no base to mislead about
    lambda: ml.asarray(BASE)[[0, 1]],  # index arrays: NumPy copies too
    lambda: ml.asarray(BASE)[0],  # the base is dead: nothing to mislead about
    lambda: ml.exp(ml.asarray(BASE)),
])
def test_no_warning_where_numpy_would_not_share_memory_either(make):
    t = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t[0] = 5.0
    assert t.numpy().ravel()[0] == 5.0 or t.ndim == 1


def test_writing_into_the_base_itself_is_quiet_and_seen_by_new_views():
    x = ml.asarray(BASE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[0, :] = 7.0
    assert x[0].tolist() == [7.0, 7.0, 7.0]
