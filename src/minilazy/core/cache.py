"""The compile cache: a bounded LRU of compiled programs, over an optional second level.

Keyed by the cut's key and the donation mask; a hit never re-traces, and is checked against
the structure it was compiled for. On a miss it asks its :class:`Store` (the persistent cache,
:mod:`minilazy.persist`), then lowers and compiles. Never imports jax.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Final, Protocol

from minilazy.core import lowering, runtime
from minilazy.core.cut import Cut
from minilazy.core.metrics import COUNTERS
from minilazy.core.runtime import Compiled


class Store(Protocol):
    """Programs kept beyond this process, under the in-memory cache (one level down)."""

    def load(self, c: Cut, donated: tuple[bool, ...]) -> Compiled | None:
        """The program kept for ``c``; ``None`` if there is none (or it cannot be used)."""

    def save(self, c: Cut, donated: tuple[bool, ...], entry: Compiled) -> bool:
        """Keep ``entry``, the program just compiled for ``c``; whether it was written."""


class CompileCache:
    """A bounded LRU of compiled programs keyed by (cut key, donation mask).

    At most ``capacity`` programs are held; each time as many have been evicted, JAX's own
    caches (traces of programs long evicted) are emptied too (``runtime.forget_traces``).

    Example:
        >>> cache = CompileCache(capacity=2)
        >>> len(cache), cache.capacity
        (0, 2)
    """

    def __init__(self, capacity: int = 1024, store: Store | None = None) -> None:
        self.capacity = capacity
        self.store = store  # asked on a miss, told of each new program
        self._evicted = 0  # programs evicted since JAX's own caches were last emptied
        self._entries: OrderedDict[tuple[int, tuple[bool, ...]], Compiled] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, c: Cut, donated: tuple[bool, ...]) -> Compiled | None:
        """The program cached for ``c``, marked most recently used; ``None`` on a miss.

        A hit is checked against the structure it was compiled for: keys that collide never
        share a program (the second one compiles, and replaces it).
        """
        entry = self._entries.get((c.key, donated))
        if entry is None or entry.structure != c.structure:
            return None
        entry.structure = c.structure  # equal: a plan's next cut then compares by identity
        self._entries.move_to_end((c.key, donated))
        return entry

    def compile(self, c: Cut, donated: tuple[bool, ...]) -> Compiled:
        """Compile ``c`` and cache it, evicting the least recently used entry when full.

        With a :class:`Store`, a program an earlier process compiled is loaded instead (one of
        ``disk_hits``, not of ``compiles``), and a new one is written there.
        """
        start = time.perf_counter()
        entry = None if self.store is None else self.store.load(c, donated)
        if entry is not None:
            COUNTERS.disk_hits += 1
            COUNTERS.load_seconds += time.perf_counter() - start
        else:
            begin = time.perf_counter()
            lowered = lowering.lower(c, donated)
            traced = time.perf_counter() - begin
            entry = runtime.compile_lowered(lowered, c.device, donated)
            seconds = time.perf_counter() - start - traced  # with a disk miss: a file not found
            COUNTERS.compiles += 1
            COUNTERS.compile_seconds += seconds
            COUNTERS.compile_times.append(seconds)
            COUNTERS.trace_seconds += traced
            COUNTERS.trace_times.append(traced)
            if self.store is not None and self.store.save(c, donated, entry):
                COUNTERS.disk_writes += 1
        entry.structure = c.structure
        self._entries[(c.key, donated)] = entry
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
            self._evicted += 1
        if self._evicted >= self.capacity:  # JAX's caches still hold traces of what we evicted
            self._evicted = 0
            runtime.forget_traces()
        return entry

    def reset(self) -> None:
        """Forget every compiled program (the persistent cache keeps its own)."""
        self._entries.clear()


CACHE: Final = CompileCache()
