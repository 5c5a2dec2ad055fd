"""``python -m minilazy.launch -n N script.py``: run a script as N cooperating processes.

The launcher itself is :mod:`minilazy.scaleout.launch`; this module is its command's name.

Example:
    >>> from minilazy.launch import main
    >>> main.__module__
    'minilazy.scaleout.launch'
"""

from __future__ import annotations

from minilazy.scaleout.launch import launch, main

__all__ = ["launch", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
