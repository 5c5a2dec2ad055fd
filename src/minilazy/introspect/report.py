"""The metrics as users read them: a frozen snapshot of the counters, and a readable report.

Above the runtime, whose live device buffers the snapshot counts beside the counters that every
stage bumps (:data:`~minilazy.core.metrics.COUNTERS`, at the bottom of core). Never imports jax.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from minilazy.core import runtime
from minilazy.core.metrics import COUNTERS


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


def metrics() -> Metrics:
    """A frozen snapshot of the counters since the last :func:`reset_metrics`.

    Example:
        >>> import minilazy as ml
        >>> isinstance(ml.metrics().compiles, int)
        True
    """
    c = COUNTERS
    buffers, nbytes = runtime.live()
    scalars = {f.name: getattr(c, f.name) for f in fields(Metrics) if hasattr(c, f.name)
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
        live_buffers=buffers, live_bytes=nbytes,
    )


def _ms(t: Timer) -> str:
    if not t.count:
        return "  none"
    return (f"{t.count:>6} x  total {t.total * 1e3:9.2f} ms  p50 {t.p50 * 1e3:8.3f} ms  "
            f"p90 {t.p90 * 1e3:8.3f} ms  p99 {t.p99 * 1e3:8.3f} ms")


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _top(counts: Mapping[str, int]) -> list[str]:
    """The five most frequent of ``counts``, one line each; ``none`` if there are none."""
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    return [f"    {n:6d} x  {site}" for site, n in ranked] or ["    none"]


def metrics_report() -> str:
    """A readable multi-line report of every counter and timer; an empty list says ``none``.

    ``compiles`` are XLA's; a program an earlier process compiled, which this one loaded from
    disk, is counted under ``persistent cache``. The causes after ``compiles`` are those of
    every program not found in memory, compiled or loaded.

    Example:
        >>> import minilazy as ml
        >>> ml.reset_metrics()
        >>> lines = ml.metrics_report().splitlines()
        >>> lines[0], lines[-4].strip()  # no host fallbacks: the list says so
        ('minilazy metrics', 'none')
    """
    m = metrics()

    def causes(d: Mapping[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or \
            "none"

    made = "" if not m.disk_hits else f"{m.compiles + m.disk_hits} new, compiled or loaded: "
    lines = [
        "minilazy metrics",
        f"  ops recorded        {m.ops_recorded}   (backward passes replayed: "
        f"{m.backward_replays})",
        f"  barriers            {m.barriers}   ({causes(m.barrier_causes)})",
        f"  compiles            {m.compiles}   ({made}{causes(m.compile_causes)})",
        f"  cache hits          {m.cache_hits}",
        f"  persistent cache    {m.disk_hits} loaded ({m.load_seconds * 1e3:.2f} ms), "
        f"{m.disk_writes} written",
        f"  executions          {m.executions}",
        f"  to device           {m.transfers_to_device} transfers, {_kib(m.bytes_to_device)}",
        f"  to host             {m.transfers_to_host} transfers, {_kib(m.bytes_to_host)}",
        f"  donated buffers     {m.donations}",
        f"  live on devices     {m.live_buffers} buffers, {_kib(m.live_bytes)}",
        f"  fallbacks           {m.fallbacks}   ({causes(m.fallback_ops)})",
        "  observations that ran a barrier (hidden syncs), most frequent first:",
        *_top(m.observation_sites),
        "  host fallbacks (ops run on the host, each after a barrier on its inputs), by line:",
        *_top(m.fallback_sites),
        f"  trace time   {_ms(m.trace_timer)}",
        f"  compile time {_ms(m.compile_timer)}",
        f"  execute time {_ms(m.execute_timer)}",
    ]
    return "\n".join(lines)
