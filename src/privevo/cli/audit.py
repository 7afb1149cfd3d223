"""``privevo audit``: empirical lower bounds on ε beside the claims (:mod:`privevo.audit`)."""

from __future__ import annotations

import json
import sys

from ..names import ADJACENCIES
from .options import add_common, command


def add_parser(sub) -> None:
    p = command(
        sub,
        "audit",
        "empirical privacy audit: lower bounds on epsilon beside the claims",
        "Run privevo's releases (noisy histograms, the row count, user-level and labelled votes, "
        "DPLloyd,\nTabularPE's release families) and whole PE runs many times on neighbouring "
        "data sets (D and D\nplus one canary) and print a 95% lower bound on the epsilon they "
        "really spend beside the claimed\nepsilon (privevo.audit; docs/privacy.md). Exit status "
        "1 if a bound exceeds its claim.",
        "  privevo audit\n  privevo audit --epsilon 1 --noise discrete_gaussian --runs 0 --json",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        nargs="+",
        default=[0.5, 1.0, 4.0],
        help="claimed epsilons (default 0.5 1 4)",
    )
    p.add_argument(
        "--delta", type=float, default=1e-5, help="delta of every setting (default 1e-5)"
    )
    p.add_argument(
        "--noise",
        nargs="+",
        choices=["gaussian", "discrete_gaussian"],
        default=["gaussian", "discrete_gaussian"],
    )
    p.add_argument(
        "--adjacency",
        nargs="+",
        choices=ADJACENCIES,
        default=list(ADJACENCIES),
    )
    p.add_argument(
        "--releases",
        type=int,
        default=100_000,
        help="single releases per data set (default 100000; a tenth of it for the settings that "
        "call a real release function each time: TabularPE's families, labelled votes)",
    )
    p.add_argument(
        "--runs",
        type=int,
        default=1000,
        help="whole PE runs per data set (default 1000; 0 skips them)",
    )
    p.add_argument(
        "--iterations", type=int, default=5, help="rounds T of each audited PE run (default 5)"
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="1 - confidence of the lower bounds (default 0.05)",
    )
    add_common(p, seed="fixed")
    p.set_defaults(func=_audit)


def _audit(args) -> int:
    """Run the audit and print the table (or JSON); exit 1 if a bound exceeds its claim."""
    from .._validation import check_delta, check_epsilon, not_an_integer
    from ..audit import format_table, run_audit
    from .options import check_memory

    for epsilon in args.epsilon:
        check_epsilon(epsilon, "--epsilon")
    check_delta(args.delta, "--delta")
    for flag, value, least in (("--releases", args.releases, 1), ("--runs", args.runs, 0)):
        if value < least:
            raise not_an_integer(flag, least, value)
    if args.iterations < 1:
        raise ValueError(f"--iterations must be an integer >= 1, got {args.iterations}")
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must be in (0, 1), got {args.alpha!r}")
    check_memory("--releases", args.releases, 32.0 * args.releases, "8-byte counts per release")
    check_memory("--runs", args.runs, 8.0 * 64 * args.runs * args.iterations, "per-run outputs")
    results = run_audit(
        epsilons=args.epsilon,
        delta=args.delta,
        noises=args.noise,
        adjacencies=args.adjacency,
        n_releases=args.releases,
        n_runs=args.runs,
        iterations=args.iterations,
        alpha=args.alpha,
        seed=0 if args.seed is None else args.seed,
        progress=not args.quiet and not args.json and sys.stderr.isatty(),  # a terminal only
    )
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        print(format_table(results))
        bad = [r for r in results if not r.consistent]
        summary = (
            f"{len(results) - len(bad)} of {len(results)} settings: lower bound <= claimed epsilon"
        )
        print("\n" + summary + (f"; VIOLATED in {len(bad)}" if bad else ""))
    return 0 if all(r.consistent for r in results) else 1
