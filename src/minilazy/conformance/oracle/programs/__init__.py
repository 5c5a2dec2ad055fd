"""Programs: random tensor programs as data, run on NumPy (the oracle) and on an implementation.

A :class:`Program` has *leaves* (dtype, shape and the seed of their data) and a body of
instructions over numbered *slots* (the leaves fill the first ones): an :class:`Op` records an op
of the registry on earlier slots and Python scalars; :class:`Barrier` and :class:`Sync` cut;
:class:`Observe` reads a value on the host; :class:`Branch` observes a value and takes one of two
blocks, as Python code branching on a tensor's value would; :class:`Repeat` runs a block several
times, rebinding loop-carried slots with :class:`Assign`. :func:`run` interprets a program on a
:class:`Machine`; :func:`dumps`/:func:`loads` are its JSON form (``vectors/`` holds a few worth
keeping) and :func:`to_python` prints it as a plain script. Nothing here imports minilazy's
engine; ``programgen`` generates programs with Hypothesis.
"""

from minilazy.conformance.oracle.programs.codec import dumps, from_json, loads, vectors
from minilazy.conformance.oracle.programs.form import (
    Assign,
    Barrier,
    Branch,
    Instruction,
    Leaf,
    Num,
    Observe,
    Op,
    Program,
    Ref,
    Refs,
    Repeat,
    Scalar,
    Sync,
    leaf_data,
)
from minilazy.conformance.oracle.programs.interpret import (
    AdapterMachine,
    Machine,
    NumpyMachine,
    Trace,
    main,
    run,
)
from minilazy.conformance.oracle.programs.printer import to_python
from minilazy.conformance.oracle.programs.variants import (
    observing_all,
    with_barriers,
    with_dtypes,
    with_scalars,
    with_seeds,
    with_shape,
)

__all__ = [
    "AdapterMachine", "Assign", "Barrier", "Branch", "Instruction", "Leaf", "Machine", "Num",
    "NumpyMachine", "Observe", "Op", "Program", "Ref", "Refs", "Repeat", "Scalar", "Sync",
    "Trace", "dumps", "from_json", "leaf_data", "loads", "main", "observing_all", "run",
    "to_python", "vectors", "with_barriers", "with_dtypes", "with_scalars", "with_seeds",
    "with_shape",
]
