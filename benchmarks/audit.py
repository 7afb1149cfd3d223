"""The privacy audit at full size: lower bounds beside claims, planted bugs, sampler speed.

1. Correct mechanisms (privevo.audit.run_audit): one release (10⁶ per data
   set) and whole PE runs (10³ per data set, T rounds, every round observed),
   Gaussian and discrete Gaussian noise, add/remove and replace adjacency,
   ε ∈ {0.5, 1, 4}, δ = 1e-5: the 95% lower bound must stay ≤ the claim.
2. Planted bugs (the test doubles of tests/helpers/planted_bugs.py) at the same sizes:
   σ/4, noise skipped on round 2, a canary that votes twice: the bound should
   exceed the claim.
3. Speed of the exact discrete Gaussian samplers beside numpy's float normal.
4. DPKMeans' recover step (privevo.audit.audit_cluster_sums, the real
   noisy_cluster_sums called once per release): correct at every ε and
   adjacency; planted: one scalar of noise per cluster added to every
   coordinate (the public HDPE-means code's flaw) and σ/4.
5. TabularPE's release families, its adaptive choice and text PE's labelled
   votes (privevo.audit.audit_table_release, audit_marginal_choice,
   audit_label_votes: the real release function called once per release): each
   correct and with its planted bug (helpers.planted_bugs.TABLE_RELEASE_BUGS,
   MARGINAL_CHOICE_BUG, LABEL_VOTES_BUG) at the same (ε, δ, adjacency, seed).

    python benchmarks/audit.py                  # full sizes: 10⁶ releases, 10³ runs (several
    minutes)
    python benchmarks/audit.py --quick          # 10⁴ releases, 200 runs
    python benchmarks/audit.py --recover-step   # only part 4 (5·10⁴ releases per data set)
    python benchmarks/audit.py --release-functions   # only part 5 (2·10⁴ releases per data
    set; --quick: the test sizes, 2000–10⁴)
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the planted bugs

from helpers.planted_bugs import (  # noqa: E402
    LABEL_VOTES_BUG,
    MARGINAL_CHOICE_BUG,
    TABLE_RELEASE_BUGS,
    QuarterSigmaPE,
    SkipsNoiseOnRound2PE,
    last_row_counted_twice,
    quarter_sigma_noise,
    quarter_sigma_sums,
    scalar_noise_on_sums,
    tenth_scale_choice,
)
from privevo.audit import (  # noqa: E402
    AuditResult,
    audit_cluster_sums,
    audit_label_votes,
    audit_marginal_choice,
    audit_release,
    audit_runs,
    audit_table_release,
    default_model,
    format_table,
    run_audit,
)
from privevo.private.noise import discrete_gaussian, discrete_gaussian_scalar  # noqa: E402

DELTA = 1e-5
EPSILONS = (0.5, 1.0, 4.0)


def planted(
    n_releases: int, n_runs: int, iterations: int, seed: int
) -> list[tuple[str, AuditResult]]:
    out = []
    for i, eps in enumerate(EPSILONS):

        def rng(k):
            return np.random.default_rng([seed, i, k])

        for noise in ("gaussian", "discrete_gaussian"):
            out.append(
                (
                    "σ/4",
                    audit_release(
                        eps,
                        DELTA,
                        noise=noise,
                        n_releases=n_releases,
                        random_state=rng(1),
                        add_noise=quarter_sigma_noise(noise),
                    ),
                )
            )
            out.append(
                (
                    "canary votes twice",
                    audit_release(
                        eps,
                        DELTA,
                        noise=noise,
                        n_releases=n_releases,
                        random_state=rng(2),
                        histogram=last_row_counted_twice,
                    ),
                )
            )
        for name, cls in (("σ/4", QuarterSigmaPE), ("no noise on round 2", SkipsNoiseOnRound2PE)):
            out.append(
                (
                    name,
                    audit_runs(
                        eps,
                        DELTA,
                        n_runs=n_runs,
                        iterations=iterations,
                        random_state=rng(3),
                        make_model=partial(default_model, cls=cls),
                    ),
                )
            )
    return out


def recover_step(n_releases: int, seed: int) -> None:
    """Part 4: the recover step's release, correct and with planted bugs."""
    tic = time.perf_counter()
    correct, planted_rows = [], []
    for i, eps in enumerate(EPSILONS):

        def rng(k):
            return np.random.default_rng([seed, 7, i, k])

        for j, adjacency in enumerate(("add_remove", "replace")):
            correct.append(
                audit_cluster_sums(
                    eps, DELTA, adjacency=adjacency, n_releases=n_releases, random_state=rng(j)
                )
            )
        for k, (name, bug) in enumerate(
            (("one noise scalar per cluster", scalar_noise_on_sums), ("σ/4", quarter_sigma_sums))
        ):
            planted_rows.append(
                (
                    name,
                    audit_cluster_sums(
                        eps, DELTA, n_releases=n_releases, random_state=rng(10 + k), release=bug
                    ),
                )
            )
    print_part(
        f"## DPKMeans' recover step: noisy cluster sums + counts ({n_releases} releases per data "
        f"set, δ = {DELTA:g}; {time.perf_counter() - tic:.0f} s)",
        correct,
        planted_rows,
    )


def release_functions(n_releases: int | None, seed: int) -> None:
    """Part 5: TabularPE's release families and labelled votes, each correct and with its
    planted bug at the same setting and seed (``n_releases`` None: the test sizes)."""
    tic = time.perf_counter()
    correct, planted_rows = [], []
    for k, (family, eps, delta, adjacency, test_size, name, bug) in enumerate(TABLE_RELEASE_BUGS):
        kw = dict(adjacency=adjacency, n_releases=n_releases or test_size)
        for release, rows in ((None, correct), (bug, planted_rows)):
            rng = np.random.default_rng([seed, 9, k])
            r = audit_table_release(family, eps, delta, random_state=rng, release=release, **kw)
            rows.append(r if release is None else (name, r))
    eps, delta, test_size, name = MARGINAL_CHOICE_BUG
    for release, rows in ((None, correct), (tenth_scale_choice, planted_rows)):
        rng = np.random.default_rng([seed, 9, len(TABLE_RELEASE_BUGS), 1])
        r = audit_marginal_choice(
            eps, delta, n_releases=n_releases or test_size, random_state=rng, release=release
        )
        rows.append(r if release is None else (name, r))
    eps, delta, test_size, bug = LABEL_VOTES_BUG
    for release, rows in ((None, correct), (bug, planted_rows)):
        rng = np.random.default_rng([seed, 9, len(TABLE_RELEASE_BUGS)])
        r = audit_label_votes(
            eps, delta, n_releases=n_releases or test_size, random_state=rng, release=release
        )
        rows.append(r if release is None else ("class-balanced vote weights", r))
    print_part(
        "## TabularPE's release families and labelled votes, correct and planted "
        f"({n_releases or 'test-size'} releases per data set; δ = 1e-3 for the factor-2 bugs, "
        f"else {DELTA:g}; {time.perf_counter() - tic:.0f} s)",
        correct,
        planted_rows,
    )


def print_part(heading: str, correct: list, planted_rows: list) -> None:
    """A part's heading, its correct settings' table and count, its planted bugs' and count."""
    print(heading + "\n")
    print(format_table(correct))
    print(
        f"\n{sum(r.consistent for r in correct)} of {len(correct)} settings have lower bound ≤ "
        "claimed ε.\n"
    )
    print(planted_table(planted_rows))
    print(
        f"\n{sum(r.epsilon_lower > r.claimed_epsilon for _, r in planted_rows)} of "
        f"{len(planted_rows)} buggy settings caught."
    )


def planted_table(rows: list[tuple[str, AuditResult]]) -> str:
    lines = [
        "| bug | setting | noise | claimed ε | ε lower bound (95%) | caught (lower > claimed) | "
        "best test |",
        "|---|---|---|---|---|---|---|",
    ]
    for bug, r in rows:
        lines.append(
            f"| {bug} | {r.setting} | {r.noise} | {r.claimed_epsilon:.3g} "
            f"| {r.epsilon_lower:.3f} | "
            ""
            ""
            ""
            ""
            ""
            ""
            f"{'yes' if r.epsilon_lower > r.claimed_epsilon else 'no'} | {r.statistic} |"
        )
    return "\n".join(lines)


def sampler_speed(n: int) -> str:
    def rate(fn, count):
        tic = time.perf_counter()
        fn()
        return count / (time.perf_counter() - tic)

    rng = np.random.default_rng(0)
    rows = ["| sampler | σ | samples/s |", "|---|---|---|"]
    for sigma in (1.0, 10.0, 1000.0):
        rows.append(
            f"| numpy float normal (not exact, reference speed) | {sigma:g} | "
            f"{rate(lambda: rng.normal(0, sigma, n), n):.3g} |"
        )
        rows.append(
            f"| exact discrete Gaussian, batched, numpy Generator | {sigma:g} | "
            f"{rate(lambda: discrete_gaussian(sigma, n, rng), n):.3g} |"
        )
        rows.append(
            f"| exact discrete Gaussian, batched, secrets.SystemRandom | {sigma:g} | "
            f"{rate(lambda: discrete_gaussian(sigma, n, secrets.SystemRandom()), n):.3g} |"
        )
        k = 2000
        rows.append(
            f"| exact discrete Gaussian, scalar CKS20 (Fractions) | {sigma:g} | "
            f"{rate(lambda: [discrete_gaussian_scalar(sigma, rng) for _ in range(k)], k):.3g} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument(
        "--releases", type=int, default=1_000_000, help="single releases per data set"
    )
    parser.add_argument("--runs", type=int, default=1000, help="whole PE runs per data set")
    parser.add_argument(
        "--recover-step", action="store_true", help="only audit DPKMeans' recover step (part 4)"
    )
    parser.add_argument(
        "--sums-releases", type=int, default=50_000, help="recover-step releases per data set"
    )
    parser.add_argument(
        "--release-functions",
        action="store_true",
        help="only audit TabularPE's release families and labelled votes (part 5)",
    )
    parser.add_argument(
        "--function-releases",
        type=int,
        default=20_000,
        help="part 5's releases per data set (--quick: the test sizes)",
    )
    args = parser.parse_args()
    function_releases = None if args.quick else args.function_releases
    if args.recover_step:
        recover_step(2_000 if args.quick else args.sums_releases, args.seed)
        return
    if args.release_functions:
        release_functions(function_releases, args.seed)
        return
    n_releases, n_runs = (10_000, 200) if args.quick else (args.releases, args.runs)

    tic = time.perf_counter()
    results = run_audit(
        EPSILONS,
        DELTA,
        n_releases=n_releases,
        n_runs=n_runs,
        iterations=args.iterations,
        seed=args.seed,
    )
    t1 = time.perf_counter() - tic
    print(
        f"## Correct mechanisms ({n_releases} releases / {n_runs} runs per data set, "
        f"δ = {DELTA:g}; "
        ""
        ""
        ""
        ""
        ""
        f"{t1:.0f} s)\n"
    )
    print(format_table(results))
    bad = [r for r in results if not r.consistent]
    print(f"\n{len(results) - len(bad)} of {len(results)} settings have lower bound ≤ claimed ε.")
    ratios = [r.epsilon_lower / r.claimed_epsilon for r in results]
    print(f"lower/claimed: min {min(ratios):.3f}, max {max(ratios):.3f}\n")

    tic = time.perf_counter()
    rows = planted(n_releases, n_runs, args.iterations, args.seed)
    t2 = time.perf_counter() - tic
    print(f"## Planted bugs ({n_releases} releases / {n_runs} runs per data set; {t2:.0f} s)\n")
    print(planted_table(rows))
    print(
        f"\n{sum(r.epsilon_lower > r.claimed_epsilon for _, r in rows)} of {len(rows)} buggy "
        "settings caught.\n"
    )

    print("## Exact discrete Gaussian sampler speed (shared, busy machine: timings are rough)\n")
    print(sampler_speed(200_000 if args.quick else 1_000_000))
    print()
    recover_step(2_000 if args.quick else args.sums_releases, args.seed)
    print()
    release_functions(function_releases, args.seed)


if __name__ == "__main__":
    main()
