"""Adapters that ship with the oracle: minilazy on each platform, and its NumPy reference.

Name one with ``--lazy-impl``: ``minilazy.conformance.adapters.minilazy_adapter:cpu`` (or
``:gpu``, ``:tpu``) and ``minilazy.conformance.adapters.reference_adapter:reference``. They use
minilazy's public API only.
"""
