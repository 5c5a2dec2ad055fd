"""The cut's plans: a graph met again is found by following its plan, never cut wrongly.

A plan is trusted only when the new graph is the planned one exactly. These tests record the
same program with other wiring underneath (one tensor where there were two, two where there was
one, a shared intermediate recorded twice) and check that ``cut`` then gives exactly what a walk
gives, and the values NumPy gives.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from minilazy.core import state
from minilazy.core.cut import CUTS, Cut, cut, roots_of, walk
from minilazy.parts.plans import PLANS, Plans

# (name, arity): each instruction applies one to earlier values (leaves, then results)
OPS = {"add": 2, "multiply": 2, "maximum": 2, "tanh": 1, "negative": 1, "scale": 1}
LEAVES = 3


def _apply(ns: Any, name: str, args: list[Any], k: int) -> Any:
    if name == "scale":  # a Python scalar: a SCALAR parameter each time it is recorded
        return args[0] * (0.5 + k)
    return getattr(ns, name)(*args)


@st.composite
def programs(draw: st.DrawFn) -> list[tuple[str, tuple[int, ...]]]:
    """Instructions ``(op, operand indices)`` over ``LEAVES`` leaves and earlier results."""
    out = []
    for i in range(draw(st.integers(1, 12))):
        name = draw(st.sampled_from(sorted(OPS)))
        out.append((name, tuple(draw(st.integers(0, LEAVES + i - 1)) for _ in range(OPS[name]))))
    return out


def _run(ns: Any, program: list[tuple[str, tuple[int, ...]]], leaves: list[Any],
         shared: bool) -> list[Any]:
    """Every value of ``program``; ``shared``: a repeated instruction reuses the first result."""
    values, seen = list(leaves), {}
    for k, (name, args) in enumerate(program):
        key = (name, args, k if name == "scale" else None)
        if shared and key in seen:
            values.append(values[seen[key]])
        else:
            seen[key] = len(values)
            values.append(_apply(ns, name, [values[a] for a in args], k))
    return values


def _same(a: Cut, b: Cut) -> None:
    assert len(a.order) == len(b.order) and all(x is y for x, y in zip(a.order, b.order))
    assert a.positions == b.positions and a.outputs == b.outputs
    assert all(x is y for x, y in zip(a.params, b.params)) and len(a.params) == len(b.params)
    assert all(x is y for x, y in zip(a.scalars, b.scalars)) and len(a.scalars) == len(b.scalars)
    assert (a.groups, a.key, a.edges, a.structure) == (b.groups, b.key, b.edges, b.structure)


def _roots(values: list[Any]) -> list[Any]:
    return values[LEAVES:][-3:]  # the last three results (some may repeat)


@given(programs(), st.lists(st.integers(0, LEAVES - 1), min_size=LEAVES, max_size=LEAVES),
       st.lists(st.integers(0, LEAVES - 1), min_size=LEAVES, max_size=LEAVES), st.booleans(),
       st.booleans())
def test_a_planned_cut_is_the_walked_cut_whatever_the_wiring(program, first, second,
                                                              shared_first, shared_second):
    """Plan a program under one binding of its leaves (``first``: slot -> array, so two slots
    may be one tensor) and sharing of repeated instructions, then record it under another:
    ``cut`` must equal ``walk`` exactly, and the values must be NumPy's."""
    data = [np.linspace(-1.0, 1.0, 4, dtype=np.float32) * (i + 1) for i in range(LEAVES)]
    arrays = [ml.asarray(d) for d in data]
    ml.mark_step()
    for _ in range(3):  # walked, walked and planned, followed
        values = _run(ml, program, [arrays[i] for i in first], shared_first)
        roots = [t._node for t in _roots(values)]
        _same(cut(roots_of(roots), arrays[0].device), walk(roots_of(roots), arrays[0].device))
        _same(cut(roots, arrays[0].device), walk(roots, arrays[0].device))  # repeats kept
    values = _run(ml, program, [arrays[i] for i in second], shared_second)
    raw = [t._node for t in _roots(values)]
    _same(cut(raw, arrays[0].device), walk(raw, arrays[0].device))
    roots = roots_of(raw)
    _same(cut(roots, arrays[0].device), walk(roots, arrays[0].device))
    expected = _run(np, program, [data[i] for i in second], False)
    for got, want in zip(_roots(values), _roots(expected)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)  # XLA's tanh


def test_a_repeated_step_follows_its_plan_and_a_one_off_makes_none():
    """The third cut of a step's graph is found by its plan (``PLANS.hits``); a graph cut once
    plans nothing; values stay NumPy's throughout."""
    x_np = np.arange(4, dtype=np.float32)
    x = ml.asarray(x_np)
    ml.mark_step()
    hits = PLANS.hits
    y = ml.exp(x * 3.0 + 1.0)
    ml.mark_step()
    assert PLANS.hits == hits  # seen once: noted, not planned
    for k in range(3):
        y = ml.exp(x * float(k) + 1.0)
        ml.mark_step()
        np.testing.assert_allclose(y.numpy(), np.exp(x_np * k + 1.0), rtol=1e-6)
    assert PLANS.hits >= hits + 2  # the second cut plans it; the third and fourth follow it
    assert ml.metrics().compiles == 1


def test_a_plan_of_one_root_twice_never_takes_two_roots_for_one():
    """Roots ``[a, a]`` and ``[a, b]`` (``b`` the same op on other data) have the same digests:
    the first's plan must not map ``b`` where it has ``a`` (it gave ``b``'s value for ``a``)."""
    from minilazy.introspect import reference

    x_np, y_np = np.arange(3, dtype=np.float32), np.arange(10, 13, dtype=np.float32)
    for _ in range(3):
        x, y = ml.asarray(x_np), ml.asarray(y_np)
        a, b = x + 1.0, y + 1.0
        reference.run(a, a)
        got_a, got_b = reference.run(a, b)
        np.testing.assert_array_equal(got_a, x_np + 1.0)
        np.testing.assert_array_equal(got_b, y_np + 1.0)
        ml.sync(a, b)
        np.testing.assert_array_equal(a.numpy(), x_np + 1.0)
        np.testing.assert_array_equal(b.numpy(), y_np + 1.0)


def test_without_a_planner_every_cut_walks_and_nothing_else_changes(monkeypatch):
    # Plans are a part (minilazy.parts.plans): core alone walks each cut, to the same programs.
    monkeypatch.setattr(CUTS, "planner", None)
    state.reset()  # no program compiled yet: the count below is this test's
    x_np = np.arange(4, dtype=np.float32)
    x = ml.asarray(x_np)
    ml.mark_step()
    hits = PLANS.hits
    for k in range(4):
        y = ml.exp(x * float(k) + 1.0)
        ml.mark_step()
        np.testing.assert_allclose(y.numpy(), np.exp(x_np * k + 1.0), rtol=1e-6)
    assert PLANS.hits == hits and ml.metrics().compiles == 1


def test_plans_are_forgotten_with_the_rest_of_the_engine():
    x = ml.asarray(np.ones(2, np.float32))
    for _ in range(2):
        ml.sync(ml.exp(x))
    assert len(PLANS) >= 1
    state.reset()
    assert len(PLANS) == 0 and PLANS.hits == 0


def test_plans_under_threads_give_the_walked_cut(monkeypatch):
    """Threads cutting their own graphs (as backward passes do, outside the engine lock) while
    a tiny table evicts plans all the time: every cut is the walked one, no thread fails."""
    tiny = Plans(capacity=6)
    monkeypatch.setattr(CUTS, "planner", tiny)
    x = ml.asarray(np.linspace(-1.0, 1.0, 4, dtype=np.float32))
    ml.mark_step()
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(60):
                y = x
                # one structure per thread, and every third time a one-off that evicts
                for _ in range(t + 1 if i % 3 else 5 + i):
                    y = ml.tanh(y * float(t + 1)) + x
                roots = roots_of([y._node])
                _same(cut(roots, x.device), walk(roots, x.device))
        except BaseException as e:  # reported below: an assertion in a thread is silent
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert tiny.hits > 0 and len(tiny) <= 6
