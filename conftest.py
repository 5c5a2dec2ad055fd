"""Collection: 8 CPU devices for the sharding tests, and modules whose doctests cannot run.

The shipped modules whose doctests cannot run in every test process are left out.
"""

import atexit
import importlib
import os
import shutil
import tempfile

# XLA reads this when JAX starts its CPU client: the test session has 8 CPU devices, so that
# sharded programs run partitioned over a mesh (tests/scaleout/test_sharding.py), as on 8
# accelerators.
_FLAG = "--xla_force_host_platform_device_count=8"
if _FLAG.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}".strip()

# The persistent compile cache is off for the session and the processes it starts: a test that
# injects a fault into XLA's compile, or times one, must not find a program an earlier run left
# on disk, and tests never fill the user's cache. tests/persist/test_diskcache.py turns it on, in
# temporary directories. The secret that signs this user's entries (minilazy.persist.trust) is
# made in a temporary cache root too, never in the user's.
os.environ["MINILAZY_CACHE_DIR"] = ""
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="minilazy-tests-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)

ADAPTERS = "src/minilazy/conformance/adapters"

# The guide's adapter turns on jax_enable_x64 for its whole process when imported, as an outside
# adapter may; minilazy must not (LZ-LOW-002), so it is checked in a subprocess of its own
# (tests/conformance/test_conformance_libraries.py).
collect_ignore = [f"{ADAPTERS}/jax_numpy.py"]

# tinygrad and MLX are optional: their adapters' examples run where the library is installed.
for _module in ("tinygrad_adapter", "mlx_adapter"):
    try:
        importlib.import_module(f"minilazy.conformance.adapters.{_module}")
    except ImportError:
        collect_ignore.append(f"{ADAPTERS}/{_module}.py")

# minilazy.pytorch needs the torch extra: its examples run where torch is installed.
if importlib.util.find_spec("torch") is None:
    collect_ignore.append("src/minilazy/pytorch")
