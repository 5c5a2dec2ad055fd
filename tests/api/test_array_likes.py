"""Array-likes where a tensor goes: every public function of ``ml``, ``ml.linalg``, ``ml.fft``
and ``ml.nn`` given NumPy arrays (or nested Python lists) in place of its tensor arguments
gives what it gives for those tensors, as the elementwise functions always did. The functions of
the engine itself, which act on a tensor's identity (``sync``, ``graph``, ``mark_sharding``...),
refuse host data with a ``TypeError`` naming its type. Never an ``AttributeError`` or another
internal error. Also the NumPy 2 ``__array__(copy=False)`` protocol and ``from_dlpack``'s
``copy=False``.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minilazy as ml

RNG = np.random.default_rng(0)
F = RNG.uniform(0.1, 0.9, (2, 3))  # float64 (2, 3)
G = RNG.uniform(0.1, 0.9, (2, 3))
V = np.array([0.3, 0.1, 0.2])  # float64 (3,)
N = np.array([[3, 1, 2], [0, 5, 3]])  # int64 (2, 3)
B = F > 0.5  # bool (2, 3)
_Q = RNG.uniform(-1, 1, (3, 3))
M = _Q @ _Q.T + 3 * np.eye(3)  # symmetric positive definite
C = F + 1j * G  # complex128 (2, 3)
X4 = RNG.uniform(-1, 1, (1, 2, 4, 4))  # an NCHW image
W4 = RNG.uniform(-1, 1, (3, 2, 3, 3))  # OIHW filters
SEQ = RNG.uniform(-1, 1, (1, 3, 4))  # (B, T, D)
W = RNG.uniform(-1, 1, (4, 4))

# One call per function: positional arguments and keywords, with NumPy arrays wherever the
# function takes a tensor (inside lists too, for concat and stack). A name may have variants.
Call = tuple[tuple[Any, ...], dict[str, Any]]
UNARY_INT = {"bitwise_invert"}
UNARY_BOOL = {"logical_not"}
BINARY_INT = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
              "bitwise_right_shift"}
BINARY_BOOL = {"logical_and", "logical_or", "logical_xor"}
CALLS: dict[str, Call] = {
    "pack": (([F, G],), {}), "unpack": ((V, [(1,), (1,)]), {"offset": 1}),
    "all": ((B,), {"axis": 1}), "any": ((B,), {}), "astype": ((F, ml.float32), {}),
    "broadcast_arrays": ((F, V), {}), "broadcast_to": ((V, (2, 3)), {}),
    "can_cast": ((F, ml.float32), {}), "clip": ((F, 0.2, 0.7), {}),
    "clip[arrays]": ((F, V * 2, np.full((2, 3), 0.6)), {}), "concat": (([F, G],), {"axis": 1}),
    "concat[None]": (([F, V],), {"axis": None}), "conv": ((X4, W4), {"padding": 1}),
    "count_nonzero": ((N,), {"axis": 0}), "cumulative_sum": ((F,), {"axis": 1}),
    "diff": ((F,), {"prepend": G, "append": V[None].repeat(2, 0)}),
    "empty_like": ((N,), {}), "expand_dims": ((F,), {"axis": -1}), "finfo": ((F,), {}),
    "flip": ((F,), {"axis": 0}), "from_dlpack": ((F,), {}), "full_like": ((N, 7), {}),
    "iinfo": ((N,), {}), "matmul": ((F, M), {}), "matmul[vector]": ((F, V), {}),
    "meshgrid": ((V, V[:2]), {"indexing": "ij"}), "moveaxis": ((F, 0, -1), {}),
    "nonzero": ((N,), {}), "ones_like": ((F,), {}), "permute_dims": ((F, (1, 0)), {}),
    "positive": ((F,), {}), "prod": ((F,), {"axis": 0}), "repeat": ((F, 2), {"axis": 0}),
    "repeat[counts]": ((F, np.array([1, 0, 2])), {"axis": 1}), "reshape": ((F, (3, 2)), {}),
    "result_type": ((F, N), {}), "roll": ((F, 1), {"axis": 1}),
    "searchsorted": ((np.sort(V), F), {"side": "right"}),
    "searchsorted[sorter]": ((V, F), {"sorter": np.argsort(V)}),
    "squeeze": ((F[None],), {"axis": 0}), "stack": (([F, G, F],), {"axis": 1}),
    "std": ((F,), {"correction": 1}), "take": ((F, np.array([2, 0])), {"axis": 1}),
    "take_along_axis": ((F, np.array([[0], [2]])), {"axis": 1}),
    "tensordot": ((F, G.T), {"axes": 1}), "tile": ((F, (2, 1)), {}), "tril": ((M,), {"k": -1}),
    "triu": ((F,), {}), "unstack": ((F,), {"axis": 1}), "vecdot": ((F, G), {}),
    "where": ((B, F, G), {}), "where[scalar]": ((B, N, 0), {}), "zeros_like": ((F,), {}),
    "linalg.cholesky": ((M,), {}), "linalg.det": ((M,), {}), "linalg.eigh": ((M,), {}),
    "linalg.eigvalsh": ((M,), {}), "linalg.inv": ((M,), {}), "linalg.slogdet": ((M,), {}),
    "linalg.cross": ((F, G), {}), "linalg.diagonal": ((F,), {}),
    "linalg.matrix_norm": ((M,), {"ord": "nuc"}), "linalg.matrix_power": ((M, 3), {}),
    "linalg.matrix_rank": ((M,), {"rtol": np.float64(1e-3)}), "linalg.outer": ((V, V), {}),
    "linalg.pinv": ((F,), {}), "linalg.qr": ((F,), {}), "linalg.solve": ((M, F.T), {}),
    "linalg.svd": ((F,), {"full_matrices": False}), "linalg.tensordot": ((F, G), {"axes": 2}),
    "linalg.trace": ((M,), {"offset": 1}), "linalg.vector_norm": ((F,), {"ord": 1}),
    "fft.fft": ((C,), {"n": 4}), "fft.fftn": ((C,), {}), "fft.hfft": ((C,), {}),
    "fft.ifft": ((C,), {}), "fft.ifftn": ((C,), {"axes": (0,)}), "fft.ihfft": ((F,), {}),
    "fft.irfft": ((C,), {}), "fft.irfftn": ((C,), {}), "fft.rfft": ((F,), {}),
    "fft.rfftn": ((F,), {}), "fft.fftshift": ((F,), {}), "fft.ifftshift": ((F,), {"axes": 1}),
    "nn.avg_pool2d": ((X4, 2), {}), "nn.max_pool2d": ((X4, 3), {"stride": 1, "padding": 1}),
    "nn.conv2d": ((X4, W4, V), {"padding": 1}),
    "nn.causal_self_attention": ((SEQ, W, W.T, W, W.T), {"n_heads": 2}),
    "nn.cross_entropy": ((F, np.array([2, 0])), {}),
    "nn.dropout": ((F, 0.5, ml.random.key(0)), {}), "nn.embedding": ((N % 4, W), {}),
    "nn.gelu": ((F,), {"approximate": "tanh"}), "nn.layer_norm": ((F, V, V), {}),
    "nn.linear": ((F, F.T, V[:2]), {}), "nn.log_softmax": ((F,), {}), "nn.relu": ((F - 0.5,), {}),
    "nn.softmax": ((F,), {"axis": 0}),
    "concatenate": (([F, G], 1), {}), "concatenate[None]": (([F, V], None), {}),
    "transpose": ((F,), {}), "transpose[axes]": ((F, (1, 0)), {}),
    "einsum": (("ij,kj->ik", F, G), {}), "logsumexp": ((F,), {"axis": 1}),
}
# Functions that take no tensor at all: shapes, numbers, dtypes, options, other functions.
NO_TENSORS = {"arange", "asarray", "cache_dir", "clear_cache", "compile_history",
              "current_debug_level", "current_policy", "debug", "default_device", "devices",
              "eager", "empty", "eye", "full", "isdtype", "linspace", "mark_step", "metrics",
              "metrics_report", "ones", "policy", "reset_metrics", "set_cache_dir", "set_policy",
              "zeros", "__array_namespace_info__", "fft.fftfreq", "fft.rfftfreq", "grad",
              "value_and_grad", "capture"}
# The engine's functions act on the tensors themselves (their pending IR, their sharding): a
# fresh copy of host data would make them silently do nothing useful, so host data is refused.
REFUSED: dict[str, Call] = {"sync": ((F,), {}), "wait": ((F,), {}), "graph": ((F,), {}),
                            "mark_sharding": ((F, ml.Mesh(ml.devices(), ("d",)), (None, None)),
                                              {})}


def public_functions() -> dict[str, Callable[..., Any]]:
    """Every public function of the namespace and of its linalg, fft and nn extensions."""
    found = {}
    spaces = (("", ml, ml.__all__), ("linalg.", ml.linalg, ml.linalg.__all__),
              ("fft.", ml.fft, ml.fft.__all__),
              ("nn.", ml.nn, [n for n, f in vars(ml.nn).items()  # its own, not re-exports
                              if getattr(f, "__module__", "") == "minilazy.nn"
                              and not n.startswith("_")]))
    for prefix, space, names in spaces:
        for name in names:
            f = getattr(space, name)
            if inspect.isfunction(f) or inspect.isbuiltin(f):
                found[prefix + name] = f
    return found


PUBLIC = public_functions()


def _default_call(name: str) -> Call:
    """The elementwise functions: one or two arrays of a dtype they take."""
    params = [p for p in inspect.signature(PUBLIC[name]).parameters.values()
              if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    short = name.split(".")[-1]
    one, two = ((N, N[::-1]) if short in UNARY_INT | BINARY_INT
                else (B, ~B) if short in UNARY_BOOL | BINARY_BOOL else (F, G))
    return ((one, two)[:len(params)], {})


def calls() -> list[tuple[str, Call]]:
    named = {n.split("[")[0] for n in CALLS}
    # linalg, fft and nn re-export some namespace functions: each is one function, tried once
    out = [(n, CALLS[n]) for n in sorted(CALLS)]
    out += [(n, _default_call(n)) for n in sorted(PUBLIC)
            if n not in named | NO_TENSORS | set(REFUSED) and not _twin(n)]
    return out


def _twin(name: str) -> bool:
    prefix, _, short = name.rpartition(".")
    return bool(prefix) and getattr(ml, short, None) is PUBLIC[name]


CALL_LIST = calls()


def test_the_table_covers_every_public_function():
    tried = {n.split("[")[0] for n, _ in CALL_LIST} | NO_TENSORS | set(REFUSED)
    missing = {n for n in PUBLIC if n not in tried and not _twin(n)}
    assert not missing, f"add these to CALLS, NO_TENSORS or REFUSED: {sorted(missing)}"
    assert not tried - set(PUBLIC), sorted(tried - set(PUBLIC))
    assert len(CALL_LIST) > 150  # a guard: the walk below must not pass vacuously


def _as(convert: Callable[[np.ndarray], Any], value: Any) -> Any:
    """``value`` with each NumPy array converted (inside lists and keyword dicts too)."""
    if isinstance(value, np.ndarray):
        return convert(value)
    if isinstance(value, list):
        return [_as(convert, v) for v in value]
    if isinstance(value, dict):
        return {k: _as(convert, v) for k, v in value.items()}
    return value


def _values(result: Any) -> Any:
    """A result as NumPy arrays (tensors read back), tuples and plain values, to compare."""
    if isinstance(result, ml.Tensor):
        return np.asarray(result)
    if isinstance(result, np.ndarray):  # host data went through unconverted: never equal
        return ("a NumPy array, not a tensor", result)
    if isinstance(result, (tuple, list)):
        return tuple(_values(r) for r in result)
    if type(result).__name__ in ("finfo", "iinfo", "FInfo", "IInfo"):
        return tuple(getattr(result, f) for f in ("bits", "max", "min", "dtype"))
    return result


def _assert_same(got: Any, expected: Any, name: str) -> None:
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), name
        for g, e in zip(got, expected):
            _assert_same(g, e, name)
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype, name
        if name != "empty_like":  # its values are unspecified
            np.testing.assert_array_equal(got, expected, err_msg=name)
    else:
        assert got == expected, name


def _function(name: str) -> Callable[..., Any]:
    return PUBLIC[name.split("[")[0]]


# What takes a dtype or an array (or a DLPack exporter) does not read a list as an array; nor
# does NumPy (np.result_type([1.0]) is a TypeError too).
NO_LISTS = {"can_cast", "finfo", "iinfo", "result_type", "from_dlpack"}


@pytest.mark.parametrize("kind", ["numpy", "list"])
@pytest.mark.parametrize(("name", "call"), CALL_LIST, ids=[n for n, _ in CALL_LIST])
def test_host_data_in_place_of_tensors_gives_the_tensors_result(name, call, kind):
    """And host data is copied at the call: writes to the arrays after it are never seen."""
    (args, kwargs), f = call, _function(name)
    made: list[np.ndarray] = []

    def host(a: np.ndarray) -> Any:
        made.append(a.copy())
        return made[-1] if kind == "numpy" else made[-1].tolist()

    if kind == "list" and name in NO_LISTS:
        with pytest.raises(TypeError, match="list"):
            f(*_as(host, list(args)), **_as(host, kwargs))
        return
    expected = _values(f(*_as(ml.asarray, list(args)), **_as(ml.asarray, kwargs)))
    result = f(*_as(host, list(args)), **_as(host, kwargs))
    for a in made:  # the result is still pending: a tensor that aliased these would change
        a[...] = 0
    _assert_same(_values(result), expected, name)


@pytest.mark.parametrize(("name", "call"), CALL_LIST, ids=[n for n, _ in CALL_LIST])
def test_what_is_no_array_is_a_type_error_naming_its_type(name, call):
    """Not an ``AttributeError`` or another internal error: its first array made an object."""
    (args, kwargs), f = call, _function(name)
    first = []

    def once(a: np.ndarray) -> Any:
        first.append(a)
        return _Opaque() if len(first) == 1 else a

    with pytest.raises(TypeError, match="_Opaque"):
        f(*_as(once, list(args)), **_as(once, kwargs))


class _Opaque:
    """Neither an array nor a number nor a dtype."""


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_engine_refuses_host_data_with_a_type_error_naming_it(name):
    args, kwargs = REFUSED[name]
    with pytest.raises(TypeError, match="ndarray"):
        PUBLIC[name](*args, **kwargs)
    PUBLIC[name](*_as(ml.asarray, list(args)), **kwargs)  # and takes the tensors


def test_the_reported_calls_match_numpy():
    a, b = np.arange(6.0).reshape(2, 3), np.full((2, 3), 7, np.float32)
    mask = a > 2
    for got, want in ((ml.concat([a, b]), np.concat([a, b])),
                      (ml.where(mask, a, b), np.where(mask, a, b)),
                      (ml.stack([a, b]), np.stack([a, b])), (ml.sum(a), np.sum(a)),
                      (ml.reshape(a, (3, 2)), np.reshape(a, (3, 2))),
                      (ml.where(mask.tolist(), b, 0), np.where(mask, b, 0))):
        assert isinstance(got, ml.Tensor) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


OPERANDS = [True, 3, -2.5, np.int8(5), np.array([1, -2], np.int8),
            np.array([0.5, 4.0], np.float32), [2, 3], [1.5, -1.0]]


@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "less", "atan2", "hypot",
                                "logaddexp", "copysign"])
def test_two_host_operands_promote_as_numpy_does(op):
    """NEP 50 with no tensor at all: a Python number stays weak against the other operand."""
    for x1 in OPERANDS:
        for x2 in OPERANDS:
            try:
                with np.errstate(all="ignore"):
                    want = np.asarray(getattr(np, op)(x1, x2))
            except (TypeError, np.exceptions.DTypePromotionError):
                continue  # NumPy refuses the pair (a bool for atan2...)
            common = np.result_type(*(np.asarray(x) if isinstance(x, list) else x
                                      for x in (x1, x2)))
            if op in ("hypot", "logaddexp", "copysign") and common.kind != "f":
                continue  # the standard wants floating operands there; tested elsewhere
            got = getattr(ml, op)(x1, x2)
            assert got.dtype == want.dtype, (op, x1, x2)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=f"{op}{x1, x2}")


def test_array_protocol_refuses_copy_false_as_numpy_2_says():
    t = ml.asarray([1.0, 2.0]) + 1
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(t, copy=False)  # the values are on a device: reading them always copies
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(copy=False)
    assert np.asarray(t).tolist() == np.array(t).tolist() == [2.0, 3.0]
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert t.__array__(dtype=np.int32).tolist() == [2, 3]
    view = t.__array__(copy=True)
    view[0] = 9.0  # a private, writable copy
    assert t.tolist() == [2.0, 3.0]


def test_from_dlpack_copy_false_shares_only_what_nobody_can_write():
    """A tensor never sees later host writes: copy=False succeeds where no one can write."""
    t = ml.asarray([1.0, 2.0]) * 2
    ml.reset_metrics()
    assert ml.from_dlpack(t, copy=False) is t and ml.from_dlpack(t) is t
    assert ml.from_dlpack(t, copy=True) is not t
    assert ml.metrics().executions == 0 and ml.metrics().transfers_to_host == 0  # nothing ran
    jnp = pytest.importorskip("jax.numpy")
    assert ml.from_dlpack(jnp.arange(3.0), copy=False).tolist() == [0.0, 1.0, 2.0]
    a = np.arange(3.0)
    with pytest.raises(ValueError, match="copy=False would share ndarray memory"):
        ml.from_dlpack(a, copy=False)
    a.flags.writeable = False  # its owner may set it back: still refused
    with pytest.raises(ValueError, match="copy=False"):
        ml.from_dlpack(a, copy=False)
    b = np.arange(3.0)
    copied = ml.from_dlpack(b)
    b[:] = 7.0
    assert copied.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="list is not a DLPack exporter"):
        ml.from_dlpack([1.0, 2.0])


def test_host_data_goes_to_the_device_of_the_tensors_it_meets():
    """Two host devices in a subprocess: for every call of the table with two or more arrays,
    one of them a tensor on the second device and the rest NumPy arrays, the result is there;
    tensors on two devices are the existing DeviceError."""
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np, minilazy as ml
        import test_array_likes as T
        d1 = ml.devices("cpu")[1]
        tried = 0
        for name, (args, kwargs) in T.CALL_LIST:
            leaves = []
            T._as(leaves.append, [list(args), kwargs])
            if len(leaves) < 2:
                continue
            for pick in (0, len(leaves) - 1):  # the first array a tensor, then the last
                seen = []
                def place(a, every=False):
                    seen.append(a)
                    return ml.asarray(a, device=d1) if every or len(seen) - 1 == pick else a
                f = T._function(name)
                got = f(*T._as(place, list(args)), **T._as(place, kwargs))
                want = f(*T._as(lambda a: place(a, True), list(args)),
                         **T._as(lambda a: place(a, True), kwargs))
                outs = got if isinstance(got, (tuple, list)) else [got]
                assert all(o.device == d1 for o in outs if isinstance(o, ml.Tensor)), name
                T._assert_same(T._values(got), T._values(want), name)
                tried += 1
        print("tried", tried)
        a = ml.asarray(np.ones((2, 3)), device=ml.devices("cpu")[0])
        b = ml.asarray(np.ones((2, 3)), device=d1)
        for call in (lambda: ml.concat([a, np.ones((1, 3)), b]), lambda: ml.where(b > 0, a, 0),
                     lambda: ml.linalg.cross(a, b), lambda: ml.nn.linear(a, b.mT)):
            try:
                call()
                print("no DeviceError")
            except ml.DeviceError:
                print("DeviceError")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[:2] == ["tried", out.stdout.split()[1]]
    assert int(out.stdout.split()[1]) > 60
    assert out.stdout.split()[2:] == ["DeviceError"] * 4, out.stdout
