"""``python -m minilazy.conformance.corpus export DIR``: the oracle's programs, portable.

An implementer without Python runs these with their own test runner: each case is a program
(leaves, then instructions over numbered slots), its leaves' values, and what NumPy observes,
with the tolerance and the laziness the spec expects, all in JSON. Values use the process
protocol's encoding (``spec/protocol.md``: tagged floats, base64 arrays), with ``{"slot": n}`` and
``{"slots": [...]}`` for a program's own values. ``spec/corpus.md`` documents the format.

The corpus holds the golden programs shipped in ``vectors/``, calls NumPy refuses (``errors/``)
and, per family, programs drawn by :func:`~minilazy.conformance.oracle.programgen.programs` from
a fixed seed: the same command with the same versions writes the same files.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

from minilazy import __version__
from minilazy.conformance.oracle import ULPS, numpy_apply
from minilazy.conformance.oracle.programgen import programs
from minilazy.conformance.oracle.programs import (
    Assign,
    Barrier,
    Branch,
    Instruction,
    Leaf,
    Num,
    NumpyMachine,
    Observe,
    Op,
    Program,
    Ref,
    Refs,
    Repeat,
    Sync,
    leaf_data,
    run,
    to_python,
    vectors,
    with_barriers,
    with_seeds,
)
from minilazy.conformance.oracle.strategies import examples_independent_of_local_code
from minilazy.conformance.protocol import encode, encode_array, error_of

FORMAT: Final = "lazytensor-corpus"
VERSION: Final = "1.0"
REAL: Final = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64")


def _barriers(p: Program) -> Program:
    flips = iter([True, False, False] * 100)
    return with_barriers(p, lambda: next(flips, False))


# Each family: the rule its cases check, what it draws, and how a drawn program is changed.
FAMILIES: Final[dict[str, tuple[str, dict[str, Any], Callable[[Program], Program]]]] = {
    "programs": ("LZ-BAR-004", {}, lambda p: p),
    "elementwise": ("LZ-NUM-001", {"elementwise_only": True, "control": False}, lambda p: p),
    "barriers": ("LZ-BAR-007", {}, _barriers),
}


# Calls NumPy refuses, on x = slot 0 (f32[2,3]) and y = slot 1 (its dtype and shape given): the
# error must come at the call, of NumPy's kind (LZ-ERR-001 shapes, LZ-ERR-002 dtypes), and the
# work recorded before it must still observe NumPy's values (LZ-ERR-003).
X, Y = Ref(0), Ref(1)
BAD: Final[dict[str, tuple[str, tuple[str, tuple[int, ...]], str, tuple[Any, ...],
                           tuple[tuple[str, Any], ...]]]] = {
    "broadcast": ("LZ-ERR-001", ("float32", (4, 5)), "add", (X, Y), ()),
    "matmul": ("LZ-ERR-001", ("float32", (2, 3)), "matmul", (X, Y), ()),
    "reshape": ("LZ-ERR-001", ("float32", (1,)), "reshape", (X, (4,)), ()),
    "concat": ("LZ-ERR-001", ("float32", (2, 4)), "concat", (Refs((0, 1)),), ()),
    "stack": ("LZ-ERR-001", ("float32", (3, 2)), "stack", (Refs((0, 1)),), ()),
    "axis": ("LZ-ERR-001", ("float32", (1,)), "sum", (X,), (("axis", 2),)),
    "index": ("LZ-ERR-001", ("float32", (1,)), "getitem", (X, (2,)), ()),
    "too-many-indices": ("LZ-ERR-001", ("float32", (1,)), "getitem", (X, (0, 0, 0)), ()),
    "permute-repeated": ("LZ-ERR-001", ("float32", (1,)), "permute_dims", (X, (0, 0)), ()),
    "expand_dims-axis": ("LZ-ERR-001", ("float32", (1,)), "expand_dims", (X,), (("axis", 3),)),
    "squeeze-not-1": ("LZ-ERR-001", ("float32", (2, 1)), "squeeze", (Y,), (("axis", 0),)),
    "broadcast_to": ("LZ-ERR-001", ("float32", (1,)), "broadcast_to", (X, (3, 3)), ()),
    "bitwise-of-floats": ("LZ-ERR-002", ("float32", (2, 3)), "bitwise_and", (X, Y), ()),
    "float-indices": ("LZ-ERR-001", ("float32", (1,)), "take", (X, Y), (("axis", 0),)),
}


def _refused(name: str) -> tuple[str, Program]:
    rule, (dtype, shape), op, args, kwargs = BAD[name]
    p = Program((Leaf("float32", (2, 3), 1), Leaf(dtype, shape, 2)),
                (Op(2, "multiply", (X, Num(2.0))), Op(3, op, args, kwargs), Observe(2)), 4)
    return rule, p


def _kind(p: Program) -> str:
    """The built-in kind of the error NumPy raises at the program's second op."""
    call = p.body[1]
    assert isinstance(call, Op)
    env = [leaf_data(x.dtype, x.shape, x.seed) for x in p.leaves]

    def value(a: Any) -> Any:
        return env[a.slot] if isinstance(a, Ref) else [env[s] for s in a.slots] if isinstance(
            a, Refs) else a

    try:
        numpy_apply(call.op, *map(value, call.args), **dict(call.kwargs))
    except Exception as e:
        return error_of(e)["type"]
    raise ValueError(f"NumPy accepts {call}: not an error case")


RULE_OF: Final = {"vectors": "LZ-BAR-004", "errors": "LZ-ERR-001"}


def _value(v: Any) -> Any:
    if isinstance(v, Ref):
        return {"slot": v.slot}
    if isinstance(v, Refs):
        return {"slots": list(v.slots)}
    if isinstance(v, Num):
        return encode(v.value, ref=id)
    if isinstance(v, tuple):
        return {"tuple": [_value(x) for x in v]}
    return encode(v, ref=id)


def _instruction(i: Instruction) -> dict[str, Any]:
    if isinstance(i, Op):
        return {"op": i.op, "out": i.out, "args": [_value(a) for a in i.args],
                "kwargs": {k: _value(v) for k, v in i.kwargs}}
    if isinstance(i, Branch):
        return {"kind": "branch", "slot": i.slot, "threshold": encode(float(i.threshold), id),
                "then": [_instruction(x) for x in i.then],
                "orelse": [_instruction(x) for x in i.orelse]}
    if isinstance(i, Repeat):
        return {"kind": "repeat", "times": i.times, "body": [_instruction(x) for x in i.body]}
    if isinstance(i, Sync):
        return {"kind": "sync", "slots": list(i.slots)}
    if isinstance(i, Observe):
        return {"kind": "observe", "slot": i.slot}
    if isinstance(i, Assign):
        return {"kind": "assign", "target": i.target, "source": i.source}
    assert isinstance(i, Barrier)
    return {"kind": "barrier"}


def _expected(p: Program) -> tuple[dict[str, Any], list[bool]]:
    trace = run(p, NumpyMachine())
    return {"observations": [{"slot": slot, "value": encode_array(np.asarray(value)),
                              "tolerance": "exact"} for slot, value in trace.observations],
            "decisions": trace.decisions}, trace.decisions


def case(name: str, rule: str, p: Program, description: str = "") -> dict[str, Any]:
    """One program as a corpus case: its instructions, leaf values, NumPy's observations.

    ``laziness`` says what a lazy implementation must show: no execution while it records
    (LZ-REC-001), and, where the same program on new leaf values (``rerun``) takes the same
    branches, no new compile (LZ-CACHE-001).

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf
        >>> p = Program((Leaf("int8", (2,), 0),), (Op(1, "add", (Ref(0), Num(1))), Observe(1)), 2)
        >>> c = case("one", "LZ-BAR-004", p)
        >>> c["body"][0]["args"], c["expected"]["observations"][0]["value"]["dtype"]
        ([{'slot': 0}, 1], 'int8')
    """
    refused = _kind(p) if rule in ("LZ-ERR-001", "LZ-ERR-002") else None
    runnable = Program(p.leaves, (p.body[0], p.body[2]), p.slots) if refused else p
    expected, decisions = _expected(runnable)
    again = with_seeds(runnable, 1000)
    expected_again, decisions_again = _expected(again)
    rerun = decisions_again == decisions
    return {
        "format": FORMAT, "version": VERSION, "name": name, "rules": [rule],
        "description": description, "slots": p.slots,
        "leaves": [{"slot": i, "value": encode_array(leaf_data(x.dtype, x.shape, x.seed))}
                   for i, x in enumerate(p.leaves)],
        "body": [{**_instruction(i), **({"raises": refused} if refused and k == 1 else {})}
                 for k, i in enumerate(p.body)],
        "expected": expected,
        "laziness": {"executions_while_recording": 0,
                     **({"compiles_on_rerun": 0} if rerun and not refused else {})},
        **({"rerun": {"leaves": [
            {"slot": i, "value": encode_array(leaf_data(x.dtype, x.shape, x.seed))}
            for i, x in enumerate(again.leaves)], "expected": expected_again}}
           if rerun and not refused else {}),
        "dtypes": sorted({x.dtype for x in p.leaves}),
        "python": to_python(p),
    }


def drawn(family: str, count: int, dtypes: Sequence[str], start: int = 0) -> list[Program]:
    """``count`` programs of ``family``, drawn by Hypothesis from seed ``start``.

    Example:
        >>> len(drawn("elementwise", 3, ["int32"]))
        3
    """
    _, options, change = FAMILIES[family]
    found: list[Program] = []
    examples_independent_of_local_code()  # the same programs wherever this runs

    @seed(start)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)  # not a profile's
    @given(programs([np.dtype(d) for d in dtypes], **options))
    def collect(p: Program) -> None:
        if len(found) < count:
            found.append(change(p))

    collect()
    return found


def export(directory: Path, count: int = 20, dtypes: Sequence[str] = REAL,
           start: int = 0) -> dict[str, Any]:
    """Write the corpus to ``directory``: an ``index.json`` and one file per case.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     index = export(Path(d), count=1, dtypes=["int32"])
        ...     sorted(index["families"])
        ['barriers', 'elementwise', 'errors', 'programs', 'vectors']
    """
    directory.mkdir(parents=True, exist_ok=True)
    cases: dict[str, list[str]] = {}

    def write(family: str, name: str, content: dict[str, Any]) -> None:
        (directory / family).mkdir(exist_ok=True)
        (directory / family / f"{name}.json").write_text(json.dumps(content, indent=1))
        cases.setdefault(family, []).append(f"{family}/{name}.json")

    for name, p in vectors().items():
        write("vectors", name, case(name, "LZ-BAR-004", p, _description(name)))
    for name in BAD:
        rule, p = _refused(name)
        write("errors", name, case(name, rule, p, f"{BAD[name][2]} refused by NumPy"))
    for family, (rule, _, _) in FAMILIES.items():
        for k, p in enumerate(drawn(family, count, dtypes, start)):
            write(family, f"{family}-{k:03d}", case(f"{family}-{k:03d}", rule, p))
    index = {"format": FORMAT, "version": VERSION, "generator": f"minilazy {__version__}",
             "numpy": np.__version__, "seed": start, "dtypes": list(dtypes),
             "tolerances": {"exact": {"ulps": ULPS["exact"]}},
             "families": {f: {"rule": RULE_OF.get(f) or FAMILIES[f][0], "cases": names}
                          for f, names in cases.items()}}
    (directory / "index.json").write_text(json.dumps(index, indent=1))
    return index


def _description(name: str) -> str:
    text = resources.files("minilazy.conformance").joinpath("vectors", f"{name}.json").read_text()
    return str(json.loads(text).get("description", ""))


def main(argv: list[str] | None = None) -> int:
    """``export DIR [--count N] [--dtypes a,b] [--seed S]``; the exit status is 0.

    Example:
        >>> main.__name__
        'main'
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.corpus",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out = sub.add_parser("export", help="write the corpus to DIR")
    out.add_argument("directory", type=Path)
    out.add_argument("--count", type=int, default=20, help="programs per family (default 20)")
    out.add_argument("--dtypes", default=",".join(REAL),
                     help="the leaves' dtypes, comma-separated (default: NumPy's twelve)")
    out.add_argument("--seed", type=int, default=0, help="Hypothesis's seed (default 0)")
    options = parser.parse_args(argv)
    index = export(options.directory, options.count, options.dtypes.split(","), options.seed)
    total = sum(len(f["cases"]) for f in index["families"].values())
    print(f"{total} cases in {options.directory} (format {FORMAT} {VERSION})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
