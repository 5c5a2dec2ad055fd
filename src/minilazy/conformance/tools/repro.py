"""Turn an oracle failure into a standalone script for the library's bug tracker.

``python -m minilazy.conformance.tools.repro --impl MODULE:FACTORY REPORT.json [TEST_ID ...]
[--out DIR]`` reads the failures of a JSON report (``--spec-report``) and, for each one whose
failing example is a single op call (the value tests of ops), writes a script that needs only
the library and NumPy: it makes the inputs, calls the op as the library spells it, computes
NumPy's answer, prints both, and exits 1 while they differ (0 once the bug is fixed).

The spelling comes from the adapter: :class:`~minilazy.conformance.base.BaseAdapter` gives its
``repro_prelude`` (the library's import, and an ``array(host)``/``value(x)`` pair) and
``spell(op, args, kwargs)`` (the call's source). A failure of another shape (a random program,
a laziness rule) is listed as not reducible: its example, printed as Python, is the place to
start.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minilazy.conformance.adapter import load
from minilazy.conformance.registry import ops

_CALL = re.compile(r"program as Python:\n(\w+\(.*\))\s*$", re.S)

TEMPLATE = '''"""{title}

Rule {rules}
Seen on {library} {version}; the oracle's test: {test}.
Failure: {message}

Reduced by `python -m minilazy.conformance.tools.repro`; needs only {library} and NumPy. Exits 1
while the bug is there, 0 once it is fixed.
"""

import sys

import numpy as np

{prelude}
nan, inf = float("nan"), float("inf")

inputs = [{inputs}]
got = np.asarray(value({call}))
want = np.asarray(np.{numpy}({numpy_args}))
print("{library}:", repr(got))
print("NumPy:  ", repr(want))
same = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(
    got, want, equal_nan=want.dtype.kind in "fc")
sys.exit(0 if same else 1)
'''


def reducible(failure: dict[str, Any]) -> tuple[str, list[str], dict[str, str]] | None:
    r"""The op, argument sources and keyword sources of a failure's single-call example.

    Example:
        >>> reducible({"example": "program as Python:\nsign(np.array([nan], dtype=np.float32))"})
        ('sign', ['np.array([nan], dtype=np.float32)'], {})
    """
    found = _CALL.search(failure.get("example", ""))
    if found is None:
        return None
    source = found.group(1)
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    args = [ast.get_source_segment(source, a) or "" for a in call.args]
    kwargs = {k.arg: ast.get_source_segment(source, k.value) or "" for k in call.keywords
              if k.arg is not None}
    return call.func.id, args, kwargs


def script(adapter: Any, test: str, failure: dict[str, Any]) -> str | None:
    r"""The standalone script for one failure, or ``None`` when it is not a single call.

    Example:
        >>> import numpy as np
        >>> from minilazy.conformance.base import BaseAdapter
        >>> class Numpy(BaseAdapter):
        ...     name, version, namespace, repro_namespace = "numpy", "2", np, "np"
        ...     repro_prelude = "def array(a): return a\ndef value(x): return x"
        >>> f = {"message": "values differ", "rules": ["LZ-NUM-001: ..."],
        ...      "example": "program as Python:\nsign(np.array([1.5], dtype=np.float32))"}
        >>> "np.sign(array(inputs[0]))" in script(Numpy(), "t", f)
        True
    """
    call = reducible(failure)
    spell = getattr(adapter, "spell", None)
    if call is None or spell is None or not getattr(adapter, "repro_prelude", ""):
        return None
    op, args, kwargs = call
    if op not in ops():
        return None
    names = [f"array(inputs[{i}])" if a.startswith("np.array(") else f"inputs[{i}]"
             for i, a in enumerate(args)]
    spelled = spell(op, names, kwargs)
    if spelled is None:
        return None
    numpy_kwargs = "".join(f", {k}={v}" for k, v in kwargs.items())
    rules = "; ".join(failure.get("rules", [])) or "?"
    return TEMPLATE.format(
        title=f"{adapter.name}: {op} differs from NumPy", rules=rules, test=test,
        library=adapter.name, version=adapter.version,
        message=failure.get("message", "")[:300].replace('"""', "'''"),
        prelude=adapter.repro_prelude.strip(), inputs=", ".join(args), call=spelled,
        numpy=ops()[op].numpy,
        numpy_args=", ".join(f"inputs[{i}]" for i in range(len(args))) + numpy_kwargs)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring).

    Example:
        >>> main.__name__
        'main'
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.tools.repro")
    parser.add_argument("report", type=Path, help="a JSON report of the oracle")
    parser.add_argument("tests", nargs="*", help="failed tests to reduce (default: all)")
    parser.add_argument("--impl", required=True, help="the adapter: MODULE:FACTORY")
    parser.add_argument("--out", type=Path, default=Path("."), help="where to write scripts")
    args = parser.parse_args(argv)
    adapter = load(args.impl)
    failures: dict[str, dict[str, Any]] = json.loads(args.report.read_text())["failures"]
    chosen = args.tests or sorted(failures)
    args.out.mkdir(parents=True, exist_ok=True)
    written = 0
    for test in chosen:
        text = script(adapter, test, failures[test])
        if text is None:
            print(f"not a single call: {test}")
            continue
        name = re.sub(r"\W+", "_", test.split("::")[-1]).strip("_")
        path = args.out / f"repro_{name}.py"
        path.write_text(text)
        written += 1
        print(f"wrote {path}")
    return 0 if written or not chosen else 1


if __name__ == "__main__":
    raise SystemExit(main())
