"""Every differentiable function, every option, against ``jax.grad`` at random and edge points.

One table, :data:`CASES`: each entry is a minilazy function, its ``jax.numpy`` twin and one
argument tuple of *edge points* -- ties, zeros, domain bounds, and infinities where the gradient
is finite -- whose shapes the random points share (one compile per entry). Where the function is
differentiable, the gradient is the derivative; where it is not (``abs`` at 0, ``maximum`` at a
tie, ``sort`` with ties), it is JAX's convention, which minilazy's rules follow. A last test
checks that the table records every op with a VJP rule and every option of those ops, so a new op
without an entry fails. (Smooth points of each rule: tests/autodiff/test_autodiff.py; linalg's and
fft's rules on batches and complex matrices: tests/linalg/test_linalg.py, tests/fft/test_fft.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax import lax

import minilazy as ml
from minilazy.autodiff.vjps import NOT_DIFFERENTIABLE
from minilazy.core.attrs import Reduce
from minilazy.core.cut import walk
from minilazy.core.ir import Op
from minilazy.ops.fft import Fft, Kind, Norm
from minilazy.ops.linalg import Fn, Linalg
from minilazy.ops.sort import Sort

inf, nan = math.inf, math.nan


@dataclass(frozen=True)
class Case:
    """``mine`` and ``theirs`` (minilazy's and JAX's), differentiated in all their arguments.

    ``edges``: one argument tuple of edge points (random points take the same shapes);
    ``low``/``high``: where random points are drawn (kinks and ties included: Hypothesis favours
    0 and repeated values); ``prepare`` maps a random draw (all arguments) into the domain.
    """

    mine: Callable[..., Any]
    theirs: Callable[..., Any]
    edges: tuple[np.ndarray, ...]
    low: float = -2.0
    high: float = 2.0
    prepare: Callable[..., tuple[np.ndarray, ...]] = lambda *xs: xs
    rtol: float = 1e-10


def _a(*rows: Any) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


TIES = _a([1.0, 1.0, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [-1.0, 3.0, 3.0, 3.0])  # ties, zeros
INTS = _a(-2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5)  # integers and half-integers


def unary(mine: Callable[..., Any], theirs: Callable[..., Any], *points: float,
          **kw: Any) -> Case:
    return Case(mine, theirs, (_a(*points),), **kw)


def binary(mine: Callable[..., Any], theirs: Callable[..., Any],
           *pairs: tuple[float, float], **kw: Any) -> Case:
    return Case(mine, theirs, (_a(*[p[0] for p in pairs]), _a(*[p[1] for p in pairs])), **kw)


def _spd(x: np.ndarray, *rest: np.ndarray) -> tuple[np.ndarray, ...]:
    return x @ np.swapaxes(x, -1, -2) + x.shape[-1] * np.eye(x.shape[-1]), *rest


def _general(x: np.ndarray, *rest: np.ndarray) -> tuple[np.ndarray, ...]:
    return x + 3.0 * np.eye(x.shape[-1]), *rest  # a random draw far from singular


def _nonzero_divisor(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    y = np.where(y == 0, 1.0, y)
    # Where x / y rounds up onto an integer the exact quotient is below (0.75 / 1e-5), the
    # derivative (-floor of the quotient) is at its jump: JAX takes the rounded side, minilazy
    # NumPy's floor_divide. Moved off the jump.
    return x, np.where(np.floor(x / y) != np.floor_divide(x, y), y * (1 + 1e-6), y)


REPEATED = _a([2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 5.0])  # a double eigenvalue
SINGULAR = _a([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0])  # rank 2: det 0, but smooth
REPEATS = np.array([0, 2, 0])  # an integer index that picks row 0 twice
LOGITS = _a([0.0, 0.0, -inf, 1.0], [2.0, 2.0, 2.0, 2.0], [-inf, 0.0, 5.0, 5.0])  # ties, -inf
PAIRS = [(0.0, 0.0), (1.0, 1.0), (-1.0, -1.0), (0.0, 1.0), (1.0, 0.0), (-0.0, 0.0), (0.0, -0.0),
         (2.0, 3.0), (-inf, 0.0), (0.0, -inf), (-inf, 1.0)]

CASES: dict[str, Case] = {
    # -- elementwise, unary: kinks, zeros, domain bounds, infinities with finite gradients
    "negative": unary(ml.negative, jnp.negative, 0.0, -1.0, inf),
    "abs": unary(ml.abs, jnp.abs, 0.0, -0.0, 1.0, -1.0, inf, -inf),
    "sign": unary(ml.sign, jnp.sign, 0.0, -0.0, 1.0, -inf),
    "sqrt": unary(ml.sqrt, jnp.sqrt, 0.0, 1e-300, 4.0, inf, low=0.0),
    "square": unary(ml.square, jnp.square, 0.0, -0.0, -3.0),
    "exp": unary(ml.exp, jnp.exp, 0.0, -inf, -800.0),
    "expm1": unary(ml.expm1, jnp.expm1, 0.0, -inf, -1e-20),
    "log": unary(ml.log, jnp.log, 0.0, 1.0, inf, 1e-300, low=0.0),
    "log1p": unary(ml.log1p, jnp.log1p, -1.0, 0.0, inf, low=-1.0),
    "log2": unary(ml.log2, jnp.log2, 0.0, 1.0, inf, low=0.0),
    "log10": unary(ml.log10, jnp.log10, 0.0, 1.0, inf, low=0.0),
    "sin": unary(ml.sin, jnp.sin, 0.0, math.pi, -math.pi / 2),
    "cos": unary(ml.cos, jnp.cos, 0.0, math.pi, -math.pi / 2),
    "tan": unary(ml.tan, jnp.tan, 0.0, math.pi / 2, -math.pi / 4, low=-1.5, high=1.5),
    "asin": unary(ml.asin, jnp.arcsin, -1.0, 0.0, 1.0, low=-1.0, high=1.0),
    "acos": unary(ml.acos, jnp.arccos, -1.0, 0.0, 1.0, low=-1.0, high=1.0),
    "atan": unary(ml.atan, jnp.arctan, 0.0, inf, -inf),
    "sinh": unary(ml.sinh, jnp.sinh, 0.0, -0.0, 700.0),
    "cosh": unary(ml.cosh, jnp.cosh, 0.0, -0.0, 700.0),
    "tanh": unary(ml.tanh, jnp.tanh, 0.0, inf, -inf, 30.0),
    "asinh": unary(ml.asinh, jnp.arcsinh, 0.0, inf, -inf),
    "acosh": unary(ml.acosh, jnp.arccosh, 1.0, 2.0, inf, low=1.0, high=4.0),
    "atanh": unary(ml.atanh, jnp.arctanh, -1.0, 0.0, 1.0, low=-0.99, high=0.99),
    "floor": Case(ml.floor, jnp.floor, (INTS,)),
    "ceil": Case(ml.ceil, jnp.ceil, (INTS,)),
    "round": Case(ml.round, jnp.round, (INTS,)),
    "trunc": Case(ml.trunc, jnp.trunc, (INTS,)),
    "stop_gradient": unary(lambda x: x * ml.stop_gradient(x), lambda x: x * lax.stop_gradient(x),
                           0.0, -2.0, 3.0),
    "astype": unary(lambda x: ml.astype(ml.astype(x, ml.float32), ml.float64),
                    lambda x: x.astype(jnp.float32).astype(jnp.float64), 0.0, 1.5, inf,
                    rtol=1e-6),
    "positive": unary(ml.positive, jnp.positive, 0.0, inf),
    # -- elementwise, binary: ties, zeros, signed zeros, infinities
    "add": binary(ml.add, jnp.add, *PAIRS),
    "subtract": binary(ml.subtract, jnp.subtract, *PAIRS),
    "multiply": binary(ml.multiply, jnp.multiply, *PAIRS[:8]),
    "divide": binary(ml.divide, jnp.divide, (0.0, 1.0), (1.0, 1.0), (-inf, 2.0), (0.0, 0.0)),
    "pow": binary(ml.pow, jnp.power, (0.0, 1.0), (0.0, 2.0), (0.0, 0.5), (0.0, -1.0),
                  (2.0, 0.0), (1.0, 1.0), (-2.0, 2.0), (-2.0, 3.0), (-1.0, 0.0), low=0.25),
    "pow_int": unary(lambda x: x ** 3, lambda x: x ** 3, 0.0, -0.0, -2.0),
    # x**0 is 1 everywhere, so its slope at 0 is 0: JAX's for an int exponent (NaN for 0.0)
    "pow_zero": unary(lambda x: x ** 0, lambda x: x ** 0, 0.0, -0.0, -2.0, inf),
    "pow_half": unary(lambda x: x ** 0.5, lambda x: x ** 0.5, 0.0, 1.0, inf, low=0.0),
    "maximum": binary(ml.maximum, jnp.maximum, *PAIRS),
    "minimum": binary(ml.minimum, jnp.minimum, *PAIRS),
    "clip": Case(lambda x, lo, hi: ml.clip(x, lo, hi), jnp.clip,
                 (_a(-1.0, 0.0, 1.0, 2.0, 0.5), _a(-1.0, -1.0, 0.0, 0.0, 0.5),
                  _a(1.0, 1.0, 1.0, 2.0, 0.5))),
    "clip_scalars": Case(lambda x: ml.clip(x, -1.0, 1.0), lambda x: jnp.clip(x, -1.0, 1.0),
                         (_a(-1.0, 1.0, 0.0, -2.0, inf),)),
    "clip_min": unary(lambda x: ml.clip(x, min=0.0), lambda x: jnp.clip(x, min=0.0), 0.0, -1.0),
    "clip_max": unary(lambda x: ml.clip(x, max=0.0), lambda x: jnp.clip(x, max=0.0), 0.0, -1.0),
    "atan2": binary(ml.atan2, jnp.arctan2, (0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (1.0, 1.0),
                    (-1.0, -1.0)),
    "remainder": binary(ml.remainder, jnp.remainder, (3.0, 1.5), (-3.0, 1.5), (0.0, 1.0),
                        (2.0, -1.5), (-1.0, 3.0), prepare=_nonzero_divisor),
    "floor_divide": binary(ml.floor_divide, jnp.floor_divide, (3.0, 1.5), (-3.0, 1.5), (0.0, 1.0),
                           prepare=_nonzero_divisor),
    "hypot": binary(ml.hypot, jnp.hypot, *PAIRS[:8], (-1.0, 1.0)),
    "logaddexp": binary(ml.logaddexp, jnp.logaddexp, *PAIRS, (1000.0, 1000.0)),
    "copysign": binary(ml.copysign, jnp.copysign, *PAIRS[:8], (-2.0, -0.0), (inf, -1.0)),
    "where": Case(lambda x, y: ml.where(x > y, x, y), lambda x, y: jnp.where(x > y, x, y),
                  (_a(0.0, 1.0, 2.0), _a(0.0, 2.0, 1.0))),
    # -- reductions: every axis form and keepdims; ties, zeros, maxima shared between rows
    **{f"{name}_{axis}_{keep}": Case(
        lambda x, f=f, axis=axis, keep=keep: getattr(ml, f)(x, axis=axis, keepdims=keep),
        lambda x, f=f, axis=axis, keep=keep: getattr(jnp, f)(x, axis=axis, keepdims=keep),
        (TIES,)) for f, name in [("sum", "sum"), ("prod", "prod"), ("max", "max"), ("min", "min"),
                                 ("mean", "mean"), ("var", "var"), ("std", "std")]
       for axis in (None, 0, (1,), (0, 1)) for keep in (False, True)},
    "var_correction": Case(lambda x: ml.var(x, axis=1, correction=1),
                           lambda x: jnp.var(x, axis=1, ddof=1), (TIES,)),
    "std_correction": Case(lambda x: ml.std(x, axis=0, correction=1.5),
                           lambda x: jnp.std(x, axis=0, ddof=1.5), (TIES,)),
    "prod_two_zeros": Case(lambda x: ml.prod(x, axis=1), lambda x: jnp.prod(x, axis=1),
                           (_a([0.0, 2.0, 0.0, 3.0], [0.0, 2.0, 1.0, 3.0], [1.0, 1.0, 1.0, 0.0]),)),
    **{f"cumulative_sum_{axis}_{initial}": Case(
        lambda x, axis=axis, i=initial: ml.cumulative_sum(x, axis=axis, include_initial=i),
        lambda x, axis=axis, i=initial: jnp.cumulative_sum(x, axis=axis, include_initial=i),
        (TIES,)) for axis in (0, 1) for initial in (False, True)},
    # -- sorting: ties in both directions, along each axis
    **{f"sort_{axis}_{d}": Case(lambda x, a=axis, d=d: ml.sort(x, axis=a, descending=d),
                                lambda x, a=axis, d=d: jnp.sort(x, axis=a, descending=d),
                                (TIES,)) for axis in (0, -1) for d in (False, True)},
    # -- contractions and shapes
    "matmul": Case(ml.matmul, jnp.matmul, (TIES.T, TIES[:, :3])),
    "matmul_vector": Case(ml.matmul, jnp.matmul, (TIES[0], TIES.T)),
    "matmul_batched": Case(ml.matmul, jnp.matmul, (TIES.reshape(2, 2, 3), TIES.reshape(2, 3, 2))),
    "tensordot": Case(lambda a, b: ml.tensordot(a, b, axes=([0], [1])),
                      lambda a, b: jnp.tensordot(a, b, axes=([0], [1])), (TIES, TIES.T)),
    "vecdot": Case(ml.vecdot, jnp.vecdot, (TIES, TIES[1])),
    "reshape": Case(lambda x: ml.reshape(x, (2, 6)), lambda x: x.reshape(2, 6), (TIES,)),
    "permute_dims": Case(lambda x: ml.permute_dims(x[None], (2, 0, 1)),
                         lambda x: jnp.transpose(x[None], (2, 0, 1)), (TIES,)),
    "broadcast_to": Case(lambda x: ml.broadcast_to(x[0], (2, 4)),
                         lambda x: jnp.broadcast_to(x[0], (2, 4)), (TIES,)),
    "flip": Case(lambda x: ml.flip(x, axis=0), lambda x: jnp.flip(x, axis=0), (TIES,)),
    # pack's cotangent is unpacked, unpack's is packed between zeros: both ops in each case
    "pack": Case(lambda x, y: ml.pack([x, y, x]) ** 2,
                 lambda x, y: jnp.concatenate([x.ravel(), y.ravel(), x.ravel()]) ** 2,
                 (TIES, TIES[:, :1])),
    "unpack": Case(lambda x, y: ml.unpack(ml.pack([x, y]), [(1, 2), 2], offset=1)[0] * 3.0,
                   lambda x, y: jnp.concatenate([x.ravel(), y.ravel()])[1:3].reshape(1, 2) * 3,
                   (TIES, TIES[:, :1])),
    "concat": Case(lambda x, y: ml.concat([x, y, x], axis=1),
                   lambda x, y: jnp.concatenate([x, y, x], axis=1), (TIES, TIES[:, :1])),
    "stack": Case(lambda x: ml.stack([x, 2.0 * x], axis=1),
                  lambda x: jnp.stack([x, 2.0 * x], axis=1), (TIES,)),
    "getitem": Case(lambda x: x[1:, ::-2], lambda x: x[1:, ::-2], (TIES,)),
    "getitem_repeats": Case(lambda x: x[REPEATS, 1], lambda x: x[REPEATS, 1], (TIES,)),
    "setitem": Case(lambda x, v: _set(x, v), lambda x, v: x.at[1:, 2].set(v), (TIES, TIES[1:, 0])),
    # scatter-add is getitem's VJP: a second derivative goes through its rule
    "scatter_add": Case(lambda x: ml.grad(lambda t: ml.sum(t[REPEATS, 1:] ** 3))(x),
                        jax.grad(lambda t: jnp.sum(t[REPEATS, 1:] ** 3)), (TIES,)),
    "take_along_axis": Case(lambda x: ml.take_along_axis(x, ml.asarray(IDX), axis=1),
                            lambda x: jnp.take_along_axis(x, IDX, axis=1), (TIES,)),
    "tril": Case(lambda x: ml.tril(x, k=-1), lambda x: jnp.tril(x, k=-1), (TIES,)),
    "diff": Case(lambda x: ml.diff(x, axis=0, n=2), lambda x: jnp.diff(x, axis=0, n=2), (TIES,)),
    "shard": Case(lambda x: ml.mark_sharding(x * 1.0, ml.Mesh(ml.devices()[:1], ("d",)),
                                             ("d", None)), lambda x: x * 1.0, (TIES,)),
    "real_imag_conj": Case(lambda x: ml.real(ml.conj(x * 1j + x)) * ml.imag(x * (2 + 1j)),
                           lambda x: jnp.real(jnp.conj(x * 1j + x)) * jnp.imag(x * (2 + 1j)),
                           (TIES,)),
    "conv": Case(lambda x, w: ml.conv(x, w, stride=2, padding=1),
                 lambda x, w: jax.lax.conv_general_dilated(
                     x, w, (2,), [(1, 1)], precision=jax.lax.Precision.HIGHEST),
                 (TIES.reshape(1, 2, 6), TIES.reshape(3, 2, 2))),
    # -- nn: kinks at 0, ties in the maximum a softmax subtracts, -inf logits
    "relu": unary(ml.nn.relu, jax.nn.relu, 0.0, -0.0, -1.0, 1.0, inf),
    "gelu": unary(ml.nn.gelu, lambda x: jax.nn.gelu(x, approximate=False), 0.0, -1.0, 1.0,
                  rtol=1e-6),
    "gelu_tanh": unary(lambda x: ml.nn.gelu(x, approximate="tanh"),
                       lambda x: jax.nn.gelu(x, approximate=True), 0.0, -1.0, 1.0, inf),
    **{f"{f}_{axis}": Case(lambda x, f=f, a=axis: getattr(ml.nn, f)(x, axis=a),
                           lambda x, f=f, a=axis: getattr(jax.nn, f)(x, axis=a),
                           (LOGITS,))
       for f in ("softmax", "log_softmax") for axis in (0, -1)},
    "max_pool2d": Case(lambda x: ml.nn.max_pool2d(x, 2, 1, 1),
                       lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2),
                                                       (1,) * 4, ((0, 0), (0, 0), (1, 1), (1, 1))),
                       (TIES.reshape(1, 1, 3, 4),)),
}
IDX = np.array([[0, 0], [3, 1], [2, 2]])


def _set(x: ml.Tensor, v: ml.Tensor) -> ml.Tensor:
    y = x * 1.0
    y[1:, 2] = v
    return y


# -- linalg: every primitive with a rule, every norm kind; singular, repeated, zero inputs
def _norms() -> dict[str, Case]:
    out: dict[str, Case] = {}
    for ord_ in (2, 1, 0, inf, -inf, 3, 0.5, -1):
        for axis in (None, 1):
            out[f"vector_norm_{ord_}_{axis}"] = Case(
                lambda x, o=ord_, a=axis: ml.linalg.vector_norm(x, axis=a, ord=o, keepdims=True),
                lambda x, o=ord_, a=axis: jnp.linalg.vector_norm(x, axis=a, ord=o, keepdims=True),
                (TIES[1:] + (1.0 if axis is None else 0.0),))
    for ord_ in ("fro", "nuc", 1, -1, inf, -inf, 2, -2):
        out[f"matrix_norm_{ord_}"] = Case(
            lambda x, o=ord_: ml.linalg.matrix_norm(x, ord=o, keepdims=o == 1),
            lambda x, o=ord_: jnp.linalg.matrix_norm(x, ord=o, keepdims=o == 1),
            (_a([1.0, -2.0, 0.5], [3.0, 0.0, -1.0], [0.0, 2.0, 2.5]),), prepare=_general)
    return out


CASES.update(_norms())
CASES.update({
    "cholesky": Case(lambda a: ml.linalg.cholesky(a, upper=True),
                     lambda a: jnp.linalg.cholesky(a, upper=True), (REPEATED,), prepare=_spd),
    "eigvalsh": Case(ml.linalg.eigvalsh, jnp.linalg.eigvalsh, (REPEATED + 1.0,), prepare=_spd),
    # eigenvectors are unique up to sign: a loss of their squares does not see it
    "eigh_vectors": Case(lambda a: ml.linalg.eigh(a).eigenvectors ** 2,
                         lambda a: jnp.linalg.eigh(a)[1] ** 2, _spd(TIES[:, :3]),
                         prepare=_spd, rtol=1e-8),
    "svdvals": Case(ml.linalg.svdvals, lambda a: jnp.linalg.svd(a, compute_uv=False),
                    (SINGULAR,), prepare=_general, rtol=1e-8),
    "solve": Case(ml.linalg.solve, jnp.linalg.solve, (REPEATED, TIES[:, :2]),
                  prepare=_general),
    "inv": Case(ml.linalg.inv, jnp.linalg.inv, (REPEATED,), prepare=_general),
    "det": Case(ml.linalg.det, jnp.linalg.det, (SINGULAR,), prepare=_general, rtol=1e-8),
    "det_zero": Case(ml.linalg.det, jnp.linalg.det, (np.zeros((3, 3)),), prepare=_general),
    "slogdet": Case(lambda a: ml.linalg.slogdet(a).logabsdet * ml.linalg.slogdet(a).sign,
                    lambda a: jnp.linalg.slogdet(a)[1] * jnp.linalg.slogdet(a)[0],
                    (-REPEATED,), prepare=_general),
    "matrix_power": Case(lambda a: ml.linalg.matrix_power(a, -2),
                         lambda a: jnp.linalg.matrix_power(a, -2), (REPEATED,), prepare=_general),
})
# -- fft: every kind and every norm
CASES.update({
    f"{name}_{norm}": Case(lambda x, f=name, n=norm: ml.real(getattr(ml.fft, f)(x, norm=n)),
                           lambda x, f=name, n=norm: jnp.real(getattr(jnp.fft, f)(x, norm=n)),
                           (TIES,))
    for name in ("fft", "ifft", "rfft", "irfft", "fftn", "hfft")
    for norm in ("backward", "ortho", "forward")})


# -- running both -----------------------------------------------------------------------------
def _weights(case: Case, args: tuple[np.ndarray, ...]) -> np.ndarray:
    with jax.enable_x64(True):
        out = jax.eval_shape(case.theirs, *args)
    return np.random.default_rng(0).standard_normal(out.shape)  # distinct: ties stay apart


def _compare(case: Case, args: tuple[np.ndarray, ...]) -> None:
    w = _weights(case, args)
    argnums = tuple(range(len(args)))
    got = ml.grad(lambda *a: ml.sum(case.mine(*a) * w), argnums)(*map(ml.asarray, args))
    with jax.enable_x64(True):  # scoped: other tests compare with JAX's 32-bit defaults
        want = jax.grad(lambda *a: jnp.sum(case.theirs(*a) * w), argnums)(
            *map(jnp.asarray, args))
        want = [np.asarray(e) for e in want]
    for i, (g, e) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g.numpy(), e, rtol=case.rtol, atol=case.rtol,
                                   err_msg=f"argument {i} at {args}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_edge_points_is_jaxs(name: str) -> None:
    """At ties, zeros, bounds and infinities: the derivative, or JAX's convention at a kink."""
    _compare(CASES[name], CASES[name].edges)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=3)
@given(data=st.data())
def test_gradient_at_random_points_is_jaxs(name: str, data: st.DataObject) -> None:
    case = CASES[name]
    floats = st.floats(case.low, case.high, allow_nan=False)
    draws = [data.draw(hnp.arrays(np.float64, e.shape, elements=floats)) for e in case.edges]
    if name.startswith("std"):  # not a constant slice: there sqrt's slope at 0 is undefined
        assume(np.all(np.ptp(draws[0], axis=0) > 1e-3))  # (NaN, or JAX's rounding's value)
    # (flushed to 0 below 1e-6: XLA flushes subnormals, and JAX's formulas for hypot and prod
    # overflow or underflow in their intermediates there)
    _compare(case, case.prepare(*(np.where(np.abs(x) < 1e-6, 0.0, x) for x in draws)))


# -- the table covers every differentiable op and every option of it ---------------------------
def _variant(op: Op, attrs: Any) -> tuple[Any, ...]:
    """An op with the options that select different code in its VJP rule."""
    match attrs:
        case Sort(_, descending):
            return op, descending
        case Reduce(_, keepdims):
            return op, keepdims
        case Linalg(fn, _):
            return op, Fn(fn)
        case Fft(kind, _, _, norm):
            return op, Kind(kind), Norm(norm)
    return (op,)


def _required() -> set[tuple[Any, ...]]:
    ops = set(Op) - NOT_DIFFERENTIABLE - {Op.DATA, Op.SCALAR, Op.IOTA}
    out: set[tuple[Any, ...]] = set()
    for op in ops:
        if op in (Op.SORT,):
            out |= {(op, d) for d in (False, True)}
        elif op in (Op.SUM, Op.PROD, Op.MAX, Op.MIN):
            out |= {(op, k) for k in (False, True)}
        elif op is Op.LINALG:  # (qr's factors and svd's vectors refuse gradients: test_linalg)
            out |= {(op, f) for f in Fn} - {(op, f) for f in
                                            (Fn.QR_Q, Fn.QR_R, Fn.SVD_U, Fn.SVD_VT)}
        elif op is Op.FFT:
            out |= {(op, k, n) for k in Kind for n in Norm}
        else:
            out.add((op,))
    return out


def test_every_differentiable_op_and_option_has_a_case() -> None:
    recorded: set[tuple[Any, ...]] = set()
    for case in CASES.values():
        outs = case.mine(*map(ml.asarray, case.edges))
        recorded |= {_variant(n.op, n.attrs) for n in walk([outs._node], outs.device).order}
    missing = _required() - recorded
    assert not missing, f"no case in CASES records {sorted(map(str, missing))}"
    ml.mark_step()
