"""What ``python -m minilazy.launch`` tells each process it starts: the cluster it is part of.

Written by the launcher, read by :mod:`minilazy.scaleout.processes` (which joins the others
through ``jax.distributed``). Plain environment variables, so that any launcher (a job
scheduler, a shell loop) can set them. Never imports jax: the launcher reads it too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

ENV_COORDINATOR = "JAX_COORDINATOR_ADDRESS"  # jax.distributed.initialize reads it itself
ENV_NUM_PROCESSES = "MINILAZY_NUM_PROCESSES"
ENV_PROCESS_ID = "MINILAZY_PROCESS_ID"


class Cluster(NamedTuple):
    """Where this process stands among the processes of one launch.

    Example:
        >>> Cluster("127.0.0.1:1234", 2, 0).num_processes
        2
    """

    coordinator: str
    num_processes: int
    process_id: int


def env(environ: Mapping[str, str] | None = None) -> Cluster | None:
    """What :func:`launch` told this process (read from ``os.environ``), or None if nothing.

    Raises ``ValueError`` when the variables are there but incomplete or inconsistent.

    Example:
        >>> env({ENV_COORDINATOR: "127.0.0.1:1234", ENV_NUM_PROCESSES: "2", ENV_PROCESS_ID: "1"})
        Cluster(coordinator='127.0.0.1:1234', num_processes=2, process_id=1)
        >>> env({}) is None
        True
    """
    e = os.environ if environ is None else environ
    if ENV_NUM_PROCESSES not in e:
        return None
    try:
        c = Cluster(e[ENV_COORDINATOR], int(e[ENV_NUM_PROCESSES]), int(e[ENV_PROCESS_ID]))
    except (KeyError, ValueError) as err:
        raise ValueError(f"incomplete or malformed multi-process environment: {err!r}") from None
    if not 0 <= c.process_id < c.num_processes:
        raise ValueError(f"{ENV_PROCESS_ID}={c.process_id} is not in [0, {c.num_processes})")
    return c

