"""The persistent compile cache: a fresh process reads programs an earlier one compiled.

The session runs with the cache off (``conftest.py``); these tests turn it on in temporary
directories. A disk hit is a load, counted in ``disk_hits``, never in ``compiles`` (XLA's); a
damaged or foreign entry is ignored with a ``CacheWarning`` and the program compiled again, with
the right values.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minilazy as ml
from minilazy.core.cut import cut
from minilazy.persist import diskcache, trust
from minilazy.persist import executables as runtime_disk
from minilazy.persist.diskformat import MAGIC, TAG, tag

# A fresh process: a few programs (float64, integers, slices, a donating MLP step), its values
# against NumPy, its counters, and the disk keys of a cut with slices.
CHILD = r"""
import json, sys
import numpy as np
import minilazy as ml
from minilazy.persist import executables as runtime_disk, keys
from minilazy.core.cut import cut
from minilazy.demo.datasets import digits
from minilazy.demo import init_params, train_step

rng = np.random.default_rng(0)
a, b = rng.standard_normal((5, 7)), rng.integers(-50, 50, (5, 7)).astype(np.int32)
x, n = ml.asarray(a), ml.asarray(b)
got = [ml.tanh(x[1:, ::2] * 2.5 + 1.0).numpy(), ml.sum(n // 3, axis=0).numpy()]
want = [np.tanh(a[1:, ::2] * 2.5 + 1.0), np.sum(b // 3, axis=0)]
p = {k: ml.asarray(v) for k, v in init_params().items()}
v = {k: ml.zeros_like(t) for k, t in p.items()}
ml.mark_step()
xs, ys = digits(32)
losses = [train_step(p, v, ml.asarray(xs), ml.asarray(ys), lr=0.1).item() for _ in range(3)]
m = ml.metrics()
y = x[1:3, None] + 1.0
print(json.dumps({
    "numpy": [bool(np.allclose(got[0], want[0], rtol=1e-13, atol=0)), bool(np.array_equal(
        got[1], want[1])), got[0].dtype == want[0].dtype, got[1].dtype == want[1].dtype],
    "losses": losses, "w2": float(np.sum(p["w2"].numpy())),
    "compiles": m.compiles, "disk_hits": m.disk_hits, "disk_writes": m.disk_writes,
    "trace_seconds": m.trace_seconds, "donations": m.donations,
    "key": runtime_disk.disk_entry(cut([y._node], y.device), ()).name,
    "source": keys._fingerprint(),
}))
"""


def run_child(directory: Path, seed: int) -> subprocess.Popen[str]:
    env = {**os.environ, "MINILAZY_CACHE_DIR": str(directory), "PYTHONHASHSEED": str(seed)}
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def result(child: subprocess.Popen[str]) -> dict[str, object]:
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err[-3000:]
    assert "CacheWarning" not in err, err[-3000:]
    found: dict[str, object] = json.loads(out)
    assert found["numpy"] == [True] * 4
    return found


def test_a_fresh_process_reads_every_program_from_disk(tmp_path: Path) -> None:
    # Two cold processes at once (both compile, and write the same entries), then a warm one
    # with yet another string hash seed: every program it needs is on disk, none is traced.
    first, second = run_child(tmp_path, 1), run_child(tmp_path, 2)
    cold = [result(first), result(second)]
    warm = result(run_child(tmp_path, 3))
    assert cold[0]["source"] == warm["source"], "minilazy's source changed during the test"
    programs = cold[0]["compiles"] + cold[0]["disk_hits"]
    assert cold[1]["compiles"] + cold[1]["disk_hits"] == programs > 0
    for run in cold:  # each one wrote what it compiled: what the other had not written yet
        assert run["disk_writes"] == run["compiles"]
    assert warm["disk_hits"] == programs and warm["compiles"] == warm["disk_writes"] == 0
    assert warm["trace_seconds"] == 0
    assert warm["losses"] == cold[0]["losses"] and warm["w2"] == cold[0]["w2"]
    assert warm["donations"] == cold[0]["donations"] > 0  # loaded programs donate too
    assert warm["key"] == cold[0]["key"] == cold[1]["key"]  # stable across processes
    assert all(p.suffix == diskcache.SUFFIX for p in tmp_path.iterdir())  # no temporary left


def program(a: np.ndarray) -> np.ndarray:
    """A small program on ``a``, run to a host value."""
    x = ml.asarray(a)
    return np.asarray(ml.exp(x * 0.5) - x[::-1])


def first_run(a: np.ndarray) -> Path:
    """Run ``program`` on a cold cache: it compiles and writes one entry, whose path it returns."""
    np.testing.assert_allclose(program(a), np.exp(a * 0.5) - a[::-1], rtol=1e-6)
    assert ml.metrics().disk_writes == 1
    (entry,) = [p for p in ml.cache_dir().iterdir()]
    return entry


def again(a: np.ndarray) -> ml.Metrics:
    """Run ``program`` on a cold in-memory cache; check its values; the counters of that run."""
    ml.clear_cache()
    ml.reset_metrics()
    np.testing.assert_allclose(program(a), np.exp(a * 0.5) - a[::-1], rtol=1e-6)
    return ml.metrics()


A = np.linspace(-2, 2, 12, dtype=np.float32)


def test_an_entry_is_read_back_in_the_same_process(disk: Path) -> None:
    entry = first_run(A)
    assert disk.stat().st_mode & 0o777 == 0o700
    assert entry.stat().st_mode & 0o777 == 0o600
    with warnings.catch_warnings():
        warnings.simplefilter("error", ml.CacheWarning)
        m = again(A)
    assert (m.compiles, m.disk_hits, m.disk_writes, m.trace_seconds) == (0, 1, 0, 0.0)
    assert m.load_seconds > 0 and m.compile_timer.count == 0  # a load is no compile
    report = ml.metrics_report()
    assert "compiles            0   (1 new, compiled or loaded: " in report, report
    assert "persistent cache    1 loaded (" in report, report


def test_a_miss_names_its_entry_once(disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Naming an entry writes the whole program out and hashes it: the load that misses and the
    # save after the compile share one name.
    named = []
    real = runtime_disk.disk_entry
    monkeypatch.setattr(runtime_disk, "disk_entry", lambda *a: named.append(1) or real(*a))
    ml.reset_metrics()
    program(A + 1.0)
    assert (ml.metrics().compiles, ml.metrics().disk_writes, len(named)) == (1, 1, 1)


def _parts(entry: Path) -> tuple[dict[str, Any], bytes, bytes]:
    """An entry's header, payload and tag (none before format 3)."""
    data = entry.read_bytes()
    start = len(MAGIC) + 4
    size = int.from_bytes(data[len(MAGIC):start], "big")
    head = json.loads(data[start:start + size])
    tagged = int(head.get("format", 0)) >= 3
    end = len(data) - TAG if tagged else len(data)
    return head, data[start + size:end], data[end:]


def _rewrite(entry: Path, header: dict[str, object] | None = None,
             about: dict[str, str] | None = None, payload: bytes | None = None,
             secret: bytes | None = None) -> None:
    """Write ``entry`` again with parts of its header or its payload replaced.

    Tagged with ``secret`` (default: this user's, as their minilazy would write it); ``b""``
    keeps the old tag, as someone without the secret must. Before format 3 (no tag) the header's
    checksum is made to match, as anyone can.
    """
    head, body, old = _parts(entry)
    body = body if payload is None else payload
    head.update(header or {})
    head["about"].update(about or {})
    if "sha256" in head:
        head["sha256"] = hashlib.sha256(body).hexdigest()
    raw = json.dumps(head).encode()
    data = MAGIC + len(raw).to_bytes(4, "big") + raw + body
    if old:
        old = tag(trust.secret() if secret is None else secret, data) if secret != b"" else old
    entry.write_bytes(data + old)


def _replace(entry: Path, make: Callable[[Path], object]) -> None:
    """Put something else at ``entry``'s path."""
    entry.unlink()
    make(entry)


def _fifo(entry: Path) -> None:
    _replace(entry, os.mkfifo)

    def release() -> None:  # a reader blocked on the FIFO (the bug) gets EOF, and fails the test
        time.sleep(30)
        with contextlib.suppress(OSError):
            os.close(os.open(entry, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=release, daemon=True).start()


def _socket(entry: Path) -> None:
    entry.unlink()
    here = os.getcwd()
    os.chdir(entry.parent)  # a socket's path may be at most ~100 bytes: bind a relative one
    try:
        socket.socket(socket.AF_UNIX).bind(entry.name)
    finally:
        os.chdir(here)


def _device(entry: Path) -> None:
    entry.unlink()
    try:
        os.mknod(entry, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    except OSError as e:
        pytest.skip(f"cannot make a device file here ({e})")


def _unreadable(entry: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    entry.chmod(0)


def _huge(entry: Path) -> None:
    with open(entry, "r+b") as f:
        f.truncate(diskcache.DEFAULT_MAX_BYTES + 1)  # sparse: costs no disk


def _custom_call(entry: Path) -> None:
    program = _parts(entry)[1].partition(b"\n")[2]
    _rewrite(entry, payload=b'["lapack_qgeqrf"]\n' + program)


def _link_elsewhere(entry: Path) -> None:
    target = entry.parent.parent / "elsewhere"
    shutil.copy(entry, target)
    _replace(entry, lambda e: e.symlink_to(target))


def _format_2(entry: Path) -> None:
    """The layout minilazy wrote before entries were tagged: a checksum anyone can compute."""
    head, body, _ = _parts(entry)
    raw = json.dumps({**head, "format": 2, "sha256": hashlib.sha256(body).hexdigest()}).encode()
    entry.write_bytes(MAGIC + len(raw).to_bytes(4, "big") + raw + body)


def _nested(depth: int) -> Callable[[Path], object]:
    header = b"[" * depth + b"]" * depth
    return lambda e: e.write_bytes(MAGIC + len(header).to_bytes(4, "big") + header)


# Each way an entry can be damaged, foreign or odd: (spoil it, the warning, written over after).
# Every one is ignored with a CacheWarning, never blocks, and never turns the cache off.
DAMAGE = {
    "truncated": (lambda e: e.write_bytes(e.read_bytes()[: e.stat().st_size // 2]),
                  "tag does not match", True),
    "garbage": (lambda e: e.write_bytes(np.random.default_rng(0).bytes(4000)),
                "not a minilazy cache entry", True),
    "empty": (lambda e: e.write_bytes(b""), "not a minilazy cache entry", True),
    "magic only": (lambda e: e.write_bytes(MAGIC + b"\0\0"), "not a minilazy cache entry", True),
    "bad header": (lambda e: e.write_bytes(MAGIC + b"\0\0\0\5{{{{{"), "header", True),
    "header not an object": (lambda e: e.write_bytes(MAGIC + b"\0\0\0\3[1]"), "header", True),
    "header length too big": (lambda e: e.write_bytes(MAGIC + b"\xff\xff\xff\xff{}"),
                              "header length 4294967295", True),
    "header nested 100000 deep": (_nested(100_000), "header", True),
    "header nested 30000 deep": (_nested(30_000), "header is damaged", True),  # parsed: bounded
    "other format": (lambda e: _rewrite(e, {"format": 99}), "format 99", True),
    "format nested 500 deep": (lambda e: _rewrite(e, {"format": json.loads("[" * 500 + "]" * 500)}),
                               "format \\[\\[", True),
    # An entry made elsewhere has another key: found under this name only if copied here.
    "other jax": (lambda e: _rewrite(e, {"key": "0" * 64}, {"jax": "0.0.1"}),
                  "made for jax '0.0.1'", True),
    "other device kind": (lambda e: _rewrite(e, {"key": "1" * 64}, {"device_kind": "TPU v9"}),
                          "device_kind 'TPU v9'", True),
    "payload not loadable": (lambda e: _rewrite(e, payload=b"not a pickle"), "cannot load", True),
    "payload damaged": (lambda e: _rewrite(e, payload=b"x" * 100, secret=b""), "tag does not",
                        True),
    "unknown custom call": (_custom_call, "cannot bind", True),
    "FIFO": (_fifo, "not a regular file", True),
    "directory": (lambda e: _replace(e, Path.mkdir), "not a regular file", False),
    "socket": (_socket, "No such device|not a regular file", True),
    "device file": (_device, "not a regular file", True),
    "link to /dev/zero": (lambda e: _replace(e, lambda p: p.symlink_to("/dev/zero")),
                          "a symbolic link", True),
    "huge (sparse)": (_huge, "more than the cache's limit", True),
    "link to itself": (lambda e: _replace(e, lambda p: p.symlink_to(p)), "a symbolic link", True),
    "link to a good entry": (_link_elsewhere, "a symbolic link", True),
    # Entries this user's minilazy did not write: the tag, made with their secret, says so.
    "tagged with another secret": (lambda e: _rewrite(e, secret=b"another user's secret"),
                                   "not written by you", True),
    "format 2 (no tag)": (_format_2, "format 2, this minilazy reads 3", True),
    "unreadable": (_unreadable, "Permission denied", True),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_or_foreign_entry_is_ignored_with_a_warning(disk: Path, damage: str) -> None:
    entry = first_run(A)
    spoil, message, replaced = DAMAGE[damage]
    spoil(entry)
    with pytest.warns(ml.CacheWarning, match=message) as found:
        m = again(A)  # compiled again, with the right values
    assert (m.compiles, m.disk_hits, m.disk_writes) == (1, 0, int(replaced))  # written over
    assert ml.cache_dir() == disk, [str(w.message) for w in found]  # the cache is still on
    if replaced:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ml.CacheWarning)
            assert again(A).disk_hits == 1
    else:  # still there: ignored again, the same way
        with pytest.warns(ml.CacheWarning, match=message):
            assert again(A).disk_hits == 0


def test_an_entry_of_another_program_under_this_name_is_ignored(disk: Path) -> None:
    entry = first_run(A)
    other = np.linspace(-2, 2, 6, dtype=np.float32)  # another shape: another program
    ml.reset_metrics()
    program(other)
    (other_entry,) = [p for p in disk.iterdir() if p != entry]
    shutil.copy(other_entry, entry)
    with pytest.warns(ml.CacheWarning, match="another program"):
        assert again(A).disk_hits == 0


def test_the_cache_is_off_when_the_environment_says_so(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setattr(diskcache.SETTINGS, "chosen", diskcache._Unset())
    monkeypatch.setenv("MINILAZY_CACHE_DIR", "")
    assert ml.cache_dir() is None
    ml.clear_cache()
    program(A)
    assert ml.metrics().disk_writes == 0
    monkeypatch.setenv("MINILAZY_CACHE_DIR", str(tmp_path / "here"))
    assert ml.cache_dir() == tmp_path / "here"
    monkeypatch.delenv("MINILAZY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ml.cache_dir() == tmp_path / "xdg" / "minilazy"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ml.cache_dir() == tmp_path / "home" / ".cache" / "minilazy"
    ml.set_cache_dir(tmp_path / "chosen")  # the programmatic switch wins over the environment
    assert ml.cache_dir() == tmp_path / "chosen"
    ml.set_cache_dir(None)
    assert ml.cache_dir() is None


def test_an_unwritable_directory_warns_once_and_is_left_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory should be")
    ml.set_cache_dir(blocker / "cache")
    ml.clear_cache()
    try:
        with pytest.warns(ml.CacheWarning, match="going on without the persistent cache"):
            program(A)
        assert ml.cache_dir() is None
        with warnings.catch_warnings():
            warnings.simplefilter("error", ml.CacheWarning)
            again(np.linspace(0, 1, 3, dtype=np.float32))
    finally:
        ml.set_cache_dir(None)


def test_eviction_keeps_the_directory_near_its_limit(disk: Path) -> None:
    ml.set_cache_dir(disk, max_bytes=40_000)  # a few small programs
    for n in range(2, 12):
        program(np.ones(n, np.float32))
    sizes = [p.stat().st_size for p in disk.iterdir()]
    assert sum(sizes) <= 40_000 + max(sizes) and len(sizes) < 10
    ml.clear_cache()
    ml.reset_metrics()
    program(np.ones(11, np.float32))  # the newest entries are kept
    assert ml.metrics().disk_hits == 1
    with pytest.raises(ValueError, match="max_bytes"):
        ml.set_cache_dir(disk, max_bytes=-1)


def test_keys_name_the_device_and_the_donation(disk: Path) -> None:
    x = ml.asarray(A)
    c = cut([(x + 1.0)._node], x.device)
    name = runtime_disk.disk_entry(c, (False,)).name
    assert name == runtime_disk.disk_entry(cut([(x + 1.0)._node], x.device), (False,)).name
    assert name != runtime_disk.disk_entry(c, (True,)).name
    assert name != runtime_disk.disk_entry(cut([(x + 2.0 * x)._node], x.device), (False,)).name
    devices = ml.devices("cpu")
    if len(devices) > 1:
        y = x.to(devices[1])
        assert name != runtime_disk.disk_entry(cut([(y + 1.0)._node], y.device), (False,)).name


@pytest.mark.skipif(len(ml.devices("cpu")) < 8, reason="needs 8 CPU devices (XLA_FLAGS)")
def test_a_sharded_program_is_read_back_on_its_mesh_only(disk: Path) -> None:
    devices = ml.devices("cpu")
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def run(mesh: ml.Mesh) -> tuple[np.ndarray, object]:
        x = ml.mark_sharding(ml.asarray(a), mesh, ("data", None))
        y = ml.tanh(x * 0.1) + 1.0
        ml.sync(y)
        return y.numpy(), y.sharding

    eight, two = ml.Mesh(devices, ("data",)), ml.Mesh(devices[:2], ("data",))
    first = run(eight)
    ml.clear_cache()
    ml.reset_metrics()
    again = run(eight)
    assert ml.metrics().disk_hits == 1
    np.testing.assert_array_equal(again[0], first[0])
    assert again[1] == first[1]
    ml.clear_cache()
    ml.reset_metrics()
    np.testing.assert_array_equal(run(two)[0], first[0])
    assert ml.metrics().disk_hits == 0  # the 8-device program never loads for 2


def test_printers_work_on_a_program_read_from_disk(disk: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    first_run(A)
    ml.clear_cache()
    x = ml.asarray(A)
    y = ml.exp(x * 0.5) - x[::-1]
    assert "stablehlo" in ml.graph(y).stablehlo() and "HloModule" in ml.graph(y).hlo()
    with ml.debug(3):
        y.numpy()
    assert ml.metrics().disk_hits == 1
    assert "stablehlo" in capsys.readouterr().err


def test_threads_share_the_disk_cache(disk: Path) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for n in range(3):
                a = np.full(4 + n, float(i), np.float32)
                np.testing.assert_allclose(program(a), np.exp(a * 0.5) - a[::-1], rtol=1e-6)
        except BaseException as e:  # collected: a failure in a thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ml.metrics().disk_writes == 3 and len(list(disk.iterdir())) == 3


def test_concurrent_writers_of_one_entry_leave_a_whole_entry(tmp_path: Path) -> None:
    ml.set_cache_dir(tmp_path)
    try:
        payloads = [bytes([i]) * 50_000 for i in range(8)]
        threads = [threading.Thread(target=diskcache.write, args=("a" * 64, p, {}))
                   for p in payloads]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert diskcache.read("a" * 64, {}) in payloads
        assert [p.name for p in tmp_path.iterdir()] == ["a" * 64 + diskcache.SUFFIX]
    finally:
        ml.set_cache_dir(None)
