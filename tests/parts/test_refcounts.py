"""Refcount donation is a part (minilazy.parts.refcounts): without it nothing is donated and
every value is the same; with it an update in place reuses its input's buffer."""

from __future__ import annotations

import numpy as np
import pytest

import minilazy as ml
from minilazy.core import state
from minilazy.core.barrier import PARTS


def _steps(n: int) -> ml.Tensor:
    w = ml.asarray(np.ones((8, 8), np.float32))
    ml.mark_step()
    for _ in range(n):
        w = w * 2.0 + 1.0  # the old buffer is held by nothing but the program
        ml.mark_step()
    return w


def _expected(n: int) -> np.ndarray:
    w = np.ones((8, 8), np.float32)
    for _ in range(n):
        w = w * 2 + 1
    return w


def test_without_a_donor_nothing_is_donated_and_the_values_are_the_same(monkeypatch):
    monkeypatch.setattr(PARTS, "donor", None)
    w = _steps(3)
    assert ml.metrics().donations == 0
    np.testing.assert_array_equal(w.numpy(), _expected(3))


def test_with_the_installed_donor_an_update_in_place_donates():
    assert type(PARTS.donor).__name__ == "RefcountDonor"  # what import minilazy installs
    w = _steps(3)
    assert ml.metrics().donations >= 2
    np.testing.assert_array_equal(w.numpy(), _expected(3))


def test_a_held_buffer_is_never_donated():
    w = ml.asarray(np.ones((8, 8), np.float32))
    ml.mark_step()
    old = w
    w = w * 2.0
    ml.mark_step()
    assert ml.metrics().donations == 0
    np.testing.assert_array_equal(old.numpy(), np.ones((8, 8), np.float32))
    np.testing.assert_array_equal(w.numpy(), np.full((8, 8), 2.0, np.float32))


@pytest.mark.parametrize("installed", [True, False])
def test_a_step_compiles_once_either_way(monkeypatch, installed):
    if not installed:
        monkeypatch.setattr(PARTS, "donor", None)
    state.reset()  # no program compiled yet: the count below is this test's
    _steps(4)
    assert ml.metrics().compiles == 1
