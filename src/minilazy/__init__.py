"""minilazy: a reference implementation of the LazyTensor technique.

Write eager-looking tensor code; every op is recorded into an IR graph instead of being run. At a
barrier (``mark_step``, ``sync``, or an observation such as ``float(t)``) the pending graph is
cut, hashed, compiled by XLA through JAX, cached by its key, and run on a device.

Example:
    >>> import minilazy as ml
    >>> x = ml.asarray([1.0, 2.0, 3.0])
    >>> y = ml.tanh(x * 2.0 + 1.0)      # recorded, not run
    >>> y.is_pending
    True
    >>> ml.mark_step()                  # barrier: one compiled program runs
    >>> y.is_pending
    False
"""

import os as _os

from minilazy import barrier as _barrier
from minilazy import debug as _debug
from minilazy import metrics as _metrics
from minilazy import runtime as _runtime
from minilazy import state as _state
from minilazy.autodiff import grad, value_and_grad
from minilazy.barrier import eager, mark_step, policy, sync, wait
from minilazy.cache import clear_cache
from minilazy.creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from minilazy.debug import (
    CompileRecord,
    RecompileWarning,
    compile_history,
    current_debug_level,
    debug,
)
from minilazy.device import Mesh
from minilazy.diskcache import CacheWarning, cache_dir, set_cache_dir
from minilazy.dtypes import (
    bool_ as bool,
)
from minilazy.dtypes import (
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from minilazy.elementwise import (
    abs,
    acos,
    acosh,
    add,
    asin,
    asinh,
    astype,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clip,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    remainder,
    round,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    trunc,
    where,
)
from minilazy.ir import Device, DeviceError, Op, ShapeError, UnsupportedError
from minilazy.metrics import Metrics, metrics, metrics_report, reset_metrics
from minilazy.printers import Graph, graph
from minilazy.reductions import (
    all,
    any,
    argmax,
    argmin,
    matmul,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    tensordot,
    var,
)
from minilazy.runtime import default_device, devices
from minilazy.searching import (
    UniqueAllResult,
    UniqueCountsResult,
    UniqueInverseResult,
    nonzero,
    searchsorted,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from minilazy.shaping import (
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    permute_dims,
    reshape,
    squeeze,
    stack,
    take,
)
from minilazy.sharding import mark_sharding
from minilazy.state import BarrierPolicy, current_policy, set_policy
from minilazy.tracer import Tensor

__version__ = "0.1.0"


def _install() -> None:
    # The one place where the layers are wired together: the tracer reaches the barrier layer
    # through the backend, the debugger listens to barriers, the runtime's gauges join the
    # metrics, and a fork() child learns that JAX cannot run there.
    _state.install(_barrier.BACKEND)
    _debug.install()
    _metrics.GAUGES.update(_runtime.GAUGES)
    _os.register_at_fork(after_in_child=_runtime.forked)


_install()
__all__ = [
    "CompileRecord",
    "RecompileWarning",
    "CacheWarning",
    "compile_history",
    "current_debug_level",
    "debug",
    "grad",
    "value_and_grad",
    "Graph",
    "graph",
    "abs",
    "acos",
    "acosh",
    "add",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "BarrierPolicy",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "bool",
    "broadcast_to",
    "ceil",
    "cache_dir",
    "clear_cache",
    "clip",
    "concat",
    "cos",
    "cosh",
    "current_policy",
    "default_device",
    "Device",
    "Mesh",
    "DeviceError",
    "devices",
    "divide",
    "eager",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "eye",
    "finfo",
    "flip",
    "float16",
    "float32",
    "float64",
    "floor",
    "floor_divide",
    "full",
    "full_like",
    "greater",
    "greater_equal",
    "iinfo",
    "int16",
    "int32",
    "int64",
    "int8",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "linspace",
    "log",
    "log10",
    "log1p",
    "log2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "mark_sharding",
    "mark_step",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "Metrics",
    "metrics",
    "metrics_report",
    "min",
    "minimum",
    "multiply",
    "negative",
    "nonzero",
    "not_equal",
    "ones",
    "ones_like",
    "Op",
    "permute_dims",
    "policy",
    "positive",
    "pow",
    "prod",
    "remainder",
    "reset_metrics",
    "reshape",
    "result_type",
    "round",
    "searchsorted",
    "set_cache_dir",
    "set_policy",
    "ShapeError",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "sync",
    "take",
    "tan",
    "tanh",
    "Tensor",
    "tensordot",
    "trunc",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "UnsupportedError",
    "var",
    "wait",
    "where",
    "zeros",
    "zeros_like",
]
