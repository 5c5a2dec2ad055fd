"""Programs as JSON: ``dumps``/``loads``, and the golden programs shipped in ``vectors/``."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from typing import Any

from minilazy.conformance.oracle.programs.form import (
    Assign,
    Barrier,
    Branch,
    Instruction,
    Leaf,
    Num,
    Observe,
    Op,
    Program,
    Ref,
    Refs,
    Repeat,
    Sync,
)


def _encode(v: Any) -> Any:
    if isinstance(v, Ref):
        return {"ref": v.slot}
    if isinstance(v, Refs):
        return {"refs": list(v.slots)}
    if isinstance(v, Num):
        return {"scalar": v.value}
    if isinstance(v, slice):
        return {"slice": [v.start, v.stop, v.step]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, tuple):
        return [_encode(x) for x in v]
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_decode(x) for x in v)
    if not isinstance(v, dict):
        return v
    if "ref" in v:
        return Ref(v["ref"])
    if "refs" in v:
        return Refs(tuple(v["refs"]))
    if "scalar" in v:
        return Num(v["scalar"])
    if "slice" in v:
        return slice(*v["slice"])
    return Ellipsis


def _instr_json(i: Instruction) -> dict[str, Any]:
    if isinstance(i, Op):
        return {"op": i.op, "out": i.out, "args": [_encode(a) for a in i.args],
                "kwargs": {k: _encode(v) for k, v in i.kwargs}}
    if isinstance(i, (Branch, Repeat)):
        blocks = ("then", "orelse") if isinstance(i, Branch) else ("body",)
        out = {f.name: getattr(i, f.name) for f in dataclasses.fields(i) if f.name not in blocks}
        return {"kind": type(i).__name__.lower(), **out,
                **{b: [_instr_json(x) for x in getattr(i, b)] for b in blocks}}
    return {"kind": type(i).__name__.lower(),
            **{f.name: _encode(getattr(i, f.name)) for f in dataclasses.fields(i)}}


_KINDS: dict[str, Any] = {"barrier": Barrier, "sync": Sync, "observe": Observe,
                          "assign": Assign, "branch": Branch, "repeat": Repeat}


def _instr(d: dict[str, Any]) -> Instruction:
    if "op" in d:
        return Op(d["out"], d["op"], tuple(_decode(a) for a in d["args"]),
                  tuple((k, _decode(v)) for k, v in d["kwargs"].items()))
    fields = {k: v for k, v in d.items() if k != "kind"}
    for block in ("then", "orelse", "body"):
        if block in fields:
            fields[block] = tuple(_instr(x) for x in fields[block])
    if "slots" in fields:
        fields["slots"] = tuple(fields["slots"])
    instr: Instruction = _KINDS[d["kind"]](**fields)
    return instr


def dumps(p: Program) -> str:
    """The program as JSON text (:func:`loads` reads it back).

    Example:
        >>> from minilazy.conformance.oracle.programs import Barrier, Program, dumps
        >>> dumps(Program((), (Barrier(),), slots=0))
        '{"version": 1, "slots": 0, "leaves": [], "body": [{"kind": "barrier"}]}'
    """
    return json.dumps({"version": 1, "slots": p.slots,
                       "leaves": [{"dtype": x.dtype, "shape": list(x.shape), "seed": x.seed}
                                  for x in p.leaves],
                       "body": [_instr_json(i) for i in p.body]})


def loads(text: str) -> Program:
    """The program whose JSON is ``text``.

    Example:
        >>> loads('{"version": 1, "slots": 0, "leaves": [], "body": []}').body
        ()
    """
    return from_json(json.loads(text))


def from_json(d: dict[str, Any]) -> Program:
    """The program whose JSON object (parsed) is ``d``.

    Example:
        >>> from_json({"version": 1, "slots": 0, "leaves": [], "body": []}).slots
        0
    """
    if d.get("version") != 1:
        raise ValueError(f"unknown program version {d.get('version')!r}")
    return Program(tuple(Leaf(x["dtype"], tuple(x["shape"]), x["seed"]) for x in d["leaves"]),
                   tuple(_instr(i) for i in d["body"]), d["slots"])


def vectors() -> dict[str, Program]:
    """The golden programs shipped in the package (``vectors/*.json``), by file stem.

    Each file holds a ``description`` and a ``program`` (its JSON object); the suite replays
    them all.

    Example:
        >>> "branch_on_an_observed_value" in vectors()
        True
    """
    folder = resources.files("minilazy.conformance").joinpath("vectors")
    return {f.name.removesuffix(".json"): from_json(json.loads(f.read_text())["program"])
            for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".json")}
