"""MLX: ``mx.grad`` of a bad use raises ValueError, or nothing, instead of TypeError.

Differentiating a function whose result is not a 0-d floating array raises ``ValueError:
[vjp] Output shape (2,3) does not match cotangent shape ().``; differentiating with respect
to an integer argument raises nothing and returns an int32 "gradient" of ones.

Breaks LZ-AD-006 (a result that is not a 0-d floating tensor, or a non-floating argument,
raises ``TypeError`` naming the problem, before anything executes).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx


def outcome(call):
    """The gradient ``call()`` returns, or the error it raises."""
    try:
        g = call()
        return f"no error, gradient {g.tolist()} ({g.dtype})"
    except Exception as e:
        return f"{type(e).__name__}: {e}"


wrong = 0
for label, call in (
        ("grad(x * x) of a (2, 3) float32 x",
         lambda: mx.grad(lambda t: t * t)(mx.ones((2, 3)))),
        ("grad(sum(x * 1.0)) of an int32 x",
         lambda: mx.grad(lambda t: mx.sum(t * 1.0))(mx.array([1, 2, 3])))):
    got = outcome(call)
    wrong += not got.startswith("TypeError")
    print(f"{label}: MLX {got}; wanted TypeError")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
