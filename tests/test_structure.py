"""The architecture holds: layers import only downward, jax stays in two modules, and every
table of op rules covers exactly the closed set of ops."""

from __future__ import annotations

import ast
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from minilazy import elementwise, infer, loops, lowering
from minilazy.attrs import At, Axis, Gap, Index, NewAxis, Reduce, Span, Take
from minilazy.ir import BINARY, FAMILY, UNARY, Node, Op

PACKAGE = pathlib.Path(ml.__file__).parent
# Bottom to top, as in DESIGN.md; a module may import only modules of its own or a lower layer.
LAYERS = [
    {"dtypes", "device", "cluster"}, {"metrics"}, {"attrs"}, {"ir"}, {"state"},
    {"index_rules", "linalg_rules", "fft_rules", "loops", "infer", "windows"}, {"scalars"},
    {"cut"}, {"donation", "diskcache", "diskformat"},
    {"lowering_x64", "lowering", "lowering_int", "lowering_complex"},
    {"runtime", "runtime_disk"}, {"cache"}, {"barrier"}, {"fallback", "host"},
    {"indexing", "interop"}, {"tracer"},
    {"creation", "elementwise", "reductions", "shaping", "sharding", "searching",
     "composites", "manipulation", "convolution", "nn", "optim", "random", "sorting",
     "factorizations", "linalg", "fft"},
    {"vjps"}, {"autodiff"}, {"pycode"}, {"printers"}, {"debug", "report"}, {"reference"},
    {"datasets", "corpus", "info"}, {"__init__", "demo", "models", "__main__", "launch"},
]
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}
JAX_ALLOWED = {"lowering_x64", "lowering", "lowering_int", "lowering_complex", "runtime",
               "runtime_disk"}


def _runtime_nodes(tree: ast.AST):
    """Every node except those under `if TYPE_CHECKING:` (annotations only, never imported)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "minilazy":
                found |= {a.name for a in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


MODULES = sorted(p for p in PACKAGE.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_imports_only_go_down(path):
    me = RANK[path.stem]
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "minilazy" and len(parts) > 1 and parts[1] in RANK:
            below = RANK[parts[1]]
        elif name in RANK:  # `from minilazy import runtime`
            below = RANK[name]
        else:
            continue
        assert below <= me, f"{path.stem} (layer {me}) imports {name} (layer {below})"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_jax_only_in_lowering_and_runtime(path):
    uses_jax = any(n.split(".")[0] in ("jax", "jaxlib") for n in _imports(path))
    assert not uses_jax or path.stem in JAX_ALLOWED, f"{path.stem} imports jax"


def test_every_module_has_a_layer():
    assert {p.stem for p in MODULES} <= set(RANK)


@pytest.mark.parametrize("table", [infer.INFER, lowering.LOWER], ids=["infer", "lower"])
def test_every_rule_table_covers_every_op(table):
    assert set(table) == set(Op)


def test_every_op_has_an_attribute_family():
    assert set(FAMILY) == set(Op)


def test_a_node_refuses_attributes_of_another_family():
    x = ml.ones((2, 3))._node
    with pytest.raises(TypeError, match="sum: attributes Axis.* wrong family"):
        Node(Op.SUM, (x,), Axis(0), (3,), x.dtype)
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
    # real and imag are no ufuncs in NumPy (np.real, np.imag): loops.signature types them
    assert set(infer.UFUNC) | loops.PARTS >= UNARY | BINARY
    for op in UNARY | BINARY:
        fn = getattr(elementwise, op.value)
        assert fn.__name__ == op.value and "Example" in (fn.__doc__ or "")
        assert getattr(ml, op.value) is fn


def test_public_symbols_have_docstrings_with_examples():
    missing = [name for name in ml.__all__
               if callable(getattr(ml, name)) and not isinstance(getattr(ml, name), type(ml.int8))
               and ">>>" not in (getattr(ml, name).__doc__ or "")]
    assert not missing, missing


# The core path (record -> cut -> hash -> lower -> run), in reading order (docs/internals.md).
CORE_PATH = ["dtypes", "device", "attrs", "ir", "state", "loops", "infer", "scalars", "cut",
             "donation", "lowering", "runtime", "cache", "barrier", "host", "tracer"]
# Lines; raise it only with a reason (a student reads this in one sitting). 3,000 held the path
# until typed attributes (attrs.py: 219 lines, most of them the docstrings of 17 small types).
# 3,350 held it until scale-out (issue 14) added meshes (device.py), shardings through the
# lowering and runtime, joining processes, and the persistent cache under the LRU (cache.py).
# 3,750 held it until new ops for real models (issue 13) each took an attribute family and a
# rule in the shape and lowering tables (cumulative_sum and conv: ~50 lines; conv's window
# arithmetic is in windows.py, off the path, as index arithmetic is in indexing.py).
# 3,850 since sort/argsort and the linalg extension (issue 15, +36): two attribute families
# and three ops, each one entry per table (their shape rules and their one evaluation table,
# shared by the lowering and the reference through the namespace they are given, are off the
# path, in linalg_rules.py); and since backward tapes are forgotten with the cache (+9).
# 3,935 since complex dtypes (issue 15, +85): the ufunc table and its typing moved from infer.py
# to loops.py, now counted (82 lines, with the standard's departures from NumPy's complex loops:
# real/imag typing, orderings refused), two dtypes and their part types.
# 3,951 since the fft extension (issue 15, +16): one attribute family and one op, one entry per
# table (its shape rule and evaluation are off the path, in fft_rules.py).
# 4,100 since no silent wrong value (issue 28, +140): a signal handler's exception in a barrier
# is told from the program's own failure and signals are held while a donating program runs
# (donation.py, +89), host data is copied at the call (runtime.py), device arguments are
# checked (device.py), one-axis arguments are normalised once (infer.py), signbit is an op.
# (Integer powers, complex special values and the disk format went off the path, into
# lowering_int.py, lowering_complex.py and runtime_disk.py.)
CORE_BUDGET = 4100


def test_the_core_path_fits_its_line_budget(capsys):
    assert set(CORE_PATH) <= set(RANK) and [RANK[m] for m in CORE_PATH] == sorted(
        RANK[m] for m in CORE_PATH), "the core path is listed in reading (layer) order"
    lines = {m: len((PACKAGE / f"{m}.py").read_text().splitlines()) for m in CORE_PATH}
    with capsys.disabled():
        print(f"\ncore path: {sum(lines.values())} lines in {len(lines)} files (budget "
              f"{CORE_BUDGET}): " + ", ".join(f"{m} {n}" for m, n in lines.items()))
    assert sum(lines.values()) <= CORE_BUDGET
    assert max(lines.values()) <= 400, "a module past 400 lines is asking to be split"
