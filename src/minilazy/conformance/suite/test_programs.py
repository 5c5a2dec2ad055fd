"""Random programs: every observation is NumPy's, and barriers anywhere change no value."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle.programgen import programs
from minilazy.conformance.oracle.programs import (
    AdapterMachine,
    Instruction,
    NumpyMachine,
    Op,
    Program,
    run,
    vectors,
    with_barriers,
)
from minilazy.conformance.oracle.strategies import dtypes_for, examples
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import check_program, settle

VECTORS = vectors()


@pytest.mark.spec("LZ-BAR-004")
@given(data=st.data())
def test_every_observation_of_a_program_is_numpys(adapter: OptionalAdapter, lazy_impl: str,
                                                 data: st.DataObject) -> None:
    check_program(adapter, data.draw(programs(dtypes_for(adapter)), label="program"), lazy_impl)


@pytest.mark.spec("LZ-BAR-007")
@examples(0.5)
@given(data=st.data())
def test_barriers_inserted_anywhere_change_no_value(adapter: OptionalAdapter, lazy_impl: str,
                                                    data: st.DataObject) -> None:
    p = data.draw(programs(dtypes_for(adapter)), label="program")
    q = with_barriers(p, lambda: data.draw(st.booleans()))
    # Compared with the same program's run without them, not with NumPy: whether the values
    # are NumPy's is LZ-BAR-004's business.
    settle(adapter)
    plain = run(p, AdapterMachine(adapter), run(p, NumpyMachine()).decisions)
    check_program(adapter, q, lazy_impl, expected=plain)


@pytest.mark.spec("LZ-BAR-004")
@pytest.mark.parametrize("name", sorted(VECTORS))
def test_golden_programs_observe_numpys_values(adapter: OptionalAdapter, lazy_impl: str,
                                              name: str) -> None:
    program = VECTORS[name]
    if any(leaf.dtype in ("float64", "int64", "uint64") for leaf in program.leaves) and (
            "float64" not in adapter.capabilities):
        pytest.skip(f"{adapter.name} has no 64-bit dtypes")
    check_program(adapter, program, lazy_impl)


def _ops(body: Sequence[Instruction]) -> Iterator[str]:
    for i in body:
        if isinstance(i, Op):
            yield i.op
        for block in (getattr(i, "body", ()), getattr(i, "then", ()), getattr(i, "orelse", ())):
            yield from _ops(block)


def _standard(p: Program) -> bool:
    """No op the standard defines on real values only (programgen asks NumPy, which orders)."""
    return not any(ops()[name].real_only for name in _ops(p.body))


@pytest.mark.spec("LZ-BAR-004")
@pytest.mark.requires("complex")
@examples(0.5)
@given(data=st.data())
def test_every_observation_of_a_complex_program_is_numpys(adapter: OptionalAdapter,
                                                         lazy_impl: str,
                                                         data: st.DataObject) -> None:
    # Complex leaves next to real ones (promotions, barriers between complex ops). Complex
    # leaves hold both parts (programs.leaf_data).
    dtypes = [d for d in dtypes_for(adapter, complex_too=True) if d.kind in "cf"]
    program = data.draw(programs(dtypes, control=False).filter(_standard), label="program")
    check_program(adapter, program, lazy_impl)
