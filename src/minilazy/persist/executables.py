"""The runtime's half of the persistent compile cache: entries' keys, executables as bytes.

:class:`DiskStore` is what the compile cache asks on a miss (its
:class:`~minilazy.core.cache.Store`); ``import minilazy`` puts it there (:func:`install`). Beside
the runtime, and like it free to import jax. :func:`disk_entry` names a cut's entry from what
decides its program here (JAX's version, the devices, the processes); :func:`serialize` and
:func:`deserialize` turn an executable into an entry's payload and back, and make sure a program
read from disk never calls a kernel this process has not bound (jaxlib binds its LAPACK kernels only
while lowering a call to one: a program loaded unlowered would crash).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Final, cast

import jax
import jaxlib.version
import numpy as np
from jax.experimental import serialize_executable
from jaxlib import lapack

from minilazy.core import lowering
from minilazy.core.cache import CACHE, CompileCache
from minilazy.core.cut import Cut
from minilazy.core.lowering import jax_device, x64
from minilazy.core.runtime import Compiled, compiled
from minilazy.persist import diskcache, keys

_SAVE: Final = cast(Callable[[Any], tuple[bytes, Any, Any]], serialize_executable.serialize)
_LOAD: Final = cast(Callable[..., Any], serialize_executable.deserialize_and_load)  # untyped
_BIND_LAPACK: Final = cast(Callable[[str, Any], str], lapack.prepare_lapack_call)  # untyped
_LAPACK_TYPES: Final = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def disk_entry(c: Cut, donated: tuple[bool, ...]) -> keys.Entry:
    """The persistent cache's entry for ``c``: its key covers JAX, the devices, the processes.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> len(disk_entry(cut([(x * 3.0)._node], x.device), ()).name)
        64
    """
    d = jax_device(c.device)
    params = x64(lowering.abstract_params)(c)
    # the devices it runs on: the cut's, or those of the mesh its arguments are placed over
    spread = [p.sharding for p in params if isinstance(p.sharding, jax.sharding.NamedSharding)]
    devices = tuple(spread[0].mesh.devices.flat) if spread else (d,)
    about = {"jax": jax.__version__, "jaxlib": jaxlib.version.__version__, "platform": d.platform,
             "device_kind": d.device_kind, "platform_version": d.client.platform_version}
    return keys.entry(c, donated, about, [(p.shape, p.dtype, p.sharding) for p in params],
                           devices,
                           f"process {jax.process_index()} of {jax.process_count()}")


def _trees(e: keys.Entry) -> tuple[Any, Any]:
    # The executable's argument and result pytrees: (params, {}) and a tuple of results.
    return (jax.tree_util.tree_structure((tuple(range(e.inputs)), {})),
            jax.tree_util.tree_structure(tuple(range(e.outputs))))


def serialize(executable: Any, e: keys.Entry) -> bytes | None:
    """An executable as bytes for the persistent cache; ``None`` if it must not be kept.

    The bytes start with the custom calls it makes (a JSON line), for :func:`deserialize` to
    bind first. A program calling a kernel other than XLA's own or jaxlib's LAPACK is not kept:
    a process that loads it without lowering it may not have that kernel bound.

    Example:
        >>> import minilazy as ml, numpy as np
        >>> from minilazy.core.cut import cut
        >>> from minilazy.core.lowering import lower
        >>> from minilazy.core.runtime import compile_lowered, execute
        >>> x = ml.asarray(np.eye(2) * 4.0)
        >>> c = cut([ml.linalg.cholesky(x)._node], x.device)
        >>> payload = serialize(compile_lowered(lower(c), c.device).executable, disk_entry(c, ()))
        >>> payload.splitlines()[0]  # the custom calls it makes
        b'["lapack_dpotrf_ffi"]'
        >>> loaded = deserialize(payload, disk_entry(c, ()), ())
        >>> np.asarray(execute(loaded, [p.payload for p in c.params])[0]).tolist()
        [[2.0, 0.0], [0.0, 2.0]]
    """
    calls = sorted(set(re.findall(r'custom_call_target="([^"]+)"', executable.as_text())))
    if not all(c.startswith("__") or c in _lapack_kernels() for c in calls):
        return None
    payload, *trees = _SAVE(executable)
    if tuple(trees) != _trees(e):
        raise ValueError(f"pytrees {trees}, where loading assumes {_trees(e)}")
    return json.dumps(calls).encode() + b"\n" + payload


def deserialize(payload: bytes, e: keys.Entry, donated: tuple[bool, ...]) -> Compiled:
    """An executable back from the persistent cache, loaded onto its own devices.

    Raises ``ValueError`` if it calls a kernel minilazy cannot bind first (see
    :func:`serialize`, and its example).
    """
    head, _, payload = payload.partition(b"\n")
    for call in json.loads(head):
        if call.startswith("__"):
            continue  # XLA's own runtime implements it
        if call not in _lapack_kernels():
            raise ValueError(f"it calls {call!r}, which minilazy cannot bind before loading")
        # jaxlib binds a LAPACK kernel to SciPy's only when lowering a call to it; a program
        # loaded unlowered would call through a null pointer (a segfault). Bind it as lowering does.
        _BIND_LAPACK(call[8:], np.dtype(_LAPACK_TYPES[call[7]]))
    # on its own devices: else it expects a shard on every device
    executable = x64(_LOAD)(payload, *_trees(e), e.devices[0].client, e.devices)
    return compiled(executable, donated)


@functools.cache
def _lapack_kernels() -> frozenset[str]:
    # jaxlib's LAPACK custom calls: "lapack_" + a type letter + a kernel, e.g. lapack_dgeqrf_ffi.
    names = (name for name, _, _ in lapack.registrations().get("cpu", []))
    return frozenset(n for n in names if n[:7] == "lapack_" and n[7:8] in _LAPACK_TYPES)


class DiskStore:
    """The persistent cache as a :class:`~minilazy.core.cache.Store`, in ``cache_dir()``.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cache import CACHE
        >>> isinstance(CACHE.store, DiskStore)  # import minilazy installed it
        True
    """

    def __init__(self) -> None:
        # The entry of the last miss, by the cut's structure (which holds no node, so no
        # buffer), until its save: the compile between them runs under the engine lock, and
        # naming an entry writes the whole program out, so it is done once per program.
        self._missed: tuple[tuple[object, ...], tuple[bool, ...], keys.Entry] | None = None

    def load(self, c: Cut, donated: tuple[bool, ...]) -> Compiled | None:
        """The program an earlier process kept for ``c``; ``None`` if off, or on a miss.

        Never raises (but what a signal handler raises): the disk cache never fails a program.
        """
        self._missed = None
        try:
            if diskcache.SETTINGS.failed or diskcache.cache_dir() is None:
                return None
            e = disk_entry(c, donated)
            found = diskcache.load(e, lambda payload: deserialize(payload, e, donated))
        except Exception as error:  # whatever it is: a warning, and XLA compiles the program
            diskcache.trouble("reading the persistent cache", error)
            return None
        if found is None:
            self._missed = (c.structure, donated, e)
        return found

    def save(self, c: Cut, donated: tuple[bool, ...], entry: Compiled) -> bool:
        """Write ``entry``'s executable for later processes; whether it was written.

        Never raises (but what a signal handler raises), as :meth:`load`.
        """
        missed, self._missed = self._missed, None
        try:
            if diskcache.SETTINGS.failed or diskcache.cache_dir() is None:
                return False
            e = missed[2] if missed and missed[:2] == (c.structure, donated) else \
                disk_entry(c, donated)
            return diskcache.save(e, lambda: serialize(entry.executable, e))
        except Exception as error:
            diskcache.trouble("writing to the persistent cache", error)
            return False


def install(cache: CompileCache = CACHE) -> None:
    """Put the persistent cache under ``cache`` (what ``import minilazy`` does, once).

    Example:
        >>> from minilazy.core.cache import CompileCache
        >>> cache = CompileCache()
        >>> install(cache)
        >>> type(cache.store).__name__
        'DiskStore'
    """
    cache.store = DiskStore()
