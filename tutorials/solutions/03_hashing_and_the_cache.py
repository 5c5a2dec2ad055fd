"""Exercise 3 (predict the cache): runs in tutorial 3's namespace.

a: hit, new data and a new scalar value are parameters.
b: compile, int32 * 2.0 is float64 (NumPy 2 promotion): other dtypes.
c, d: compile, one more op (an add of 0.0, a multiply by 1.0: nothing is simplified away).
e, f: compile, `2.0 * x` and `x * 2.0` read their operands in another order.
g: compile, `x[:, :]` is recorded as a getitem like any other index.
h: compile, another shape.
i: hit, the int 2 is a weak scalar, typed float32 like 2.0.
"""

PREDICTIONS = {"a": True, "b": False, "c": False, "d": False, "e": False, "f": False,
               "g": False, "h": False, "i": True}
