"""``python -m minilazy [--model {mlp,cnn,transformer}] [--devices N] [--steps S]``: train lazily.

The demo's command: ``--model mlp`` (the default) trains the same MLP eager and lazy, with counts
and timings; ``cnn`` and ``transformer`` train the other two models. Arguments are checked
before anything runs, with argparse's usage line and a message that says what is allowed.
"""

import argparse
import re
from collections.abc import Callable

from minilazy.demo import MLP_BATCH, SIZES, main, models
from minilazy.scaleout import processes

DESCRIPTION = f"""\
Train a model lazily and print what the engine did: the learning curve, compiles and cache
hits, the graph's size, and the time per step.

  mlp          a {'-'.join(map(str, SIZES))} MLP on seven-segment digits, eager against lazy
  cnn          a small CNN on the same digits
  transformer  a character-level Transformer on a bundled text

Every model compiles its whole training step once; later steps find it in the cache.
"""
DEFAULT_STEPS = {"mlp": 300, "cnn": 200, "transformer": 300}
MAX_STEPS = 1_000_000  # hours of training at a few ms a step: more is a typo, not a run
MAX_DEVICES = MLP_BATCH  # one example of the batch per device at most


def whole(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, in ASCII digits.

    Anything else (a fraction, ``1e3``, a number past ``high``, other scripts' digits) is
    argparse's usage error (exit 2), with the reason.

    Example:
        >>> whole(1, 10)(" 7 ")
        7
        >>> whole(1, 10)("99999999999999999999999")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be at most 10, got 99999999999999999999999
    """
    def parse(text: str) -> int:
        found = re.fullmatch(r"\s*([-+]?)0*([0-9]+)\s*", text, flags=re.ASCII)
        if found is None:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
        sign, digits = found.groups()
        # Python parses at most 4300 digits: a longer number is out of range, never parsed
        value = int(sign + digits) if len(digits) <= 18 else (-1 if sign == "-" else 1) * 10**18
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text.strip()}")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {text.strip()}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    """The command's arguments, each with its type, range and default."""
    p = argparse.ArgumentParser(prog="python -m minilazy", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=tuple(DEFAULT_STEPS), default="mlp",
                   help="the model to train (default: mlp)")
    p.add_argument("--devices", type=whole(1, MAX_DEVICES), default=1, metavar="N",
                   help=f"train the mlp data-parallel over N CPU devices; N must divide its "
                        f"batch of {MLP_BATCH} (default: 1)")
    p.add_argument("--steps", type=whole(1, MAX_STEPS), default=None, metavar="S",
                   help=f"training steps, 1 to {MAX_STEPS} (default: " + ", ".join(
                       f"{s} for {m}" for m, s in DEFAULT_STEPS.items()) + ")")
    return p


def run(argv: list[str] | None = None) -> None:
    """Check the arguments (argparse's exit 2 and message on a bad one), then train."""
    command = parser()
    args = command.parse_args(argv)
    if args.devices > 1 and args.model != "mlp":
        command.error(f"--devices {args.devices}: only the mlp model trains on several devices")
    if MLP_BATCH % args.devices:
        usable = [n for n in range(1, MAX_DEVICES + 1) if MLP_BATCH % n == 0]
        command.error(f"--devices {args.devices}: the batch of {MLP_BATCH} must split evenly; "
                      f"use one of {', '.join(map(str, usable))}")
    steps = DEFAULT_STEPS[args.model] if args.steps is None else args.steps
    if args.model == "mlp":
        if args.devices > 1:
            processes.use_cpu_devices(args.devices)
        main(steps=steps, devices=args.devices)
    elif args.model == "cnn":
        models.main_cnn(steps=steps)
    else:
        models.main_transformer(steps=steps)


if __name__ == "__main__":
    run()
