"""The devices there are, and joining the other processes of a launch (a part of the runtime).

A process started by ``python -m minilazy.launch`` (:mod:`minilazy.scaleout.cluster` says which)
joins the others through ``jax.distributed`` before JAX starts (``import minilazy`` installs
:func:`join` into the runtime); then :func:`devices` are every process's, and a mesh can span
them all. Without this part the runtime runs one process alone. On one host,
:func:`use_cpu_devices` splits the CPU into several devices, to try a mesh.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, cast

import jax

from minilazy.core import runtime
from minilazy.core.ir import Device
from minilazy.core.state import ENGINE
from minilazy.scaleout.cluster import env


class Joined:
    """Whether this process has joined its launch (once, before JAX starts).

    Example:
        >>> Joined().done
        False
    """

    def __init__(self) -> None:
        self.done = False


JOINED: Final = Joined()


def join() -> None:
    """Join the other processes of ``python -m minilazy.launch``, once, before JAX starts.

    Reads :func:`env`; does nothing in a process not launched so, or whose script already
    called ``jax.distributed.initialize``. Blocks until every process has joined.

    Example:
        >>> join()  # not launched: nothing to do
    """
    if JOINED.done:
        return
    c = env()
    if c is not None and not jax.distributed.is_initialized():
        try:
            jax.distributed.initialize(c.coordinator, c.num_processes, c.process_id)
        except RuntimeError as e:
            raise RuntimeError(
                f"minilazy: process {c.process_id} of {c.num_processes} cannot join the others: "
                "JAX had already started here (a JAX call before minilazy's first use)") from e
    JOINED.done = True


def _forked() -> None:
    ENGINE.forked = True  # JAX's threads did not survive: raise at the next use, do not hang


def start() -> None:
    """What the runtime calls before each use of JAX: :func:`join`; refuse a ``fork()`` child.

    Example:
        >>> start()  # this process may use JAX
    """
    join()
    if not ENGINE.started:  # the first use: from now on a fork() child cannot run JAX
        ENGINE.started = True
        os.register_at_fork(after_in_child=_forked)
    if ENGINE.forked:
        raise RuntimeError(
            "minilazy cannot run in a process forked after JAX started (os.fork, or "
            "multiprocessing's 'fork' start method): JAX's threads do not survive fork. "
            "Start workers with multiprocessing.get_context('spawn') or 'forkserver'.")


def install() -> None:
    """Have the runtime call :func:`start` before each use of JAX.

    Example:
        >>> install()
        >>> runtime.PROCESSES.start is start
        True
    """
    runtime.PROCESSES.start = start


def devices(platform: str | None = None) -> list[Device]:
    """The devices of ``platform`` (``cpu``, ``gpu``, ``tpu``), or of JAX's default platform.

    Raises ``RuntimeError`` naming the platform when it has no devices here.

    Example:
        >>> devices("cpu")[0]
        Device(platform='cpu', index=0)
    """
    join()
    try:
        found = jax.devices(platform)
    except RuntimeError as e:
        raise RuntimeError(f"no {platform} devices available: {e}") from None
    return [runtime.interned(d.platform, index) for index, d in enumerate(found)]  # (one platform)


def platforms() -> list[str]:
    """The JAX platforms available here, e.g. ``['cpu']`` or ``['gpu', 'cpu']``.

    Example:
        >>> "cpu" in platforms()
        True
    """
    join()
    found = []
    for name in ("cpu", "gpu", "tpu"):
        try:
            if jax.devices(name):
                found.append(name)
        except RuntimeError:
            pass
    return found


def use_cpu_devices(n: int) -> None:
    """Split the host into ``n`` CPU devices (``XLA_FLAGS``' device count), before JAX starts.

    Example:
        >>> use_cpu_devices(8)
        Traceback (most recent call last):
        ...
        RuntimeError: use_cpu_devices: JAX has started in this process; ...
    """
    try:
        cast(Callable[[str, int], None], jax.config.update)("jax_num_cpu_devices", n)
    except RuntimeError:
        raise RuntimeError("use_cpu_devices: JAX has started in this process; call it first, "
                           "or set XLA_FLAGS=--xla_force_host_platform_device_count=N") from None
