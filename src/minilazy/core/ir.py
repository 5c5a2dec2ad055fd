"""The IR: a closed set of ops and immutable nodes that record them.

A :class:`Node` is one recorded op: its operands, static attributes, result shape and dtype,
and a *structural digest* computed once from exactly those (never from data), so a graph's
cache key costs one walk. Leaves are parameters: device data (``DATA``) or a Python scalar
(``SCALAR``). Never imports jax.
"""

from __future__ import annotations

import copy
import enum
import zlib
from typing import Final, NoReturn, TypeAlias

from minilazy.core.attrs import (
    NONE,
    Attrs,
    Constant,
    Iota,
    NoAttrs,
    Permute,
    Reduce,
    ToShape,
    mismatch,
)
from minilazy.core.attrs import Device as Device
from minilazy.core.dtypes import CODE, DType, Number, typed

Shape: TypeAlias = tuple[int, ...]


class Op(enum.Enum):
    """Every operation minilazy can record. Closed: each table of rules covers all of it.

    Example:
        >>> Op("add"), Op.DATA in LEAVES
        (<Op.ADD: 'add'>, True)
    """

    # leaves (parameters) and nullary ops
    DATA = "data"
    SCALAR = "scalar"
    IOTA = "iota"
    # elementwise unary
    NEG = "negative"
    ABS = "abs"
    SIGN = "sign"
    SQRT = "sqrt"
    SQUARE = "square"
    EXP = "exp"
    EXPM1 = "expm1"
    LOG = "log"
    LOG1P = "log1p"
    LOG2 = "log2"
    LOG10 = "log10"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    SINH = "sinh"
    COSH = "cosh"
    TANH = "tanh"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    FLOOR = "floor"
    CEIL = "ceil"
    ROUND = "round"
    TRUNC = "trunc"
    LOGICAL_NOT = "logical_not"
    BITWISE_INVERT = "bitwise_invert"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    SIGNBIT = "signbit"  # reads the sign bit itself: -0.0 and -NaN too
    REAL = "real"  # a complex number's parts, and its conjugate (the identity on real dtypes)
    IMAG = "imag"
    CONJ = "conj"
    CONVERT = "astype"
    # elementwise binary (NumPy broadcasting; operands cast to the op's loop dtypes)
    ADD = "add"
    SUB = "subtract"
    MUL = "multiply"
    DIV = "divide"
    FLOOR_DIV = "floor_divide"
    MOD = "remainder"
    POW = "pow"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    ATAN2 = "atan2"
    EQ = "equal"
    NE = "not_equal"
    LT = "less"
    LE = "less_equal"
    GT = "greater"
    GE = "greater_equal"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    BITWISE_XOR = "bitwise_xor"
    SHIFT_LEFT = "bitwise_left_shift"
    SHIFT_RIGHT = "bitwise_right_shift"
    WHERE = "where"
    # reductions: attrs = (axes, keepdims)
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"
    ARGMIN = "argmin"
    ANY = "any"
    ALL = "all"
    # scans: attrs = (axis, reverse); a scan's VJP is the scan the other way
    CUMSUM = "cumulative_sum"
    # sorts: attrs = (axis, descending), always stable; a sort's VJP gathers by the permutation
    SORT = "sort"
    ARGSORT = "argsort"
    # linear algebra
    MATMUL = "matmul"
    TENSORDOT = "tensordot"
    CONV = "conv"  # N-d, grouped, dilated; its VJPs are convolutions again
    LINALG = "linalg"  # cholesky, eigh, qr, svd, solve, inv, det...: attrs.Linalg picks one
    FFT = "fft"  # discrete Fourier transforms over some axes: attrs.Fft (a linear map)
    # shape and indexing
    RESHAPE = "reshape"
    TRANSPOSE = "permute_dims"
    BROADCAST = "broadcast_to"
    FLIP = "flip"
    CONCAT = "concat"
    GETITEM = "getitem"
    SETITEM = "setitem"
    SCATTER_ADD = "scatter_add"  # x with v added at an index (repeats add up): getitem's VJP
    # multi-tensor: a group of tensors laid end to end in one vector (each in C order), and one
    # taken back out: an optimizer updates a whole group with a few ops on the vector
    PACK = "pack"
    UNPACK = "unpack"
    # placement: the value unchanged, split over a mesh as its attrs say (XLA GSPMD partitions)
    SHARD = "shard"
    # the value unchanged, where the backward pass stops: no gradient flows through (autodiff)
    STOP_GRADIENT = "stop_gradient"

    # Hash by identity (fast, in C), not Enum's hash of the name; digests use OP_CODE below.
    __hash__ = object.__hash__


LEAVES: Final = frozenset({Op.DATA, Op.SCALAR})
# The attribute family each op takes, checked when a node is made: core's (minilazy.core.attrs)
# here; an op family's, defined in its module (minilazy.ops), added by it.
FAMILY: Final[dict[Op, tuple[type, ...]]] = {
    Op.DATA: (NoAttrs,), Op.SCALAR: (NoAttrs, Constant), Op.IOTA: (Iota,),
    Op.MATMUL: (NoAttrs,),
    **dict.fromkeys([Op.NEG, Op.ADD, Op.SUB, Op.MUL, Op.DIV], (NoAttrs,)), Op.SUM: (Reduce,),
    Op.RESHAPE: (ToShape,), Op.BROADCAST: (ToShape,), Op.TRANSPOSE: (Permute,),
    Op.STOP_GRADIENT: (NoAttrs,),
}
# A stable integer per op for the digest (hash() of an enum member or a str is salted per process).
OP_CODE: Final[dict[Op, int]] = {op: zlib.crc32(op.value.encode()) for op in Op}


class ShapeError(ValueError):
    """An op was given operands whose shapes it cannot combine (raised at the op call).

    Example:
        >>> import minilazy as ml
        >>> ml.ones((2, 3)) + ml.ones((4,))
        Traceback (most recent call last):
        ...
        minilazy.core.ir.ShapeError: add: cannot broadcast f64[2,3] with f64[4]
    """


class DeviceError(ValueError):
    """An op was given tensors that live on different devices.

    Example:
        >>> import minilazy as ml
        >>> a = ml.ones((2,), device=Device("cpu", 0))
        >>> b = ml.ones((2,), device=Device("cpu", 1))
        >>> a + b
        Traceback (most recent call last):
        ...
        minilazy.core.ir.DeviceError: add: operands are on different devices: ...
    """


class UnsupportedError(NotImplementedError):
    """The operation has no lazy form in minilazy: a ``NotImplementedError``.

    (A second-order gradient of a grouped convolution's filter, for one.)

    Example:
        >>> import minilazy as ml
        >>> issubclass(ml.UnsupportedError, NotImplementedError)
        True
    """


class Node:
    """One recorded op. Immutable by convention; slotted because recording makes millions.

    Attributes:
        op: what the node computes.
        operands: the nodes it reads.
        attrs: static attributes of the op's family (``FAMILY``), part of the cache key.
        shape: the result shape.
        dtype: the result dtype.
        digest: structural hash of (op, attrs, shape, dtype, operand digests); never data.
            It finds programs; what decides one is compared by value: ``exact``.
        exact: ``(op, attrs, shape, dtype)``, this node's part of a program's structure.
        payload: a leaf's value: the device buffer of ``DATA``, the Python number of ``SCALAR``.
        site: the user's ``file:line`` that recorded it, when debug info is on.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> a = Node(Op.SCALAR, (), NONE, (), float32, 2.0)
        >>> b = Node(Op.ADD, (a, a), NONE, (), float32)
        >>> b.digest == Node(Op.ADD, (a, a), NONE, (), float32).digest
        True
        >>> Node(Op.SUM, (a,), NONE, (), float32)
        Traceback (most recent call last):
        ...
        TypeError: sum: attributes NoAttrs() are of the wrong family
    """

    __slots__ = ("op", "operands", "attrs", "shape", "dtype", "digest", "exact", "payload",
                 "site")

    op: Op
    operands: tuple[Node, ...]
    attrs: Attrs
    shape: Shape
    dtype: DType
    digest: int
    exact: tuple[Op, Attrs, Shape, DType]
    payload: object
    site: str | None

    def __init__(self, op: Op, operands: tuple[Node, ...], attrs: Attrs, shape: Shape,
                 dtype: DType, payload: object = None, site: str | None = None) -> None:
        if type(attrs) not in FAMILY.get(op, ()):  # once here: no table has to check again
            raise mismatch(op, attrs)
        self.op = op
        self.operands = operands
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.payload = payload
        self.site = site
        self.exact = (op, attrs, shape, dtype)
        n = len(operands)
        if n == 0:
            self.digest = hash((OP_CODE[op], attrs, shape, CODE[dtype]))
        elif n == 1:
            self.digest = hash((OP_CODE[op], attrs, shape, CODE[dtype], operands[0].digest))
        elif n == 2:
            self.digest = hash((OP_CODE[op], attrs, shape, CODE[dtype], operands[0].digest,
                                operands[1].digest))
        else:
            self.digest = hash((OP_CODE[op], attrs, shape, CODE[dtype],
                                *[o.digest for o in operands]))

    def __repr__(self) -> str:
        return f"<Node {self.op.value} {typed(self.dtype, self.shape)}>"


def data_leaf(buffer: object, shape: Shape, dtype: DType,
              placed: Attrs = NONE) -> Node:
    """A ``DATA`` leaf: device data that enters every graph that reads it as a parameter.

    ``placed``: how the buffer is split over a mesh, if it is (part of the digest, so of keys).
    """
    return Node(Op.DATA, (), placed, shape, dtype, buffer)


class Failure:
    """The payload of a tensor whose value could not be computed: its error, to raise again.

    A tensor a barrier cannot materialise becomes a ``DATA`` leaf holding one: observing it, or
    any graph that reads it, raises the error again. A copy is kept, without its traceback
    (whose frames would keep every tensor they saw alive).
    """

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = _detached(error)

    def throw(self) -> NoReturn:
        """Raise (a copy of) the original error."""
        raise _detached(self.error)

    def __repr__(self) -> str:
        return f"Failure({type(self.error).__name__}: {self.error})"


def _detached(error: BaseException) -> BaseException:
    """A copy of ``error`` with no traceback, cause or context (frames hold tensors)."""
    try:
        out = copy.copy(error)
    except Exception:  # an exception type that cannot be rebuilt from its args
        out = RuntimeError(f"{type(error).__name__}: {error}")
    out.__traceback__ = out.__cause__ = out.__context__ = None
    return out


def failed_leaf(node: Node, error: BaseException) -> Node:
    """A ``DATA`` leaf standing for ``node``, whose value failed with ``error``."""
    return Node(Op.DATA, (), NONE, node.shape, node.dtype, Failure(error), node.site)


def scalar_leaf(value: Number, dtype: DType) -> Node:
    """A ``SCALAR`` leaf: a Python number, a parameter so a changing value never recompiles."""
    return Node(Op.SCALAR, (), NONE, (), dtype, value)
