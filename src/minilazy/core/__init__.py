"""The engine's pipeline: record, cut, hash, lower, run (docs/internals.md reads it in that order).

Twelve modules, listed in :data:`PIPELINE` bottom up, in the order of their imports: the IR as
data (``dtypes``, ``attrs``, ``ir``; ``metrics`` and ``state``, the counters and the shared
state), the shape rules of core's ops (``infer``; op families add theirs from
``minilazy.ops``), the cut and its key (``cut``), the lowering to XLA (``lowering``), the
device runtime (``runtime``), the compile cache (``cache``), the barrier (``barrier``), and on
top the tracer that records ops and whose observations call the barrier (``tracer``). Parts
installed at assembly (``minilazy.parts``, ``minilazy.scaleout``) fill slots core keeps; the
tensor's surface is ``minilazy.api``'s. Core imports nothing of minilazy outside itself; a
module imports only those before it in :data:`PIPELINE` (``tests/test_structure.py`` checks
both).

Example:
    >>> from minilazy.core import PIPELINE
    >>> PIPELINE[0], PIPELINE[-1], len(PIPELINE)
    ('dtypes', 'tracer', 12)
"""

# Core's modules bottom up, grouped by stage: the structure test holds the imports to this order.
PIPELINE = (
    "dtypes", "attrs", "ir", "metrics", "state",                             # the IR as data
    "infer",                                                                 # op rules
    "cut",                                                                   # cut and key
    "lowering",                                                              # to XLA
    "runtime", "cache", "barrier",                                           # run, cache, barrier
    "tracer",                                                                # record, observe
)
