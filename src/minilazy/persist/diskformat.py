"""The persistent compile cache's entry files: how one is laid out, read and checked.

Beside :mod:`minilazy.persist.diskcache`, which decides where entries live and when they go. An
entry is ``MAGIC``, a 4-byte header length, a JSON header (format, key, versions), the payload (the
runtime's serialized executable) and a tag: HMAC-SHA256 of all that with this user's secret
(:mod:`minilazy.persist.trust`), so that an entry this user's minilazy did not write never reaches
the unpickler. Whatever sits at an entry's path (a FIFO, a device, a link, a file another user
owns or can write, a header nested 100 000 deep) is read without blocking and without unbounded
reads or recursion, or refused with the reason why.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import reprlib
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

MAGIC: Final = b"minilazy-program\n"
FORMAT: Final = 3  # 2: the payload starts with the custom calls it makes; 3: a tag, no SHA-256
MAX_HEADER: Final = 1 << 16  # ours are a few hundred bytes
TAG: Final = 32  # bytes of HMAC-SHA256, at the end of an entry
# Opening flags for a file another user may have put there: never a link, never a wait.
OPEN_FLAGS: Final = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))


class Untrusted(Exception):
    """A file or directory of the cache that another user may have written: the cache is off.

    Example:
        >>> str(Untrusted("/tmp/x is owned by nobody"))
        '/tmp/x is owned by nobody'
    """


def foreign(info: os.stat_result, private: bool = False) -> str | None:
    """Why what has status ``info`` may hold what another user wrote; ``None`` if it cannot.

    Someone else's, or writable by its group or others (``private``: readable by them either),
    as SSH judges a key file. Where there are no user ids (Windows) nothing is refused here: the
    entries' tags still are.

    Example:
        >>> mine = (stat.S_IFDIR | 0o777, 0, 0, 0, os.geteuid(), 0, 0, 0, 0, 0)
        >>> foreign(os.stat_result(mine))
        'writable by group and others (mode drwxrwxrwx)'
    """
    uid = getattr(os, "geteuid", None)
    if uid is None:
        return None
    if info.st_uid != uid():
        return f"owned by {_user(info.st_uid)}, not by you ({_user(uid())})"
    bits = 0o077 if private else 0o022
    if info.st_mode & bits:
        who = " and ".join(w for w, b in (("group", 0o070), ("others", 0o007))
                           if info.st_mode & bits & b)
        return (f"{'readable or writable' if private else 'writable'} by {who} "
                f"(mode {stat.filemode(info.st_mode)})")
    return None


def _user(uid: int) -> str:
    try:
        import pwd  # Unix only

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def tag(secret: bytes, data: bytes | memoryview) -> bytes:
    """The HMAC-SHA256 of ``data`` with ``secret``: what proves this user wrote an entry.

    Example:
        >>> len(tag(b"secret", b"entry"))
        32
    """
    return hmac.new(secret, data, hashlib.sha256).digest()


def pack(key: str, payload: bytes, about: Mapping[str, str], secret: bytes) -> bytes:
    """Entry ``key``'s file: magic, header length, header, payload, tag (with ``secret``).

    Example:
        >>> unpack(pack("k", b"program", {"jax": "0.1"}, b"s"), "k", {"jax": "0.1"}, b"s")
        b'program'
    """
    header = json.dumps({"format": FORMAT, "key": key, "about": dict(about)}).encode()
    data = MAGIC + len(header).to_bytes(4, "big") + header + payload
    return data + tag(secret, data)


def contents(path: Path, limit: int) -> bytes:
    """The bytes of the file at ``path``; ``OSError`` unless a regular file of ``limit`` at most.

    Opened non-blocking, as a FIFO would wait for a writer forever; checked before reading, as
    a device may never end; never through a link (minilazy makes none). Raises
    :class:`Untrusted` for a file that another user owns or may have written (:func:`foreign`).

    Example:
        >>> contents(Path("/dev/null"), 100)
        Traceback (most recent call last):
        ...
        OSError: not a regular file (mode crw-rw-rw-)
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP or os.path.islink(path):
            raise OSError(f"a symbolic link (an entry never is one; {e.strerror})") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"not a regular file (mode {stat.filemode(info.st_mode)})")
        problem = foreign(info)
        if problem is not None:
            raise Untrusted(f"entry {path} is {problem}: minilazy writes its own entries with "
                            f"mode 0600. Fix: remove it (rm {path}), or use another directory")
        if info.st_size > limit:
            raise OSError(f"{info.st_size} bytes, more than the cache's limit of {limit}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def unpack(data: bytes, key: str, about: Mapping[str, str], secret: bytes) -> bytes | str:
    """The payload of entry file ``data`` named ``key``, or why it cannot be used.

    Its tag is checked with ``secret`` before anything is taken from it: an entry this user did
    not write (or a damaged one) is never unpickled. ``about`` says what this process would have
    written (versions, device kind): an entry made elsewhere is named as such.

    Example:
        >>> unpack(MAGIC + (10**9).to_bytes(4, "big") + b"{}", "k", {}, b"s")
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
        found, made = header["key"], header["about"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return "its header is damaged"
    if header.get("format") != FORMAT:  # reprlib: a value of any size or depth, shortened
        return f"it has format {reprlib.repr(header.get('format'))}, this minilazy reads {FORMAT}"
    if len(data) < start + size + TAG or not hmac.compare_digest(
            tag(secret, memoryview(data)[:-TAG]), data[-TAG:]):
        return ("its tag does not match: damaged, or not written by you (another user, or "
                "another secret)")
    if found != key:
        differ = [f"{k} {reprlib.repr(made.get(k))} (here {v!r})" for k, v in about.items()
                  if made.get(k) != v] if isinstance(made, dict) else []
        return ("it was made for " + ", ".join(differ) if differ else
                "it holds another program (its key does not match its name)")
    return data[start + size:-TAG]
