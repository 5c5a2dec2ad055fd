"""minilazy's own errors for elementwise ops on dtypes NumPy has no loop for.

That they raise ``TypeError`` at the call, naming a dtype, is rule LZ-ERR-002, checked by the
conformance suite (``suite/test_elementwise.py``); so are the values, promotions and weak
scalars of every elementwise op (LZ-NUM-001..003).
"""

from __future__ import annotations

import pytest

import minilazy as ml
from minilazy.conformance.registry import ops
from strategies import DTYPES, loop_exists

ELEMENTWISE = [s for s in ops().values() if s.kind == "elementwise"]


@pytest.mark.parametrize("spec", ELEMENTWISE, ids=lambda s: s.name)
def test_no_loop_type_errors_name_the_function_and_record_nothing(spec):
    """minilazy's message names the function, and the refused call records no op
    (``ml.metrics().ops_recorded``), for every dtype combination NumPy has no loop for."""
    for dtypes in ([(d,) for d in DTYPES] if spec.arity == 1 else
                   [(a, b) for a in DTYPES for b in DTYPES]):
        if loop_exists(spec, *dtypes):
            continue
        tensors = [ml.zeros((2,), dtype=d) for d in dtypes]
        before = ml.metrics().ops_recorded
        with pytest.raises(TypeError, match=spec.name.split("_")[0][:4]):
            getattr(ml, spec.name)(*tensors)
        assert ml.metrics().ops_recorded == before
