"""``privevo account``: σ ↔ ε of T Gaussian releases."""

from __future__ import annotations

import json
import math

from .options import EPSILON_HELP, add_adjacency_and_noise, add_common, command


def add_parser(sub) -> None:
    from .._validation import DELTA_MIN

    p = command(
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
        help=EPSILON_HELP,
    )
    p.add_argument("--sigma", type=float, help="noise std per count (gives epsilon instead)")
    p.add_argument(
        "--delta", type=float, required=True, help=f"delta, from {DELTA_MIN:g} to below 1"
    )
    p.add_argument("--steps", type=int, required=True, help="number of releases T")
    add_adjacency_and_noise(
        p,
        "gaussian (exact GDP) or discrete_gaussian[_secure] (zCDP, docs/privacy.md); "
        "default gaussian",
    )
    add_common(p, seed=False)
    p.set_defaults(func=_account)


def _epsilon_of_sigma(to_epsilon, args, sensitivity: float) -> float:
    """ε of ``--sigma``; a σ so small that ε exceeds the accounted range is refused in one
    line (the solvers overflow there, and no such ε is a privacy guarantee)."""
    import warnings

    import numpy as np

    from .._validation import EPSILON_MAX

    if not (args.sigma > 0 and math.isfinite(args.sigma)):
        raise ValueError(f"--sigma must be a finite number > 0, got {args.sigma!r}")
    too_small = ValueError(
        f"--sigma {args.sigma!r} is too small: {args.steps} release(s) at this sigma give "
        f"epsilon above {EPSILON_MAX:g}, the largest this tool accounts (no privacy "
        "to speak of); choose a larger --sigma"
    )
    try:
        with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise"):
            warnings.simplefilter("error", RuntimeWarning)
            epsilon = to_epsilon(args.sigma, args.delta, args.steps, sensitivity)
    except (OverflowError, ZeroDivisionError, FloatingPointError, RuntimeWarning):
        raise too_small from None
    except ValueError:
        mu = math.sqrt(args.steps) * sensitivity / args.sigma
        if mu > 1e3:  # the solver failed out there (inf or NaN): ε is beyond the range
            raise too_small from None
        raise
    if not math.isfinite(epsilon) or epsilon > EPSILON_MAX:
        raise too_small
    return epsilon


def _account(args) -> int:
    from .. import accounting
    from .._validation import check_delta, check_epsilon, check_positive_int
    from ..adjacency import vote_sensitivity

    sensitivity = vote_sensitivity(args.adjacency)
    if (args.epsilon is None) == (args.sigma is None):
        raise ValueError("give exactly one of --epsilon or --sigma")
    if args.epsilon is not None:
        check_epsilon(args.epsilon, "--epsilon")
    check_delta(args.delta, "--delta")
    check_positive_int(args.steps, "--steps")
    discrete = accounting.is_discrete_gaussian(args.noise)
    if args.sigma is None:
        to_sigma = accounting.discrete_gaussian_sigma if discrete else accounting.gaussian_sigma
        sigma = to_sigma(args.epsilon, args.delta, args.steps, sensitivity)
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = to_epsilon(sigma, args.delta, args.steps, sensitivity)  # <= --epsilon
    else:
        sigma = args.sigma
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = _epsilon_of_sigma(to_epsilon, args, sensitivity)
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
