"""``python -m minilazy [--model {mlp,cnn,transformer}] [--devices N] [--steps S]``: train lazily.

The demo's command: ``--model mlp`` (the default) trains the same MLP eager and lazy, with counts
and timings; ``cnn`` and ``transformer`` train the other two models. Arguments are checked
before anything runs, with argparse's usage line and a message that says what is allowed.
"""

import argparse

from minilazy.core import runtime
from minilazy.demo import MLP_BATCH, SIZES, main, models

DESCRIPTION = f"""\
Train a model lazily and print what the engine did: the learning curve, compiles and cache
hits, the graph's size, and the time per step.

  mlp          a {'-'.join(map(str, SIZES))} MLP on seven-segment digits, eager against lazy
  cnn          a small CNN on the same digits
  transformer  a character-level Transformer on a bundled text

Every model compiles its whole training step once; later steps find it in the cache.
"""
DEFAULT_STEPS = {"mlp": 300, "cnn": 200, "transformer": 300}


def positive(text: str) -> int:
    """An int >= 1, for argparse: anything else is its usage error, with the reason."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    """The command's arguments, each with its type, range and default."""
    p = argparse.ArgumentParser(prog="python -m minilazy", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=tuple(DEFAULT_STEPS), default="mlp",
                   help="the model to train (default: mlp)")
    p.add_argument("--devices", type=positive, default=1, metavar="N",
                   help=f"train the mlp data-parallel over N CPU devices; N must divide its "
                        f"batch of {MLP_BATCH} (default: 1)")
    p.add_argument("--steps", type=positive, default=None, metavar="S",
                   help="training steps, at least 1 (default: " + ", ".join(
                       f"{s} for {m}" for m, s in DEFAULT_STEPS.items()) + ")")
    return p


def run(argv: list[str] | None = None) -> None:
    """Check the arguments (argparse's exit 2 and message on a bad one), then train."""
    command = parser()
    args = command.parse_args(argv)
    if args.devices > 1 and args.model != "mlp":
        command.error(f"--devices {args.devices}: only the mlp model trains on several devices")
    if MLP_BATCH % args.devices:
        usable = [n for n in range(1, 17) if MLP_BATCH % n == 0]
        command.error(f"--devices {args.devices}: the batch of {MLP_BATCH} must split evenly; "
                      f"use one of {', '.join(map(str, usable))}")
    steps = DEFAULT_STEPS[args.model] if args.steps is None else args.steps
    if args.model == "mlp":
        if args.devices > 1:
            runtime.use_cpu_devices(args.devices)
        main(steps=steps, devices=args.devices)
    elif args.model == "cnn":
        models.main_cnn(steps=steps)
    else:
        models.main_transformer(steps=steps)


if __name__ == "__main__":
    run()
