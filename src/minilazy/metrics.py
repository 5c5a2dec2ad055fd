"""Metrics: the counters and timers every layer reports into.

Second layer from the bottom: it imports only the standard library. Layers bump plain integer
attributes on one mutable :data:`COUNTERS` object (cheap enough for the recording hot path);
users read a frozen :class:`Metrics` snapshot through ``ml.metrics()``. Never imports jax.
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Final

_SAMPLES: Final = 4096  # timer samples kept for percentiles; bounded so long runs stay flat


class _Counters:
    """The live, mutable counters (internal: users see :class:`Metrics` snapshots)."""

    __slots__ = (
        "ops_recorded", "barriers", "compiles", "cache_hits", "executions",
        "transfers_to_device", "transfers_to_host", "bytes_to_device", "bytes_to_host",
        "fallbacks", "donations", "disk_hits", "disk_writes", "backward_replays",
        "compile_seconds", "execute_seconds", "trace_seconds",
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
        self.compile_seconds = 0.0
        self.execute_seconds = 0.0
        self.trace_seconds = 0.0
        self.barrier_causes: Counter[str] = Counter()
        self.fallback_ops: Counter[str] = Counter()
        self.compile_causes: Counter[str] = Counter()
        self.observation_sites: Counter[str] = Counter()  # "item at train.py:12": hidden syncs
        self.fallback_sites: Counter[str] = Counter()  # "nonzero at train.py:14": host fallbacks
        self.compile_times: deque[float] = deque(maxlen=_SAMPLES)
        self.execute_times: deque[float] = deque(maxlen=_SAMPLES)
        self.trace_times: deque[float] = deque(maxlen=_SAMPLES)


COUNTERS: Final = _Counters()
# Gauges read at snapshot time, registered by the layer that can measure them (the runtime
# registers live device buffers and their bytes): metrics stays at the bottom of the stack.
GAUGES: Final[dict[str, Callable[[], int]]] = {}


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
    compiles: int
    cache_hits: int
    executions: int
    transfers_to_device: int
    transfers_to_host: int
    bytes_to_device: int
    bytes_to_host: int
    fallbacks: int
    donations: int
    disk_hits: int  # compiles read from the persistent cache, not compiled by XLA
    disk_writes: int  # compiled programs written to the persistent cache
    backward_replays: int  # backward passes replayed from a tape, no VJP rule run
    compile_seconds: float
    execute_seconds: float
    trace_seconds: float
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


def metrics() -> Metrics:
    """A frozen snapshot of the counters since the last :func:`reset_metrics`.

    Example:
        >>> import minilazy as ml
        >>> isinstance(ml.metrics().compiles, int)
        True
    """
    c = COUNTERS
    scalars = {f.name: getattr(c, f.name) for f in fields(Metrics) if f.name in _Counters.__slots__
               and not f.name.endswith(("causes", "_ops", "_sites"))}
    return Metrics(
        **scalars,
        barrier_causes=MappingProxyType(dict(c.barrier_causes)),
        fallback_ops=MappingProxyType(dict(c.fallback_ops)),
        compile_causes=MappingProxyType(dict(c.compile_causes)),
        observation_sites=MappingProxyType(dict(c.observation_sites)),
        fallback_sites=MappingProxyType(dict(c.fallback_sites)),
        compile_timer=Timer.of(c.compile_times, c.compile_seconds),
        execute_timer=Timer.of(c.execute_times, c.execute_seconds),
        trace_timer=Timer.of(c.trace_times, c.trace_seconds),
        **{name: gauge() for name, gauge in GAUGES.items()},
    )


def reset_metrics() -> None:
    """Set every counter and timer back to zero (the compile cache is kept).

    Example:
        >>> import minilazy as ml
        >>> ml.reset_metrics(); ml.metrics().ops_recorded
        0
    """
    COUNTERS.reset()


def _ms(t: Timer) -> str:
    return (f"{t.count:>6} x  total {t.total * 1e3:9.2f} ms  p50 {t.p50 * 1e3:8.3f} ms  "
            f"p90 {t.p90 * 1e3:8.3f} ms  p99 {t.p99 * 1e3:8.3f} ms")


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def metrics_report() -> str:
    """A readable multi-line report of every counter and timer.

    Example:
        >>> import minilazy as ml
        >>> print(ml.metrics_report().splitlines()[0])
        minilazy metrics
    """
    m = metrics()

    def causes(d: Mapping[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or "-"

    lines = [
        "minilazy metrics",
        f"  ops recorded        {m.ops_recorded}   (backward passes replayed: "
        f"{m.backward_replays})",
        f"  barriers            {m.barriers}   ({causes(m.barrier_causes)})",
        f"  compiles            {m.compiles}   ({causes(m.compile_causes)})",
        f"  cache hits          {m.cache_hits}",
        f"  from disk           {m.disk_hits} of the compiles, {m.disk_writes} written to disk",
        f"  executions          {m.executions}",
        f"  to device           {m.transfers_to_device} transfers, {_kib(m.bytes_to_device)}",
        f"  to host             {m.transfers_to_host} transfers, {_kib(m.bytes_to_host)}",
        f"  donated buffers     {m.donations}",
        f"  live on devices     {m.live_buffers} buffers, {_kib(m.live_bytes)}",
        f"  fallbacks           {m.fallbacks}   ({causes(m.fallback_ops)})",
        "  observations that ran a barrier (hidden syncs), most frequent first:",
        *(f"    {n:6d} x  {site}" for site, n in sorted(m.observation_sites.items(),
                                                       key=lambda kv: -kv[1])[:5]),
        "  host fallbacks (ops run on the host, each after a barrier on its inputs), by line:",
        *(f"    {n:6d} x  {site}" for site, n in sorted(m.fallback_sites.items(),
                                                       key=lambda kv: -kv[1])[:5]),
        f"  trace time   {_ms(m.trace_timer)}",
        f"  compile time {_ms(m.compile_timer)}",
        f"  execute time {_ms(m.execute_timer)}",
    ]
    return "\n".join(lines)
