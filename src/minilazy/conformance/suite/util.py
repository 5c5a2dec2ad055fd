"""Helpers the spec tests share: counter deltas, observing many tensors, running programs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import note
from hypothesis.errors import InvalidArgument

from minilazy.conformance.adapter import Counters, OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.oracle.programs import (
    AdapterMachine,
    NumpyMachine,
    Program,
    Trace,
    dumps,
    run,
    to_python,
)
from minilazy.conformance.tools import isolation

Array = np.ndarray[Any, Any]


@dataclass
class Delta:
    """How much each counter grew inside a :func:`counting` block.

    Example:
        >>> Delta().executions
        0
    """

    ops_recorded: int | None = 0
    compiles: int | None = 0
    cache_hits: int | None = 0
    executions: int | None = 0
    donations: int | None = 0

    def n(self, name: str) -> int:
        """Count ``name``, which the test's capabilities guarantee is kept.

        Example:
            >>> Delta(compiles=2).n("compiles")
            2
        """
        value = getattr(self, name)
        assert value is not None, f"{name} is not counted: the test needs its capability"
        return int(value)

    def ran_nothing(self) -> bool:
        """Nothing compiled and nothing executed, as far as the counts kept can tell.

        Example:
            >>> Delta(executions=None).ran_nothing(), Delta(compiles=1).ran_nothing()
            (True, False)
        """
        return self.compiles in (0, None) and self.executions in (0, None)


@contextmanager
def counting(adapter: OptionalAdapter) -> Iterator[Delta]:
    """Measure the adapter's counters across a ``with`` block (needs ``counters``).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> t = toy()
        >>> with counting(t) as d:
        ...     _ = t.to_numpy(t.apply("negative", t.from_numpy(np.ones(2))))
        >>> d.compiles, d.executions
        (1, 1)
    """
    before = adapter.counters()
    delta = Delta()
    yield delta
    after: Counters = adapter.counters()
    for name in ("ops_recorded", "compiles", "cache_hits", "executions", "donations"):
        a, b = getattr(after, name), getattr(before, name)
        setattr(delta, name, None if a is None or b is None else a - b)


def typed(adapter: OptionalAdapter, value: float, dtype: Any) -> Any:
    """A 0-d tensor holding ``value`` as ``dtype``: a scalar operand whose dtype is no question.

    Tests of rules other than dtype promotion use these instead of Python scalars, so that a
    promotion bug (LZ-NUM-003's business) does not show up as a failure of their rule.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> t = toy()
        >>> t.dtype(typed(t, 0.5, np.float32))
        dtype('float32')
    """
    return adapter.from_numpy(np.asarray(value, dtype))


def require_graphs(adapter: OptionalAdapter) -> None:
    """Skip a test of keys where recording leaves nothing pending.

    An implementation that runs ops as it records them (which LZ-REC-001 fails) has no
    recorded graph for its keys to name.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> require_graphs(toy())
    """
    if "pending" in adapter.capabilities:
        probe = adapter.apply("negative", adapter.from_numpy(np.ones(1, np.float32)))
        if not adapter.is_pending(probe):
            pytest.skip(f"{adapter.name} runs ops as it records them (LZ-REC-001): no graph "
                        "to key")


def fresh(adapter: OptionalAdapter) -> None:
    """Empty the compile cache, where the adapter can ``reset``, before checking values.

    Each check of an op's values then stands alone: whether a cache hit returns what a miss
    would is LZ-CACHE-003's to check, with variants of one structure built for the purpose, not
    left to which earlier examples happened to share a structure.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> fresh(toy())
    """
    if "reset" in adapter.capabilities:
        adapter.reset()


class Raised(Exception):
    """The exception a test raises inside a block, to see how the block is left."""


def leave_by_raising(block: Callable[[], AbstractContextManager[Any]], nested: bool) -> None:
    """Enter ``block`` (twice, nested, if asked) and leave it by an exception from inside.

    Example:
        >>> from contextlib import nullcontext
        >>> leave_by_raising(nullcontext, nested=True)
    """
    with pytest.raises(Raised):
        with block():
            if nested:
                with pytest.raises(Raised), block():
                    raise Raised
            raise Raised


def settle(adapter: OptionalAdapter) -> None:
    """Materialise other tests' leftovers, so the next barrier cuts only what the test records.

    (A leftover held by a reference cycle may be live until the collector runs; materialised,
    it no longer joins any cut. ``gc.collect()`` would do too, at ~60 ms a call.)

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> settle(toy())
    """
    adapter.barrier()


def observe_all(adapter: OptionalAdapter, xs: Sequence[Any]) -> list[Array]:
    """Read every tensor of ``xs``, synced together first where the adapter can ``sync``.

    One program for many results compiles faster than one per result. ``sync``, not
    ``mark_step``: a value test must not fail for a bug of ``mark_step`` (LZ-BAR-001's).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> t = toy()
        >>> observe_all(t, [t.from_numpy(np.ones(1))])[0].tolist()
        [1.0]
    """
    if xs and "sync" in adapter.capabilities:
        adapter.sync(*xs)
    return [adapter.to_numpy(x) for x in xs]


def explain(text: str) -> None:
    """Show ``text`` if the test fails: a Hypothesis note, or captured output outside Hypothesis.

    Example:
        >>> explain("shown on failure")
        shown on failure
    """
    isolation.note(text)  # kept on disk too: if the library crashes, the report shows it
    try:
        note(text)
    except InvalidArgument:  # not inside a Hypothesis test: pytest shows captured output
        print(text)


def explain_call(op: str, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None,
                 failed: bool = True) -> None:
    """Note a single op call as Python (``explain``): a test's program when it is one call.

    ``failed=False`` (before the call runs) keeps it only where a crash report finds it,
    not among the notes a failure prints.

    Example:
        >>> explain_call("add", [np.array([1, 2], np.int8), 3])
        program as Python:
        add(np.array([1, 2], dtype=np.int8), 3)
    """
    def show(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"np.array({a.tolist()!r}, dtype=np.{a.dtype})"
        if isinstance(a, np.dtype):
            return f"np.dtype({a.name!r})"
        if isinstance(a, list):
            return "[" + ", ".join(show(x) for x in a) + "]"
        return repr(a)

    params = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in (kwargs or {}).items()]
    text = f"program as Python:\n{op}({', '.join(params)})"
    if failed:
        explain(text)
    else:
        isolation.note(text)


def check_program(adapter: OptionalAdapter, program: Program, impl: str = "",
                  expected: Trace | None = None, **kw: Any) -> Trace:
    """Run ``program`` on NumPy and on ``adapter``; every observation must be exactly NumPy's.

    The program, as Python and as JSON, is noted for Hypothesis to print on failure. Branches
    follow NumPy's decisions (the observed values they depend on are checked too).

    Example:
        >>> from minilazy.conformance.oracle.programs import Program
        >>> from minilazy.conformance.mutate.toy import toy
        >>> check_program(toy(), Program((), (), 0)).observations  # outside Hypothesis: printed
        program as Python:
        ...
        []
    """
    explain(f"program as Python:\n{to_python(program, impl=impl)}")
    explain(f"program as JSON:\n{dumps(program)}")
    want = expected or run(program, NumpyMachine())
    if expected is None:
        fresh(adapter)
    got = run(program, AdapterMachine(adapter), want.decisions, **kw)
    assert len(got.observations) == len(want.observations)
    for n, ((slot, a), (_, e)) in enumerate(zip(got.observations, want.observations)):
        assert_close(a, e, "exact", what=f"observation {n} (v{slot})")
    return got


# -- one call on both sides: NumPy's result, or NumPy's error at the call ---------------------
NUMPY_ERRORS = (ValueError, IndexError, TypeError, OverflowError)


def numpy_outcome(call: Callable[[], Any]) -> tuple[Array | None, tuple[type, ...]]:
    """NumPy's result and no error, or no result and the exception types it raised.

    (AxisError is both a ValueError and an IndexError: either is NumPy's type then.)
    """
    with np.errstate(all="ignore"):
        try:
            return np.asarray(call()), ()
        except NUMPY_ERRORS as e:
            return None, tuple(k for k in NUMPY_ERRORS if isinstance(e, k))


def raises_at_the_call(adapter: OptionalAdapter, call: Callable[[], Any],
                       errors: tuple[type, ...]) -> None:
    """``call()`` raises one of ``errors``, having run nothing where the adapter counts runs."""
    if satisfies(capabilities_of(adapter), "executions|compiles"):
        with counting(adapter) as d, pytest.raises(errors):
            call()
        assert d.ran_nothing(), "the error came from running, not from the call"
    else:
        with pytest.raises(errors):
            call()


def matches(adapter: OptionalAdapter, want: Callable[[], Any], run: Callable[[], Any],
            tolerance: str = "exact") -> None:
    """``run()`` gives NumPy's ``want()`` (within ``tolerance``), or raises where NumPy does."""
    fresh(adapter)
    expected, errors = numpy_outcome(want)
    if errors:
        raises_at_the_call(adapter, run, errors)
        return
    assert_close(adapter.to_numpy(run()), expected, tolerance)
