"""Whom the persistent compile cache trusts: a directory of this user's, and entries it signed.

Beside :mod:`minilazy.persist.diskcache`, which asks here before it reads or writes a directory.
Loading an entry unpickles it, which can run any code, so a cache directory is used only if it is
this user's and nobody else can write it (as SSH judges ``~/.ssh``), and every entry carries a
tag made with this user's secret (:mod:`minilazy.persist.diskformat`). The secret is a 0600 file
in this user's own cache root (``$XDG_CACHE_HOME/minilazy/secret``, else
``~/.cache/minilazy/secret``), never in a directory ``MINILAZY_CACHE_DIR`` names: entries copied
from elsewhere, or planted through a directory swapped in a race, carry no tag of this user's.
The parents of a directory are not checked: replacing one gains nothing, as every entry is checked
again when it is read (its owner and mode on the open file, then its tag). Nothing here is ever
fatal: the caller turns :class:`~minilazy.persist.diskformat.Untrusted` into a warning.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import Final

from minilazy.persist.diskformat import OPEN_FLAGS, Untrusted, foreign

SIZE: Final = 32  # bytes of secret: as many as HMAC-SHA256's output
NAME: Final = "secret"


def user_root() -> Path | None:
    """This user's cache root for minilazy: ``$XDG_CACHE_HOME/minilazy`` or ``~/.cache/minilazy``.

    ``None`` where there is no home directory (and ``XDG_CACHE_HOME`` is not an absolute path).

    Example:
        >>> root = user_root()
        >>> root is None or root.name == "minilazy"
        True
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home directory: no default place
        return None
    return root / "minilazy"


def check_directory(directory: Path) -> None:
    """Raise :class:`Untrusted` unless ``directory`` is a directory only this user can write.

    A link to a directory is followed: what counts is where entries go. Raises
    ``FileNotFoundError`` if there is none.

    Example:
        >>> import tempfile
        >>> check_directory(Path(tempfile.mkdtemp()))  # mkdtemp makes it 0700
    """
    info = os.stat(directory)
    if not stat.S_ISDIR(info.st_mode):
        raise Untrusted(f"{directory} is not a directory (mode {stat.filemode(info.st_mode)}). "
                        f"Fix: use another directory (MINILAZY_CACHE_DIR, ml.set_cache_dir)")
    problem = foreign(info)
    if problem is not None:
        real = os.path.realpath(directory)
        where = f"{directory} (a link to {real})" if os.path.islink(directory) else str(directory)
        fix = ("use a directory of your own (MINILAZY_CACHE_DIR=/path, or ml.set_cache_dir)"
               if problem.startswith("owned") else
               f"chmod 700 {real}, or use another directory (MINILAZY_CACHE_DIR, "
               "ml.set_cache_dir)")
        raise Untrusted(f"{where} is {problem}: a program someone else put there would run as "
                        f"you when loaded. Fix: {fix}")


def secret() -> bytes:
    """This user's secret, which signs their entries: made (atomically) if there is none yet.

    Raises :class:`Untrusted` where it is a link, another user's, readable or writable by others,
    or not ``SIZE`` bytes, or where there is no place for it; ``OSError`` where it cannot be made.

    Example:
        >>> len(secret()) == SIZE
        True
    """
    root = user_root()
    if root is None:
        raise Untrusted("there is no home directory to keep the secret that signs your entries "
                        "in. Fix: set XDG_CACHE_HOME to a directory of yours")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_directory(root)
    path = root / NAME
    try:
        return _read(path)
    except FileNotFoundError:
        _make(path)
        return _read(path)


def _read(path: Path) -> bytes:
    fix = f"Fix: remove it (rm {path}); minilazy makes a new one"
    if path.is_symlink():  # where O_NOFOLLOW is missing (Windows), at least this
        raise Untrusted(f"the secret {path} is a symbolic link. {fix}")
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Untrusted(f"the secret {path} is a symbolic link. {fix}") from None
        raise
    try:
        info = os.fstat(fd)
        problem = foreign(info, private=True) if stat.S_ISREG(info.st_mode) else "not a file"
        if problem is None and info.st_size != SIZE:
            problem = f"{info.st_size} bytes, not {SIZE}"
        if problem is not None:
            raise Untrusted(f"the secret {path} that signs your entries is {problem}. {fix}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(SIZE)
    finally:
        os.close(fd)


def _make(path: Path) -> None:
    """Write a new secret at ``path``, unless another process made one first (then keep it)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-secret-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(SIZE))
        try:  # a link never replaces a secret another process just made: readers see one only
            os.link(temp, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links here: a rename (which Windows never lets replace a file)
            if not os.path.lexists(path):
                os.rename(temp, path)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
