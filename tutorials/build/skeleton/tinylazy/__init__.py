"""tinylazy, the student skeleton: every ``NotImplementedError`` is yours to write.

Start with assignment 1 (``tutorials/build/README.md``); the grader says what passes.

Layers, each on the ones before it: :mod:`ir` (nodes) -> :mod:`tracer` (tensors that record)
-> :mod:`barrier` (live tensors, ``mark_step``, observations) -> :mod:`graph` (the cut and its
key) -> :mod:`lowering` (XLA programs through JAX, cached) -> :mod:`runtime` (transfers, runs,
donation) -> :mod:`autodiff` (gradients as lazy graphs) -> :mod:`adapter` (the oracle's view).
:mod:`ops` is given infrastructure: the op tables and NumPy's shape inference.
"""
