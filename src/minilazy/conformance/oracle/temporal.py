"""What decides a program besides its structure: one table, one row per property.

A lazy implementation reuses what it made for a structure (a compiled program, a cut's plan, a
taped backward pass, a program on disk) when it meets the structure again. Whatever else decides
the program or its values must decide the reuse too: the donation mask, the kinds and values of
Python scalars, the operands' dtypes, devices and shardings, the policy in force. Each
:class:`Row` names such a property, the settings it takes, how to reach one structure under a
setting (``reach``) and what NumPy says it gives (``want``). The suite's ``test_temporal.py``
reaches each row's structure twice with the setting changed in between, in both orders, in one
process and, where a program can outlive its process (capability ``persistent``), across two.
A new property is a new row.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from minilazy.conformance.adapter import OptionalAdapter, load
from minilazy.conformance.oracle import assert_close, numpy_apply

Array = np.ndarray[Any, Any]
Reach = Callable[[OptionalAdapter, str, int], list[Array]]
Want = Callable[[str, int], list[Array]]


@dataclass(frozen=True)
class Row:
    """One property that decides a program or its values besides the structure.

    Attributes:
        name: the property, as test ids show it.
        rule: the spec rule a wrong reuse breaks.
        settings: the values the property takes (each reach uses one).
        reach: reach the row's structure under a setting, on data of a seed: observed values.
        want: NumPy's values for a setting and seed.
        needs: the capabilities the row needs besides its rule's.
        ops: the registry ops it applies.
        tolerance: the class its values are compared in.
        processes: whether a program of the structure can outlive its process (a persistent
            cache): then the row is also checked across two processes.
        dtypes: the dtype a setting needs, where it needs one (skipped where undeclared).

    Example:
        >>> ROWS["donation mask"].settings
        ('donating mark_step', 'observed over a live input')
    """

    name: str
    rule: str
    settings: tuple[str, ...]
    reach: Reach
    want: Want
    needs: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()
    tolerance: str = "ulp"
    processes: bool = False
    dtypes: tuple[tuple[str, str], ...] = ()

    def check(self, setting: str, seed: int, got: Sequence[Array], when: str = "") -> None:
        """Assert that ``got``, reached under ``setting`` on ``seed``'s data, is NumPy's.

        Example:
            >>> row = ROWS["scalar kind"]
            >>> row.check("int", 1, row.want("int", 1))
        """
        want = self.want(setting, seed)
        assert len(got) == len(want), f"{len(got)} values for {len(want)}"
        for i, (a, e) in enumerate(zip(got, want)):
            assert_close(a, e, self.tolerance, what=f"{self.name} {setting!r} {when}: value {i}")


def _floats(seed: int, shape: tuple[int, ...] = (8, 8), dtype: Any = np.float32,
            low: float = -2.0, high: float = 2.0) -> Array:
    found: Array = np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)
    return found


# -- donation mask: a donating mark_step, an observation over a live input ---------------------
def _affine(apply: Callable[..., Any], w: Any, scalars: Sequence[Any] = ()) -> Any:
    """``w * 0.5 + 1``, the numbers typed as ``w`` (0-d tensors of ``scalars``, or NumPy's)."""
    half, one = scalars or (np.float32(0.5), np.float32(1.0))
    return apply("add", apply("multiply", w, half), one)


def _typed(a: OptionalAdapter) -> list[Any]:
    """0.5 and 1 as float32 0-d tensors: scalars whose dtype is no question (LZ-NUM-003's)."""
    return [a.from_numpy(np.asarray(v, np.float32)) for v in (0.5, 1.0)]


def _donation(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    a.barrier()  # other tests' leftovers join no cut of this one
    if setting == "donating mark_step":
        w, typed = a.from_numpy(_floats(seed)), _typed(a)
        for _ in range(2):  # the old w is dead at each mark_step: its buffer may be donated
            w = _affine(a.apply, w, typed)
            a.barrier()
        return [a.to_numpy(w)]
    x, typed = a.from_numpy(_floats(seed)), _typed(a)  # x live: no program may consume it
    found = [a.to_numpy(_affine(a.apply, x, typed)) for _ in range(2)]
    return [*found, a.to_numpy(x)]


def _donation_want(setting: str, seed: int) -> list[Array]:
    x = _floats(seed)
    if setting == "donating mark_step":
        return [_affine(numpy_apply, _affine(numpy_apply, x))]
    return [_affine(numpy_apply, x), _affine(numpy_apply, x), x]


# -- Python scalars: their kind decides a result's dtype, their value its values ---------------
KINDS: dict[str, bool | int | float] = {"bool": True, "int": 3, "float": 2.5}
VALUES: dict[str, float] = {"0.0": 0.0, "1.0": 1.0, "2.5": 2.5, "-0.0": -0.0}


def _small(seed: int) -> tuple[Array, Array]:
    rng = np.random.default_rng(seed)
    return rng.integers(-20, 20, (4, 5)).astype(np.int8), rng.integers(0, 2, (4, 5)) > 0


def _kinds(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    ints, bools = _small(seed)
    x, b, s = a.from_numpy(ints), a.from_numpy(bools), KINDS[setting]
    return [a.to_numpy(a.apply("add", x, s)), a.to_numpy(a.apply("multiply", b, s))]


def _kinds_want(setting: str, seed: int) -> list[Array]:
    ints, bools = _small(seed)
    s = KINDS[setting]
    return [numpy_apply("add", ints, s), numpy_apply("multiply", bools, s)]


def _positive(seed: int) -> Array:
    # x * v + v: no cancellation for ulps to measure. float64, which a Python float keeps
    # whether weak or strong (how scalars are typed is LZ-NUM-003's, not this row's).
    return _floats(seed, (8, 8), np.float64, 0.5, 2.0)


def _values(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    v = VALUES[setting]
    return [a.to_numpy(a.apply("add", a.apply("multiply", a.from_numpy(_positive(seed)), v), v))]


def _values_want(setting: str, seed: int) -> list[Array]:
    v = VALUES[setting]
    return [numpy_apply("add", numpy_apply("multiply", _positive(seed), v), v)]


# -- operands: dtype, device, sharding ---------------------------------------------------------
DTYPES = ("float32", "float64", "float16", "int32", "int8")


def _operands(seed: int, dtype: str) -> tuple[Array, Array]:
    # 8 x 8: splits evenly over 1, 2, 4 or 8 devices
    x, y = _floats(seed, (8, 8), np.float64, -4, 4), _floats(seed + 1, (8, 8), np.float64, -4, 4)
    return np.round(x).astype(dtype), np.round(y).astype(dtype)  # small ints: exact in each


def _placed(a: OptionalAdapter, setting: str, data: Array) -> Any:
    x = a.from_numpy(data)
    if setting.startswith("device"):
        return a.to_device(x, a.devices()[int(setting.split()[-1])])
    if setting.startswith("split"):
        return a.shard(x, int(setting.split()[-1]))
    return a.shard(x, None) if setting == "replicated" else x


def _operand_row(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    dtype = setting if setting in DTYPES else "float32"
    x, y = (_placed(a, setting, v) for v in _operands(seed, dtype))
    return [a.to_numpy(a.apply("add", a.apply("multiply", x, y), x))]


def _operand_want(setting: str, seed: int) -> list[Array]:
    x, y = _operands(seed, setting if setting in DTYPES else "float32")
    return [numpy_apply("add", numpy_apply("multiply", x, y), x)]


# -- the policy in force: eager or lazy ---------------------------------------------------------
def _policy(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    x, typed = a.from_numpy(_floats(seed)), _typed(a)
    if setting == "eager":  # (whether it runs op by op, or records: LZ-BAR-009's, LZ-REC-001's)
        with a.eager():
            y = a.apply("sin", _affine(a.apply, x, typed))
    else:
        y = a.apply("sin", _affine(a.apply, x, typed))
    return [a.to_numpy(y)]


def _policy_want(setting: str, seed: int) -> list[Array]:
    return [numpy_apply("sin", _affine(numpy_apply, _floats(seed)))]


# -- a taped backward pass: grad of sum(x ** e) is e x ** (e - 1), whatever came before -------
def _tape(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    exponent = float(setting.split()[-1])
    x = _floats(seed, (5,), np.float64, 0.5, 2.0)

    def f(t: Any) -> Any:
        return a.apply("sum", a.apply("pow", t, exponent))

    if setting.startswith("eager"):
        with a.eager():
            (g,) = a.grad(f, (0,))(a.from_numpy(x))
    else:
        (g,) = a.grad(f, (0,))(a.from_numpy(x))
    return [a.to_numpy(g)]


def _tape_want(setting: str, seed: int) -> list[Array]:
    e = float(setting.split()[-1])
    x = _floats(seed, (5,), np.float64, 0.5, 2.0)
    return [e * x ** (e - 1.0)]


# -- a cut's plan: one structure of digests below the roots, wired otherwise -------------------
WIRINGS = {"x * y + y": (0, 1, 1), "x * x + y": (0, 0, 1), "y * y + x": (1, 1, 0)}


def _wired(apply: Callable[..., Any], pair: Sequence[Any], setting: str) -> Any:
    i, j, k = WIRINGS[setting]
    return apply("add", apply("multiply", pair[i], pair[j]), pair[k])


def _plan(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    found = []
    for n in range(3):  # cut three times: a plan is made when a graph is cut again
        pair = [a.from_numpy(v) for v in _operands(seed + 10 * n, "float32")]
        found.append(a.to_numpy(_wired(a.apply, pair, setting)))
    return found


def _plan_want(setting: str, seed: int) -> list[Array]:
    return [_wired(numpy_apply, _operands(seed + 10 * n, "float32"), setting) for n in range(3)]


# -- an optimizer's learning rate: a new value, the same program -------------------------------
def _optim(a: OptionalAdapter, setting: str, seed: int) -> list[Array]:
    lr = float(setting.split()[-1])
    w = _floats(seed, (6,))
    found = []
    for name, hyper in (("sgd", {"momentum": 0.9}), ("adam", {})):
        params, state = [a.from_numpy(w)], None
        for step in range(2):
            grads = [a.from_numpy(_floats(seed + step + 1, (6,)))]
            params, state = a.optim(name, params, grads, state, lr=lr, **hyper)
            a.barrier()
        found.append(a.to_numpy(params[0]))
    return found


def _optim_want(setting: str, seed: int) -> list[Array]:
    """The formulas in float64 (float32 would cancel in ``1 - 0.999``), rounded to float32."""
    lr = float(setting.split()[-1])
    w = _floats(seed, (6,)).astype(np.float64)
    p, v = w.copy(), np.zeros_like(w)
    q, m, s = w.copy(), np.zeros_like(w), np.zeros_like(w)
    for step in range(2):
        g = _floats(seed + step + 1, (6,)).astype(np.float64)
        v = 0.9 * v + g
        p = p - lr * v
        m, s = 0.9 * m + 0.1 * g, 0.999 * s + 0.001 * g * g
        t = step + 1
        q = q - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(s / (1 - 0.999 ** t)) + 1e-8)
    return [p.astype(np.float32), q.astype(np.float32)]


ROWS: dict[str, Row] = {row.name: row for row in [
    Row("donation mask", "LZ-CACHE-007", ("donating mark_step", "observed over a live input"),
        _donation, _donation_want, ops=("add", "multiply"), processes=True),
    Row("scalar kind", "LZ-NUM-003", tuple(KINDS), _kinds, _kinds_want,
        ops=("add", "multiply"), tolerance="exact", processes=True,
        dtypes=(("", "int8"), ("", "bool"))),
    Row("scalar value", "LZ-CACHE-003", tuple(VALUES), _values, _values_want,
        ops=("add", "multiply"), processes=True, dtypes=(("", "float64"),)),
    Row("operand dtype", "LZ-CACHE-007", DTYPES, _operand_row, _operand_want,
        ops=("add", "multiply"), tolerance="exact", processes=True,
        dtypes=tuple((d, d) for d in DTYPES)),
    Row("operand device", "LZ-CACHE-007", ("device 0", "device 1"), _operand_row,
        _operand_want, needs=("devices",), ops=("add", "multiply"), tolerance="exact",
        processes=True),
    Row("operand sharding", "LZ-CACHE-007", ("unplaced", "replicated", "split 0", "split 1"),
        _operand_row, _operand_want, needs=("sharding",), ops=("add", "multiply"),
        tolerance="exact", processes=True),
    Row("policy in force", "LZ-CACHE-007", ("lazy", "eager"), _policy, _policy_want,
        needs=("eager",), ops=("add", "multiply", "sin"), processes=True),
    Row("taped backward pass", "LZ-AD-011", ("x ** 2.0", "x ** 3.0", "x ** 0.5"), _tape,
        _tape_want, needs=("float64",), ops=("pow", "sum"), tolerance="loose"),
    Row("backward pass in eager mode", "LZ-AD-011", ("x ** 2.0", "eager x ** 3.0"), _tape,
        _tape_want, needs=("float64", "eager"), ops=("pow", "sum"), tolerance="loose"),
    Row("cut plan", "LZ-CACHE-007", tuple(WIRINGS), _plan, _plan_want,
        ops=("add", "multiply"), tolerance="exact"),
    Row("learning rate", "LZ-OPT-003", ("lr 0.1", "lr 0.025"), _optim, _optim_want,
        needs=("optim",), tolerance="loose"),
]}


def pairs(row: Row, allowed: Callable[[str], bool]) -> list[tuple[str, str]]:
    """Every ordered pair of two settings of ``row`` that ``allowed`` lets run: both orders.

    Example:
        >>> pairs(ROWS["donation mask"], lambda s: True)[1]
        ('observed over a live input', 'donating mark_step')
    """
    found = [s for s in row.settings if allowed(s)]
    return [(s, t) for s in found for t in found if s != t]


def replay(impl: str, name: str, plan: Sequence[tuple[str, str, int]]) -> dict[str, Any]:
    """Reach ``name``'s structure in this process for each ``(directory, setting, seed)``.

    Persisting to each step's directory from a cold in-memory cache: what a fresh process of
    the implementation ``impl`` does. Returns the values, or the error, of each step.

    Example:
        >>> replay.__name__
        'replay'
    """
    adapter, row = cast(OptionalAdapter, load(impl)), ROWS[name]
    found: dict[str, Any] = {}
    for n, (directory, setting, seed) in enumerate(plan):
        adapter.persist(directory)
        if "reset" in adapter.capabilities:  # from the disk, not from this process's memory
            adapter.reset()
        try:
            got = row.reach(adapter, setting, seed)
            found[str(n)] = {"values": [v.tolist() for v in got],
                             "dtypes": [str(v.dtype) for v in got]}
        except Exception:  # a program that consumed a live buffer, say: the parent reports it
            found[str(n)] = traceback.format_exc(limit=4)
    return found


if __name__ == "__main__":  # python -m minilazy.conformance.oracle.temporal IMPL ROW PLAN
    print(json.dumps(replay(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
