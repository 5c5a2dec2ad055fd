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

import sys as _sys

import minilazy.ops  # noqa: F401 -- importing it registers every op family's rules
from minilazy import fft as fft  # the fft extension: ml.fft.fft, rfftn, fftfreq, ...
from minilazy import linalg as linalg  # the linalg extension: ml.linalg.solve, eigh, svd, ...
from minilazy import nn as nn  # layers: ml.nn.conv2d, ml.nn.max_pool2d, ...
from minilazy import optim as optim  # optimizers: ml.optim.sgd, ml.optim.adam
from minilazy import random as random  # keys: ml.random.key, split, uniform, normal, ...
from minilazy.api import interop as _interop
from minilazy.api import numpy_policy as _numpy_policy
from minilazy.api.composites import (
    can_cast,
    copysign,
    count_nonzero,
    diff,
    e,
    from_dlpack,
    hypot,
    inf,
    isdtype,
    logaddexp,
    nan,
    newaxis,
    pi,
    vecdot,
)
from minilazy.api.convolution import conv
from minilazy.api.creation import (
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
from minilazy.api.elementwise import (
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
    conj,
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
    imag,
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
    real,
    remainder,
    round,
    sign,
    signbit,
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
from minilazy.api.everyday import (
    concatenate,
    logsumexp,
    pack,
    sigmoid,
    softplus,
    stop_gradient,
    transpose,
    unpack,
)
from minilazy.api.indexing import ViewWriteWarning
from minilazy.api.info import Info, __array_namespace_info__, finfo, iinfo
from minilazy.api.manipulation import (
    broadcast_arrays,
    meshgrid,
    moveaxis,
    repeat,
    roll,
    tile,
    unstack,
)
from minilazy.api.products import matmul, tensordot
from minilazy.api.reductions import (
    all,
    any,
    argmax,
    argmin,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from minilazy.api.scalars import result_type
from minilazy.api.searching import (
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
from minilazy.api.shaping import (
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
    take_along_axis,
    tril,
    triu,
)
from minilazy.api.sorting import argsort, sort
from minilazy.api.tensor import Tensor
from minilazy.autodiff import origins as _origins
from minilazy.autodiff.tape import TAPES as _TAPES
from minilazy.autodiff.tape import clear_cache, grad, value_and_grad
from minilazy.core import state as _state
from minilazy.core import tracer as _tracer
from minilazy.core.barrier import mark_step, sync, wait
from minilazy.core.cache import CACHE as _CACHE
from minilazy.core.dtypes import bool_ as bool
from minilazy.core.dtypes import (
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from minilazy.core.ir import Device, DeviceError, Op, ShapeError, UnsupportedError
from minilazy.core.runtime import default_device
from minilazy.core.state import BarrierPolicy, current_policy, eager, policy, set_policy
from minilazy.introspect import debug as _debug
from minilazy.introspect.debug import (
    CompileRecord,
    RecompileWarning,
    compile_history,
    current_debug_level,
    debug,
)
from minilazy.introspect.printers import Graph, graph
from minilazy.introspect.report import Metrics, metrics, metrics_report, reset_metrics
from minilazy.linalg.einsum import einsum
from minilazy.parts import plans as _plans
from minilazy.parts import refcounts as _refcounts
from minilazy.parts import signals as _signals
from minilazy.parts import staging as _staging
from minilazy.parts import tapes as _tapes
from minilazy.parts.capture import CaptureWarning, capture
from minilazy.persist import executables as _executables
from minilazy.persist.diskcache import SETTINGS as _SETTINGS
from minilazy.persist.diskcache import CacheWarning, cache_dir, set_cache_dir
from minilazy.scaleout import placement as _placement
from minilazy.scaleout import processes as _processes
from minilazy.scaleout.meshes import Mesh
from minilazy.scaleout.processes import devices
from minilazy.scaleout.sharding import mark_sharding

__version__ = "0.1.0"
__array_api_version__ = "2023.12"


# The assembly, explicit: core knows neither the disk nor the debugger; the face plugs them in.
_state.install(programs=_CACHE, cuts=_plans.PLANS, tapes=_TAPES, layers=_tapes.TEMPLATES,
               debugger=_debug.DEBUGGER, disk=_SETTINGS)
_plans.install()  # a repeated graph is cut by its plan, without a walk
_refcounts.install()  # a program may consume input buffers nothing else reads again
_staging.install()  # a graph too deep for one program runs in stages
_signals.install()  # a signal handler's exception is no program's failure, and loses nothing
_executables.install()  # the compile cache asks the persistent cache on a miss
_debug.install()  # the debugger listens to every barrier (compile history)
_processes.install()  # a launched process joins the others before JAX starts
_placement.install()  # a program that reads a tensor placed over a mesh runs on the mesh
_origins.install()  # a gradient walks back through the barriers its function ran
# The tensor's methods and NumPy protocols are this namespace's functions and policy.
_interop.install(_sys.modules[__name__], _numpy_policy)
_tracer.install(Tensor)  # the tensor core's record makes: the tracer with its surface
__all__ = [
    # the engine: barriers, policy, metrics, debugging, caches, devices, sharding
    "Tensor", "Op", "mark_step", "sync", "wait", "eager", "policy", "BarrierPolicy",
    "current_policy", "set_policy", "Metrics", "metrics", "metrics_report", "reset_metrics",
    "Graph", "graph", "debug", "current_debug_level", "compile_history", "CompileRecord",
    "RecompileWarning", "CacheWarning", "ViewWriteWarning", "cache_dir", "set_cache_dir",
    "clear_cache", "Device", "Mesh", "DeviceError", "ShapeError", "UnsupportedError",
    "default_device", "devices", "mark_sharding", "grad", "value_and_grad", "nn", "optim",
    "random", "conv", "capture", "CaptureWarning",
    # the Array API 2023.12 namespace
    "__array_namespace_info__", "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax",
    "argmin", "argsort", "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh",
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "bool", "broadcast_arrays", "broadcast_to", "can_cast", "ceil", "clip",
    "complex64", "complex128", "concat", "conj", "copysign", "cos", "cosh", "count_nonzero",
    "cumulative_sum", "diff", "divide", "e", "empty", "empty_like", "equal", "exp", "expand_dims",
    "expm1", "eye", "fft", "finfo", "flip", "float16", "float32", "float64", "floor",
    "floor_divide", "from_dlpack", "full", "full_like", "greater", "greater_equal", "hypot",
    "iinfo", "imag", "inf", "Info", "int16", "int32", "int64", "int8", "isdtype", "isfinite",
    "isinf", "isnan", "less",
    "less_equal", "linalg", "linspace", "log", "log10", "log1p", "log2", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose", "max", "maximum",
    "mean", "meshgrid", "min", "minimum", "moveaxis", "multiply", "nan", "negative", "newaxis",
    "nonzero", "not_equal", "ones", "ones_like", "permute_dims", "pi", "positive", "pow", "prod",
    "real", "remainder", "repeat", "reshape", "result_type", "roll", "round", "searchsorted",
    "sign", "signbit", "sin", "sinh", "sort", "sqrt", "square", "squeeze", "stack", "std",
    "subtract", "sum", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "tril",
    "triu", "trunc", "uint16", "uint32", "uint64", "uint8", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "UniqueAllResult", "UniqueCountsResult",
    "UniqueInverseResult", "unstack", "var", "vecdot", "where", "zeros", "zeros_like",
    # everyday extensions beyond the standard (NumPy's names, SciPy's and PyTorch's functions)
    "concatenate", "einsum", "logsumexp", "sigmoid", "softplus", "stop_gradient", "transpose",
    "pack", "unpack",  # the multi-tensor pair (ml.optim updates a group of weights at once)
]
