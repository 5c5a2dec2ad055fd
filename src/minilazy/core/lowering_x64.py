"""JAX's 64-bit mode, switched on around minilazy's own JAX calls and nowhere else.

Part of the lowering. ``jax.enable_x64(True)`` sets a thread-local value and then updates
JAX's jit state, and puts both back on exit, in a few Python steps each: a signal handler that
raises between them (a timeout) would leave 64-bit mode on in the user's thread for good, so
every later ``jax.jit`` of theirs would compute in float64. :func:`x64` puts the thread's own
value back on any exception, whichever step it interrupted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

import jax

_STATE: Final[Any] = jax.enable_x64  # a config State: get_local/set_local are its public face


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """64-bit mode inside the block, in this thread; what it was before, however it ends.

    Example:
        >>> import jax
        >>> with x64():
        ...     jax.numpy.zeros(1, "float64").dtype.name
        'float64'
    """
    before = _STATE.get_local()  # nothing is changed yet: an exception here needs no repair
    try:
        with _STATE(True):
            yield
    except BaseException:
        if _STATE.get_local() is not before:  # interrupted inside JAX's own switch
            _STATE.set_local(before)
            # The jit state follows the local value through this hook (what the context
            # manager's exit would have called): a bool, or None for "not set in this thread".
            hook = getattr(_STATE, "_update_thread_local_hook", None)
            if hook is not None:
                hook(before if isinstance(before, bool) else None)
        raise
