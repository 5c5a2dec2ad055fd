"""The architecture holds: each package imports only the packages below it, core's modules
only those before them on the pipeline, no import circle (type-only ones included), core never
looks a module up at run time, jax stays in the lowering and runtime (and the disk cache's
serializer), and every table of op rules covers exactly the closed set of ops. The floor plan
is docs/architecture.md."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from minilazy.api import elementwise
from minilazy.core import PIPELINE, infer, lowering
from minilazy.core.attrs import Permute, Reduce
from minilazy.core.ir import FAMILY, Node, Op
from minilazy.introspect import printers
from minilazy.ops.elementwise import BINARY, UNARY
from minilazy.ops.index_keys import At, Gap, Index, NewAxis, Span, Take

PACKAGE = pathlib.Path(ml.__file__).parent
# The floor plan (docs/architecture.md): what each package may import of minilazy besides
# itself. The faces at the top (minilazy/__init__.py, the commands) assemble the rest and may
# import anything; the oracle (conformance/) reaches into the engine on purpose, to break it.
MAY_IMPORT = {
    "core": set(),                          # the pipeline: nothing of minilazy outside core
    "persist": {"core"},                    # the disk under the compile cache (a Store it calls)
    "parts": {"core"},                      # speed and robustness past the pipeline, installed
    "scaleout": {"core", "introspect"},     # meshes (a part, and SHARD's rules), the launcher
    "introspect": {"core"},                 # printers, debugger, report, reference: read graphs
    "ops": {"core", "introspect"},          # op families: their rules, into the tables below
    "api": {"core", "scaleout", "ops"},     # the Array API namespace (asarray(sharding=...))
    "linalg": {"core", "api", "ops"},       # the standard's extensions
    "fft": {"core", "api", "ops"},
    "autodiff": {"core", "api", "ops", "linalg", "fft", "parts"},  # VJPs: with the namespace
    "random": {"core", "api"},
    "optim": {"core", "api", "parts"},  # its update replayed from a tape
    "nn": {"core", "api", "random", "parts"},  # its layers replayed from tapes
    "demo": {"minilazy"},                   # a user of the public face only
    "pytorch": {"minilazy"},                # PyTorch's tensors on the public face (torch extra)
}
FACES = {"__init__", "__main__", "launch", "optim", "random"}  # the top level's modules
JAX_ALLOWED = {"core.lowering", "core.runtime", "persist.executables", "scaleout.processes",
               "scaleout.placement",
               # families whose lowering is lax's own, not a namespace's
               "ops.conv", "ops.indexing", "ops.elementwise", "ops.integers", "ops.complex",
               "ops.reductions", "ops.shaping"}


def _name(path: pathlib.Path) -> str:
    """``core.ir`` for minilazy/core/ir.py, ``nn`` for minilazy/nn/__init__.py."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "conformance" not in p.parts}


def _runtime_nodes(tree: ast.AST, typing: bool = False):
    """Every node except those under `if TYPE_CHECKING:` (annotations only, never imported),
    unless ``typing``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING" \
                and not typing:
            continue
        yield node
        yield from _runtime_nodes(node, typing)


def _imports(path: pathlib.Path, typing: bool = False) -> set[str]:
    """The modules ``path`` imports when it runs (and for the type checker too, if ``typing``):
    minilazy's without the ``minilazy.`` prefix, others with a leading ``/`` (the standard
    library's ``inspect`` is not minilazy's)."""
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text()), typing):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for full in names:
            inner = full.removeprefix("minilazy.")
            if full == "minilazy":
                found.add("minilazy")
            elif inner != full and inner in MODULES:
                found.add(inner)  # a module: from minilazy.core import ir, or minilazy.core.ir
            elif inner == full:
                found.add("/" + full)  # not minilazy's
    return found


# (A package's __init__ importing its own modules, `from minilazy.ops import fft`, names itself.)
GRAPH = {m: _imports(p) - {m} for m, p in MODULES.items()}
# With the imports only the type checker follows: a circle there is a circle in the design.
TYPED_GRAPH = {m: _imports(p, typing=True) - {m} for m, p in MODULES.items()}


def _package(module: str) -> str:
    return module.split(".")[0]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_package_imports_only_what_the_floor_plan_allows(module):
    me = _package(module)
    if module in FACES - set(MAY_IMPORT):
        return  # the faces assemble the engine
    mine = {m for m in GRAPH[module] if m in MODULES or m == "minilazy"}
    wrong = {m for m in mine if _package(m) not in MAY_IMPORT[me] | {me}}
    assert not wrong, f"{module} ({me}) imports {sorted(wrong)}; {me} may import " \
                      f"{sorted(MAY_IMPORT[me])}"


def test_no_module_is_named_like_a_standard_library_module():
    # `import inspect` in a module beside minilazy's own `inspect` read the wrong one in tools
    # and tutorials; `random` stays: ml.random is a fixed public name (the design card's).
    named = {m for m in MODULES if set(m.split(".")) & sys.stdlib_module_names}
    assert named == {"random"}


def test_every_module_is_in_the_floor_plan():
    assert {_package(m) for m in MODULES} <= set(MAY_IMPORT) | FACES
    assert {p.stem for p in PACKAGE.glob("*.py")} == FACES, "the top level holds only faces"
    assert len(list(PACKAGE.glob("*.py"))) <= 12
    assert {m.split(".")[1] for m in MODULES if m.startswith("core.")} == set(PIPELINE)


@pytest.mark.parametrize("module", PIPELINE)
def test_core_imports_only_modules_before_it_on_the_pipeline(module):
    before = {"core." + m for m in PIPELINE[:PIPELINE.index(module)]}
    later = {m for m in GRAPH["core." + module] if m.startswith("core.")} - before
    assert not later, f"core.{module} imports {sorted(later)}, further down the pipeline"


def test_no_import_circles_type_only_ones_included():
    # Depth-first search with colours: a grey module reached again closes a circle.
    colour: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        colour[m] = 1
        for t in sorted(TYPED_GRAPH[m] & set(MODULES)):
            assert colour.get(t) != 1, " -> ".join(path[path.index(t):] + [t]) if t in path \
                else f"{m} -> {t}"
            if t not in colour:
                visit(t, [*path, t])
        colour[m] = 2

    for m in sorted(MODULES):
        if m not in colour:
            visit(m, [m])


def _reaches_up(tree: ast.AST) -> list[str]:
    """Where ``tree`` finds a module at run time instead of importing it: ``sys.modules[...]``
    with a name of minilazy's, ``importlib``, ``__import__``."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and ast.unparse(n.value) == "sys.modules" \
                and "minilazy" in ast.unparse(n.slice):
            found.append(ast.unparse(n))
        elif isinstance(n, ast.Call) and ast.unparse(n.func) in {
                "__import__", "importlib.import_module", "import_module"}:
            found.append(ast.unparse(n))
        elif isinstance(n, (ast.Import, ast.ImportFrom)) and "importlib" in ast.unparse(n):
            found.append(ast.unparse(n))
    return found


@pytest.mark.parametrize("module", PIPELINE)
def test_core_never_reaches_up_at_run_time(module):
    # What core needs from above (the namespace, the disk, the debugger) it is handed at
    # assembly (state.install), never found by name: the import checks above cannot see that.
    assert not _reaches_up(ast.parse(MODULES["core." + module].read_text())), module


def test_the_reach_up_check_sees_each_form():
    found = _reaches_up(ast.parse('import importlib\nx = sys.modules["minilazy"]\n'
                                  'y = __import__("minilazy.api")\nz = sys.modules.get("_signal")'))
    assert found == ["import importlib", "sys.modules['minilazy']", "__import__('minilazy.api')"]


def test_one_shape_formatter():
    # ``f32[2,3]`` is written by dtypes.typed (ir.describe for a node), never by hand again.
    by_hand = re.compile(r"""\[\{['"],['"]\.join\(map\(str""")
    copies = [m for m, p in MODULES.items() if m != "core.dtypes" and by_hand.search(p.read_text())]
    assert not copies, copies


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_are_absolute(module):
    # A relative import would slip past the checks above, which read absolute names.
    tree = ast.parse(MODULES[module].read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_jax_only_in_lowering_and_runtime(module):
    uses_jax = any(n.split(".")[0] in ("/jax", "/jaxlib") for n in GRAPH[module])
    assert not uses_jax or module in JAX_ALLOWED, f"{module} imports jax"


@pytest.mark.parametrize("table", [infer.INFER, lowering.LOWER], ids=["infer", "lower"])
def test_every_rule_table_covers_every_op(table):
    assert set(table) == set(Op)


# The ops whose rules live in a family module (minilazy/ops/), not in core's tables.
FAMILY_OPS = {Op.FFT, Op.SORT, Op.ARGSORT, Op.LINALG, Op.CONV, Op.GETITEM, Op.SETITEM,
              Op.SCATTER_ADD, Op.PROD, Op.MAX, Op.MIN, Op.ARGMAX, Op.ARGMIN, Op.ANY, Op.ALL,
              Op.CUMSUM, Op.SHARD, Op.TENSORDOT, Op.FLIP, Op.CONCAT, Op.PACK, Op.UNPACK, Op.WHERE,
              Op.CONVERT} | (
                  UNARY | BINARY) - {Op.NEG, Op.ADD, Op.SUB, Op.MUL, Op.DIV}


def test_core_alone_holds_its_own_ops_and_the_families_register_the_rest():
    # In a fresh process: core's tables without the families, then after importing minilazy.ops
    # (and the mesh part, which registers SHARD's rules as a family does).
    # An empty package stands in for minilazy's __init__, which assembles everything.
    script = (
        "import importlib.util, sys, types\n"
        "bare = types.ModuleType('minilazy')\n"
        "bare.__path__ = list(importlib.util.find_spec('minilazy').submodule_search_locations)\n"
        "sys.modules['minilazy'] = bare\n"
        "from minilazy.core import infer, lowering\n"
        "from minilazy.core.ir import FAMILY, Op\n"
        "before = {op.name for op in Op if op in infer.INFER or op in lowering.LOWER\n"
        "          or op in FAMILY}\n"
        "import minilazy.ops, minilazy.scaleout.placement\n"
        "from minilazy.introspect import pycode, reference\n"
        "tables = (FAMILY, infer.INFER, lowering.LOWER, reference.REFERENCE, pycode.PYTHON)\n"
        "after = {op.name for op in Op if all(op in t for t in tables)}\n"
        "print(json.dumps([sorted({op.name for op in Op} - before), sorted(after)]))\n")
    out = subprocess.run([sys.executable, "-c", "import json\n" + script], capture_output=True,
                         text=True, check=True).stdout
    missing, after = json.loads(out)
    assert set(missing) == {op.name for op in FAMILY_OPS}
    assert set(after) == {op.name for op in Op}


def test_every_op_has_an_attribute_family_and_the_ir_text_shows_each():
    assert set(FAMILY) == set(Op)
    for types in FAMILY.values():  # core's families in attrs_text's match, a family's in TEXT
        assert all(t.__module__ == "minilazy.core.attrs" or t in printers.TEXT for t in types)


def test_a_node_refuses_attributes_of_another_family():
    x = ml.ones((2, 3))._node
    with pytest.raises(TypeError, match="sum: attributes Permute.* wrong family"):
        Node(Op.SUM, (x,), Permute((0, 1)), (3,), x.dtype)
    with pytest.raises(TypeError, match="wrong family"):
        Node(Op.SUM, (x,), ((0,), False), (3,), x.dtype)  # a plain tuple is no family
    assert Node(Op.SUM, (x,), Reduce((0,), False), (3,), x.dtype).attrs.axes == (0,)


@given(st.integers(0, 2**31))
def test_index_entries_of_different_kinds_never_compare_equal(i):
    # Families hash and compare as tuples; an index entry's kind keeps At(i) and Take(i) apart.
    entries = [At(i), Take(i), Span(i, i, i, False), Span(i, i, i, True), NewAxis(), Gap()]
    assert len(set(entries)) == len(entries)
    assert len({hash(Index((e,))) for e in entries}) == len(entries)


def test_every_elementwise_op_has_a_numpy_ufunc_and_a_function():
    # real and imag are no ufuncs in NumPy (np.real, np.imag): a rule of LOOPS types them
    assert set(infer.UFUNC) | set(infer.LOOPS) >= UNARY | BINARY
    for op in UNARY | BINARY:
        fn = getattr(elementwise, op.value)
        assert fn.__name__ == op.value and "Example" in (fn.__doc__ or "")
        assert getattr(ml, op.value) is fn


def test_public_symbols_have_docstrings_with_examples():
    missing = [name for name in ml.__all__
               if callable(getattr(ml, name)) and not isinstance(getattr(ml, name), type(ml.int8))
               and ">>>" not in (getattr(ml, name).__doc__ or "")]
    assert not missing, missing


# Core's size; raise it only with a reason (a student reads the pipeline in a few sittings).
# The core path (16 modules) was held to 3,000 lines until typed attributes (attrs.py), 3,350
# until scale-out (meshes, shardings through the lowering and runtime, joining processes),
# 3,750 until new ops for real models, 3,851 with sorts and linalg, 3,935 with complex dtypes,
# 3,951 with fft, 4,100 after no-silent-wrong-value (issue 28). Issue 25 made core the whole
# pipeline, with the rules of every op family the path had left beside it (index, window, fft,
# sort and linalg rules; the integer, complex and 64-bit lowering; host data, fallbacks,
# indexing and interop): 28 modules, 5,660 lines, the disk cache moved out to persist/.
# Issue 29's NumPy habits on the tensor (core.methods, 288 lines, and NumPy's function and ufunc
# protocols in interop, the view-write warning in indexing, the stop_gradient op): 6,206.
# Issue 26's cut plans (a repeated step's graph found without a walk) and the multi-tensor ops
# (pack, unpack: an optimizer's update in a few ops per group of weights), plan locks: 6,419;
# a plan refuses two roots where it has one twice, narrow index types widened, a descending
# sort keeps signed zeros in order, a comparison with an int past 64 bits: 6,443. Issue 43's
# first stage (the namespace handed over instead of looked up, no type-only circles, one shape
# formatter) paid for itself. Its second stage moved the tensor's surface out (operators,
# indexing, methods, NumPy's protocols, host fallbacks: api/tensor.py and beside it), leaving
# core's tracer (record and observation): 5,319 lines in 25 modules. Its third stage moved five
# op families out (fft, sort, linalg, conv, indexing: minilazy/ops/, each registering its rules
# into core's tables and the inspector's): 4,795 lines in 21 modules; then the elementwise
# functions beyond arithmetic (with the integer and complex lowering modules) and the reductions
# beyond sum: 4,416 lines in 19 modules. Its fourth stage made two speed parts installed at
# assembly (minilazy/parts/: cut plans, refcount donation), core keeping a slot for each: 4,267.
# Stage 4b: the surface's leaves and arguments to api/ (host data, Python numbers, axes), the op
# families' attributes to their modules, signal safety and depth staging as parts, running
# over meshes and joining processes as parts (scaleout/), the metrics snapshot to introspect/,
# donation.py, device.py and the loop-typing, x64 and cluster modules dissolved, the autodiff
# hook a part (autodiff/origins.py): 3,209 in 12. Stage 4c: core ships the starter ops
# (tensordot to the linalg family; flip, concat, pack, unpack a shaping family), which devices
# there are is scale-out's (the runtime keeps the default), Python's conversion protocols are
# the surface's (core's tensor observes with numpy() and item()), docstrings said once: 2,885.
# Then where and astype to the elementwise family, the op categories too, ml.result_type's
# Python numbers to api/scalars, the fork check to the processes part, the donor's thread
# question to the donor: 2,750.
# 2,750 → 2,430: examples kept on public names and on the functions the course has students
# write (each with a docstring: its assignment's text).
CORE_BUDGET = 2430
CORE_MODULES = 12


def test_core_fits_its_line_budget(capsys):
    lines = {m: len(MODULES["core." + m].read_text().splitlines()) for m in PIPELINE}
    with capsys.disabled():
        print(f"\ncore: {sum(lines.values())} lines in {len(lines)} modules (budget "
              f"{CORE_BUDGET}): " + ", ".join(f"{m} {n}" for m, n in lines.items()))
    assert sum(lines.values()) <= CORE_BUDGET
    assert len(lines) <= CORE_MODULES


# The conformance package's modules too: the floor plan leaves them free to reach into the
# engine, not to grow.
EVERY_MODULE = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("module", sorted(EVERY_MODULE))
def test_modules_stay_small(module):
    assert len(EVERY_MODULE[module].read_text().splitlines()) <= 400, \
        f"{module} is past 400 lines: the design is asking to split it"
