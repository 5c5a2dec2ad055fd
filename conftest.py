"""Collection: the shipped modules whose doctests cannot run in every test process."""

import importlib

ADAPTERS = "src/minilazy/conformance/adapters"

# The guide's adapter turns on jax_enable_x64 for its whole process when imported, as an outside
# adapter may; minilazy must not (LZ-LOW-002), so it is checked in a subprocess of its own
# (tests/test_conformance_libraries.py).
collect_ignore = [f"{ADAPTERS}/jax_numpy.py"]

# tinygrad and MLX are optional: their adapters' examples run where the library is installed.
for _module in ("tinygrad_adapter", "mlx_adapter"):
    try:
        importlib.import_module(f"minilazy.conformance.adapters.{_module}")
    except ImportError:
        collect_ignore.append(f"{ADAPTERS}/{_module}.py")
