"""Metrics: the counters and timers every stage reports into.

Stages bump plain attributes of one mutable :data:`COUNTERS` (cheap enough for the recording
hot path); users read a frozen snapshot, ``ml.metrics()`` (``minilazy.introspect.report``).
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Final

_SAMPLES: Final = 4096  # timer samples kept for percentiles; bounded so long runs stay flat


class _Counters:
    """The live, mutable counters (internal: users see ``ml.metrics()`` snapshots)."""

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
