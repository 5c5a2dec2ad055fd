"""The oracle's process protocol (spec/protocol.md): the codec, the reference server, the client's
handling of dead and hung servers, and the oracle through a pipe giving the in-process results."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from collections import namedtuple
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapters.process import ProcessAdapter, Ref
from minilazy.conformance.mutate.toy import toy
from minilazy.conformance.protocol import decode, encode, error_of, exception_of
from minilazy.conformance.registry import rules
from minilazy.conformance.serve import Server, serve
from minilazy.conformance.tools import isolation

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "spec" / "protocol.schema.json").read_text())
MESSAGE = jsonschema.Draft202012Validator(SCHEMA)
VALUE = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/value"})
HELLO = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/hello"})
TOY = f"{sys.executable} -m minilazy.conformance.serve --impl minilazy.conformance.mutate.toy:toy"
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _wire(value):
    """Encode, through JSON text and back, as a message would travel."""
    data = json.loads(json.dumps(encode(value, ref=id), allow_nan=False))
    VALUE.validate(data)
    return decode(data, deref=lambda n: pytest.fail(f"no handles here, got {n}"))


@given(dtype=st.sampled_from(DTYPES), order=st.sampled_from("<>"), data=st.data())
def test_arrays_cross_bit_for_bit_in_any_byte_order_and_layout(dtype, order, data):
    want = data.draw(hnp.arrays(np.dtype(dtype), hnp.array_shapes(min_dims=0, min_side=0)))
    sent = want.astype(want.dtype.newbyteorder(order))
    if sent.ndim >= 2:
        sent = sent.T  # not C-contiguous
        want = want.T
    got = _wire(sent)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()  # NaN payloads, -0.0 too


SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
           | st.complex_numbers() | st.just(...)
           | st.sampled_from(DTYPES).map(np.dtype))
VALUES = st.recursive(SCALARS, lambda inner: (
    st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.tuples(inner, inner, inner).map(lambda t: slice(*t))), max_leaves=10)


@given(VALUES)
def test_values_keep_their_python_types(value):
    """A float stays a float (2.0 is not 2), a tuple a tuple, NaN and -0.0 themselves."""
    got = _wire(value)
    assert repr(got) == repr(value)  # repr tells 2 from 2.0, (1,) from [1], -0.0 from 0.0


def test_named_tuples_and_numpy_scalars_cross():
    Eigh = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
    got = _wire(Eigh(np.ones(2), np.eye(2)))
    assert got._fields == ("eigenvalues", "eigenvectors") and got.eigenvectors.shape == (2, 2)
    scalar = _wire(np.float32(2.5))
    assert type(scalar) is np.float32 and scalar == 2.5
    assert _wire(np.int16) == np.dtype("int16")  # the scalar type names its dtype


def test_an_untagged_float_is_refused_not_guessed():
    with pytest.raises(ValueError, match="untagged float"):
        decode(2.5, deref=str)


def test_errors_cross_as_their_builtin_kind():
    class ShapeError(ValueError):
        pass

    assert error_of(ShapeError("shapes differ")) == {"type": "ValueError",
                                                      "message": "shapes differ"}
    assert error_of(KeyError("k"))["type"] == "KeyError"
    assert type(exception_of({"type": "IndexError", "message": "x"})) is IndexError
    for name in ("SystemExit", "KeyboardInterrupt", "NoSuchError", "print"):  # never obeyed
        assert type(exception_of({"type": name, "message": "x"})) is RuntimeError


def _session(server, *requests):
    out = io.StringIO()
    serve(server, io.StringIO("".join(r if isinstance(r, str) else json.dumps(r) + "\n"
                                      for r in requests)), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    for answer in answers:
        MESSAGE.validate(answer)
    return answers


def test_the_server_answers_every_line_and_refuses_what_is_not_the_protocol():
    answers = _session(Server(toy()), {"id": 1, "call": "hello"}, "not json\n", "[1, 2]\n",
                       {"id": 2, "call": "launch_missiles"}, {"id": 3, "call": "to_numpy",
                                                             "args": [{"ref": 99}]},
                       {"id": 4, "call": "enter", "args": ["warp_speed"]},
                       {"id": 5, "call": "exit", "args": ["eager"]},
                       {"id": 6, "call": "apply", "args": ["add", 1.5, 2]})
    HELLO.validate(answers[0]["result"])
    assert answers[0]["result"]["name"] == "toy"
    assert [a.get("error", {}).get("type") for a in answers[1:]] == [
        "ValueError", "ValueError", "ValueError", "ValueError", "ValueError", "ValueError",
        "ValueError"]
    assert [a["id"] for a in answers] == [1, None, None, 2, 3, 4, 5, 6]
    assert "untagged float" in answers[-1]["error"]["message"]


def test_one_handle_per_object_and_freed_handles_are_released():
    server = Server(toy())
    x = server.handle({"id": 1, "call": "from_numpy", "args": [encode(np.arange(3.0), id)]})
    y = server.handle({"id": 2, "call": "inplace", "args": ["add", x["result"],
                                                            {"float": "1.0"}]})
    assert y["result"] == x["result"]  # rebound in place: the handle held
    server.handle({"id": 3, "call": "barrier", "free": [x["result"]["ref"]]})
    assert server.objects == {} and server.numbers == {}
    stale = server.handle({"id": 4, "call": "to_numpy", "args": [x["result"]]})
    assert stale["error"]["type"] == "ValueError" and "freed" in stale["error"]["message"]


def test_warnings_of_a_call_are_carried_to_the_caller():
    class Warns:
        name, version, capabilities = "warns", "0", frozenset()

        def barrier(self) -> None:
            warnings.warn("a view was written", UserWarning, stacklevel=2)

    (answer,) = _session(Server(Warns()), {"id": 1, "call": "barrier"})
    assert answer["warnings"] == [{"type": "UserWarning", "message": "a view was written"}]


def test_the_client_drives_a_real_server_as_an_adapter():
    a = ProcessAdapter(TOY)
    try:
        x = a.from_numpy(np.arange(4.0))
        y = a.apply("multiply", x, 2.0)
        assert a.to_numpy(y).tolist() == [0.0, 2.0, 4.0, 6.0]
        assert float(a.apply("sum", y)) == 12.0 and len(y) == 4
        assert a.inplace("add", x, 1.0) is x  # one handle per object, on this side too
        with pytest.raises((TypeError, ValueError), match="size-1|0-d"):
            float(y)  # only one-element tensors convert (LZ-ERR-004 takes either kind)
        with pytest.raises(ValueError, match="broadcast|shape"):
            a.to_numpy(a.apply("add", x, a.from_numpy(np.ones(3))))
        n = y.n
        del y
        assert n in a.dropped  # sent with the next request
        a.barrier()
        assert n not in a.dropped
        assert "autodiff" not in a.capabilities and not hasattr(a, "grad")
    finally:
        a.close()


def test_calls_from_several_threads_each_get_their_own_answer(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    # A mix-up would hang a thread on an answer another took: a timeout makes that an error.
    monkeypatch.setattr(isolation, "_WATCH", [isolation.Watch(tmp_path, "t", 6.0)])
    a = ProcessAdapter(TOY)
    try:
        xs = [a.from_numpy(np.full(3, float(k))) for k in range(8)]
        ks = list(range(8)) * 5
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda k: a.to_numpy(a.apply("multiply", xs[k], 2.0)), ks))
        assert [g.tolist() for g in got] == [[2.0 * k] * 3 for k in ks]
    finally:
        a.close()


def _fake_server(tmp_path: Path, on_apply: str) -> str:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys, time
        for line in sys.stdin:
            r = json.loads(line)
            if r["call"] == "apply":
                print("about to misbehave", file=sys.stderr, flush=True)
                {on_apply}
            result = {{"protocol": "1.0", "name": "fake", "version": "0", "capabilities": [],
                       "methods": [], "ops": None}} if r["call"] == "hello" else None
            print(json.dumps({{"id": r["id"], "result": result}}), flush=True)
    """))
    return f"{sys.executable} {script}"


def test_a_server_that_dies_fails_the_call_and_the_next_call_gets_a_new_one(tmp_path):
    a = ProcessAdapter(_fake_server(tmp_path, "os.abort()"))
    with pytest.raises(RuntimeError, match=r"died \(signal SIGABRT\) during apply\('add'"
                                           r"(.|\n)*about to misbehave"):
        a.apply("add", 1, 2)
    a.barrier()  # a fresh server, after its hello
    assert a._proc is not None and a._proc.poll() is None
    a.close()


def test_a_server_that_prints_to_stdout_is_named_and_replaced(tmp_path):
    a = ProcessAdapter(_fake_server(tmp_path, "print('loading kernels...', flush=True)"))
    with pytest.raises(RuntimeError, match=r"not JSON \(a print to stdout\?.*loading kernels"):
        a.apply("add", 1, 2)
    a.barrier()  # the next call: a fresh server, in step again
    a.close()


def test_a_server_that_hangs_is_stopped_at_the_tests_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "_WATCH", [isolation.Watch(tmp_path, "t", 3.0)])
    a = ProcessAdapter(_fake_server(tmp_path, "time.sleep(600)"))
    proc = a._proc
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"hung: no answer to apply\('add', 1, 2\) within 1 s"):
        a.apply("add", 1, 2)
    assert time.monotonic() - start < 10 and proc is not None and proc.poll() is not None
    ref = Ref(1, a, a.generation - 1)
    with pytest.raises(ValueError, match="earlier process"):
        a.apply("negative", ref)
    a.close()


# Rules whose tests use every part of the protocol: conversions (BAR-004, ERR-004), handles kept
# by in-place updates (REC-004), metadata (REC-003), slices and ellipses (NUM-013), named tuples
# (DYN-001's unique_all), errors by kind (ERR-002), counters and keys (CACHE-002), and one that
# is not carried (AD-004). All of them: MINILAZY_PROTOCOL_RULES=all (nox -s protocol, 7 min).
RULES = ["LZ-BAR-004", "LZ-ERR-004", "LZ-REC-004", "LZ-REC-003", "LZ-NUM-013", "LZ-DYN-001",
         "LZ-ERR-002", "LZ-CACHE-002", "LZ-AD-004"]


def _oracle(tmp_path: Path, name: str, *options: str) -> dict:
    report = tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    chosen = os.environ.get("MINILAZY_PROTOCOL_RULES", ",".join(RULES))  # "all": nox -s protocol
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", *options,
                           f"--spec-report={report}", "-q", "--hypothesis-profile=ci",
                           *([] if chosen == "all" else [f"--lazy-rules={chosen}"])],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert report.exists(), f"no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(report.read_text())["rules"]


def test_the_oracle_through_the_reference_server_gives_the_in_process_results(tmp_path):
    here = _oracle(tmp_path, "in-process",
                   "--lazy-impl=minilazy.conformance.adapters.minilazy_adapter:cpu")
    there = _oracle(tmp_path, "process", "--lazy-command",
                    "python -m minilazy.conformance.serve")
    assert here.keys() == there.keys()
    for rid, got in there.items():
        want = here[rid]
        if rules()[rid].capability == "autodiff":  # grad(f) takes a function: not carried
            assert got["status"] in ("skipped", "not covered") and not got["passed"], rid
            continue
        assert got["status"] == want["status"], (rid, got, want)
        assert sorted(got["passed"]) == sorted(want["passed"]), rid
    assert any(r["passed"] for r in there.values())
