"""Sizes from users' numbers: NumPy's size rule, at the call, never an abort at the barrier.

NumPy refuses an array unless each dimension is an int64 >= 0 and the *non-zero* dimensions
times the item size fit in an int64 of bytes (``ValueError``: "array is too big", "negative
dimensions", "maximum allowed dimension exceeded"). minilazy checks every shape its users'
numbers make by that one rule (``dtypes.sized``): issue 41 found a zero hiding a huge dimension
(``zeros((0, 2**62))`` accepted, a reduction over it aborting inside XLA) and FFT lengths recorded
unchecked (``fft(x, n=2**62)`` aborting the process at the barrier).

Each entry point is run with the sizes that break things -- 2**62, 2**63, 2**64, -1, beside a
zero, products past int64 -- and must raise NumPy's error type for the same call having run
nothing, with other pending work intact; where NumPy accepts the call (a zero-size result),
minilazy must too, with NumPy's shape and dtype. Materialising what is accepted happens in a
subprocess, so that an abort there fails the test instead of ending the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import minilazy as ml
from helpers import forget, numpy_or_error, raises_at_the_call

BIG = {"2**62": 2**62, "2**63": 2**63, "2**64": 2**64, "-1": -1}
Thunk = Callable[[], Any]


def _z(dtype: Any = "int8") -> Any:
    """(0, 2**62) of int8 exists in NumPy (no bytes): the zero that used to hide a huge size."""
    return np.zeros((0, 2**62), dtype)


def _mz(dtype: Any = ml.int8) -> ml.Tensor:
    return ml.zeros((0, 2**62), dtype=dtype)


def _view(shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
    """A NumPy operand of a legal but huge shape, without its memory (zero strides)."""
    return as_strided(np.zeros(1, dtype), shape, (0,) * len(shape))


def _per_size(name: str, n: int) -> list[tuple[str, Thunk, Thunk | type]]:
    """(id, minilazy call, NumPy call or the error type where NumPy has no such call)."""
    x4, k = ml.ones(4), ml.random.key(0)
    return [
        (f"zeros((0, {name}))", lambda: ml.zeros((0, n)), lambda: np.zeros((0, n))),
        (f"ones(({name},))", lambda: ml.ones((n,)), lambda: np.ones((n,))),
        (f"empty(({name}, 0), int8)", lambda: ml.empty((n, 0), dtype=ml.int8),
         lambda: np.empty((n, 0), np.int8)),
        (f"full((0, {name}), 1.5)", lambda: ml.full((0, n), 1.5), lambda: np.full((0, n), 1.5)),
        (f"eye(0, {name})", lambda: ml.eye(0, n), lambda: np.eye(0, n)),
        (f"linspace(0, 1, {name})", lambda: ml.linspace(0, 1, n), lambda: np.linspace(0, 1, n)),
        (f"eye({name}, 0, int8)", lambda: ml.eye(n, 0, dtype=ml.int8),
         lambda: np.eye(n, 0, dtype=np.int8)),
        (f"reshape(zeros(0), (0, {name}))", lambda: ml.reshape(ml.zeros(0), (0, n)),
         lambda: np.reshape(np.zeros(0), (0, n))),
        (f"reshape(zeros(0), (-1, {name}))", lambda: ml.reshape(ml.zeros(0), (-1, n)),
         lambda: np.reshape(np.zeros(0), (-1, n))),
        (f"broadcast_to(ones(1), (0, {name}))", lambda: ml.broadcast_to(ml.ones(1), (0, n)),
         lambda: np.broadcast_to(np.ones(1), (0, n))),
        (f"broadcast_arrays((0, 1), ({name}, 0, 1))",
         lambda: ml.broadcast_arrays(ml.zeros((0, 1)), ml.zeros((n, 0, 1), dtype=ml.int8)),
         lambda: np.broadcast_arrays(np.zeros((0, 1)), np.zeros((n, 0, 1), np.int8))),
        (f"tile(ones(2), (0, {name}))", lambda: ml.tile(ml.ones(2), (0, n)),
         lambda: np.tile(np.ones(2), (0, n))),
        (f"repeat(ones(2), {name})", lambda: ml.repeat(ml.ones(2), n),
         lambda: np.repeat(np.ones(2), n)),
        *[(f"fft.{f}(ones(4), n={name})", lambda f=f: getattr(ml.fft, f)(x4, n=n),
           lambda f=f: getattr(np.fft, f)(np.ones(4), n=n))
          for f in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")],
        *[(f"fft.{f}(ones((2, 2)), s=(2, {name}))",
           lambda f=f: getattr(ml.fft, f)(ml.ones((2, 2)), s=(2, n)),
           lambda f=f: getattr(np.fft, f)(np.ones((2, 2)), s=(2, n)))
          for f in ("fftn", "ifftn", "rfftn", "irfftn")],
        (f"fft.fft(zeros((0, 4)), n={name})", lambda: ml.fft.fft(ml.zeros((0, 4)), n=n),
         lambda: np.fft.fft(np.zeros((0, 4)), n=n)),
        (f"fft.fftfreq({name})", lambda: ml.fft.fftfreq(n), lambda: np.fft.fftfreq(n)),
        (f"random.uniform((0, {name}))", lambda: ml.random.uniform(k, (0, n)),
         lambda: np.random.default_rng(0).random((0, n))),
        (f"random.normal(({name},))", lambda: ml.random.normal(k, (n,)),
         lambda: np.random.default_rng(0).standard_normal((n,))),
        (f"random.bits((0, {name}))", lambda: ml.random.bits(k, (0, n)), ValueError),
        (f"random.bernoulli((0, {name}))", lambda: ml.random.bernoulli(k, 0.5, (0, n)),
         ValueError),
        (f"random.split(key, {name})", lambda: ml.random.split(k, n), ValueError),
        (f"unpack(ones(4), [(0, {name})])", lambda: ml.unpack(x4, [(0, n)]), ValueError),
        (f"conv(padding={name}, stride={name})",
         lambda: ml.conv(ml.ones((1, 1, 5)), ml.ones((1, 1, 2)), padding=n, stride=n),
         ValueError),
    ]


# Where NumPy's error is its implementation's accident, minilazy's is the size rule's.
ACCIDENTS: dict[str, type] = {
    "linspace(0, 1, 2**63)": ValueError,  # NumPy: IndexError, reading its own empty result
    "fft.ifft(ones(4), n=2**64)": ValueError,  # NumPy: UFuncTypeError, computing 1 / n
    "fft.irfft(ones(4), n=2**64)": ValueError,
    "fft.ihfft(ones(4), n=2**64)": ValueError,
    "fft.ifftn(ones((2, 2)), s=(2, 2**64))": ValueError,
    "fft.irfftn(ones((2, 2)), s=(2, 2**64))": ValueError,
}


def _zero_size() -> list[tuple[str, Thunk, Thunk | type]]:
    """A zero-size operand with a huge dimension, and what it makes: wider items, other axes."""
    return [
        ("astype(Z, float64)", lambda: ml.astype(_mz(), ml.float64),
         lambda: _z().astype(np.float64)),
        ("astype(Z, int16)", lambda: ml.astype(_mz(), ml.int16), lambda: _z().astype(np.int16)),
        ("sin(Z)", lambda: ml.sin(_mz()), lambda: np.sin(_z())),
        ("Z + Z of uint8", lambda: _mz() + _mz(ml.uint8), lambda: _z() + _z(np.uint8)),
        ("Z * 1.5", lambda: _mz() * 1.5, lambda: _z() * 1.5),
        ("Z + Z", lambda: _mz() + _mz(), lambda: _z() + _z()),
        ("Z < 1000", lambda: _mz() < 1000, lambda: _z() < 1000),  # compared as int16: empty
        ("sum(Z, axis=0)", lambda: ml.sum(_mz(), axis=0), lambda: np.sum(_z(), axis=0)),
        ("sum(Z, axis=1)", lambda: ml.sum(_mz(), axis=1), lambda: np.sum(_z(), axis=1)),
        ("mean(Z, axis=0)", lambda: ml.mean(_mz(), axis=0), lambda: np.mean(_z(), axis=0)),
        ("argmax(Z, axis=1)", lambda: ml.argmax(_mz(), axis=1), lambda: np.argmax(_z(), axis=1)),
        ("cumulative_sum(Z, axis=1)", lambda: ml.cumulative_sum(_mz(), axis=1),
         lambda: np.cumsum(_z(), axis=1)),
        ("argsort(Z, axis=1)", lambda: ml.argsort(_mz(), axis=1),
         lambda: np.argsort(_z(), axis=1)),
        ("sort(Z, axis=1)", lambda: ml.sort(_mz(), axis=1), lambda: np.sort(_z(), axis=1)),
        ("where(Z, 1.5)", lambda: ml.where(ml.zeros((0, 1), dtype=ml.bool), _mz(), 1.5),
         lambda: np.where(np.zeros((0, 1), bool), _z(), 1.5)),
        ("reshape(Z, (0, 2**62, 2))", lambda: ml.reshape(_mz(), (0, 2**62, 2)),
         lambda: np.reshape(_z(), (0, 2**62, 2))),
        ("reshape(Z, (2**62, 0))", lambda: ml.reshape(_mz(), (2**62, 0)),
         lambda: np.reshape(_z(), (2**62, 0))),
        ("permute_dims(Z)", lambda: ml.permute_dims(_mz(), (1, 0)), lambda: _z().T),
        ("Z[:, :5]", lambda: _mz()[:, :5], lambda: _z()[:, :5]),
        ("tile(Z, (1, 2))", lambda: ml.tile(_mz(), (1, 2)), lambda: np.tile(_z(), (1, 2))),
        ("tile(Z, (2, 1))", lambda: ml.tile(_mz(), (2, 1)), lambda: np.tile(_z(), (2, 1))),
        ("tile(zeros(0), (2**62,))", lambda: ml.tile(ml.zeros(0), (2**62,)),
         lambda: np.tile(np.zeros(0), (2**62,))),
        # NumPy skips its check of the count when x is empty: minilazy refuses -1 always
        ("tile(zeros(0), (-1,))", lambda: ml.tile(ml.zeros(0), (-1,)), ValueError),
        ("repeat(zeros(0), 2**62)", lambda: ml.repeat(ml.zeros(0), 2**62),
         lambda: np.repeat(np.zeros(0), 2**62)),
        ("repeat(zeros(0), -1)", lambda: ml.repeat(ml.zeros(0), -1), ValueError),
        ("repeat(Z, 2, axis=1)", lambda: ml.repeat(_mz(), 2, axis=1),
         lambda: np.repeat(_z(), 2, axis=1)),
        ("concat([Z, Z], axis=1)", lambda: ml.concat([_mz(), _mz()], axis=1),
         lambda: np.concatenate([_z(), _z()], axis=1)),
        ("stack([Z, Z])", lambda: ml.stack([_mz(), _mz()]), lambda: np.stack([_z(), _z()])),
        ("matmul(Z.T, Z)", lambda: ml.matmul(ml.permute_dims(_mz(), (1, 0)), _mz()),
         lambda: np.matmul(_z().T, _z())),
        ("tensordot(Z.T, Z)", lambda: ml.tensordot(ml.permute_dims(_mz(), (1, 0)), _mz(), axes=1),
         lambda: np.tensordot(_z().T, _z(), axes=1)),
        ("einsum(ij,ik->jk)", lambda: ml.einsum("ij,ik->jk", _mz(), _mz()),
         lambda: np.einsum("ij,ik->jk", _z(), _z())),
        ("broadcast_arrays(Z, zeros((1, 1)))", lambda: ml.broadcast_arrays(_mz(), ml.zeros((1, 1))),
         lambda: np.broadcast_arrays(_z(), np.zeros((1, 1)))),
        ("tril(Z)", lambda: ml.tril(_mz()), lambda: np.tril(_z())),
        ("eye(0, 2**62, int8)", lambda: ml.eye(0, 2**62, dtype=ml.int8),
         lambda: np.eye(0, 2**62, dtype=np.int8)),
        ("pack([Z, Z])", lambda: ml.pack([_mz(), _mz()]), lambda: np.concatenate([_z(), _z()],
                                                                                  axis=None)),
        ("unpack(zeros(0), [(0, 2**62)])", lambda: ml.unpack(ml.zeros(0, dtype=ml.int8),
                                                             [(0, 2**62)]),
         lambda: np.zeros(0, np.int8).reshape((0, 2**62))),
        ("linalg.qr((2**31, 0), complete)",  # Q would be (2**31, 2**31) of float64
         lambda: ml.linalg.qr(ml.zeros((2**31, 0)), mode="complete"), ValueError),
    ]


def _past_int64() -> list[tuple[str, Thunk, Thunk | type]]:
    """Products of dimensions past int64 with no dimension past it."""
    col, row = (2**40, 1), (1, 2**40)
    return [
        ("zeros((2**32, 2**32), int8)", lambda: ml.zeros((2**32, 2**32), dtype=ml.int8),
         lambda: np.zeros((2**32, 2**32), np.int8)),
        ("zeros((0, 2**32, 2**32), int8)", lambda: ml.zeros((0, 2**32, 2**32), dtype=ml.int8),
         lambda: np.zeros((0, 2**32, 2**32), np.int8)),
        ("add (2**40, 1) + (1, 2**40)",
         lambda: ml.broadcast_to(ml.ones((1, 1)), col) + ml.broadcast_to(ml.ones((1, 1)), row),
         lambda: _view(col) + _view(row)),
        ("matmul (2**40, 1) @ (1, 2**40)",
         lambda: ml.broadcast_to(ml.ones((1, 1)), col) @ ml.broadcast_to(ml.ones((1, 1)), row),
         lambda: _view(col) @ _view(row)),
        ("index by (2**40, 1) and (1, 2**40) ints",
         lambda: ml.ones((3, 3))[ml.zeros(col, dtype=ml.int64), ml.zeros(row, dtype=ml.int64)],
         lambda: np.ones((3, 3))[_view(col, np.intp), _view(row, np.intp)]),
        ("concat 2 x (2**60,) float32",
         lambda: ml.concat([ml.broadcast_to(ml.ones(1, dtype=ml.float32), (2**60,))] * 2),
         lambda: np.concatenate([_view((2**60,), np.float32)] * 2)),
        ("pack 2 x (2**60,) float32",
         lambda: ml.pack([ml.broadcast_to(ml.ones(1, dtype=ml.float32), (2**60,))] * 2),
         ValueError),
        ("meshgrid 2**40 x 2**40", lambda: ml.meshgrid(ml.broadcast_to(ml.ones(1), (2**40,)),
                                                      ml.broadcast_to(ml.ones(1), (2**40,))),
         ValueError),  # NumPy: the same, once it has copied its 8 TiB operands (MemoryError)
        ("avg_pool2d(stride=2**63)", lambda: ml.nn.avg_pool2d(ml.ones((1, 1, 4, 4)), 2,
                                                              stride=2**63), ValueError),
    ]


CASES = [pytest.param(m, n, id=i) for name, v in BIG.items() for i, m, n in _per_size(name, v)]
CASES += [pytest.param(m, n, id=i) for i, m, n in _zero_size() + _past_int64()]


def _expected(case_id: str, numpy_call: Thunk | type) -> tuple[Any, tuple[type, ...] | None]:
    """(NumPy's result, None), or (None, the error types minilazy must raise)."""
    if case_id in ACCIDENTS:
        return None, (ACCIDENTS[case_id],)
    if isinstance(numpy_call, type):
        return None, (numpy_call,)
    return numpy_or_error(numpy_call)


def _shapes(r: Any) -> list[tuple[tuple[int, ...], Any]]:
    items = r if isinstance(r, (list, tuple)) else [r]
    return [(tuple(t.shape), np.dtype(t.dtype)) for t in items]


@pytest.mark.parametrize(("make", "numpy_call"), CASES)
def test_a_size_is_checked_at_the_call_by_numpys_rule(request, make, numpy_call) -> None:
    case_id = request.node.callspec.id
    want, err = _expected(case_id, numpy_call)
    pending = ml.asarray(np.arange(3.0)) * 2.0
    ml.reset_metrics()
    if err:
        raises_at_the_call(make, err)
    else:  # NumPy has the array (an empty one): so has minilazy, recorded, nothing run
        got = _shapes(make())
        assert got == _shapes(want)
        assert ml.metrics().executions == 0
    assert pending.tolist() == [0.0, 2.0, 4.0]  # nothing pending was lost


# Dimensions that meet the rule's edges: zeros, 2**k around the itemsizes, int64's ends.
_DIMS = st.sampled_from([0, 1, 2, 3, 2**20, 2**30, 2**31, 2**32, 2**59, 2**60, 2**61, 2**62,
                         2**63 - 1, 2**63, 2**64, -1, -(2**63), -(2**63) - 1])
_DTYPES = st.sampled_from([ml.bool, ml.int8, ml.int16, ml.float32, ml.float64, ml.complex128])


def _numpy_refuses(shape: tuple[int, ...], dtype: Any) -> bool:
    """NumPy's verdict, with no memory: its constructor's check, on zero strides."""
    if any(not -(2**63) <= d < 2**63 for d in shape):
        return True  # np.empty: "Maximum allowed dimension exceeded", before any allocation
    try:
        _view(shape, np.dtype(dtype))
    except ValueError:
        return True
    return False


@given(shape=st.lists(_DIMS, max_size=4).map(tuple), dtype=_DTYPES)
def test_shapes_from_users_numbers_meet_numpys_size_rule(shape, dtype) -> None:
    refused = _numpy_refuses(shape, dtype)
    makers = [lambda: ml.zeros(shape, dtype=dtype),
              lambda: ml.broadcast_to(ml.zeros((), dtype=dtype), shape),
              lambda: ml.random.uniform(ml.random.key(0), shape, dtype=dtype)]
    if 0 in shape:  # an empty one, reshaped from another
        makers.append(lambda: ml.reshape(ml.zeros(0, dtype=dtype), shape))
    for make in makers:
        if make is makers[2] and (dtype not in (ml.float32, ml.float64) or
                                  not refused and np.prod(shape, dtype=object) >= 2**32):
            continue  # uniform: floats only, and at most 2**32 - 1 numbers (its own limit)
        if refused:
            raises_at_the_call(make, ValueError)
        else:
            try:
                assert make().shape == shape
            except Exception as e:  # noqa: BLE001 -- reported without the traceback's tensors
                raise AssertionError(f"refused {shape} of {dtype}: {forget(e)}") from None
    assert ml.metrics().executions == 0


# -- what is accepted is materialised: in a subprocess, where an abort is a failure ----------

_MATERIALISE = textwrap.dedent("""
    import json, warnings
    warnings.simplefilter("ignore")
    import numpy as np, minilazy as ml
    Z = lambda: ml.zeros((0, 2**62), dtype=ml.int8)
    CASES = {
        # empty, with a huge dimension: NumPy's results, materialised
        "Z": lambda: Z(),
        "sum(Z, axis=1)": lambda: ml.sum(Z(), axis=1),
        "argmax(Z, axis=1)": lambda: ml.argmax(Z(), axis=1),
        "sort(Z, axis=1)": lambda: ml.sort(Z(), axis=1),
        "Z.T reshaped": lambda: ml.reshape(ml.permute_dims(Z(), (1, 0)), (2**61, 2, 0)),
        "tile(Z, (2, 1))": lambda: ml.tile(Z(), (2, 1)),
        "eye(0, 2**62, int8)": lambda: ml.eye(0, 2**62, dtype=ml.int8),
        "repeat(zeros(0), 2**62)": lambda: ml.repeat(ml.zeros(0), 2**62),
        "unpack(zeros(0), [(0, 2**62)])":
            lambda: ml.unpack(ml.zeros(0, dtype=ml.int8), [(0, 2**62)])[0],
        # what used to abort the process at the barrier: now an error at the call
        "sum(Z, axis=0)": lambda: ml.sum(Z(), axis=0),
        "fft(n=2**62)": lambda: ml.fft.fft(ml.ones(4), n=2**62),
        "pack 2 x (2**60,) float32":
            lambda: ml.pack([ml.broadcast_to(ml.ones(1, dtype=ml.float32), (2**60,))] * 2),
        "argmax((2**62,) of int8)": lambda: ml.argmax(ml.ones((2**62,), dtype=ml.int8)),
        "zeros((0, 2**63), int8)": lambda: ml.zeros((0, 2**63), dtype=ml.int8),
        # a legal operand XLA casts past int64 bytes, even fused away: refused at the call
        "(2**62,) of bool < 1": lambda: ml.ones((2**62,), dtype=ml.bool) < 1,  # cast to int64
        "sum((2, 2**61) of int8, axis=1)":
            lambda: ml.sum(ml.ones((2, 2**61), dtype=ml.int8), axis=1),  # accumulated in int64
        # loops as long as a user's number: NumPy's hang (diff, unstack), not minilazy's
        "diff(ones(4), n=2**62)": lambda: ml.diff(ml.ones(4), n=2**62),
        "unstack(Z, axis=1)": lambda: ml.unstack(Z(), axis=1),
        "max_pool2d((0, 1, 2**30, 2**30), 2**30)": lambda: ml.nn.max_pool2d(
            ml.zeros((0, 1, 2**30, 2**30), dtype=ml.float16), 2**30),  # no window to read
        # legal, but more than any memory: a Python error at the barrier, never an abort
        "ones((2**40,))": lambda: ml.ones((2**40,)),
        "fft(n=2**40)": lambda: ml.fft.fft(ml.ones(4), n=2**40),
    }
    for name, make in CASES.items():
        pending = ml.asarray(np.arange(3.0)) * 2.0
        try:
            t = make()
        except Exception as e:
            out = ["call", type(e).__name__]
        else:
            try:
                ml.sync(t)
                out = ["ok", list(t.shape)]
            except Exception as e:
                out = ["barrier", type(e).__name__]
            del t
        print(json.dumps([name, out, pending.tolist()]), flush=True)
""")


def test_what_is_accepted_materialises_and_nothing_aborts() -> None:
    run = subprocess.run([sys.executable, "-c", _MATERIALISE], capture_output=True, text=True,
                         timeout=600)  # (a loop of 2**62 steps fails here, by its timeout)
    assert run.returncode == 0, f"the process died (rc {run.returncode}): {run.stderr[-2000:]}"
    seen = {name: (out, pending) for name, out, pending in map(json.loads,
                                                               run.stdout.splitlines())}
    empty = {"Z": [0, 2**62], "sum(Z, axis=1)": [0], "argmax(Z, axis=1)": [0],
             "diff(ones(4), n=2**62)": [0], "max_pool2d((0, 1, 2**30, 2**30), 2**30)": [0, 1, 1, 1],
             "sort(Z, axis=1)": [0, 2**62], "Z.T reshaped": [2**61, 2, 0],
             "tile(Z, (2, 1))": [0, 2**62], "eye(0, 2**62, int8)": [0, 2**62],
             "repeat(zeros(0), 2**62)": [0], "unpack(zeros(0), [(0, 2**62)])": [0, 2**62]}
    for name, shape in empty.items():
        assert seen[name][0] == ["ok", shape], name
    for name in ("sum(Z, axis=0)", "fft(n=2**62)", "pack 2 x (2**60,) float32",
                 "argmax((2**62,) of int8)", "zeros((0, 2**63), int8)", "(2**62,) of bool < 1",
                 "sum((2, 2**61) of int8, axis=1)"):
        assert seen[name][0] == ["call", "ValueError"], name
    assert seen["unstack(Z, axis=1)"][0] == ["call", "MemoryError"]  # 2**62 tensors: no tuple
    for name in ("ones((2**40,))", "fft(n=2**40)"):  # legal, more than memory: as np.empty
        assert seen[name][0] == ["barrier", "MemoryError"], name
    assert len(seen) == 21 and all(p == [0.0, 2.0, 4.0] for _, p in seen.values())
