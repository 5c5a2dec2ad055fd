"""The spec's prose and its machine-readable registry say the same thing, and every test that
claims to check a rule names a rule that exists."""

from __future__ import annotations

import ast
import pathlib
import re

import minilazy as ml
from minilazy.conformance.registry import ops, rules

ROOT = pathlib.Path(__file__).parents[2]
PROSE = (ROOT / "spec" / "lazytensor.md").read_text()
RULE_LINE = re.compile(r"^\*\*(LZ-[A-Z]+-\d{3})\*\* "
                       r"\((MUST|SHOULD|MAY|\*implementation-defined\*)\) (.*)$", re.M)


def _prose_rules():
    return {rid: ("IMPL" if "implementation" in level else level, text)
            for rid, level, text in RULE_LINE.findall(PROSE)}


def test_every_rule_in_the_prose_is_in_the_registry_and_back():
    prose = _prose_rules()
    assert set(prose) == set(rules())
    for rid, (level, text) in prose.items():
        assert rules()[rid].level == level, rid
        assert rules()[rid].summary == text, rid


def test_rule_ids_are_unique_in_the_prose():
    ids = [m[0] for m in RULE_LINE.findall(PROSE)]
    assert len(ids) == len(set(ids))


def _markers(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "spec" and node.args
                and isinstance(node.args[0], ast.Constant)):
            yield node.args[0].value


SUITE = ROOT / "src" / "minilazy" / "conformance" / "suite"


def test_every_spec_marker_in_the_suite_names_a_known_rule():
    used = {m for p in SUITE.glob("test_*.py") for m in _markers(p)}
    assert used, "no spec markers found"
    assert used <= set(rules()), sorted(used - set(rules()))


def test_rule_behaviour_is_tested_once_in_the_suite_not_in_the_engine_tests():
    # One harness: a rule's tests run on every implementation; tests/ holds engine internals.
    tagged = {p.name: sorted(set(_markers(p))) for p in (ROOT / "tests").glob("test_*.py")}
    assert not {name: ids for name, ids in tagged.items() if ids}


KINDS = {"elementwise", "select", "conversion", "reduction", "scan", "linalg", "shape",
         "triangle", "index", "search", "set", "creation", "autodiff", "multitensor"}
TOLERANCES = {"exact", "ulp", "loose", "reduction"}
DOMAINS = {"", "shift", "exponent", "trig", "bounded", "unit", "cast", "index", "divisor"}
# An op without a function of its own is a Tensor method; only indexing is.
METHODS = {"getitem": "__getitem__", "setitem": "__setitem__"}


def test_every_registered_op_is_a_public_function_with_its_numpy_reference():
    for spec in ops().values():
        if spec.method:
            assert METHODS.get(spec.name) == spec.method, spec.name
            assert callable(getattr(ml.Tensor, spec.method)), spec.name
            assert not hasattr(ml, spec.name), f"{spec.name} is a function: drop its method"
        else:
            assert callable(getattr(ml, spec.name)), spec.name
        assert callable(spec.numpy_callable()), spec.numpy
        assert spec.kind in KINDS, spec.name
        assert spec.tolerance in TOLERANCES, spec.name
        assert spec.domain in DOMAINS, spec.name
        assert spec.arity in {-1, 0, 1, 2, 3}, spec.name


def test_every_domain_and_tolerance_class_is_described_in_the_prose():
    for domain in DOMAINS - {""}:
        assert f"- `{domain}`:" in PROSE, domain
    for tolerance in TOLERANCES:
        assert f"| `{tolerance}` |" in PROSE, tolerance


def test_the_elementwise_ops_keep_their_shape():
    # Other tests select ops by kind and arity: elementwise ops take one or two tensors.
    assert {s.arity for s in ops().values() if s.kind == "elementwise"} == {1, 2}


def _params(signature: str) -> list[str]:
    return [p.split("=")[0].strip() for p in signature.split(",") if p.strip() not in "/*"]


def test_every_op_has_an_array_api_signature_minilazy_accepts():
    import inspect

    for name, spec in ops().items():
        assert spec.signature, name
        if spec.method:  # x[key] and x[key] = value
            continue
        ours = list(inspect.signature(getattr(ml, name)).parameters)
        theirs = _params(spec.signature)
        assert set(theirs) <= set(ours), (name, theirs, ours)
        positional = theirs[:len(spec.signature.split("/")[0].split(","))]
        assert ours[:len(positional)] == positional, (name, positional, ours)
