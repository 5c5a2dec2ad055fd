"""The minimal adapter of the guide: JAX's NumPy, op by op (``docs/adapter.md``)."""

from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from minilazy.conformance.adapter import Counters, DtypePolicy
from minilazy.conformance.base import BaseAdapter

_update = cast(Callable[[str, bool], None], jax.config.update)  # untyped in jax
_update("jax_enable_x64", True)  # 64-bit dtypes, as NumPy has (this process only)


class JaxNumpy(BaseAdapter):
    """``jax.numpy`` as the oracle drives it: every op runs when it is applied."""

    name, version, namespace = "jax-numpy", jax.__version__, jnp
    capabilities = frozenset({"float64", "metadata", "executions", "complex"})
    renames = {"bitwise_invert": "invert"}
    dtype_policy = DtypePolicy(promotion={  # JAX's lattice: an int next to a float takes its type
        "int64,uint64": "int64", **{f"{i}{b},{k}{f}": f"{k}{f}" for i in ("int", "uint")
                                    for b in (8, 16, 32, 64)
                                    for k, f in (("float", 16), ("float", 32), ("complex", 64))}})
    runs = 0

    def array(self, host: np.ndarray[Any, Any]) -> Any:
        return jnp.asarray(host)

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        self.runs += op not in ("asarray",)  # eager: each op runs once, now
        return super().apply(op, *args, **kwargs)

    def counters(self) -> Counters:
        return Counters(executions=self.runs)

    def shape(self, x: Any) -> tuple[int, ...]: return tuple(x.shape)
    def dtype(self, x: Any) -> np.dtype[Any]: return np.dtype(str(x.dtype))
