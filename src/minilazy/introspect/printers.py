"""Observability: see the pending graph as text, Graphviz, StableHLO and optimized HLO.

Above core. :func:`graph` cuts the pending graph of some tensors exactly as a
barrier would (same roots, same key) but runs nothing; its printers are tables keyed by ``Op``
like every other interpretation of an op. Printing StableHLO or HLO lowers and compiles outside
the compile cache and the metrics, so looking never changes what the counters say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from minilazy.core import lowering, runtime
from minilazy.core.attrs import (
    Attrs,
    Cast,
    Constant,
    Iota,
    NoAttrs,
    Permute,
    Reduce,
    ToShape,
)
from minilazy.core.cut import Cut, cut, roots_of
from minilazy.core.dtypes import DTYPES
from minilazy.core.infer import describe
from minilazy.core.ir import Node, Op
from minilazy.core.tracer import Tensor
from minilazy.introspect.pycode import source

# How a node shows its attributes in IR text, by attribute type, where core's own rules below do
# not say: an op family's, added by its module.
TEXT: Final[dict[type, Callable[[Any], str]]] = {}
# Where a node's operands read as one expression (an index: ``%0[1:, %2]``), not a list: by op.
OPERANDS: Final[dict[Op, Callable[[Node, list[str]], list[str]]]] = {}


def attrs_text(attrs: Attrs) -> str:
    """How a node shows its attributes in IR text (core's families here; others' in ``TEXT``).

    Example:
        >>> attrs_text(Reduce((0, 1), True))
        'axes=[0, 1] keepdims'
    """
    match attrs:
        case NoAttrs() | Constant():
            return ""
        case Iota(_, axis, _):
            return f"axis={axis}"
        case Cast(code):
            return f"to={DTYPES[code]}"
        case Reduce(axes, keepdims):
            return f"axes={list(axes)}" + (" keepdims" if keepdims else "")
        case ToShape(shape):
            return f"shape={shape}"
        case Permute(perm):
            return f"perm={perm}"
    return TEXT[type(attrs)](attrs)


@dataclass(frozen=True)
class Cost:
    """XLA's cost analysis of one compiled program, in named fields.

    Attributes:
        flops: floating-point operations (an add or a multiply each; XLA's count).
        transcendentals: exp, log, tanh... evaluations.
        bytes_accessed: bytes the program reads and writes, as XLA estimates them.
        raw: every entry of XLA's analysis, by its own names (``"bytes accessed0{}"``...);
            ``cost["flops"]`` reads it too.

    Example:
        >>> import minilazy as ml
        >>> c = ml.graph(ml.exp(ml.asarray([1.0, 2.0])) * 2.0).cost()
        >>> c.flops, c.transcendentals, c.bytes_accessed
        (2.0, 2.0, 40.0)
    """

    flops: float
    transcendentals: float
    bytes_accessed: float
    raw: dict[str, float]

    def __getitem__(self, name: str) -> float:
        return self.raw[name]

    def __repr__(self) -> str:
        return (f"Cost(flops={self.flops:g}, transcendentals={self.transcendentals:g}, "
                f"bytes_accessed={self.bytes_accessed:g})")


@dataclass(frozen=True)
class Graph:
    """The pending graph of some tensors, cut as a barrier would cut it, but not run.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, 2.0])
        >>> g = ml.graph(ml.exp(x) * 2.0)
        >>> g.num_nodes
        4
        >>> print(g.text())
        %0 = data[0]                  : f64[2]
        %1 = exp %0                   : f64[2]
        %2 = scalar[0] (2.0)          : f64[]
        %3 = multiply %1, %2          : f64[2]
        return %3
    """

    cut: Cut

    @property
    def key(self) -> int:
        """The compile-cache key this graph gets at a barrier."""
        return self.cut.key

    @property
    def num_nodes(self) -> int:
        """Nodes in the graph, parameters included."""
        return len(self.cut.order)

    def _lines(self) -> list[tuple[str, str, str]]:
        params = {id(p): k for k, p in enumerate(self.cut.params)}
        params.update({id(s): k for k, s in enumerate(self.cut.scalars)})
        out = []
        for i, (node, ins) in enumerate(zip(self.cut.order, self.cut.operands)):
            if node.op is Op.DATA:
                expr = f"data[{params[id(node)]}]"
            elif type(node.attrs) is Constant:
                expr = f"constant ({node.payload})"
            elif node.op is Op.SCALAR:
                expr = f"scalar[{params[id(node)]}] ({node.payload})"
            else:
                names = [f"%{j}" for j in ins]
                if node.op in OPERANDS:  # %0[1:, %2], value
                    names = OPERANDS[node.op](node, names)
                attrs = attrs_text(node.attrs)
                expr = " ".join(p for p in (node.op.value, ", ".join(names), attrs) if p)
            out.append((f"%{i} = {expr}", describe(node), node.site or ""))
        return out

    def text(self) -> str:
        """One line per node: ``%3 = add %1, %2 : f32[2,3]`` (and the user line, if recorded)."""
        rows = [f"{lhs:<29} : {ty}" + (f"  # {site}" if site else "")
                for lhs, ty, site in self._lines()]
        rows.append("return " + ", ".join(f"%{i}" for i in self.cut.outputs))
        return "\n".join(rows)

    def dot(self) -> str:
        """Graphviz source: one box per node, an edge per operand.

        Example:
            >>> import minilazy as ml
            >>> ml.graph(ml.ones((2,)) + 1.0).dot().splitlines()[0]
            'digraph minilazy {'
        """
        lines = ["digraph minilazy {", "  node [shape=box, fontname=monospace];"]
        for i, (lhs, ty, _) in enumerate(self._lines()):
            label = lhs.split(" = ", 1)[1].replace('"', "'")
            shape = ", style=rounded" if self.cut.order[i].op in (Op.DATA, Op.SCALAR) else ""
            lines.append(f'  n{i} [label="{label}\\n{ty}"{shape}];')
            lines.extend(f"  n{j} -> n{i};" for j in self.cut.operands[i])
        lines.extend(f'  n{i} -> out{k}; out{k} [label="out {k}", shape=plaintext];'
                     for k, i in enumerate(self.cut.outputs))
        lines.append("}")
        return "\n".join(lines)

    def to_python(self) -> str:
        """Plain minilazy code that records this graph again (same key; zeros for data).

        Example:
            >>> import minilazy as ml
            >>> code = ml.graph(ml.exp(ml.ones((2,))) * 3.0).to_python()
            >>> scope = {}
            >>> exec(code, scope)
            >>> ml.graph(*scope["outputs"]).key == ml.graph(ml.exp(ml.ones((2,))) * 3.0).key
            True
        """
        return source(self.cut, runtime.default_device())

    def render(self, path: str, format: str = "svg") -> str:
        """Draw the graph with Graphviz (the ``graphviz`` package and its ``dot`` program).

        Returns the path written. Raises ``RuntimeError`` saying what to install if either is
        missing.
        """
        try:
            import graphviz
        except ImportError:
            raise RuntimeError("render() needs the graphviz package: pip install graphviz") \
                from None
        source = graphviz.Source(self.dot())
        try:
            written: str = source.render(outfile=path, format=format, cleanup=True)
        except graphviz.ExecutableNotFound:
            raise RuntimeError("render() needs Graphviz's dot program (apt install graphviz)") \
                from None
        return written

    def stablehlo(self) -> str:
        """The program as StableHLO text (what JAX hands to XLA).

        Example:
            >>> import minilazy as ml
            >>> "stablehlo.exponential" in ml.graph(ml.exp(ml.ones((2,)))).stablehlo()
            True
        """
        text: str = lowering.lower(self.cut).as_text()
        return text

    def _compiled(self) -> runtime.Compiled:
        return runtime.compile_lowered(lowering.lower(self.cut), self.cut.device)

    def hlo(self) -> str:
        """The optimized HLO XLA compiled (after fusion), for this device.

        Example:
            >>> import minilazy as ml
            >>> "fusion" in ml.graph(ml.exp(ml.ones((2,))) * 2.0).hlo()
            True
        """
        text: str = self._compiled().executable.as_text()
        return text

    def cost(self) -> Cost:
        """XLA's cost analysis of the compiled program: flops, transcendentals, bytes.

        Example:
            >>> import minilazy as ml
            >>> ml.graph(ml.exp(ml.asarray([1.0, 2.0, 3.0]))).cost().transcendentals
            3.0
        """
        analysis: Any = self._compiled().executable.cost_analysis()
        if isinstance(analysis, list):  # older jax: one dict per device
            analysis = analysis[0]
        raw = {str(k): float(v) for k, v in dict(analysis).items()}
        return Cost(raw.get("flops", 0.0), raw.get("transcendentals", 0.0),
                    raw.get("bytes accessed", 0.0), raw)


def graph(*tensors: Tensor) -> Graph:
    """The pending graph below ``tensors``, as the next barrier on them would cut it.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2, 3))
        >>> g = ml.graph(ml.sum(x, axis=1))
        >>> g.num_nodes, g.key == ml.graph(ml.sum(x, axis=1)).key
        (3, True)
    """
    if not tensors:
        raise ValueError("graph() needs at least one tensor")
    if not all(isinstance(t, Tensor) for t in tensors):  # host data has no graph
        raise TypeError(f"graph() takes tensors, got {[type(t).__name__ for t in tensors]}")
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"graph(): tensors are on several devices: {sorted(map(str, devices))}")
    roots = roots_of(t._node for t in tensors) or [tensors[0]._node]
    return Graph(cut(roots, tensors[0].device))
