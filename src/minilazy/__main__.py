"""``python -m minilazy``: the same computation eager and lazy, with counts and timings."""

from minilazy.demo import main

if __name__ == "__main__":
    main()
