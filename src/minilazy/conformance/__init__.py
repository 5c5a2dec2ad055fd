"""The LazyTensor conformance oracle: the spec registry and a pytest plugin for any implementation.

Run it with ``pytest --pyargs minilazy.conformance --lazy-impl=package.module:factory``. The
pieces, in the order a reader meets them: ``registry`` (the rules and ops of the spec, from
``rules.toml`` and ``ops.toml``), ``adapter`` (the protocol an implementation plugs in through),
``oracle`` (what NumPy says, and how close is close enough), ``strategies`` (Hypothesis inputs),
``programs`` and ``programgen`` (random programs: their form, JSON, interpreter and printer,
and their generator), ``plugin`` and ``report`` (the pytest side), ``suite/`` (the spec tests),
``adapters/`` (minilazy and its reference interpreter), ``toy`` (a lazy tensor from scratch) and
``mutants`` (the toy, broken on purpose).

Nothing here imports minilazy's engine, but for the minilazy adapters: expected values come
from NumPy alone.
"""
