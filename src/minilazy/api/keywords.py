"""Keyword-only arguments passed by position: a ``TypeError`` that names the keyword.

The Array API makes ``axis``, ``dtype``, ``keepdims``... keyword-only; NumPy habits pass them by
position (``ml.sum(x, 0)``), and Python's own message ("takes 1 positional argument but 2 were
given") does not say what to write instead. :func:`keywords` wraps a namespace function so that
it does. Never imports jax.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

import numpy as np

P = ParamSpec("P")
R = TypeVar("R")


def keywords(f: Callable[P, R]) -> Callable[P, R]:
    """``f``, raising a ``TypeError`` that shows the call with keywords when given too many.

    Example:
        >>> import minilazy as ml
        >>> ml.sum(ml.ones((2, 3)), 0)
        Traceback (most recent call last):
        ...
        TypeError: sum() takes 1 positional argument but 2 were given: pass axis by keyword, \
ml.sum(x, axis=0)
    """
    params = inspect.signature(f).parameters.values()
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional = len(names)
    named = [p.name for p in params if p.kind is p.KEYWORD_ONLY]

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if len(args) > positional:
            extra = args[positional:]
            which = ", ".join(named[:len(extra)])
            shown = ", ".join([*names[:positional],
                               *(f"{n}={_shown(v)}" for n, v in zip(named, extra))])
            plural = "" if positional == 1 else "s"
            raise TypeError(f"{f.__name__}() takes {positional} positional argument{plural} but "
                            f"{len(args)} were given: pass {which} by keyword, "
                            f"ml.{f.__name__}({shown})")
        return f(*args, **kwargs)

    return cast(Callable[P, R], checked)


def _shown(value: object) -> str:
    """A value as the fixed call would spell it: ``ml.float32`` for a dtype."""
    return f"ml.{value}" if isinstance(value, np.dtype) else repr(value)
