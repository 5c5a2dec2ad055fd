"""The LazyTensor conformance oracle: the spec registry and a pytest plugin for any implementation.

Nothing here imports minilazy's engine: expected values come from NumPy alone.
"""
