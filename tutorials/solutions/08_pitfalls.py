"""Exercise 8 (buckets): runs in tutorial 8's namespace (BUCKETS, ml, np)."""
# ruff: noqa: F821


def bucketed_mean_tanh(seq):
    """mean(tanh(seq)) for a float32 array of length <= 64: one program per bucket, at most."""
    size = next(b for b in BUCKETS if b >= len(seq))
    padded = np.zeros(size, np.float32)
    padded[:len(seq)] = seq  # tanh(0) == 0: the padding adds nothing to the sum
    # len(seq) is a Python number: a parameter of the program, so it may change freely.
    return ml.sum(ml.tanh(ml.asarray(padded))) / len(seq)
