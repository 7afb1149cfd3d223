"""The ``privevo`` command line."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except (ValueError, OSError, ImportError) as err:
        print(f"privevo {args.command}: error: {err}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="privevo", description="Differentially private clustering and synthetic data by Private Evolution.")
    sub = parser.add_subparsers(dest="command")

    demo = sub.add_parser("demo", help="run PE on built-in data and print a result table", description="Run PE on built-in data (no download) and print a result table.\n\nexample: privevo demo --seed 1", formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--json", action="store_true", help="print JSON instead of a table")
    demo.set_defaults(func=_demo)

    account = sub.add_parser("account", help="noise sigma for (epsilon, delta, steps), or epsilon for a sigma", description="Gaussian-DP accounting of T noisy histogram releases.\n\nexamples:\n  privevo account --epsilon 1 --delta 1e-5 --steps 10\n  privevo account --sigma 11.8 --delta 1e-5 --steps 10 --json", formatter_class=argparse.RawDescriptionHelpFormatter)
    account.add_argument("--epsilon", type=float, help="total epsilon of the run")
    account.add_argument("--sigma", type=float, help="noise std per count (gives epsilon instead)")
    account.add_argument("--delta", type=float, required=True, help="delta in (0, 1)")
    account.add_argument("--steps", type=int, required=True, help="number of releases T")
    account.add_argument("--adjacency", choices=["add_remove", "replace"], default="add_remove")
    account.add_argument("--json", action="store_true", help="machine-readable output")
    account.set_defaults(func=_account)
    return parser


def _demo(args) -> int:
    from .demo import format_table, run_demo

    rows = run_demo(seed=args.seed)
    print(json.dumps(rows, indent=2) if args.json else format_table(rows))
    return 0


def _account(args) -> int:
    import math

    from . import accounting
    from ._validation import check_adjacency

    sensitivity = check_adjacency(args.adjacency)
    if (args.epsilon is None) == (args.sigma is None):
        raise ValueError("give exactly one of --epsilon or --sigma")
    if args.sigma is None:
        sigma = accounting.gaussian_sigma(args.epsilon, args.delta, args.steps, sensitivity)
        epsilon = args.epsilon
    else:
        sigma = args.sigma
        epsilon = accounting.epsilon_of(sigma, args.delta, args.steps, sensitivity)
    result = {
        "epsilon": epsilon,
        "delta": args.delta,
        "steps": args.steps,
        "adjacency": args.adjacency,
        "sensitivity": sensitivity,
        "sigma": sigma,
        "mu": math.sqrt(args.steps) * sensitivity / sigma,
        "classical_sigma": accounting.classical_sigma(epsilon, args.delta, args.steps, sensitivity) if epsilon > 0 else None,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
