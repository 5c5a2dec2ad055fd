"""A library is judged on what it declares: fixed test data of a dtype it does not have skips
(not fails), and a declared widening is checked against NumPy computing in the wider dtype."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import DtypePolicy
from minilazy.conformance.oracle import numpy_apply, use_policy

NARROW = textwrap.dedent("""
    import numpy as np
    from minilazy.conformance.adapter import DtypePolicy
    from minilazy.conformance.mutate.toy import Toy

    class Narrow(Toy):
        # A library with three dtypes and no 64-bit ones, which refuses the others.
        dtype_policy = DtypePolicy(dtypes=("float32", "int32", "bool"))

        def __init__(self):
            super().__init__()
            self.capabilities = self.capabilities - {"float64"}

        def from_numpy(self, array):
            if array.dtype.name not in self.dtype_policy.dtypes:
                raise TypeError(f"no {array.dtype}")
            return super().from_numpy(array)

    def narrow():
        return Narrow()
""")


def test_fixed_data_of_an_undeclared_dtype_skips_naming_it(tmp_path) -> None:
    (tmp_path / "narrow.py").write_text(NARROW)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance",
                           "--lazy-impl=narrow:narrow", "--lazy-rules=LZ-NUM-012",
                           "-rs", "-p", "no:randomly",
                           f"--spec-report={tmp_path / 'r.json'}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    report = json.loads((tmp_path / "r.json").read_text())["rules"]
    # Its shape corners hold int64, int8, float64 data: skipped, the others checked and passed
    assert report["LZ-NUM-012"]["status"] == "passed", done.stdout[-3000:]
    assert report["LZ-NUM-012"]["skipped"] and report["LZ-NUM-012"]["passed"]
    assert "needs int64 (data), which toy does not declare" in done.stdout, done.stdout[-3000:]


@given(hnp.arrays(st.sampled_from([np.bool_, np.int8, np.uint8]), st.integers(1, 5)))
def test_a_declared_widening_is_numpy_computing_in_the_wider_dtype(x) -> None:
    use_policy(DtypePolicy(dtypes=("float32", "int32", "bool"), default_float="float32",
                           promotion={"bool": "float32", "int8": "float32", "uint8": "float32"}))
    try:
        got = numpy_apply("exp", x)  # NumPy: float16 for these; the library: float32
    finally:
        use_policy(DtypePolicy())
    assert got.dtype == np.float32
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.exp(x.astype(np.float32)))
