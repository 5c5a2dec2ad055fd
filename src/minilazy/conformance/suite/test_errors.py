"""Errors: raised at the call that caused them, naming what was wrong; nothing pending is lost."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.strategies import DTYPES, dtypes_for, loop_exists, undeclared
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import counting

Bad = Callable[[OptionalAdapter, Any], Any]
X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _t(a: OptionalAdapter, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
    return a.from_numpy(np.zeros(shape, dtype))


# Bad calls on x = f32[2,3]: (call, the ops it uses, shapes its message must name).
BAD_CALLS: dict[str, tuple[Bad, tuple[str, ...], tuple[tuple[int, ...], ...]]] = {
    "broadcast": (lambda a, x: a.apply("add", x, a.from_numpy(np.ones((4, 5), np.float32))),
                  ("add",), ((2, 3), (4, 5))),
    "matmul": (lambda a, x: a.apply("matmul", x, x), ("matmul",), ((2, 3),)),
    "reshape": (lambda a, x: a.apply("reshape", x, (4,)), ("reshape",), ((2, 3),)),
    "concat": (lambda a, x: a.apply("concat", [x, a.from_numpy(np.ones((2, 4), np.float32))]),
               ("concat",), ((2, 3), (2, 4))),
    "axis": (lambda a, x: a.apply("sum", x, axis=2), ("sum",), ()),
    "index": (lambda a, x: a.apply("getitem", x, (2,)), ("getitem",), ()),
    "too many indices": (lambda a, x: a.apply("getitem", x, (0, 0, 0)), ("getitem",), ()),
    # Shape functions.
    "reshape-inferred": (lambda a, x: a.apply("reshape", x, (4, -1)), ("reshape",), ((2, 3),)),
    # An impossible target: the operand's shape is not what is wrong (no shape demanded).
    "reshape-two-unknowns": (lambda a, x: a.apply("reshape", x, (-1, -1)), ("reshape",), ()),
    "reshape-negative": (lambda a, x: a.apply("reshape", x, (-2, -3)), ("reshape",), ()),
    "permute-repeated": (lambda a, x: a.apply("permute_dims", x, (0, 0)), ("permute_dims",),
                         ((2, 3),)),
    "permute-short": (lambda a, x: a.apply("permute_dims", _t(a, (2, 3, 4)), (1, 0)),
                      ("permute_dims",), ((2, 3, 4),)),
    "permute-out-of-range": (lambda a, x: a.apply("permute_dims", x, (0, 2)), ("permute_dims",),
                             ((2, 3),)),
    "matrix_transpose-1d": (lambda a, x: a.apply("matrix_transpose", _t(a, (3,))),
                            ("matrix_transpose",), ((3,),)),
    "expand_dims-axis": (lambda a, x: a.apply("expand_dims", x, axis=3), ("expand_dims",), ()),
    "squeeze-not-1": (lambda a, x: a.apply("squeeze", _t(a, (2, 1)), axis=0), ("squeeze",),
                      ((2, 1),)),
    "squeeze-axis": (lambda a, x: a.apply("squeeze", _t(a, (2, 1)), axis=2), ("squeeze",), ()),
    "broadcast_to": (lambda a, x: a.apply("broadcast_to", x, (3, 3)), ("broadcast_to",),
                     ((2, 3), (3, 3))),
    "broadcast_to-fewer-dims": (lambda a, x: a.apply("broadcast_to", x, (3,)), ("broadcast_to",),
                                ((2, 3), (3,))),
    "concat-ndim": (lambda a, x: a.apply("concat", [x, _t(a, (2,))]), ("concat",),
                    ((2, 3), (2,))),
    "concat-axis": (lambda a, x: a.apply("concat", [x, x], axis=2), ("concat",), ()),
    "concat-0d": (lambda a, x: a.apply("concat", [_t(a, ()), _t(a, ())], axis=0), ("concat",),
                  ()),
    "stack-shapes": (lambda a, x: a.apply("stack", [x, _t(a, (3, 2))]), ("stack",),
                     ((2, 3), (3, 2))),
    "stack-axis": (lambda a, x: a.apply("stack", [x, x], axis=3), ("stack",), ()),
    "flip-axis": (lambda a, x: a.apply("flip", x, axis=2), ("flip",), ()),
    "flip-repeated": (lambda a, x: a.apply("flip", x, axis=(0, 0)), ("flip",), ()),
    "take-axis": (lambda a, x: a.apply("take", x, _t(a, (1,), np.int64), axis=2), ("take",), ()),
    "unpack-past-the-end": (lambda a, x: a.apply("unpack", _t(a, (6,)), [(2,), (2,)], offset=3),
                            ("unpack",), ((6,),)),
    "unpack-float-offset": (lambda a, x: a.apply("unpack", _t(a, (6,)), [(2,)], offset=1.5),
                            ("unpack",), ()),
    "take-float-indices": (lambda a, x: a.apply("take", x, _t(a, (1,), np.float32), axis=0),
                           ("take",), ()),
    # Indexing, on x4 = f32[3,4].
    "get-negative-out-of-range": (lambda a, x: a.apply("getitem", _t(a, (3, 4)), (-4,)),
                                  ("getitem",), ()),
    "get-second-axis": (lambda a, x: a.apply("getitem", _t(a, (3, 4)), (slice(None), 4)),
                        ("getitem",), ()),
    "get-two-ellipses": (lambda a, x: a.apply("getitem", x, (Ellipsis, 0, Ellipsis)),
                         ("getitem",), ()),
    "get-float": (lambda a, x: a.apply("getitem", x, 1.5), ("getitem",), ()),
    "get-float-array": (lambda a, x: a.apply("getitem", x, _t(a, (2,))), ("getitem",), ()),
    "get-0d-index": (lambda a, x: a.apply("getitem", _t(a, ()), 0), ("getitem",), ()),
    "set-int-out-of-range": (lambda a, x: a.apply("setitem", _t(a, (3, 4)), 5, 1.0),
                             ("setitem",), ()),
    "set-value-too-long": (lambda a, x: a.apply("setitem", _t(a, (3, 4)), 0, _t(a, (5,))),
                           ("setitem",), ((5,), (4,))),
    "set-value-wrong-shape": (lambda a, x: a.apply("setitem", _t(a, (3, 4)), slice(None),
                                                   _t(a, (4, 3))), ("setitem",),
                              ((4, 3), (3, 4))),
    "set-array-index-value": (lambda a, x: a.apply("setitem", _t(a, (3, 4)), ([0, 1],),
                                                   _t(a, (3, 4))), ("setitem",),
                              ((3, 4), (2, 4))),
    "set-int-overflow": (lambda a, x: a.apply("setitem", _t(a, (3,), np.uint8), 0, 256),
                         ("setitem",), ()),
    "iadd-shape": (lambda a, x: a.inplace("add", _t(a, (3,)), _t(a, (2, 3))), ("add",),
                   ((3,), (2, 3))),
    "iadd-no-broadcast": (lambda a, x: a.inplace("add", x, _t(a, (3, 2))), ("add",),
                          ((2, 3), (3, 2))),
    "itruediv-int": (lambda a, x: a.inplace("divide", _t(a, (3,), np.int8), 2), ("divide",), ()),
    "iadd-float-into-int": (lambda a, x: a.inplace("add", _t(a, (3,), np.int8), _t(a, (3,))),
                            ("add",), ()),
    "imatmul-shape": (lambda a, x: a.inplace("matmul", x, _t(a, (3, 2))), ("matmul",),
                      ((2, 3),)),
}
# Cases that update a tensor in place: they need the adapter's capability `setitem`.
IN_PLACE_CASES = {n for n in BAD_CALLS if n.startswith(("set-", "iadd", "itruediv", "imatmul"))}
CASES = [pytest.param(name, marks=[pytest.mark.ops(*used)] + (
    [pytest.mark.requires("setitem")] if name in IN_PLACE_CASES else []), id=name)
    for name, (_, used, _) in BAD_CALLS.items()]
KIND_WORDS = {"b": "bool", "i": "int", "u": "int", "f": "float"}


def raised(call: Callable[[], Any]) -> Exception:
    """The exception ``call()`` raises (the spec names no type: any will do, at the call)."""
    try:
        call()
    except Exception as e:
        return e
    pytest.fail("no exception at the call")


def names_shape(message: str, shape: tuple[int, ...]) -> bool:
    """Whether ``message`` names ``shape``: its sizes in order, as ``(2, 3)``, ``[2,3]``, ``2x3``.

    Example:
        >>> names_shape("cannot broadcast f32[2,3] with f32[4,5]", (4, 5))
        True
        >>> names_shape("invalid shape (-1, -1)", (-1, -1)), names_shape("(-4,)", (4,))
        (True, False)
    """
    sep = r"\s*[,x]\s*"
    # Not inside a longer number, nor the tail of a negative one (shapes with -1 are named too).
    return re.search(r"(?<![\d-])" + sep.join(map(str, shape)) + r"\b", message) is not None


def names_dtype(message: str, dtype: np.dtype[Any]) -> bool:
    """Whether ``message`` names ``dtype`` (``float32``, or at least its kind: ``Float``)."""
    text = message.lower()
    return dtype.name in text or KIND_WORDS[dtype.kind] in text


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("case", CASES)
def test_a_bad_call_raises_at_the_call_naming_the_shapes(adapter: OptionalAdapter,
                                                         case: str) -> None:
    call, _, shapes = BAD_CALLS[case]
    x = adapter.from_numpy(X)
    message = str(raised(lambda: call(adapter, x)))
    for shape in shapes:
        assert names_shape(message, shape), f"{case}: {message!r} does not name {shape}"


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.requires("executions|compiles")
@pytest.mark.parametrize("case", CASES)
def test_a_bad_call_raises_before_anything_runs(adapter: OptionalAdapter, case: str) -> None:
    call = BAD_CALLS[case][0]
    x = adapter.from_numpy(X)
    with counting(adapter) as d:
        raised(lambda: call(adapter, x))
    assert d.ran_nothing(), "the error came from running, not from recording"


def _no_loop(op: str) -> list[tuple[np.dtype[Any], ...]]:
    """The operand dtypes NumPy has no loop of ``op`` for."""
    spec = ops()[op]
    return [c for c in ([(d,) for d in DTYPES] if spec.arity == 1 else
                        [(a, b) for a in DTYPES for b in DTYPES]) if not loop_exists(spec, *c)]


@pytest.mark.spec("LZ-ERR-002")
@pytest.mark.parametrize("op", [n for n, s in sorted(ops().items())
                                if s.kind == "elementwise" and _no_loop(n)])
def test_every_dtype_combination_numpy_has_no_loop_for_raises(adapter: OptionalAdapter,
                                                              op: str) -> None:
    # Every combination, not one per op: a missing check is often one dtype's (bitwise ops on
    # bool, shifts of mixed signedness).
    dtypes = dtypes_for(adapter)
    combos = [c for c in _no_loop(op) if all(d in dtypes for d in c)]
    wrong = []
    for combo in combos:
        tensors = [adapter.from_numpy(np.zeros(2, d)) for d in combo]
        names = ", ".join(d.name for d in combo)
        try:
            adapter.apply(op, *tensors)
        except TypeError as e:
            if not any(names_dtype(str(e), d) for d in combo):
                wrong.append(f"{op}({names}): {e!r} names no dtype")
        except Exception as e:  # noqa: BLE001 -- the rule asks for a TypeError
            wrong.append(f"{op}({names}): {type(e).__name__}, not TypeError: {e}")
        else:
            wrong.append(f"{op}({names}): no error")
    assert not wrong, f"{len(wrong)} of {len(combos)} combinations:\n" + "\n".join(wrong)


# Errors of other kinds than shapes, for LZ-ERR-003: (call on x = f32[2,3], the ops it uses).
OTHER_ERRORS: dict[str, tuple[Bad, tuple[str, ...]]] = {
    "no loop": (lambda a, x: a.apply("bitwise_and", x, 1), ("bitwise_and",)),
    "weak int overflow": (lambda a, x: a.apply("add", _t(a, (3,), np.int8), 300), ("add",)),
    "empty max": (lambda a, x: a.apply("max", _t(a, (2, 0)), axis=1), ("max",)),
}
AFTER_CASES = CASES + [pytest.param(name, marks=pytest.mark.ops(*used), id=name)
                       for name, (_, used) in OTHER_ERRORS.items()]


@pytest.mark.spec("LZ-ERR-003")
@pytest.mark.ops("exp", "multiply", "add")
@pytest.mark.parametrize("case", AFTER_CASES)
def test_after_an_error_nothing_pending_is_lost(adapter: OptionalAdapter, case: str) -> None:
    call = BAD_CALLS[case][0] if case in BAD_CALLS else OTHER_ERRORS[case][0]
    x = adapter.from_numpy(X)
    before = adapter.apply("add", adapter.apply("exp", x), x)  # pending when the error comes
    try:
        call(adapter, x)
    except Exception:
        pass
    after = adapter.apply("multiply", x, x)  # recording goes on
    assert_close(adapter.to_numpy(before), np.exp(X) + X, "ulp")
    assert_close(adapter.to_numpy(after), X * X)
    adapter.barrier()  # and a barrier over whatever the error left behind still works


@pytest.mark.spec("LZ-ERR-004")
@pytest.mark.parametrize("convert", [float, int, bool, operator.index],
                         ids=["float", "int", "bool", "index"])
def test_a_tensor_of_many_elements_is_no_python_scalar(adapter: OptionalAdapter,
                                                       convert: Callable[[Any], Any]) -> None:
    x = adapter.from_numpy(np.ones((2, 2), np.int32))
    # NumPy 2: TypeError from float() and int(), ValueError from bool(); either is accepted
    expected = TypeError if convert is operator.index else (TypeError, ValueError)
    run_nothing = satisfies(capabilities_of(adapter), "executions|compiles")
    if run_nothing:
        y = adapter.apply("add", x, x)
        with counting(adapter) as d, pytest.raises(expected):
            convert(y)
        assert d.ran_nothing(), "the conversion ran the graph before refusing"
    else:
        with pytest.raises(expected):
            convert(x)


@pytest.mark.spec("LZ-ERR-005")
@pytest.mark.ops("add", "multiply")
def test_mixing_devices_is_an_error_naming_both(adapter: OptionalAdapter) -> None:
    d0, d1 = adapter.devices()[:2]
    a = adapter.from_numpy(np.ones(3, np.float32))
    b = adapter.to_device(adapter.from_numpy(np.ones(3, np.float32)), d1)
    kept = adapter.apply("multiply", a, a)
    message = str(raised(lambda: adapter.apply("add", a, b)))
    assert str(d0) in message and str(d1) in message, message
    assert adapter.to_numpy(kept).tolist() == [1.0] * 3


F32 = np.arange(6, dtype=np.float32).reshape(2, 3)
I64 = np.arange(1, 4, dtype=np.int64)
# Input NumPy refuses at the call: (rule, ops used, the call on x = f32[2,3] and i = i64[3]).
# The suite runs the same call on NumPy's arrays for the exception type it must raise.
Refused = Callable[[Callable[..., Any], Any, Any], Any]
REFUSED: dict[str, tuple[str, tuple[str, ...], Refused]] = {
    "float shape": ("LZ-ERR-006", ("zeros",), lambda ap, x, i: ap("zeros", (2.5, 3))),
    "float size": ("LZ-ERR-006", ("zeros",), lambda ap, x, i: ap("zeros", 2.0)),
    "float reshape": ("LZ-ERR-006", ("reshape",), lambda ap, x, i: ap("reshape", x, (3.0, 2))),
    "float axis": ("LZ-ERR-006", ("sum",), lambda ap, x, i: ap("sum", x, axis=1.0)),
    "float full": ("LZ-ERR-006", ("full",), lambda ap, x, i: ap("full", (1.9,), 3.0)),
    "float ones": ("LZ-ERR-006", ("ones",), lambda ap, x, i: ap("ones", 2.9)),
    "float broadcast": ("LZ-ERR-006", ("broadcast_to",),
                        lambda ap, x, i: ap("broadcast_to", i, (2.0, 3))),
    "float permute": ("LZ-ERR-006", ("permute_dims",),
                      lambda ap, x, i: ap("permute_dims", x, (1.0, 0))),
    "too big to exist": ("LZ-ERR-006", ("zeros",),
                         lambda ap, x, i: ap("zeros", (10**10, 10**10))),
    # A zero among the dimensions excuses none of the others (NumPy's rule).
    "a zero hides a huge axis": ("LZ-ERR-006", ("zeros",),
                                 lambda ap, x, i: ap("zeros", (0, 2**62))),
    "a huge axis before a zero": ("LZ-ERR-006", ("ones",), lambda ap, x, i: ap("ones", (2**62, 0))),
    "an axis past int64": ("LZ-ERR-006", ("zeros",),
                           lambda ap, x, i: ap("zeros", (0, 2**63), dtype=np.dtype("int8"))),
    "negative power": ("LZ-ERR-007", ("pow",), lambda ap, x, i: ap("pow", i, -1)),
    "index list": ("LZ-ERR-007", ("getitem",), lambda ap, x, i: ap("getitem", i, ([0, 5],))),
    "negative index list": ("LZ-ERR-007", ("getitem",),
                            lambda ap, x, i: ap("getitem", x, (slice(None), [-4]))),
    "index list, second axis": ("LZ-ERR-007", ("getitem",),
                                lambda ap, x, i: ap("getitem", x, (slice(None), [3]))),
    "setitem index list": ("LZ-ERR-007", ("setitem",),
                           lambda ap, x, i: ap("setitem", i, ([7],), 1)),
    "int too big": ("LZ-ERR-007", ("asarray",),
                    lambda ap, x, i: ap("asarray", [1, 2**70], dtype=np.dtype("int64"))),
    "fill too big": ("LZ-ERR-007", ("full",),
                     lambda ap, x, i: ap("full", (2,), 2**70, dtype=np.dtype("int64"))),
    "None operand": ("LZ-ERR-008", ("add",), lambda ap, x, i: ap("add", x, None)),
    "None reflected": ("LZ-ERR-008", ("multiply",), lambda ap, x, i: ap("multiply", None, x)),
    "string operand": ("LZ-ERR-008", ("multiply",), lambda ap, x, i: ap("multiply", "a", x)),
    "string subtrahend": ("LZ-ERR-008", ("subtract",), lambda ap, x, i: ap("subtract", x, "a")),
    "None in a list operand": ("LZ-ERR-008", ("add",),
                               lambda ap, x, i: ap("add", x, [1, None, 2])),
}
REFUSED_CASES = [pytest.param(name, marks=[pytest.mark.ops(*used), pytest.mark.spec(rule)] + (
    [pytest.mark.requires("setitem")] if "setitem" in used else []), id=name)
    for name, (rule, used, _) in REFUSED.items()]


def _ints(adapter: OptionalAdapter) -> Any:
    """The cases' integer operand: int64, or int32 where the library has none (same refusals)."""
    return I64 if not undeclared(adapter, I64.dtype) else I64.astype(np.int32)


@pytest.mark.parametrize("case", REFUSED_CASES)
def test_input_numpy_refuses_raises_its_error_type_at_the_call(adapter: OptionalAdapter,
                                                               case: str) -> None:
    call, ints = REFUSED[case][2], _ints(adapter)
    with pytest.raises(Exception) as numpy_error:
        call(numpy_apply, F32, ints)
    x, i = adapter.from_numpy(F32), adapter.from_numpy(ints)
    kept = adapter.apply("multiply", x, x)
    error = raised(lambda: call(adapter.apply, x, i))
    want = builtin(numpy_error.type)  # NumPy's own subclasses (UFuncTypeError) aside
    assert isinstance(error, want), \
        f"{case}: {type(error).__name__}: {error}, where NumPy raises {want.__name__}"
    assert_close(adapter.to_numpy(kept), F32 * F32)  # and nothing pending was lost


@pytest.mark.requires("executions|compiles")
@pytest.mark.parametrize("case", REFUSED_CASES)
def test_refused_input_runs_nothing(adapter: OptionalAdapter, case: str) -> None:
    x, i = adapter.from_numpy(F32), adapter.from_numpy(_ints(adapter))
    with counting(adapter) as d:
        raised(lambda: REFUSED[case][2](adapter.apply, x, i))
    assert d.ran_nothing(), "the error came from running, not from the call"


def builtin(kind: type[BaseException]) -> type[BaseException]:
    """The first built-in exception class ``kind`` derives from (``AxisError``: ``ValueError``).

    Example:
        >>> builtin(np.exceptions.AxisError).__name__
        'ValueError'
    """
    return next(k for k in kind.__mro__ if k.__module__ == "builtins")


def _impossible(adapter: OptionalAdapter) -> Any | None:
    """A pending tensor whose program cannot run: 4 TiB of float32.

    None where the call itself refuses it (an implementation that allocates when it records).
    """
    try:
        return adapter.apply("multiply", adapter.apply("ones", (2**20, 2**20),
                                                       dtype=np.dtype("float32")), 2.0)
    except Exception:
        return None


@pytest.mark.spec("LZ-ERR-009")
@pytest.mark.ops("ones", "multiply", "add", "exp")
def test_a_tensor_that_cannot_run_fails_alone_and_keeps_failing(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(F32)
    good = [adapter.apply("exp", x), adapter.apply("add", x, 1.0)]
    bad = _impossible(adapter)
    if bad is None:
        pytest.skip(f"{adapter.name} refuses a 4 TiB tensor at the call: no barrier to fail")
    first = raised(adapter.barrier)
    assert not any(adapter.is_pending(g) for g in good), "the barrier gave up on the others"
    assert_close(adapter.to_numpy(good[0]), np.exp(F32), "ulp")
    assert_close(adapter.to_numpy(good[1]), F32 + 1)
    for _ in range(2):  # observed again: the same kind of error, every time
        again = raised(lambda: adapter.to_numpy(bad))
        assert type(again) is type(first), f"{type(again).__name__} after {type(first)}"
    later = adapter.apply("multiply", x, 3.0)
    adapter.barrier()  # later barriers work, whatever the failed tensor left behind
    assert_close(adapter.to_numpy(later), F32 * 3)
