"""The conformance suite: spec tests that any implementation can run through its adapter.

Collected by ``pytest --pyargs minilazy.conformance``; every test names the rules it checks with
``@pytest.mark.spec`` and takes the implementation from the ``adapter`` fixture of the plugin.
Expected values come from NumPy alone: nothing here imports minilazy's engine.
"""
