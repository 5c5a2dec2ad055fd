"""An implementation in another process, in any language, driven over the process protocol.

``python -m minilazy.conformance --lazy-command "node adapter.mjs"`` checks the implementation
that command serves (``spec/protocol.md``); the oracle sees an ordinary adapter. A command
that starts with ``python`` runs under the oracle's own Python (its virtual environment, whether
or not it is activated). The command runs in its own process group; a request it does not answer
within the test's timeout (``--lazy-timeout``, less 2 s) stops it, and a server that dies (a
crash, an exit) fails the test that was running with its exit status and the end of its stderr:
either way the next call starts a fresh server, and the run goes on.
"""

from __future__ import annotations

import builtins
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any

import numpy as np

from minilazy.conformance.adapter import Counters, DtypePolicy
from minilazy.conformance.protocol import VERSION, Json, decode, encode, exception_of
from minilazy.conformance.tools import isolation

COMMAND_VARIABLE = "MINILAZY_LAZY_COMMAND"


class Ref:
    """A handle on an object the server keeps (a tensor, a device); freed when it is dropped.

    One ``Ref`` per object: an op that rebinds a tensor in place answers with the handle held.
    Python's own questions to a tensor (``float(x)``, ``int``, ``bool``, ``operator.index``,
    ``len``, ``x.item()``) are ``convert`` requests.
    """

    __slots__ = ("n", "owner", "generation", "__weakref__")

    def __init__(self, n: int, owner: ProcessAdapter, generation: int) -> None:
        self.n, self.owner, self.generation = n, owner, generation

    def __del__(self) -> None:
        if self.generation == self.owner.generation:
            self.owner.dropped.append(self.n)

    def __repr__(self) -> str:
        return f"<ref {self.n} of {self.owner.name}>"

    def __float__(self) -> float:
        return float(self.owner._call("convert", self, "float"))

    def __int__(self) -> int:
        return int(self.owner._call("convert", self, "int"))

    def __bool__(self) -> bool:
        return bool(self.owner._call("convert", self, "bool"))

    def __index__(self) -> int:
        return int(self.owner._call("convert", self, "index"))

    def __len__(self) -> int:
        return int(self.owner._call("convert", self, "len"))

    def item(self) -> Any:
        """``x.item()``: the value of a one-element tensor as a Python scalar."""
        return self.owner._call("convert", self, "item")


class ProcessAdapter:
    """The adapter protocol, each call a request to the server ``command`` starts.

    Example:
        >>> a = ProcessAdapter("python -m minilazy.conformance.serve --impl "
        ...                    "minilazy.conformance.mutate.toy:toy")
        >>> x = a.from_numpy(np.arange(3.0))
        >>> a.name, a.to_numpy(a.apply("multiply", x, 2.0)).tolist()
        ('toy', [0.0, 2.0, 4.0])
        >>> a.close()
    """

    def __init__(self, command: str) -> None:
        self.command = command
        self.name = command
        self.generation = 0
        self.dropped: list[int] = []
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: IO[bytes] | None = None
        self._id = 0
        self._lock = threading.RLock()  # reentrant: a fresh server's hello is sent from a call
        self._refs: weakref.WeakValueDictionary[int, Ref] = weakref.WeakValueDictionary()
        hello = self._call("hello")
        if str(hello.get("protocol", "")).split(".")[0] != VERSION.split(".")[0]:
            raise ValueError(f"{command!r} speaks protocol {hello.get('protocol')!r}; this "
                             f"oracle speaks {VERSION}")
        self.name, self.version = str(hello["name"]), str(hello["version"])
        self.capabilities = frozenset(hello["capabilities"])
        self._methods = frozenset(hello.get("methods") or ())
        self._ops = None if hello.get("ops") is None else frozenset(hello["ops"])
        if hello.get("dtype_policy") is not None:
            p = hello["dtype_policy"]
            self.dtype_policy = DtypePolicy(
                None if p.get("dtypes") is None else tuple(p["dtypes"]),
                p.get("default_float", "float64"), p.get("default_int", "int64"),
                p.get("index", "int64"), dict(p.get("promotion") or {}),
                frozenset(p.get("unsupported") or ()))

    # -- the adapter protocol ------------------------------------------------------------------

    def from_numpy(self, array: np.ndarray[Any, Any]) -> Any:
        return self._call("from_numpy", np.asarray(array))

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        return np.asarray(self._call("to_numpy", x))

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        return self._call("apply", op, *args, **kwargs)

    def barrier(self) -> None:
        self._call("barrier")

    def supports(self, op: str) -> bool:
        return self._ops is None or op in self._ops

    def counters(self) -> Counters:
        return Counters(**self._call("counters"))

    def key(self, *xs: Any) -> Hashable:
        return _hashable(self._call("key", *xs))

    def shape(self, x: Any) -> tuple[int, ...]:
        return tuple(self._call("shape", x))

    def dtype(self, x: Any) -> np.dtype[Any]:
        found: np.dtype[Any] = np.dtype(self._call("dtype", x))
        return found

    def isolate(self) -> None:
        if "isolate" in self._methods:  # a server without it keeps nothing to forget
            self._call("isolate")

    def devices(self) -> Sequence[Any]:
        return list(self._call("devices"))

    def eager(self) -> AbstractContextManager[None]:
        return self._context("eager")

    def no_fallback(self) -> AbstractContextManager[None]:
        return self._context("no_fallback")

    def __getattr__(self, method: str) -> Callable[..., Any]:
        # The rest (sync, inplace, is_pending, ir, hlo, reset, to_device, conv2d, sort, linalg,
        # fft...) pass through unchanged; only what the server has exists here.
        if method.startswith("_") or method not in self.__dict__.get("_methods", ()):
            raise AttributeError(method)
        return lambda *args, **kwargs: self._call(method, *args, **kwargs)

    @contextmanager
    def _context(self, name: str) -> Iterator[None]:
        self._call("enter", name)
        try:
            yield
        finally:
            self._call("exit", name)

    # -- the process ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the server (the next call starts a new one)."""
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None
            self.generation += 1
            self.dropped.clear()

    def _start(self) -> subprocess.Popen[str]:
        self._stderr = tempfile.TemporaryFile()
        argv = shlex.split(self.command)
        if argv and argv[0] in ("python", "python3"):  # this Python: its venv, its minilazy
            argv[0] = sys.executable
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                encoding="utf-8", start_new_session=True)
        self._lines = queue.Queue()
        threading.Thread(target=_read, args=(proc.stdout, self._lines), daemon=True).start()
        return proc

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:  # one request in flight: a second thread's would take its answer
            return self._send(method, *args, **kwargs)

    def _send(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self._proc is None:
            self._proc = self._start()
            if method != "hello":
                self._call("hello")  # a fresh server: the handshake first
        self._id += 1
        request: dict[str, Json] = {
            "id": self._id, "call": method, "args": [encode(a, self._ref) for a in args],
            "kwargs": {k: encode(v, self._ref) for k, v in kwargs.items()}}
        if self.dropped:
            request["free"], self.dropped = self.dropped, []
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request, allow_nan=False) + "\n")
            self._proc.stdin.flush()
        except OSError:
            pass  # it died: the answer's absence says how
        answer = self._answer(lambda: f"{method}({', '.join(map(_short, args))})")
        if "error" in answer:
            raise exception_of(answer["error"])
        for w in answer.get("warnings", ()):
            category = getattr(builtins, str(w.get("type")), None)
            if not (isinstance(category, type) and issubclass(category, Warning)):
                category = UserWarning
            warnings.warn(str(w.get("message")), category, stacklevel=3)
        if method == "hello":
            return answer.get("result")  # plain JSON, read before any value
        return decode(answer.get("result"), self._deref)

    def _answer(self, call: Callable[[], str]) -> dict[str, Any]:
        """The answer to the request just sent; ``call`` names it, for an error only."""
        limit = isolation.timeout()
        try:
            line = self._lines.get(timeout=max(limit - 2, 1) if limit > 0 else None)
        except queue.Empty:
            self.close()
            raise RuntimeError(f"{self.name} hung: no answer to {call()} within "
                               f"{max(limit - 2, 1):.0f} s (its process was stopped)") from None
        if line is None:
            assert self._proc is not None
            status, tail = self._proc.wait(), self._tail()
            self.close()
            raise RuntimeError(f"{self.name}'s process died ({_status(status)}) during {call()}"
                               + (f"; its stderr ended with:\n{tail}" if tail else ""))
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            self.close()
            raise RuntimeError(f"{self.name} answered {call()} with a line that is not JSON (a "
                               f"print to stdout? logs belong on stderr): {line[:200]!r}") from None
        if not isinstance(answer, dict) or answer.get("id") != self._id:
            self.close()
            raise RuntimeError(f"{self.name} answered {call()} out of turn: {line[:200]!r}")
        return answer

    def _tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, self._stderr.tell() - 2000))
        return self._stderr.read().decode("utf-8", "replace").strip()

    def _ref(self, obj: Any) -> int:
        if not isinstance(obj, Ref) or obj.owner is not self:
            raise TypeError(f"cannot send {type(obj).__name__} to {self.name}'s process")
        if obj.generation != self.generation:
            raise ValueError(f"{obj!r} belonged to {self.name}'s earlier process, which ended")
        return obj.n

    def _deref(self, n: int) -> Ref:
        found = self._refs.get(n)
        if found is not None and found.generation == self.generation:
            return found
        if n in self.dropped:  # its last Ref died since the last request: it lives on
            self.dropped.remove(n)
        self._refs[n] = made = Ref(n, self, self.generation)
        return made


def command() -> ProcessAdapter:
    """The factory ``--lazy-command`` names: the server ``$MINILAZY_LAZY_COMMAND`` starts."""
    found = os.environ.get(COMMAND_VARIABLE)
    if not found:
        raise ValueError(f"no command: set {COMMAND_VARIABLE} (or pass --lazy-command)")
    return ProcessAdapter(found)


def _read(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _stop(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a shell's children too
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _status(status: int) -> str:
    if status < 0:
        return f"signal {signal.Signals(-status).name}"
    return f"exit status {status}"


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array({value.dtype}{list(value.shape)})"
    return repr(value)[:60]


def _hashable(value: Any) -> Hashable:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    found: Hashable = value
    return found
