"""Exercise 0 (a new op): runs in tutorial 0's namespace, where OPS and record are defined."""
# ruff: noqa: F821

import numpy as np

OPS["relu"] = lambda x: np.maximum(x, 0)  # what relu means: NumPy's definition, for the compiler


def relu(x):
    """max(x, 0), elementwise: recorded, not run."""
    return record("relu", x)
