"""Exercise 9 (which rules does a bug break?): runs in tutorial 9's namespace.

A key without dtypes gives a float16 graph the key of the same float32 graph: the key no longer
depends on every dtype (LZ-HASH-004), and the cache hit runs the float32 program on float16 data,
so a hit no longer gives the values of a miss (LZ-CACHE-003).
"""

STALE_CACHE_BREAKS = {"LZ-HASH-004", "LZ-CACHE-003"}
