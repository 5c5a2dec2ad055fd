"""``python -m minilazy [--model {mlp,cnn,transformer}] [--devices N] [--steps S]``: train lazily.

``--model mlp`` (the default) trains the same MLP eager and lazy, with counts and timings;
``--model cnn`` a small CNN on the same digits, ``--model transformer`` a character-level
Transformer on a bundled text, each with its learning curve, compiles, cache hits and graph size.
``--devices N`` (MLP only) trains data-parallel over N CPU devices (XLA splits the host into N).
"""

import argparse

from minilazy.core import runtime
from minilazy.demo import main, models

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m minilazy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("mlp", "cnn", "transformer"), default="mlp",
                        help="the model to train (default mlp)")
    parser.add_argument("--devices", type=int, default=1, metavar="N",
                        help="train data-parallel over N CPU devices (default 1; mlp only)")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps (default 300; 200 for cnn)")
    args = parser.parse_args()
    if args.devices > 1 and args.model != "mlp":
        parser.error("--devices N > 1 trains only the mlp model")
    if args.model == "mlp":
        if args.devices > 1:
            runtime.use_cpu_devices(args.devices)
        main(steps=args.steps or 300, devices=args.devices)
    elif args.model == "cnn":
        models.main_cnn(steps=args.steps or 200)
    else:
        models.main_transformer(steps=args.steps or 300)
