"""``python -m minilazy.conformance.serve [--impl MODULE:FACTORY]``: an adapter as a server.

Serves any in-process adapter (minilazy on the CPU by default) over the oracle's process
protocol (:mod:`minilazy.conformance.protocol`, ``spec/protocol.md``), so that::

    python -m minilazy.conformance --lazy-command "python -m minilazy.conformance.serve"

checks minilazy through a pipe, as it would check a library written in any language: the
protocol's own conformance test (the per-rule results must be the in-process run's). It is also
the reference server an implementer in another language reads before writing theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from contextlib import AbstractContextManager
from typing import IO, Any

from minilazy.conformance.adapter import Adapter, DtypePolicy, load, supports
from minilazy.conformance.protocol import (
    CONTEXTS,
    CONVERSIONS,
    METHODS,
    NOT_CARRIED,
    VERSION,
    Json,
    decode,
    encode,
    error_of,
)
from minilazy.conformance.registry import ops


class Server:
    """One adapter, the objects it made (by handle), and the contexts entered.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> s = Server(toy())
        >>> x = s.handle({"id": 1, "call": "from_numpy", "args": [{"array": {
        ...     "dtype": "float64", "shape": [2], "data": "AAAAAAAA8D8AAAAAAAAAQA=="}}]})
        >>> y = s.handle({"id": 2, "call": "apply", "args": ["negative", x["result"]]})
        >>> s.handle({"id": 3, "call": "to_numpy", "args": [y["result"]]})["result"]["array"]
        {'dtype': 'float64', 'shape': [2], 'data': 'AAAAAAAA8L8AAAAAAAAAwA=='}
    """

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.objects: dict[int, Any] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> its handle: one handle per object
        self.made = 0
        self.contexts: list[tuple[str, AbstractContextManager[Any]]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (an error answer for anything the call raised)."""
        for n in request.get("free", ()):
            self.numbers.pop(id(self.objects.pop(n, None)), None)
        answer: dict[str, Any] = {"id": request.get("id")}
        try:
            args = [decode(v, self._deref) for v in request.get("args", [])]
            kwargs = {k: decode(v, self._deref) for k, v in request.get("kwargs", {}).items()}
            with warnings.catch_warnings(record=True) as caught:
                result = self._dispatch(str(request.get("call")), args, kwargs)
            # hello's answer is plain JSON (the one result read before any value)
            answer["result"] = result if request.get("call") == "hello" else encode(result,
                                                                                    self._ref)
            if caught:  # the client warns them again, in the test that caused them
                answer["warnings"] = [{"type": _builtin(w.category), "message": str(w.message)}
                                      for w in caught]
        except Exception as e:
            answer["error"] = error_of(e)
        return answer

    def hello(self) -> dict[str, Json]:
        """Who serves, with what: the first answer a client reads."""
        a = self.adapter
        policy = getattr(a, "dtype_policy", None)
        return {"protocol": VERSION, "name": a.name, "version": a.version,
                "capabilities": sorted(set(a.capabilities) - NOT_CARRIED),
                "methods": sorted(m for m in METHODS if hasattr(a, m)),
                "ops": sorted(op for op in ops() if supports(a, op)),
                "dtype_policy": _policy(policy) if isinstance(policy, DtypePolicy) else None}

    def _dispatch(self, call: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if call == "hello":
            return self.hello()
        if call in ("enter", "exit"):
            return self._context(call, str(args[0]))
        if call == "convert":  # float(x), len(x)...: Python's questions to the tensor itself
            if args[1] not in CONVERSIONS:
                raise ValueError(f"no conversion {args[1]!r}: one of {sorted(CONVERSIONS)}")
            return CONVERSIONS[args[1]](args[0])
        if call not in METHODS:
            raise ValueError(f"no method {call!r} in protocol {VERSION}: one of "
                             f"{sorted(METHODS | {'hello', 'enter', 'exit', 'convert'})}")
        method = getattr(self.adapter, call, None)
        if method is None:
            raise NotImplementedError(f"{self.adapter.name} has no method {call!r}")
        return method(*args, **kwargs)

    def _context(self, call: str, name: str) -> None:
        if name not in CONTEXTS:
            raise ValueError(f"no context {name!r}: one of {sorted(CONTEXTS)}")
        if call == "enter":
            manager: AbstractContextManager[Any] = getattr(self.adapter, name)()
            manager.__enter__()
            self.contexts.append((name, manager))
            return
        if not self.contexts or self.contexts[-1][0] != name:
            raise ValueError(f"exit {name!r}: the innermost context entered is "
                             f"{self.contexts[-1][0] if self.contexts else 'none'}")
        self.contexts.pop()[1].__exit__(None, None, None)

    def _ref(self, obj: Any) -> int:
        n = self.numbers.get(id(obj))
        if n is not None and self.objects.get(n) is obj:  # the same tensor, rebound in place
            return n
        self.made += 1
        self.objects[self.made] = obj
        self.numbers[id(obj)] = self.made
        return self.made

    def _deref(self, n: int) -> Any:
        if n not in self.objects:
            raise ValueError(f"no object {{'ref': {n}}} here: it was freed, or never made")
        return self.objects[n]


def _builtin(category: type[Warning]) -> str:
    return next(c.__name__ for c in category.__mro__ if c.__module__ == "builtins")


def _policy(p: DtypePolicy) -> dict[str, Json]:
    return {"dtypes": None if p.dtypes is None else list(p.dtypes),
            "default_float": p.default_float, "default_int": p.default_int, "index": p.index,
            "promotion": dict(p.promotion), "unsupported": sorted(p.unsupported)}


def serve(server: Server, requests: IO[str], answers: IO[str]) -> None:
    r"""Answer each line of ``requests`` with a line on ``answers``, until the input ends.

    Example:
        >>> import io
        >>> from minilazy.conformance.mutate.toy import toy
        >>> out = io.StringIO()
        >>> serve(Server(toy()), io.StringIO('{"id": 1, "call": "barrier"}\n'), out)
        >>> out.getvalue()
        '{"id": 1, "result": null}\n'
    """
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            answer: dict[str, Any] = {"id": None, "error": {"type": "ValueError",
                                                           "message": f"not JSON: {e}"}}
        else:
            answer = server.handle(request) if isinstance(request, dict) else {
                "id": None, "error": {"type": "ValueError", "message": "not a JSON object"}}
        answers.write(json.dumps(answer, allow_nan=False) + "\n")
        answers.flush()


def main(argv: list[str] | None = None) -> int:
    """Serve the adapter ``--impl`` names on stdin/stdout; the exit status is 0 at end of input.

    The protocol keeps the real stdout: whatever the library prints (from Python or C) goes to
    stderr, where it cannot break a message.

    Example:
        >>> main.__name__
        'main'
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.serve",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--impl", default=None, metavar="MODULE:FACTORY",
                        help="the in-process adapter to serve (default: $MINILAZY_IMPL, then "
                             "minilazy on the CPU)")
    options = parser.parse_args(argv)
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(Server(load(options.impl)), sys.stdin, answers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
