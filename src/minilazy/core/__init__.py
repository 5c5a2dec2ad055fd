"""The engine's pipeline, in reading order (docs/internals.md).

The IR as data (``dtypes``, ``device``, ``attrs``, ``ir``; ``metrics`` and ``state``, the
counters and the shared state), the rules of every op (``infer`` and the tables beside it), the
cut and its key (``cut``, ``donation``), the lowering to XLA (``lowering``), one device
(``runtime``), the compile cache (``compile``), the barrier (``barrier``), and on top the tensor
that records ops and calls the barrier (``tensor``, with host data, indexing and interop). Core
imports nothing of minilazy outside itself; a module imports only those before it here.
"""
