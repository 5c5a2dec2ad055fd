"""The engine's pipeline, in reading order (docs/internals.md).

The IR as data (``dtypes``, ``device``, ``attrs``, ``ir``; ``metrics`` and ``state``, the
counters and the shared state), the shape rules of core's ops (``infer``, with NumPy's loop
typing; op families add theirs from ``minilazy.ops``), the
cut and its key (``cut``, ``donation``), the lowering to XLA (``lowering``), one device
(``runtime``), the compile cache (``cache``), the barrier (``barrier``), and on top the tracer
that records ops and whose observations call the barrier (``tracer``, with host data). The
tensor's surface (operators, indexing, methods, NumPy's protocols) is ``minilazy.api.tensor``'s.
Core imports nothing of minilazy outside itself; a module imports only those before it in
:data:`PIPELINE` (``tests/test_structure.py`` checks both).

Example:
    >>> from minilazy.core import PIPELINE
    >>> PIPELINE[0], PIPELINE[-1]
    ('dtypes', 'tracer')
"""

# Core's modules in reading order, grouped by stage: the docs read it, the structure test holds
# the imports to it.
PIPELINE = (
    "dtypes", "attrs", "ir", "metrics", "state",                             # the IR as data
    "infer",                                                                 # op rules
    "cut",                                                                   # cut and key
    "lowering",                                                              # to XLA
    "runtime", "cache", "barrier",                                           # run, cache, barrier
    "tracer",                                                                # record, observe
)
