"""Mutants nobody chose: one mechanical slip at each site of the engine's source, found by ``ast``.

The catalogue's mutants were written by people who knew the oracle; these are not. A walk over a
module's syntax tree finds every *site* of seven kinds of slip, the ones mutation-testing tools
make (mutmut, cosmic-ray): an arithmetic operator swapped (``+`` for ``-``), a comparison flipped
(``<`` for ``<=``), ``and`` for ``or`` or a ``not`` dropped, a number off by one (or a boolean
negated), a slice bound off by one, a statement dropped (a call, an augmented or attribute
assignment, a ``raise``, an early ``return``, a ``break``), and the first two arguments of a
call swapped. A mutant is the module's source with one site changed, spliced into the text (the
rest of the file, its lines and comments, stays as it is).

Left out, as no behaviour: docstrings, annotations, decorators, ``assert`` statements (internal
invariants), ``if TYPE_CHECKING:`` blocks, strings and f-strings (messages), and ``__repr__``. A
site's id names it by what it is, not where: the module, the enclosing function, the kind,
the source before and after, and which occurrence of that in the function. It survives edits
elsewhere in the file, so a survivor explained once stays explained (:mod:`.explained`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import pkgutil
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from pathlib import Path

# Where generated mutants are drawn from: core and what moved out of it, autodiff, optim, random.
TARGETS = ("minilazy.core", "minilazy.autodiff", "minilazy.optim", "minilazy.random",
           "minilazy.parts", "minilazy.scaleout.placement", *(f"minilazy.api.{m}" for m in (
               "numpy_policy", "tensor", "interop", "methods", "indexing", "fallback", "host",
               "scalars", "axes")))
KINDS = ("operator", "comparison", "boolean", "constant", "off-by-one", "drop", "swap-args")

_BINARY: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr, ast.MatMult: ast.Mult}
_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
    ast.NotIn: ast.In}
_SKIPPED_FUNCTIONS = frozenset({"__repr__", "__str__", "__format__"})
# Calls whose arguments swapped raise TypeError at every call (killed by anything that runs them).
_TYPED_ARGUMENTS = frozenset({"isinstance", "issubclass", "getattr", "setattr", "hasattr", "cast",
                              "zip", "enumerate", "range", "divmod"})


@dataclass(frozen=True)
class Site:
    """One generated mutant: where and what the slip is.

    Attributes:
        module: the dotted module name (``minilazy.core.cut``).
        where: the enclosing function or class, dotted (``<module>`` at the top level).
        kind: one of :data:`KINDS`.
        before: the source of the part changed, as written.
        after: its source in the mutant.
        nth: which occurrence of (where, kind, before, after) in the module this is.
        line: the line of the site in the source it was found in (informative only).
    """

    module: str
    where: str
    kind: str
    before: str
    after: str
    nth: int
    line: int

    @property
    def id(self) -> str:
        """A short, stable name: a hash of everything but the line.

        Example:
            >>> Site("m", "f", "constant", "1", "2", 0, 7).id
            'g-5924972098'
        """
        text = "\0".join((*astuple(self)[:5], str(self.nth)))
        return "g-" + hashlib.sha256(text.encode()).hexdigest()[:10]

    def describe(self) -> str:
        """One line a reader takes in: module, function, the change.

        Example:
            >>> Site("minilazy.core.cut", "cut", "comparison", "a < b", "a <= b", 0, 7).describe()
            'core.cut:7 cut: a < b -> a <= b (comparison)'
        """
        before, after = (_short(s) for s in (self.before, self.after))
        return (f"{self.module.removeprefix('minilazy.')}:{self.line} {self.where}: {before} -> "
                f"{after} ({self.kind})")


def _short(source: str, most: int = 60) -> str:
    one = " ".join(source.split())
    return one if len(one) <= most else one[:most - 3] + "..."


@dataclass(frozen=True)
class _Edit:
    start: tuple[int, int]  # (line, column in UTF-8 bytes), as ast gives them
    end: tuple[int, int]
    text: str


Spanned = ast.expr | ast.stmt  # the nodes that have a place in the source


def _segment(lines: list[bytes], node: Spanned) -> str:
    start, end = _span(node)
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]:end[1]].decode()
    parts = [lines[start[0] - 1][start[1]:]] + lines[start[0]:end[0] - 1] + \
        [lines[end[0] - 1][:end[1]]]
    return b"".join(parts).decode()


def _span(node: Spanned) -> tuple[tuple[int, int], tuple[int, int]]:
    end = (node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    return (node.lineno, node.col_offset), end


def _with(node: ast.expr, **changes: object) -> str:
    """The source of ``node`` with ``changes`` made to a copy of it (parenthesised)."""
    copy = ast.parse(ast.unparse(node), mode="eval").body
    for name, value in changes.items():
        setattr(copy, name, value)
    return f"({ast.unparse(copy)})"


class _Finder(ast.NodeVisitor):
    """Every site of a module, in source order, with the edit that makes its mutant."""

    def __init__(self, module: str, source: str) -> None:
        self.module, self.lines = module, source.encode().splitlines(keepends=True)
        self.scope: list[str] = []
        self.found: list[tuple[str, str, str, str, int, list[_Edit]]] = []

    def _add(self, kind: str, node: Spanned, after: str, edits: list[_Edit] | None = None,
             before: str | None = None) -> None:
        start, end = _span(node)
        text = _segment(self.lines, node) if before is None else before
        self.found.append((".".join(self.scope) or "<module>", kind, text, after, start[0],
                           edits or [_Edit(start, end, after)]))

    # -- what is never visited ------------------------------------------------------------------
    def _body(self, body: list[ast.stmt]) -> None:
        docstring = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                          ast.Constant)
        self._statements(body[1:] if docstring else body)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        if node.name in _SKIPPED_FUNCTIONS:
            return
        self.scope.append(node.name)
        if not isinstance(node, ast.ClassDef):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self.visit(default)
        self._body(node.body)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        alias = getattr(node.annotation, "id", getattr(node.annotation, "attr", ""))
        if node.value is not None and alias != "TypeAlias":  # a type, not a value
            self.visit(node.value)

    def visit_Assert(self, node: ast.Assert) -> None:
        return

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self.visit(node.test)
        self._statements(node.body, guarded=True)
        self._statements(node.orelse, guarded=True)

    # -- statements ----------------------------------------------------------------------------
    def _statements(self, body: list[ast.stmt], guarded: bool = False) -> None:
        for stmt in body:
            if self._droppable(stmt, guarded):
                self._add("drop", stmt, "pass")
            self.visit(stmt)

    def _droppable(self, stmt: ast.stmt, guarded: bool) -> bool:
        if isinstance(stmt, ast.Expr):
            return isinstance(stmt.value, ast.Call)
        if isinstance(stmt, ast.Assign):
            return all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in stmt.targets)
        if isinstance(stmt, ast.Return):
            return guarded  # an early return (a guard), not a function's last word
        return isinstance(stmt, (ast.AugAssign, ast.Raise, ast.Delete, ast.Break, ast.Continue))

    def generic_visit(self, node: ast.AST) -> None:
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._statements(value, guarded=name != "body" or not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # -- expressions ---------------------------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp) -> None:
        new = _BINARY.get(type(node.op))
        text = any(isinstance(o, ast.JoinedStr) or isinstance(o, ast.Constant)
                   and isinstance(o.value, str) for o in (node.left, node.right))
        if new is not None and not text:  # not a message put together
            self._add("operator", node, _with(node, op=new()))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        new = _BINARY.get(type(node.op))
        if new is not None:
            source = _segment(self.lines, node)
            swapped = ast.parse(source.strip()).body[0]
            assert isinstance(swapped, ast.AugAssign)
            swapped.op = new()
            self._add("operator", node, ast.unparse(swapped))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new is not None:
                ops = list(node.ops)
                ops[i] = new()
                self._add("comparison", node, _with(node, ops=ops))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add("boolean", node, _with(node, op=other))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add("boolean", node, f"({_segment(self.lines, node.operand)})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add("constant", node, str(not value))
        elif isinstance(value, int):
            self._add("constant", node, str(value + 1))
        elif isinstance(value, float):
            self._add("constant", node, "0.0" if value else "1.0")

    def visit_Slice(self, node: ast.Slice) -> None:
        for bound in (node.lower, node.upper):
            if bound is not None and not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                self._add("off-by-one", bound, f"({_segment(self.lines, bound)}) + 1")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        args, name = node.args, getattr(node.func, "id", getattr(node.func, "attr", ""))
        if len(args) >= 2 and name not in _TYPED_ARGUMENTS and not any(
                isinstance(a, ast.Starred) for a in args[:2]):
            first, second = (_segment(self.lines, a) for a in args[:2])
            if first != second:
                edits = [_Edit(*_span(args[1]), first), _Edit(*_span(args[0]), second)]
                self._add("swap-args", node, f"{second}, {first}", edits,
                          before=f"{first}, {second}")
        self.generic_visit(node)


def sites(module: str, source: str | None = None) -> list[tuple[Site, list[_Edit]]]:
    r"""Every site of ``module`` (its installed source, or ``source``), with its edits.

    Example:
        >>> found = sites("m", "def f(x):\n    return x + 1\n")
        >>> [s.describe() for s, _ in found]
        ['m:2 f: x + 1 -> (x - 1) (operator)', 'm:2 f: 1 -> 2 (constant)']
    """
    text = source if source is not None else path_of(module).read_text()
    finder = _Finder(module, text)
    finder.visit(ast.parse(text))
    seen: Counter[tuple[str, str, str, str]] = Counter()
    out = []
    for where, kind, before, after, line, edits in finder.found:
        key = (where, kind, before, after)
        out.append((Site(module, where, kind, before, after, seen[key], line), edits))
        seen[key] += 1
    return out


def mutated(source: str, edits: list[_Edit]) -> str:
    r"""``source`` with ``edits`` made (each a span of the original text replaced).

    Example:
        >>> mutated("a = b + 1\n", [_Edit((1, 4), (1, 9), "(b - 1)")])
        'a = (b - 1)\n'
    """
    lines = source.encode().splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    data = source.encode()
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):  # right to left: spans hold
        start = offsets[edit.start[0] - 1] + edit.start[1]
        end = offsets[edit.end[0] - 1] + edit.end[1]
        data = data[:start] + edit.text.encode() + data[end:]
    return data.decode()


def path_of(module: str) -> Path:
    """The source file of installed module ``module``.

    Example:
        >>> path_of("minilazy.core.cut").name
        'cut.py'
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    return Path(spec.origin)


def modules() -> list[str]:
    """The modules of :data:`TARGETS`, sorted.

    Example:
        >>> "minilazy.core.cut" in modules(), "minilazy.optim" in modules()
        (True, True)
    """
    found: list[str] = []
    for target in TARGETS:
        spec = importlib.util.find_spec(target)
        assert spec is not None, target
        if spec.submodule_search_locations is None:
            found.append(target)
            continue
        found += [f"{target}.{m.name}" for m in pkgutil.iter_modules(
            spec.submodule_search_locations) if not m.ispkg]
    return sorted(found)


def every_site() -> Iterator[Site]:
    """Every site of every target module (:func:`source_of` checks that its mutant compiles)."""
    for module in modules():
        for site, _ in sites(module):
            yield site


def sample(count: int, seed: int = 0) -> list[Site]:
    """``count`` sites drawn at random (``seed``: the same sites for the same source).

    Each module is drawn from in proportion to its number of sites, at least one each while
    ``count`` allows, so a small sample still reaches every corner of the engine.

    Example:
        >>> [s.module for s in sample(2, seed=1)] == [s.module for s in sample(2, seed=1)]
        True
    """
    rng = random.Random(seed)
    by_module: dict[str, list[Site]] = {}
    for site in every_site():
        by_module.setdefault(site.module, []).append(site)
    total = sum(map(len, by_module.values()))
    if count >= total:
        return [s for found in by_module.values() for s in found]
    shares = {m: max(1, round(count * len(found) / total)) for m, found in by_module.items()}
    chosen = [s for m, found in by_module.items()
              for s in rng.sample(found, min(shares[m], len(found)))]
    rng.shuffle(chosen)
    return chosen[:count]


def source_of(site: Site) -> str:
    """The mutant's source of ``site``'s module.

    Example:
        >>> s = sites("minilazy.optim")[0][0]
        >>> source_of(s) != path_of("minilazy.optim").read_text()
        True
    """
    text = path_of(site.module).read_text()
    for found, edits in sites(site.module, text):
        if found.id == site.id:
            source = mutated(text, edits)
            compile(source, str(path_of(site.module)), "exec")  # SyntaxError: no mutant
            return source
    raise LookupError(f"no site {site.id} ({site.describe()}) in the module's source now")
