"""The persistent cache runs only what this user's minilazy wrote (issue 46).

Loading an entry unpickles it, which can run any code. A cache directory, or an entry in it, that
another user owns or can write is refused: a ``CacheWarning`` once, naming the path and the fix,
and the process runs uncached. An entry without this user's tag (HMAC-SHA256 with their secret)
never reaches the unpickler: a miss, and the entry is written over. Each test plants an entry whose
payload would write a marker file if unpickled, and checks that nothing ran, that a warning said
why, and that the program compiled and gave NumPy's values. Some play the other user: as root
they ``chown`` to ``nobody``; they skip, saying why, where owners cannot change.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minilazy as ml

MAGIC = b"minilazy-program\n"
TAG = 32  # bytes of the tag at the end of an entry, from format 3 on
A = np.linspace(-2, 2, 12, dtype=np.float32)
B = np.linspace(-1, 3, 7, dtype=np.float32)  # another shape: another program


def program(a: np.ndarray) -> None:
    """Two results of one program, pending at ``mark_step``: checked against NumPy."""
    x = ml.asarray(a)
    y, z = ml.exp(x * 0.5) - x[::-1], x * 3.0
    ml.mark_step()  # a cache problem must not fail it, nor leave y or z failed
    np.testing.assert_allclose(y.numpy(), np.exp(a * np.float32(0.5)) - a[::-1], rtol=1e-6)
    np.testing.assert_array_equal(z.numpy(), a * np.float32(3.0))


class _Plant:
    """Unpickled, it writes ``marker``: what a planted entry's payload could do as this user."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[str]]:
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


def plant(entry: Path, marker: Path) -> None:
    """Make ``entry`` a loader of ``marker``, as someone without this user's secret can.

    The header's checksum (before format 3) is made to match; a tag (format 3 on) is left as it
    was: making one takes the secret.
    """
    data = entry.read_bytes()
    start = len(MAGIC) + 4
    size = int.from_bytes(data[len(MAGIC):start], "big")
    head = json.loads(data[start:start + size])
    payload = b"[]\n" + pickle.dumps(_Plant(marker))  # no custom calls, then the pickle
    tag = data[len(data) - TAG:] if int(head.get("format", 0)) >= 3 else b""
    if "sha256" in head:
        head["sha256"] = hashlib.sha256(payload).hexdigest()
    raw = json.dumps(head).encode()
    entry.write_bytes(MAGIC + len(raw).to_bytes(4, "big") + raw + payload + tag)


def first_entry(directory: Path) -> Path:
    """Compile ``program(A)`` with the cache on: its one entry."""
    program(A)
    (entry,) = directory.iterdir()
    return entry


def cold(a: np.ndarray) -> tuple[ml.Metrics, list[str]]:
    """Run ``program(a)`` with memory's cache empty; its counters and the CacheWarnings."""
    ml.clear_cache()
    ml.reset_metrics()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(a)
    return ml.metrics(), [str(w.message) for w in caught if w.category is ml.CacheWarning]


def nobody() -> int:
    """The uid of ``nobody``; skips unless this process can give a file to it."""
    if not hasattr(os, "chown") or os.geteuid() != 0:
        pytest.skip("only root can give a file to another user (chown): run as root to play one")
    import pwd

    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user 'nobody' on this machine")


def _chown(path: Path) -> None:
    uid = nobody()
    try:
        os.chown(path, uid, -1, follow_symlinks=False)
    except OSError as e:
        pytest.skip(f"this file system does not let owners change ({e})")


def _link_to_nobodys(directory: Path) -> Path:
    """``directory`` becomes a link to a directory ``nobody`` owns, holding its entries."""
    theirs = directory.parent / "theirs"
    directory.rename(theirs)
    _chown(theirs)
    directory.symlink_to(theirs)
    return theirs


# How another user's program gets in: (what is done to the directory and its entry, the path the
# warning names, the fix it gives). Each leaves the cache off for the process.
FOREIGN: dict[str, tuple[Callable[[Path, Path], object], str, str]] = {
    "directory owned by nobody": (lambda d, e: _chown(d), "directory", "directory of your own"),
    "directory writable by others": (lambda d, e: d.chmod(0o777), "directory", "chmod 700"),
    "directory writable by its group": (lambda d, e: d.chmod(0o770), "directory", "chmod 700"),
    "directory a link to nobody's": (lambda d, e: _link_to_nobodys(d), "theirs",
                                     "directory of your own"),
    "entry owned by nobody": (lambda d, e: _chown(e), "entry", "rm "),
    "entry writable by others": (lambda d, e: e.chmod(0o666), "entry", "rm "),
}


@pytest.mark.parametrize("how", FOREIGN, ids=list(FOREIGN))
def test_a_cache_another_user_could_write_is_never_run(disk: Path, tmp_path: Path,
                                                       how: str) -> None:
    entry = first_entry(disk)
    marker = tmp_path / "marker"
    plant(entry, marker)
    spoil, named, fix = FOREIGN[how]
    spoil(disk, entry)
    path = {"directory": disk, "entry": entry, "theirs": tmp_path / "theirs"}[named]
    m, said = cold(A)
    assert not marker.exists(), "the planted payload ran"
    assert len(said) == 1 and str(path) in said[0] and fix in said[0], said
    assert (m.compiles, m.disk_hits, m.disk_writes) == (1, 0, 0)  # compiled; nothing written
    assert ml.cache_dir() is None  # uncached, for the rest of the process
    m, said = cold(B)  # warned once: the next program compiles in silence
    assert said == [] and (m.compiles, m.disk_writes) == (1, 0)
    assert not marker.exists()


def test_an_entry_without_this_users_tag_is_a_miss_and_is_written_over(disk: Path,
                                                                      tmp_path: Path) -> None:
    entry = first_entry(disk)
    marker = tmp_path / "marker"
    plant(entry, marker)  # in this user's own directory: copied in, or planted through a race
    m, said = cold(A)
    assert not marker.exists(), "the planted payload ran"
    assert len(said) == 1 and "not written by you" in said[0] and str(entry) in said[0], said
    assert (m.compiles, m.disk_hits, m.disk_writes) == (1, 0, 1)  # compiled, and written over
    m, said = cold(A)
    assert (m.compiles, m.disk_hits, said) == (0, 1, [])  # this user's entry again: loaded


def test_entries_copied_from_another_users_cache_never_load(disk: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    # The secret is in the user's own cache root, not in the cache directory: copying a whole
    # cache directory (entries of the same program, for the same JAX) brings no secret along.
    entry = first_entry(disk)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another user's home"))
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    shutil.copy(entry, mine / entry.name)
    ml.set_cache_dir(mine)
    m, said = cold(A)
    assert len(said) == 1 and "not written by you" in said[0], said
    assert (m.compiles, m.disk_hits, m.disk_writes) == (1, 0, 1)


def test_after_the_fix_the_cache_works_again(disk: Path, tmp_path: Path) -> None:
    first_entry(disk)
    disk.chmod(0o777)
    assert len(cold(A)[1]) == 1
    disk.chmod(0o700)  # the fix the warning gave
    ml.set_cache_dir(disk)
    m, said = cold(A)
    assert (m.compiles, m.disk_hits, said) == (0, 1, [])


def test_windows_without_user_ids_still_checks_the_tag(disk: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # No os.geteuid: owners and modes cannot be compared; the directory is used, and the tag
    # still keeps every entry this user did not write from the unpickler.
    entry = first_entry(disk)
    marker = tmp_path / "marker"
    plant(entry, marker)
    disk.chmod(0o777)
    monkeypatch.delattr(os, "geteuid")
    ml.set_cache_dir(disk)
    m, said = cold(A)
    assert not marker.exists()
    assert len(said) == 1 and "not written by you" in said[0], said
    assert (m.compiles, m.disk_writes) == (1, 1)


# --- the secret ----------------------------------------------------------------------------------

def secret_path() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "minilazy" / "secret"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache root for this user (where the secret is kept), and the cache on."""
    root = tmp_path / "home-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(root))
    ml.set_cache_dir(tmp_path / "cache")
    return root


def _secret_owned_by_nobody(path: Path) -> None:
    _chown(path)


# What can be wrong with the secret: (spoil it, what the warning says).
BAD_SECRET: dict[str, tuple[Callable[[Path], object], str]] = {
    "a symbolic link": (lambda p: (p.rename(p.with_name("real")), p.symlink_to("real")),
                        "symbolic link"),
    "readable by others": (lambda p: p.chmod(0o644), "readable or writable by group and others"),
    "owned by nobody": (_secret_owned_by_nobody, "owned by nobody"),
    "short": (lambda p: p.write_bytes(b"short"), "5 bytes, not 32"),
    "a directory": (lambda p: (p.unlink(), p.mkdir()), "not a file"),
    "its directory writable by others": (lambda p: p.parent.chmod(0o777), "chmod 700"),
}


@pytest.mark.parametrize("how", BAD_SECRET, ids=list(BAD_SECRET))
def test_a_secret_another_user_could_know_is_refused(home: Path, how: str) -> None:
    ml.clear_cache()
    program(A)  # makes the secret
    path = secret_path()
    assert path.stat().st_mode & 0o777 == 0o600 and len(path.read_bytes()) == 32
    spoil, says = BAD_SECRET[how]
    spoil(path)
    ml.set_cache_dir(ml.cache_dir())  # as a new process: checked again
    m, said = cold(B)
    assert len(said) == 1 and says in said[0] and "Fix:" in said[0], said
    assert (m.compiles, m.disk_writes) == (1, 0) and ml.cache_dir() is None


def test_the_secret_is_made_once_by_processes_that_race(home: Path, tmp_path: Path) -> None:
    code = "from minilazy.persist import trust; print(trust.secret().hex())"
    env = {**os.environ, "XDG_CACHE_HOME": str(home)}
    children = [subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                 stdout=subprocess.PIPE) for _ in range(6)]
    found = {c.communicate(timeout=120)[0].strip() for c in children}
    assert len(found) == 1 and bytes.fromhex(found.pop()) == secret_path().read_bytes()
    assert sorted(p.name for p in secret_path().parent.iterdir()) == ["secret"]  # no temporary


def test_no_place_for_the_secret_runs_uncached(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache root should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    ml.set_cache_dir(tmp_path / "cache")
    try:
        m, said = cold(A)
        assert len(said) == 1 and "XDG_CACHE_HOME" in said[0], said
        assert m.disk_writes == 0
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "root"))  # the fix
        ml.set_cache_dir(tmp_path / "cache")
        m, said = cold(A)
        assert (m.disk_writes, said) == (1, [])
    finally:
        ml.set_cache_dir(None)


def _parts(entry: Path) -> dict[str, Any]:
    data = entry.read_bytes()
    size = int.from_bytes(data[len(MAGIC):len(MAGIC) + 4], "big")
    header: dict[str, Any] = json.loads(data[len(MAGIC) + 4:len(MAGIC) + 4 + size])
    return header


def test_entries_are_written_with_a_tag_and_no_checksum_anyone_could_make(disk: Path) -> None:
    head = _parts(first_entry(disk))
    assert head["format"] == 3 and "sha256" not in head
