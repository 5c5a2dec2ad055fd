"""Parts of the engine that core runs without: installed by ``import minilazy``.

Core (``minilazy.core``) is the pipeline a student reads; what makes it fast or robust past
that is a part, installed at assembly into a slot core keeps for it: ``plans`` (a repeated
graph cut without a walk: ``cut.CUTS``), and the barrier's ``PARTS``: ``refcounts`` (input
buffers a program may consume), ``staging`` (a graph too deep for one program, in stages) and
``signals`` (a signal handler's exception told from a program's own; signals held while a
donating program runs). Without its parts the engine computes the same values. ``capture``
(``ml.capture``) needs no slot: it calls core's pieces (the barrier, the compile cache, the
runtime) to run a step's program directly once two recordings of it agree (``recorded``: what
a recorded call noted). ``tapes`` needs none either: the backward pass, ``ml.nn``'s layers and
Adam's update make what an earlier recording made without running its Python again.

Example:
    >>> import minilazy as ml
    >>> from minilazy.core.barrier import PARTS
    >>> from minilazy.core.cut import CUTS
    >>> from minilazy.parts import plans
    >>> CUTS.planner is plans.PLANS, type(PARTS.stager).__name__
    (True, 'Stager')
"""
