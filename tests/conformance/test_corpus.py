"""The portable corpus (spec/corpus.md): deterministic, complete, and enough to check an
implementation from the JSON alone, as a runner in another language would."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapters.minilazy_adapter import cpu
from minilazy.conformance.corpus import BAD, FAMILIES, export
from minilazy.conformance.oracle.programs import vectors
from minilazy.conformance.protocol import decode, decode_array, encode_array


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("corpus")
    export(directory, count=6)
    return directory


def _cases(directory: Path) -> list[dict[str, Any]]:
    index = json.loads((directory / "index.json").read_text())
    return [json.loads((directory / name).read_text())
            for family in index["families"].values() for name in family["cases"]]


def test_the_index_lists_every_case_of_every_family_and_the_export_is_deterministic(
        corpus, tmp_path):
    index = json.loads((corpus / "index.json").read_text())
    assert (index["format"], index["version"]) == ("lazytensor-corpus", "1.0")
    assert set(index["families"]) == {"vectors", "errors", *FAMILIES}
    assert len(index["families"]["errors"]["cases"]) == len(BAD)
    assert len(index["families"]["vectors"]["cases"]) == len(vectors())
    listed = {name for f in index["families"].values() for name in f["cases"]}
    assert listed == {str(p.relative_to(corpus)) for p in corpus.glob("*/*.json")}
    export(tmp_path, count=6)
    for name in listed:
        assert (tmp_path / name).read_bytes() == (corpus / name).read_bytes(), name


class _Runner:
    """What an implementer writes: JSON in, their library's calls (here minilazy's adapter)."""

    def __init__(self, case: dict[str, Any], leaves: list[dict[str, Any]]) -> None:
        self.adapter, self.case = cpu(), case
        self.slots: list[Any] = [None] * case["slots"]
        for leaf in leaves:
            self.slots[leaf["slot"]] = self.adapter.from_numpy(decode_array(leaf["value"]))
        self.observed: list[tuple[int, np.ndarray]] = []
        self.decisions = iter(case["expected"]["decisions"])
        self.executed_while_recording = 0

    def value(self, v: Any) -> Any:
        if isinstance(v, dict) and "slot" in v:
            return self.slots[v["slot"]]
        if isinstance(v, dict) and "slots" in v:
            return [self.slots[s] for s in v["slots"]]
        if isinstance(v, dict) and "tuple" in v:
            return tuple(self.value(x) for x in v["tuple"])
        return decode(v, deref=lambda n: pytest.fail(f"a handle in a corpus: {n}"))

    def observe(self, slot: int) -> None:
        self.observed.append((slot, self.adapter.to_numpy(self.slots[slot])))

    def block(self, body: list[dict[str, Any]]) -> None:
        for i in body:
            kind = i.get("kind", "op")
            if kind == "op":
                before = self.adapter.counters().executions
                args = [self.value(a) for a in i["args"]]
                kwargs = {k: self.value(v) for k, v in i["kwargs"].items()}
                if "raises" in i:  # at the call, of NumPy's kind
                    with pytest.raises(getattr(builtins, i["raises"])):
                        self.adapter.apply(i["op"], *args, **kwargs)
                else:
                    self.slots[i["out"]] = self.adapter.apply(i["op"], *args, **kwargs)
                self.executed_while_recording += self.adapter.counters().executions - before
            elif kind == "barrier":
                self.adapter.barrier()
            elif kind == "sync":
                self.adapter.sync(*[self.slots[s] for s in i["slots"]])
            elif kind == "observe":
                self.observe(i["slot"])
            elif kind == "assign":
                self.slots[i["target"]] = self.slots[i["source"]]
            elif kind == "branch":
                self.observe(i["slot"])
                self.block(i["then"] if next(self.decisions) else i["orelse"])
            else:
                assert kind == "repeat", kind
                for _ in range(i["times"]):
                    self.block(i["body"])


def _check(runner: _Runner, expected: dict[str, Any]) -> None:
    want = expected["observations"]
    assert [s for s, _ in runner.observed] == [o["slot"] for o in want]
    for (_, got), o in zip(runner.observed, want):
        value = decode_array(o["value"])
        assert got.dtype == value.dtype and got.shape == value.shape, (got, value)
        assert o["tolerance"] == "exact"
        np.testing.assert_array_equal(got, value)


def _run(case: dict[str, Any]) -> bool:
    """One case, and its rerun where it has one (whether it had): a function, so that its
    tensors, pending ones too, die at its end and no barrier of the next case sees them."""
    runner = _Runner(case, case["leaves"])
    runner.block(case["body"])
    _check(runner, case["expected"])
    assert runner.executed_while_recording == case["laziness"]["executions_while_recording"]
    if "rerun" not in case:
        return False
    adapter = runner.adapter
    del runner  # its tensors too: a barrier of the rerun must not see them
    before = adapter.counters().compiles
    again = _Runner(case, case["rerun"]["leaves"])
    again.block(case["body"])
    _check(again, case["rerun"]["expected"])
    assert again.adapter.counters().compiles - before == case["laziness"][
        "compiles_on_rerun"], case["name"]
    return True


def test_minilazy_passes_the_corpus_read_from_json_alone(corpus):
    cases = _cases(corpus)
    assert len(cases) == len(vectors()) + len(BAD) + 6 * len(FAMILIES)
    reruns = sum(_run(case) for case in cases)
    assert reruns > len(cases) // 2  # most programs take the same branches on new values


def test_a_wrong_error_kind_in_the_corpus_is_caught(corpus):
    case = json.loads((corpus / "errors" / "broadcast.json").read_text())
    assert case["body"][1]["raises"] == "ValueError"  # NumPy's, found at export
    case["body"][1]["raises"] = "TypeError"
    with pytest.raises(ValueError):  # minilazy raises NumPy's kind, which the runner lets out
        _Runner(case, case["leaves"]).block(case["body"])


def test_a_wrong_value_in_the_corpus_is_caught(corpus):
    """The runner above can fail: flip one expected value and it does."""
    case = next(c for c in _cases(corpus) if c["expected"]["observations"]
                and decode_array(c["expected"]["observations"][0]["value"]).dtype.kind in "iu")
    o = case["expected"]["observations"][0]
    value = decode_array(o["value"])
    value.flat[0] += 1
    o["value"] = encode_array(value)
    runner = _Runner(case, case["leaves"])
    runner.block(case["body"])
    with pytest.raises(AssertionError):
        _check(runner, case["expected"])
