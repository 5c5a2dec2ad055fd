"""The protocol's optional parts for training and state.

Optimizers, random keys, sharding, and a compile cache kept across processes. Each is declared as a
capability (``optim``, ``random``, ``sharding``, ``persistent``) and is a method of the adapter, as
``fft`` and ``linalg`` are: :class:`Extensions` states them, and
:class:`minilazy.conformance.adapter.OptionalAdapter` includes it. A library that has one declares
it; the tests of the rules it gates (``LZ-OPT-...``, ``LZ-RNG-...``, ``LZ-CACHE-008``) skip
elsewhere, naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

# The optimizers ``optim`` names, with their hyperparameters and torch's defaults.
OPTIMIZERS: dict[str, dict[str, float]] = {
    "sgd": {"lr": 0.01, "momentum": 0.0},
    "adam": {"lr": 0.001, "b1": 0.9, "b2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
}


class Extensions(Protocol):
    """Optional methods for training and state, each behind the capability of its name.

    Example:
        >>> import numpy as np
        >>> from minilazy.conformance.adapters.minilazy_adapter import cpu
        >>> e: Extensions = cpu()
        >>> k = e.random("key", 0)
        >>> e.random("uniform", k, (2,), np.dtype("float32")).shape
        (2,)
    """

    def optim(self, name: str, params: Sequence[Any], grads: Sequence[Any], state: Any,
              **hyper: float) -> tuple[list[Any], Any]:
        """One step of optimizer ``name``: the new parameters and the state of the next step.

        Capability ``optim``. ``name`` is one of :data:`OPTIMIZERS`: ``"sgd"`` is torch's
        ``SGD`` (``v = momentum v + g; p = p - lr v``: heavy ball, no dampening), ``"adam"``
        torch's ``Adam`` (``b1``, ``b2`` its betas), or ``AdamW`` (decoupled weight decay)
        where ``weight_decay`` > 0. ``params`` and ``grads`` are lists of floating tensors,
        each gradient of its parameter's shape and dtype; ``state`` is ``None`` at the first
        step, then what the step before returned. Hyperparameters are Python numbers, given
        at every step (a new ``lr`` may come with each). The update is recorded like any op (a
        barrier runs it); the caller rebinds its parameters to the ones returned.
        """

    def random(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Counter-based random numbers from explicit keys, as ``jax.random`` (``random``).

        ``random("key", seed)`` makes a key from an int; ``random("split", key, num)`` gives a
        tuple of ``num`` new keys; ``random("uniform", key, shape, dtype)`` numbers in
        ``[0, 1)`` and ``random("normal", key, shape, dtype)`` standard normal ones, of a
        floating ``numpy.dtype``. A key is the implementation's own object; the same key
        gives the same numbers, and drawing from it changes no state.
        """

    def shard(self, x: Any, axis: int | None) -> Any:
        """``x`` split along ``axis`` over all of ``devices()`` (``None``: replicated on them).

        Capability ``sharding`` (with ``devices``). The value is ``x``'s; ops on the result
        run where its pieces are, and a result is observed whole.
        """

    def persist(self, directory: str | None) -> None:
        """Keep compiled programs in ``directory`` from now on (capability ``persistent``).

        Every process that persists to the same directory may run a program another one
        compiled there: the cache the rules of LZ-CACHE-008 check across processes. ``None``
        keeps them in no directory any more. Whatever ``directory`` turns out to be (a file, a
        place that cannot be written, damaged entries), no program fails for it (LZ-CACHE-010).
        """
