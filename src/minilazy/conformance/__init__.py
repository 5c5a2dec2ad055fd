"""The LazyTensor conformance oracle: the spec registry, and a pytest plugin that checks any
lazy tensor implementation against eager NumPy and the spec's rules.

Nothing here imports minilazy's engine: expected values come from NumPy alone.
"""
