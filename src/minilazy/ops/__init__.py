"""Op families: each registers every interpretation of its ops into the engine's tables.

Core's tables (``infer.INFER``, ``lowering.LOWER``) and the inspector's (``reference.REFERENCE``,
``pycode.PYTHON``) hold the ops core ships with; a family module adds its ops' entries when it is
imported, beside the rules themselves (JAX's layout: a primitive, then its rules). Importing
this package imports every family, so the tables cover the closed set of ops
(``tests/test_structure.py``). ``fft`` is the worked example (docs/families.md); ``sort``,
``linalg`` (with ``tensordot``), ``conv``, ``indexing``, ``reductions``, ``shaping`` (flip,
concat, pack, unpack) and ``elementwise`` (with its integer and complex corners, ``integers``
and ``complex``) follow it. A VJP is written with the array
namespace, so it lives above, beside the family's public functions (``minilazy.fft``,
``minilazy.linalg``, ``api/convolution.py``) or in ``autodiff/vjps.py``.

Example:
    >>> from minilazy.core import infer
    >>> from minilazy.core.ir import Op
    >>> from minilazy.ops import fft
    >>> infer.INFER[Op.FFT] is fft.rule
    True
"""

from minilazy.ops import conv, elementwise, fft, indexing, linalg, reductions, shaping, sort

__all__ = ["conv", "elementwise", "fft", "indexing", "linalg", "reductions", "shaping",
           "sort"]
