"""A small text the package carries itself, for the character-level Transformer demo.

Written for minilazy (no download, no licence question): short plain sentences about eager and
lazy execution, about 3 KB of ASCII, so a two-layer model learns its letters, words and
spacing in a few hundred steps. NumPy only.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

TEXT: Final = """\
a lazy tensor does not run when you call it. it writes the call down and waits. the next call
is written down too, and the one after that, until the program asks to see a value. then the
whole list of calls is cut into one graph, the graph is hashed, and the hash is looked up in a
cache. if the cache has seen the graph before, the compiled program is run at once. if not, the
graph is lowered to xla, compiled, stored under its hash, and run. the first step of a training
loop is slow, because it compiles. every later step is fast, because it finds its program in the
cache and only runs it.
an eager tensor runs each call the moment python reaches it. you can print it, branch on it and
step through it in a debugger, and an error points at your line. but the library never sees
more than one call at a time, so it cannot fuse two calls into one pass over memory, and it pays
the cost of a launch for every small call. a lazy tensor keeps the eager style and still hands
the compiler a whole step: python runs as it always does, loops and branches and all, and only
the tensor calls are recorded.
the cut is called a barrier. a barrier comes when you mark a step, when you read a value on the
host, or when the graph grows too large. at a barrier every live tensor with pending work is
made real in one run, and a dead tensor is never computed at all. a python number in a call is
a parameter of the program, not a constant baked into it, so a new learning rate does not make
a new program. a new shape does, and so does a new axis or a new slice.
the cache key is made from the structure of the graph: the calls, their order, their shapes and
types, and where each input comes in. it is never made from the values. two steps with new data
and the same structure share one program. the key is the same in a fresh process, so a compile
cache on disk can serve the next run too.
to train a model lazily, write the forward pass, take its gradient, update the weights, and
mark the step. forward, backward and update land in one graph, and the compiler sees them all.
the old weights are dead after the update, so their buffers are given back and reused for the
new ones. one compile for the first step, then none: that is the whole trick, and it is also
the whole cost. when a step changes shape, it compiles again, and the counters say so.
a small model learns this text one letter at a time. it sees a window of letters and guesses
the next one. at first every guess is as good as any other. after a few hundred steps it knows
that a space follows a word, that a dot ends a line of thought, and which letters like to sit
together. it does not know what a tensor is, but it can spell it.
"""


def characters(text: str = TEXT) -> tuple[str, np.ndarray[Any, Any]]:
    """The sorted alphabet of ``text`` and the text as int32 ids into it.

    Example:
        >>> alphabet, ids = characters("abba")
        >>> alphabet, ids.tolist()
        ('ab', [0, 1, 1, 0])
    """
    alphabet = "".join(sorted(set(text)))
    index = {c: i for i, c in enumerate(alphabet)}
    return alphabet, np.array([index[c] for c in text], np.int32)
