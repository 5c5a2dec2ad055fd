"""The LazyTensor conformance oracle: the spec registry and a pytest plugin for any implementation.

Run it with ``pytest --pyargs minilazy.conformance --lazy-impl=package.module:factory``. The
parts, in the order a reader meets them:

- the spec: ``registry`` (the rules and ops, from ``rules.toml`` and ``ops.toml``);
- the adapters: ``adapter`` (the protocol an implementation plugs in through), ``base`` (the
  generic parts of one), ``adapters/`` (the shipped ones: minilazy, its reference interpreter,
  JAX's NumPy, tinygrad, MLX, ``torch._lazy``, PyTorch/XLA) and ``toy`` (a lazy tensor from
  scratch);
- ``oracle/``: what NumPy says and how close is close enough; ``strategies`` (Hypothesis inputs),
  ``matrices``, ``windows``, ``variants``, ``programs/`` and ``programgen`` (random programs:
  their form, JSON, interpreter and printer, and their generator);
- ``plugin`` (the pytest side) and ``suite/`` (the spec tests);
- ``mutate/``: the mutation score, one catalogue of the engine's mutants and the toy's;
- ``grade``: the course's grader;
- ``tools/``: the report, reproducers for bug trackers, crash and hang isolation, expected
  failures.

Nothing here imports minilazy's engine but the minilazy adapters and ``mutate/`` (whose engine
mutants patch it): expected values come from NumPy alone.
"""
