"""The persistent compile cache's entry files: how one is laid out, read and checked.

Beside :mod:`minilazy.persist.diskcache`, which decides where entries live and when they go. An
entry is ``MAGIC``, a 4-byte header length, a JSON header (format, key, versions, the payload's
SHA-256) and the payload (the runtime's serialized executable). Whatever sits at an entry's path (a
FIFO, a device, a link to a huge file, a header nested 100 000 deep) is read without blocking and
without unbounded reads or recursion, or refused with the reason why.
"""

from __future__ import annotations

import hashlib
import json
import os
import reprlib
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

MAGIC: Final = b"minilazy-program\n"
FORMAT: Final = 2  # 2: the payload starts with the custom calls its program makes
MAX_HEADER: Final = 1 << 16  # ours are a few hundred bytes


def pack(key: str, payload: bytes, about: Mapping[str, str]) -> bytes:
    """Entry ``key``'s file: magic, header length, header, payload.

    Example:
        >>> unpack(pack("k", b"program", {"jax": "0.1"}), "k", {"jax": "0.1"})
        b'program'
    """
    header = json.dumps({"format": FORMAT, "key": key, "about": dict(about),
                         "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    return MAGIC + len(header).to_bytes(4, "big") + header + payload


def contents(path: Path, limit: int) -> bytes:
    """The bytes of the file at ``path``; ``OSError`` unless a regular file of ``limit`` at most.

    Opened non-blocking, as a FIFO would wait for a writer forever; checked before reading, as
    a device (or a link to one) may never end.

    Example:
        >>> contents(Path("/dev/null"), 100)
        Traceback (most recent call last):
        ...
        OSError: not a regular file (mode crw-rw-rw-)
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"not a regular file (mode {stat.filemode(info.st_mode)})")
        if info.st_size > limit:
            raise OSError(f"{info.st_size} bytes, more than the cache's limit of {limit}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def unpack(data: bytes, key: str, about: Mapping[str, str]) -> bytes | str:
    """The payload of entry file ``data`` named ``key``, or why it cannot be used.

    ``about`` says what this process would have written (versions, device kind): an entry made
    elsewhere is named as such.

    Example:
        >>> unpack(MAGIC + (10**9).to_bytes(4, "big") + b"{}", "k", {})
        'its header length 1000000000 is damaged'
    """
    start = len(MAGIC) + 4
    if not data.startswith(MAGIC) or len(data) < start:
        return "not a minilazy cache entry (truncated, or other bytes)"
    size = int.from_bytes(data[len(MAGIC):start], "big")
    if size > min(len(data) - start, MAX_HEADER):
        return f"its header length {size} is damaged"
    try:  # RecursionError: a header nested too deep to parse
        header = json.loads(data[start:start + size])
        found, made, digest = header["key"], header["about"], header["sha256"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return "its header is damaged"
    if header.get("format") != FORMAT:  # reprlib: a value of any size or depth, shortened
        return f"it has format {reprlib.repr(header.get('format'))}, this minilazy reads {FORMAT}"
    if found != key:
        differ = [f"{k} {reprlib.repr(made.get(k))} (here {v!r})" for k, v in about.items()
                  if made.get(k) != v] if isinstance(made, dict) else []
        return ("it was made for " + ", ".join(differ) if differ else
                "it holds another program (its key does not match its name)")
    payload = data[start + size:]
    if hashlib.sha256(payload).hexdigest() != digest:
        return "its contents do not match their checksum (truncated or damaged)"
    return payload
