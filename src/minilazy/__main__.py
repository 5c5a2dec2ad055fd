"""``python -m minilazy [--devices N]``: the same training eager and lazy, with counts and timings.

``--devices N`` trains data-parallel over N CPU devices (XLA splits the host into N devices).
"""

import argparse

from minilazy import runtime
from minilazy.demo import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m minilazy", description=__doc__)
    parser.add_argument("--devices", type=int, default=1, metavar="N",
                        help="train data-parallel over N CPU devices (default 1)")
    parser.add_argument("--steps", type=int, default=300, help="training steps (default 300)")
    args = parser.parse_args()
    if args.devices > 1:
        runtime.use_cpu_devices(args.devices)
    main(steps=args.steps, devices=args.devices)
