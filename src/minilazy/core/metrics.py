"""Metrics: the counters and timers every stage reports into.

Near the bottom of core: it imports only the standard library. Stages bump plain integer
attributes on one mutable :data:`COUNTERS` object (cheap enough for the recording hot path);
users read a frozen :class:`Metrics` snapshot through ``ml.metrics()``. Never imports jax.
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

_SAMPLES: Final = 4096  # timer samples kept for percentiles; bounded so long runs stay flat


class _Counters:
    """The live, mutable counters (internal: users see :class:`Metrics` snapshots)."""

    __slots__ = (
        "ops_recorded", "barriers", "compiles", "cache_hits", "executions",
        "transfers_to_device", "transfers_to_host", "bytes_to_device", "bytes_to_host",
        "fallbacks", "donations", "disk_hits", "disk_writes", "backward_replays",
        "compile_seconds", "execute_seconds", "trace_seconds", "load_seconds",
        "barrier_causes", "fallback_ops", "compile_causes", "observation_sites", "compile_times",
        "execute_times", "trace_times", "fallback_sites",
    )

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.ops_recorded = 0
        self.barriers = 0
        self.compiles = 0
        self.cache_hits = 0
        self.executions = 0
        self.transfers_to_device = 0
        self.transfers_to_host = 0
        self.bytes_to_device = 0
        self.bytes_to_host = 0
        self.fallbacks = 0
        self.donations = 0
        self.disk_hits = 0
        self.disk_writes = 0
        self.backward_replays = 0
        self.compile_seconds = self.execute_seconds = self.trace_seconds = self.load_seconds = 0.0
        self.barrier_causes: Counter[str] = Counter()
        self.fallback_ops: Counter[str] = Counter()
        self.compile_causes: Counter[str] = Counter()
        self.observation_sites: Counter[str] = Counter()  # "item at train.py:12": hidden syncs
        self.fallback_sites: Counter[str] = Counter()  # "nonzero at train.py:14": host fallbacks
        self.compile_times: deque[float] = deque(maxlen=_SAMPLES)
        self.execute_times: deque[float] = deque(maxlen=_SAMPLES)
        self.trace_times: deque[float] = deque(maxlen=_SAMPLES)


COUNTERS: Final = _Counters()
# Gauges read at snapshot time, registered by the module that can measure them (the runtime
# registers live device buffers and their bytes): metrics stays at the bottom of the stack.


@dataclass(frozen=True)
class Timer:
    """Summary of one timer's recent samples, in seconds.

    Example:
        >>> Timer.of([0.1, 0.2, 0.3]).p50
        0.2
    """

    count: int
    total: float
    p50: float
    p90: float
    p99: float

    @staticmethod
    def of(samples: deque[float] | list[float], total: float | None = None) -> Timer:
        """Summarise ``samples`` (``total`` defaults to their sum)."""
        xs = sorted(samples)
        if not xs:
            return Timer(0, 0.0 if total is None else total, 0.0, 0.0, 0.0)

        def pct(q: float) -> float:
            return xs[min(len(xs) - 1, int(q * len(xs)))]

        return Timer(len(xs), sum(xs) if total is None else total, statistics.median(xs),
                     pct(0.9), pct(0.99))


@dataclass(frozen=True)
class Metrics:
    """A frozen snapshot of minilazy's counters, as returned by ``ml.metrics()``.

    Example:
        >>> import minilazy as ml
        >>> ml.reset_metrics()
        >>> y = ml.ones((2,)) + 1.0
        >>> ml.metrics().ops_recorded >= 1, ml.metrics().executions
        (True, 0)
    """

    ops_recorded: int  # live_buffers and live_bytes below count every JAX array in the process
    barriers: int
    compiles: int  # programs XLA compiled (a program loaded from disk is not one)
    cache_hits: int
    executions: int
    transfers_to_device: int
    transfers_to_host: int
    bytes_to_device: int
    bytes_to_host: int
    fallbacks: int
    donations: int
    disk_hits: int  # programs loaded from the persistent cache (not compiled: not in compiles)
    disk_writes: int  # compiled programs written to the persistent cache
    backward_replays: int  # backward passes replayed from a tape, no VJP rule run
    compile_seconds: float
    execute_seconds: float
    trace_seconds: float
    load_seconds: float  # loading programs from the persistent cache (disk_hits of them)
    barrier_causes: Mapping[str, int] = field(default_factory=dict)
    fallback_ops: Mapping[str, int] = field(default_factory=dict)
    compile_causes: Mapping[str, int] = field(default_factory=dict)
    observation_sites: Mapping[str, int] = field(default_factory=dict)
    fallback_sites: Mapping[str, int] = field(default_factory=dict)
    live_buffers: int = 0
    live_bytes: int = 0
    compile_timer: Timer = Timer(0, 0.0, 0.0, 0.0, 0.0)
    execute_timer: Timer = Timer(0, 0.0, 0.0, 0.0, 0.0)
    trace_timer: Timer = Timer(0, 0.0, 0.0, 0.0, 0.0)


def reset_metrics() -> None:
    """Set every counter and timer back to zero (the compile cache is kept).

    Example:
        >>> import minilazy as ml
        >>> ml.reset_metrics(); ml.metrics().ops_recorded
        0
    """
    COUNTERS.reset()
