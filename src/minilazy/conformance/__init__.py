"""The LazyTensor conformance oracle: the spec registry and a pytest plugin for any implementation.

Run it with ``pytest --pyargs minilazy.conformance --lazy-impl=package.module:factory``. Three
audiences, three places:

- **implementers**: this package's top level. The spec, ``registry`` (the rules and ops, from
  ``rules.toml`` and ``ops.toml``); ``adapter`` (the protocol an implementation plugs in
  through, with ``extensions`` and ``dtype_policy``), ``base`` (the generic parts of one) and
  ``adapters/`` (the shipped ones: minilazy, its reference interpreter, JAX's NumPy, tinygrad,
  MLX, ``torch._lazy``, PyTorch/XLA, two JavaScript libraries); ``plugin`` (the pytest side);
  ``protocol`` and ``serve`` (the process protocol, for implementations in other languages) and
  ``corpus`` (the programs as JSON, for those without Python);
- **students**: ``grade/``, the course's grader (``python -m minilazy.conformance.grade``);
- **the oracle's own quality checks**: ``mutate/``, the mutation score: ``mutate.toy`` (a lazy
  tensor from scratch, the oracle's independent test subject), its mutants and the engine's
  (``python -m minilazy.conformance.mutate``).

What they share: ``suite/`` (the spec tests), ``oracle/`` (what NumPy says and how close is close
enough: Hypothesis strategies, matrices, windows, random programs) and ``tools/`` (the report,
reproducers for bug trackers, crash and hang isolation, expected failures).

Nothing here imports minilazy's engine but the minilazy adapters and ``mutate/`` (whose engine
mutants patch it): expected values come from NumPy alone.
"""
