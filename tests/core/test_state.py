"""The engine's mutable state is in one place: ``core.state`` and the parts handed to it.

Two checks. A workload that touches every package (gradients, random keys, an eager op, a
debug level, the persistent cache, a compile and a cache hit) runs while every module-level
object of the engine is watched: whatever changes must be the state's (``ENGINE``, ``LIVE``,
``COUNTERS``, an installed part) or one of the few memo tables named below, each a pure
function of its keys. Then ``state.reset()`` must give back the engine of a new process.
"""

from __future__ import annotations

import importlib
import pkgutil
import tempfile
import types
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import minilazy as ml
from minilazy.autodiff.tape import TAPES
from minilazy.core import state
from minilazy.core.cache import CACHE
from minilazy.core.metrics import COUNTERS
from minilazy.introspect.debug import DEBUGGER
from minilazy.parts.plans import PLANS
from minilazy.parts.tapes import TEMPLATES
from minilazy.persist.diskcache import SETTINGS

# Memo tables: each value is a pure function of its key, so forgetting one changes nothing.
MEMOS = {
    "minilazy.api.scalars._WEAK": "a Python scalar's dtype per (op, type, dtype, side)",
    "minilazy.core.runtime._DEVICES": "one Device object per (platform, index)",
    "minilazy.scaleout.placement.MESHES": "one jax Mesh per minilazy Mesh",
    "minilazy.random._LEAVES": "one scalar leaf per key value",
    "minilazy.api.indexing._BASIC": "an index spec per (shape, key structure)",
    "minilazy.api.creation._ARANGE": "arange's numbers per int arguments and dtype",
    "minilazy.api.axes._AXES": "normalised axes per (axes, ndim)",
    "minilazy.optim._LAYOUTS": "a weight tree's groups per (structure, weights' shapes, dtypes)",
}
CONTAINERS = (dict, list, set, deque)


def _engine_modules() -> Iterator[types.ModuleType]:
    for info in pkgutil.walk_packages(ml.__path__, "minilazy."):
        # the demo and minilazy.pytorch are front-ends on the public face, not the engine (and
        # minilazy.pytorch needs the torch extra)
        if not any(f".{n}" in info.name for n in ("conformance", "demo", "pytorch")):
            yield importlib.import_module(info.name)


def _watched() -> dict[str, Any]:
    """Every module-level container or engine object, by its first name."""
    found: dict[str, Any] = {}
    owned = {id(state.ENGINE), id(state.LIVE), id(COUNTERS), id(state.OVERRIDE)}
    owned |= {id(part) for part in state.ENGINE.parts.values()}
    for module in _engine_modules():
        for name, value in vars(module).items():
            mine = type(value).__module__.startswith("minilazy.")
            if (isinstance(value, CONTAINERS) or mine) and id(value) not in owned:
                found.setdefault(f"{module.__name__}.{name}", value)
    return found


def _snapshot(value: Any) -> object:
    """What would show a change: a container's items by identity, an object's fields."""
    if isinstance(value, dict):
        return [(id(k), id(v)) for k, v in list(value.items())]
    if isinstance(value, CONTAINERS):
        return [id(v) for v in list(value)]
    fields = getattr(value, "__dict__", None)
    if fields is None:
        return id(value)
    return {k: _snapshot(v) if isinstance(v, CONTAINERS) else id(v) for k, v in fields.items()}


def _workload() -> None:
    x = ml.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    with tempfile.TemporaryDirectory() as directory:
        ml.set_cache_dir(directory)
        try:
            ml.clear_cache()
            assert float(ml.sum(x * 7.0)) == 105.0
        finally:
            ml.set_cache_dir(None)
    loss = ml.grad(lambda w: ml.sum(ml.tanh(w * 2.0) ** 2))
    for _ in range(2):  # the second replays the tape and hits the cache
        g = loss(x)
        assert np.allclose(g.numpy(), 4 * np.tanh(2 * x.numpy()) / np.cosh(2 * x.numpy()) ** 2,
                           rtol=1e-5, atol=1e-5)  # 1 - tanh² rounds to 0 in f32
    key = ml.random.key(12345)
    assert ml.random.normal(key, (3,)).shape == (3,)
    for _ in range(2):  # the second replays the layer's template
        assert ml.nn.softmax(x).shape == (2, 3)
    with ml.eager(), ml.debug(0):
        assert float(ml.max(x + 1.5)) == 6.5


def test_only_the_state_changes_while_the_engine_runs() -> None:
    watched = _watched()
    before = {name: _snapshot(value) for name, value in watched.items()}
    _workload()
    changed = {name for name, value in watched.items() if _snapshot(value) != before[name]}
    assert changed - set(MEMOS) == set(), "engine state outside core.state and its parts"


def test_the_parts_are_the_packages_state() -> None:
    assert state.ENGINE.parts == {"programs": CACHE, "cuts": PLANS, "tapes": TAPES,
                                  "layers": TEMPLATES, "debugger": DEBUGGER, "disk": SETTINGS}
    assert DEBUGGER in state.ENGINE.listeners  # the assembly in minilazy/__init__.py


def test_reset_gives_the_engine_of_a_new_process() -> None:
    ml.set_policy(ml.BarrierPolicy(max_pending_nodes=64))
    with tempfile.TemporaryDirectory() as directory:
        ml.set_cache_dir(directory)
        _workload()
        ml.set_cache_dir(directory)
        assert len(CACHE) and len(TAPES) and len(TEMPLATES) and ml.compile_history()
        assert ml.metrics().compiles
        kept = ml.ones((2,)) + 1.0  # pending work survives a reset
        state.reset()
        assert (len(CACHE), len(TAPES), len(TEMPLATES), ml.compile_history()) == (0, 0, 0, [])
        assert ml.metrics().compiles == ml.metrics().barriers == 0
        assert ml.current_policy() == ml.BarrierPolicy()
        assert ml.cache_dir() != Path(directory)  # set_cache_dir's choice is forgotten
        np.testing.assert_array_equal(kept.numpy(), [2.0, 2.0])
        assert ml.metrics().compiles == 1  # the program was forgotten, so it compiled again
