"""Mutants of minilazy's extension namespaces: one slip in one ``linalg`` or ``fft`` function.

The slips of numerical code that a reviewer misses: LAPACK is column-major (a matrix read as its
transpose), a batch loop that never advances, eigenvalues in the other order, an
``upper`` or ``keepdims`` keyword ignored, an offset counted the other way, NumPy's ``norm``
directions swapped, ``fftshift`` and ``ifftshift`` confused. Factories are looked up by name,
``namespaces:slip__<site>`` (module ``__getattr__``), as in :mod:`.families`.

Example:
    >>> sorted(LINALG)[:3]
    ['cholesky', 'det', 'diagonal']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import minilazy as ml
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set

Slip = Callable[..., Any]


def _no(keyword: str) -> Slip:
    """A call that drops ``keyword`` (its default is used instead)."""
    def call(real: Slip, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop(keyword, None)
        return real(*args, **kwargs)

    return call


def _negated(keyword: str) -> Slip:
    def call(real: Slip, *args: Any, **kwargs: Any) -> Any:
        return real(*args, **{**kwargs, keyword: -kwargs.get(keyword, 0)})

    return call


def _of_transpose(real: Slip, x: Any, *args: Any, **kwargs: Any) -> Any:
    return real(ml.matrix_transpose(x), *args, **kwargs)


def _first_of_batch(real: Slip, x: Any, *args: Any, **kwargs: Any) -> Any:
    """Every matrix of a stack gets the first one's result (a batch loop that never advances)."""
    out = real(x, *args, **kwargs)
    if x.ndim <= 2:
        return out
    first = real(x[(0,) * (x.ndim - 2)], *args, **kwargs)
    if isinstance(out, tuple):
        return type(out)(*(ml.broadcast_to(f, o.shape) for f, o in zip(first, out)))
    return ml.broadcast_to(first, out.shape)


def _reversed(real: Slip, x: Any) -> Any:
    return ml.flip(real(x), axis=-1)


def _power(real: Slip, x: Any, n: int) -> Any:
    return real(x, abs(n))


def _all_axes_transposed(real: Slip, x: Any) -> Any:
    return ml.permute_dims(x, tuple(range(x.ndim))[::-1])  # x.T of NumPy, not x.mT


def _vectors_transposed(real: Slip, x: Any, *args: Any, **kwargs: Any) -> Any:
    out = real(x, *args, **kwargs)
    return type(out)(*(ml.matrix_transpose(f) if f.ndim >= 2 else f for f in out))


LINALG: dict[str, Slip] = {
    "cholesky": _no("upper"), "inv": _of_transpose, "pinv": _of_transpose,
    "solve": _of_transpose, "det": _first_of_batch, "slogdet": _first_of_batch,
    "eigvalsh": _reversed, "svdvals": _reversed,
    "matrix_norm": _no("keepdims"), "vector_norm": _no("keepdims"), "matrix_power": _power,
    "trace": _negated("offset"), "diagonal": _negated("offset"),
    "matrix_transpose": _all_axes_transposed, "eigh": _vectors_transposed,
    "svd": _vectors_transposed, "qr": _vectors_transposed,
}

_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm_swapped(real: Slip, x: Any, **kwargs: Any) -> Any:
    return real(x, **{**kwargs, "norm": _SWAPPED[kwargs.get("norm") or "backward"]})


FFT: dict[str, Slip] = {
    **dict.fromkeys(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
                     "irfftn"], _norm_swapped),
    "fftshift": lambda real, x, axes=None: ml.fft.ifftshift(x, axes=axes),
}


def _stride_one(real: Slip, x: Any, kernel_size: Any, stride: Any = None, *args: Any) -> Any:
    return real(x, kernel_size, 1 if stride is None else stride, *args)  # not the window's


NN: dict[str, Slip] = {
    "conv2d": _no("dilation"), "max_pool2d": _stride_one, "avg_pool2d": _stride_one,
}


def slip(site: str) -> MinilazyAdapter:
    """``ml.linalg``, ``ml.fft`` or ``ml.nn``'s ``site`` with its slip (:data:`LINALG`...)."""
    space, change = next((space, table[site]) for space, table in (
        (ml.linalg, LINALG), (ml.fft, FFT), (ml.nn, NN)) if site in table)
    real = getattr(space, site)
    _set(space, site, lambda *a, **k: change(real, *a, **k))
    return cpu()


def __getattr__(name: str) -> Callable[[], MinilazyAdapter]:
    """``slip__<site>``: the factory of one site's mutant (``slip__inv``)."""
    family, sep, site = name.partition("__")
    if family != "slip" or not sep or site not in {**LINALG, **FFT, **NN}:
        raise AttributeError(name)
    return functools.partial(slip, site)
