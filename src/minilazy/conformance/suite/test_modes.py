"""Mode blocks nested in each other, every pair of kinds in both orders (LZ-BAR-013).

A mode block changes one thing: ``eager()`` runs ops as they are recorded, ``no_fallback()``
refuses host fallbacks. Nested in a block of another kind, it must keep the outer block's mode
(be made from the mode in force, not from the process default), and each block's mode must end
with it and no sooner. Each kind has a probe that says whether its mode holds, read without
changing anything.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter


@dataclass(frozen=True)
class Kind:
    """A kind of mode block: how to enter it, and a probe of whether its mode holds."""

    block: Callable[[OptionalAdapter], AbstractContextManager[Any]]
    holds: Callable[[OptionalAdapter], bool]
    needs: tuple[str, ...]
    ops: tuple[str, ...]


def _runs_ops(adapter: OptionalAdapter) -> bool:
    """Whether an op recorded now runs at once (eager mode)."""
    y = adapter.apply("multiply", adapter.from_numpy(np.ones(3, np.float32)), 2.0)
    return not adapter.is_pending(y)


def _refuses_fallbacks(adapter: OptionalAdapter) -> bool:
    """Whether a data-dependent op raises ``RuntimeError`` instead of running on the host."""
    try:
        (found,) = adapter.apply("nonzero", adapter.from_numpy(np.array([0, 3, 0, 5])))
    except RuntimeError:
        return True
    np.testing.assert_array_equal(adapter.to_numpy(found), [1, 3])  # allowed: and right
    return False


KINDS: dict[str, Kind] = {
    "eager": Kind(lambda a: a.eager(), _runs_ops, ("eager", "pending"), ("multiply",)),
    "no_fallback": Kind(lambda a: a.no_fallback(), _refuses_fallbacks,
                        ("dynamic", "no_fallback"), ("nonzero",)),
}
PAIRS = [pytest.param(outer, inner, marks=[
    pytest.mark.requires(*{*KINDS[outer].needs, *KINDS[inner].needs}),
    pytest.mark.ops(*{*KINDS[outer].ops, *KINDS[inner].ops})], id=f"{inner}-in-{outer}")
    for outer in KINDS for inner in KINDS]


def _state(adapter: OptionalAdapter) -> dict[str, bool]:
    return {name: kind.holds(adapter) for name, kind in KINDS.items()
            if all(n in adapter.capabilities for n in kind.needs)}


@pytest.mark.spec("LZ-BAR-013")
@pytest.mark.parametrize("outer, inner", PAIRS)
def test_a_block_nested_in_another_keeps_the_outer_mode(adapter: OptionalAdapter, outer: str,
                                                        inner: str) -> None:
    """``with outer: with inner: ...``: inside, both modes hold; after each, its own ends."""
    probe = {outer, inner}
    if "eager" in probe and not adapter.is_pending(
            adapter.apply("multiply", adapter.from_numpy(np.ones(2, np.float32)), 1.0)):
        pytest.skip("recording runs ops here, in any mode (LZ-REC-001's business)")
    before = _state(adapter)
    assert not any(before[k] for k in probe), f"a mode holds before any block: {before}"
    with KINDS[outer].block(adapter):
        assert KINDS[outer].holds(adapter), f"{outer}() does not hold inside its block"
        with KINDS[inner].block(adapter):
            now = {k: KINDS[k].holds(adapter) for k in probe}
            assert all(now.values()), (f"{inner}() nested in {outer}(): inside, only "
                                       f"{[k for k, v in now.items() if v]} hold of {sorted(now)}")
        assert KINDS[outer].holds(adapter), f"{outer}() ended with the {inner}() block inside it"
        if inner != outer:
            assert not KINDS[inner].holds(adapter), f"{inner}() outlived its block"
    assert _state(adapter) == before, f"after both blocks: {_state(adapter)}, before: {before}"
