"""A persistent compile cache never fails a program: whatever its directory holds, or is.

Capability ``persistent``. The cache is pointed at places that cannot hold it (a regular file, a
directory below a file, one removed after use) and at entries damaged after they were written;
each time, a program computes what NumPy computes, and a tensor pending before the barrier too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.suite.util import settle

Array = np.ndarray[Any, Any]
DATA = np.linspace(-2.0, 2.0, 12, dtype=np.float32).reshape(3, 4)


@pytest.fixture
def place(adapter: OptionalAdapter) -> Iterator[Path]:
    """A fresh temporary directory; the cache is turned off again afterwards."""
    with tempfile.TemporaryDirectory(prefix="lazy-cache-") as d:
        yield Path(d)
        adapter.persist(None)


def _step(adapter: OptionalAdapter, scale: float) -> None:
    """A tensor pending before the barrier, then a program run: both read back as NumPy's."""
    pending = adapter.apply("multiply", adapter.from_numpy(DATA), scale)
    adapter.barrier()  # (where the cache is looked in, and written to)
    again = adapter.apply("add", adapter.apply("tanh", adapter.from_numpy(DATA)), scale)
    assert_close(adapter.to_numpy(pending), numpy_apply("multiply", DATA, scale), "ulp")
    assert_close(adapter.to_numpy(again), numpy_apply("add", np.tanh(DATA), scale), "ulp")


def _a_file(root: Path) -> str:
    (root / "file").write_bytes(b"not a directory")
    return str(root / "file")


def _below_a_file(root: Path) -> str:
    return os.path.join(_a_file(root), "cache")


PLACES: dict[str, Callable[[Path], str]] = {
    "a regular file": _a_file, "a directory below a file": _below_a_file,
    "a name with a NUL byte": lambda root: str(root / "bad\0name"),  # no such path can exist
    "a device": lambda root: "/dev/null",
}


@pytest.mark.spec("LZ-CACHE-010")
@pytest.mark.ops("multiply", "add", "tanh")
@pytest.mark.parametrize("where", sorted(PLACES))
def test_a_cache_that_cannot_be_kept_there_fails_nothing(adapter: OptionalAdapter, place: Path,
                                                         where: str) -> None:
    settle(adapter)
    try:
        adapter.persist(PLACES[where](place))
    except (ValueError, TypeError, OSError) as e:  # refused where it is asked for: allowed
        pytest.skip(f"persist refuses {where} at the call: {type(e).__name__}: {e}")
    for scale in (1.5, -0.25):
        adapter.reset()  # the in-memory cache cold: the next barrier asks the persistent one
        _step(adapter, scale)


@pytest.mark.spec("LZ-CACHE-010")
@pytest.mark.ops("multiply", "add", "tanh")
@pytest.mark.parametrize("damage", ["truncated", "flipped", "emptied", "directory removed"])
def test_damaged_entries_fail_nothing(adapter: OptionalAdapter, place: Path, damage: str) -> None:
    settle(adapter)
    adapter.persist(str(place / "cache"))
    adapter.reset()
    _step(adapter, 0.5)  # compiled, and (if the implementation keeps it) written
    for path in [p for p in (place / "cache").rglob("*") if p.is_file()]:
        data = path.read_bytes()
        if damage == "truncated":
            path.write_bytes(data[:len(data) // 2])
        elif damage == "flipped":
            path.write_bytes(bytes(b ^ 0x5A for b in data))
        elif damage == "emptied":
            path.write_bytes(b"")
    if damage == "directory removed":
        for path in sorted((place / "cache").rglob("*"), reverse=True):
            path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
        (place / "cache").rmdir()
    for scale in (0.5, 3.0):
        adapter.reset()
        _step(adapter, scale)
