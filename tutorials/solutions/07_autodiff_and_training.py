"""Exercise 7 (Adam, still one compile): runs in tutorial 7's namespace (ml, demo)."""
# ruff: noqa: F821


def adam_step(p, state, x, y, lr, t, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step on demo.loss_fn, cut by mark_step; returns the loss."""
    loss, grads = ml.value_and_grad(demo.loss_fn)(p, x, y)
    m, v = state["m"], state["v"]
    # Python floats: parameters of the program, so a new t every step compiles nothing new.
    correct1, correct2 = 1 - b1**t, 1 - b2**t
    for k in p:
        m[k] = b1 * m[k] + (1 - b1) * grads[k]
        v[k] = b2 * v[k] + (1 - b2) * grads[k] * grads[k]
        p[k] -= lr * (m[k] / correct1) / (ml.sqrt(v[k] / correct2) + eps)
    ml.mark_step()
    return loss
