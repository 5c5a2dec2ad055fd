"""What names an entry of the persistent compile cache: the program written out, and its key.

Below :mod:`minilazy.persist.diskcache`. :func:`program_text` writes the cut out canonically (every
node's op, attributes, shape, dtype and operand positions; the parameter layout; the outputs; the
device); :func:`entry` hashes that with what else decides the program (JAX version, device kind,
shardings, minilazy's own source) into a file name stable across processes. Never Python's
``hash``, never imports jax (the runtime says what it knows of the devices).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from minilazy.core.cut import Cut
from minilazy.persist.diskformat import FORMAT


def program_text(c: Cut, donated: tuple[bool, ...]) -> str:
    """The cut's program, written out canonically: the same text in every process.

    Never Python's ``hash`` (salted for ``str``, and by address for ``None`` before 3.12): each
    node's op, ``repr`` of its attributes, shape, dtype and operand positions, one per line,
    then which nodes are parameters and outputs, the device and the donation mask.

    Example:
        >>> import minilazy as ml, numpy as np
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray(np.ones(2, np.float32))
        >>> print(program_text(cut([(x * 2.0 + x)._node], x.device), (False,)))
        data NoAttrs() (2,) float32 []
        scalar NoAttrs() () float32 []
        multiply NoAttrs() (2,) float32 [0, 1]
        add NoAttrs() (2,) float32 [2, 0]
        params [0] scalars [1] groups [('float32', 1)]
        outputs (3,) device cpu:0 donated (False,)
    """
    p = c.positions
    lines = [f"{n.op.value} {n.attrs!r} {n.shape} {n.dtype.name} {[p[o] for o in n.operands]}"
             for n in c.order]
    lines.append(f"params {[p[n] for n in c.params]} scalars {[p[n] for n in c.scalars]} "
                 f"groups {[(d.name, k) for d, k in c.groups]}")
    lines.append(f"outputs {c.outputs} device {c.device} donated {donated}")
    return "\n".join(lines)


class Entry(NamedTuple):
    """A program's entry in the persistent cache: its name, and what loading it needs.

    Example:
        >>> Entry("0" * 64, {}, (), 1, 1).inputs
        1
    """

    name: str  # SHA-256 of its program and environment: the same in every process
    about: dict[str, str]  # versions and device kind, to name a foreign entry in a warning
    devices: tuple[Any, ...]  # the JAX devices the program runs on, in its mesh's order
    inputs: int  # how many parameters it takes
    outputs: int


def entry(c: Cut, donated: tuple[bool, ...], about: dict[str, str],
          params: Sequence[tuple[tuple[int, ...], object, Any]], devices: tuple[Any, ...],
          process: str) -> Entry:
    """The entry of ``c``'s program, from what the runtime knows of the devices.

    The key covers the program text, ``about`` (JAX and jaxlib versions, device kind, platform
    version), each parameter's shape, dtype and sharding with its device ids (a program for 8
    devices never loads for 1), ``process`` (its place in a multi-process run), ``XLA_FLAGS``
    and the engine's source.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> entry(cut([(x + 1.0)._node], x.device), (), {}, [], (), "").outputs
        1
    """
    placed = [f"{shape} {dtype} {_placement(s)}" for shape, dtype, s in params]
    text = (f"{FORMAT}\n{_fingerprint()}\n{about} {process} XLA_FLAGS="
            f"{os.environ.get('XLA_FLAGS', '')!r} {placed}\n{program_text(c, donated)}")
    return Entry(hashlib.sha256(text.encode()).hexdigest(), about, devices, len(params),
                 len(c.outputs))


def _placement(s: Any) -> str:
    # A JAX sharding's repr names its mesh's axes, not its devices: add their ids, in order.
    mesh = getattr(s, "mesh", None)
    found = list(mesh.devices.flat) if mesh is not None else sorted(
        s.device_set, key=lambda d: d.id)
    return f"{s!r} on devices {[d.id for d in found]}"


@functools.cache
def _fingerprint() -> str:
    # The engine's source (core's lowering, this package's formats): a lowering rule that changed
    # must never load an old program.
    digest = hashlib.sha256()
    package = Path(__file__).parent.parent
    for path in sorted([*package.glob("core/*.py"), *package.glob("persist/*.py")]):
        name = path.relative_to(package).as_posix()
        try:
            digest.update(name.encode() + b"\0" + path.read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()
