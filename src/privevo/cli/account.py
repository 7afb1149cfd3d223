"""``privevo account``: σ ↔ ε of T Gaussian releases."""

from __future__ import annotations

import json
import math

from ._common import (
    ADJACENCIES,
    NOISES,
    _add_common,
    _command,
)


def add_parser(sub) -> None:
    from .._validation import DELTA_MIN, EPSILON_MAX, EPSILON_MIN

    p = _command(
        sub,
        "account",
        "noise sigma for (epsilon, delta, steps), or epsilon for a sigma",
        "Gaussian-DP accounting of T noisy histogram releases. sigma is rounded up, so the "
        "epsilon it gives\nback never exceeds the one asked for.",
        "  privevo account --epsilon 1 --delta 1e-5 --steps 10\n"
        "  privevo account --sigma 11.8 --delta 1e-5 --steps 10 --json",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        help=f"total epsilon of the run, from {EPSILON_MIN:g} to {EPSILON_MAX:g}",
    )
    p.add_argument("--sigma", type=float, help="noise std per count (gives epsilon instead)")
    p.add_argument(
        "--delta", type=float, required=True, help=f"delta, from {DELTA_MIN:g} to below 1"
    )
    p.add_argument("--steps", type=int, required=True, help="number of releases T")
    p.add_argument("--adjacency", choices=ADJACENCIES, default="add_remove")
    p.add_argument(
        "--noise",
        choices=NOISES,
        default="gaussian",
        help="gaussian (exact GDP) or discrete_gaussian[_secure] (zCDP, "
        "docs/privacy.md); default gaussian",
    )
    _add_common(p, seed=False)
    p.set_defaults(func=_account)


def _account(args) -> int:
    from .. import accounting
    from .._validation import check_adjacency

    sensitivity = check_adjacency(args.adjacency)
    if (args.epsilon is None) == (args.sigma is None):
        raise ValueError("give exactly one of --epsilon or --sigma")
    discrete = accounting.is_discrete_gaussian(args.noise)
    if args.sigma is None:
        to_sigma = accounting.discrete_gaussian_sigma if discrete else accounting.gaussian_sigma
        sigma = to_sigma(args.epsilon, args.delta, args.steps, sensitivity)
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = to_epsilon(sigma, args.delta, args.steps, sensitivity)  # <= --epsilon
    else:
        sigma = args.sigma
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = to_epsilon(sigma, args.delta, args.steps, sensitivity)
    result = {
        "epsilon": epsilon,
        "delta": args.delta,
        "steps": args.steps,
        "adjacency": args.adjacency,
        "sensitivity": sensitivity,
    }
    if discrete:
        result.update(
            noise=args.noise, sigma=sigma, rho=accounting.zcdp_rho(sigma, args.steps, sensitivity)
        )
    else:
        from .._validation import EPSILON_MAX, EPSILON_MIN

        target = args.epsilon if args.epsilon is not None else epsilon
        classical = None  # the classical bound, for comparison, where it is defined
        if EPSILON_MIN <= target <= EPSILON_MAX:
            classical = accounting.classical_sigma(target, args.delta, args.steps, sensitivity)
        result.update(
            sigma=sigma, mu=math.sqrt(args.steps) * sensitivity / sigma, classical_sigma=classical
        )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0
