"""Parts of the engine that core runs without: installed by ``import minilazy``.

Core (``minilazy.core``) is the pipeline a student reads; what makes it fast or robust past
that is a part, installed at assembly into a slot core keeps for it: ``plans`` (a repeated
graph cut without a walk), ``refcounts`` (input buffers a program may consume). Without its
parts the engine computes the same values.

Example:
    >>> import minilazy as ml
    >>> from minilazy.core.cut import CUTS
    >>> from minilazy.parts import plans
    >>> CUTS.planner is plans.PLANS
    True
"""
