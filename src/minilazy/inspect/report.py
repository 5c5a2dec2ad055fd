"""The metrics as users read them: a frozen snapshot of the counters, and a readable report.

Above the runtime, whose live device buffers the snapshot counts beside the counters that every
stage bumps (:data:`~minilazy.core.metrics.COUNTERS`, at the bottom of core). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from types import MappingProxyType

from minilazy.core import runtime
from minilazy.core.metrics import COUNTERS, Metrics, Timer


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
