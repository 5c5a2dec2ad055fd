"""Exercise 2 (the longest chain): runs in tutorial 2's namespace."""

import re

LINE = re.compile(r"%(\d+) = (\S+)(.*?) : ")


def longest_chain(text):
    """Ops on the longest parameter-to-output path of a graph's IR text."""
    depth = {}
    for line in text.splitlines():  # post-order: operands always come first
        match = LINE.match(line)
        if match is None:  # the `return` line
            continue
        node, op, rest = match.groups()
        if op.startswith(("data[", "scalar[", "constant")):
            depth[node] = 0
        else:
            depth[node] = 1 + max((depth[i] for i in re.findall(r"%(\d+)", rest)), default=0)
    return max(depth.values(), default=0)
