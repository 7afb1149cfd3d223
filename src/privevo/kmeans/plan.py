"""DPKMeans' plan: T, L, d', the budget shares and the recover steps, from public facts only.

The default plan — T = ⌊4√d⌋ rounds (d' for HDPE-means), the budget shares and
the number of recover steps — is the same at every ε: a larger ε lowers the σ
of every release and changes nothing else (:func:`pe_means_iterations`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import MAX_ROUNDS, too_many_clusters

__all__ = [
    "METHODS",
    "PROJECTIONS",
    "MAX_VARIATIONS",
    "PE_MEANS_RECOVER_SHARE",
    "HDPE_RECOVER_SHARE",
    "RECOVER_STEPS",
    "Plan",
    "hdpe_projection_dim",
    "paper_iterations",
    "paper_variations",
    "pe_means_iterations",
    "resolve_plan",
]

METHODS = ("auto", "pe-means", "hdpe-means")
PROJECTIONS = ("pca", "random")
MAX_VARIATIONS = 1000  # cap on the default L (the paper's n/(5k) is 1000 on blobs k=4, n = 20 000)
PE_MEANS_RECOVER_SHARE = 0.4
HDPE_RECOVER_SHARE = 0.55
#: The smallest recover share besides 0 (no recover step): below it the step's noise cannot be
#: calibrated in floating point (its budget underflows).
RECOVER_SHARE_MIN = 1e-6
RECOVER_STEPS = 4  # the recover step's noisy Lloyd steps (benchmarks/kmeans_ablation.py)


def paper_iterations(epsilon: float, dim: int) -> int:
    """T = ⌊4√d⌋ for ε ≤ 1, else ⌊ε·⌊4√d⌋⌋ (PE-means paper)."""
    base = max(int(math.floor(4 * math.sqrt(dim))), 1)
    return base if epsilon <= 1 else max(int(math.floor(epsilon * base)), 1)


def pe_means_iterations(pe_dim: int) -> int:
    """The default T = ⌊4√d⌋ at every ε, d the dimension PE runs in (d' for HDPE-means).

    The paper's rule (:func:`paper_iterations`) for ε ≤ 1, kept above it: the
    plan is then the same at every ε, and a larger ε only lowers the noise of
    every release (σ ∝ 1/μ), so more budget buys less noise and nothing else.
    The paper's T = ⌊ε·⌊4√d⌋⌋ adds rounds instead, and rounds past those that
    find the cells do not sharpen the centres (the recover steps do) but give
    close clusters more chances to merge: with T doubled from ε = 1 to 2 the
    loss rose on letter (k = 26) and blobs k=64 d=16, and held at ε = 1's T it
    fell (``benchmarks/kmeans.py --rules``; ``benchmarks/kmeans_hdpe.py`` for
    HDPE-means). Small data gives up a little: iris (unit ball, 30 seeds) at
    ε = 2 and 4, .0500 and .0423 against .0447 and .0380 with T = 16 and 32.
    """
    return paper_iterations(1.0, pe_dim)


def hdpe_projection_dim(dim: int) -> int:
    """d' = max(16, min(32, ⌊d/2⌋)): HDPE-means' projected dimension."""
    return max(16, min(32, dim // 2))


def paper_variations(n: int, k: int) -> int:
    """L = max(⌊n/(5k)⌋, 4) variations per centre (PE-means paper)."""
    return max(n // (5 * k), 4)


@dataclass(frozen=True)
class Plan:
    """What one fit does, resolved from the parameters and public facts (never the exact n
    under add/remove adjacency)."""

    k: int
    epsilon: float
    delta: float
    method: str  # "pe-means" or "hdpe-means"
    pe_dim: int  # d' (d for PE-means)
    T: int
    n_public: int | None  # n under replace adjacency, else None
    share: float  # recover step's share of the budget
    recover_steps: int  # noisy Lloyd steps sharing it equally
    projection_share: float
    count_share: float


def resolve_plan(est, n: int, d: int, delta: float) -> Plan:
    """The fit's plan: ``est``'s declared parameters plus their defaults and cross-checks.

    Never writes to the estimator's params. Under add/remove adjacency n is private:
    δ never reads it and the population waits for a noisy count (:func:`population`);
    under replace n is public and used as is. Messages never print n.
    """
    if est.n_clusters > n:
        raise too_many_clusters(est.n_clusters)
    n_public = n if est.adjacency == "replace" else None
    method = ("hdpe-means" if d > 32 else "pe-means") if est.method == "auto" else est.method
    if method == "hdpe-means":
        pe_dim = min(
            hdpe_projection_dim(d) if est.projection_dim is None else est.projection_dim, d
        )
    else:
        pe_dim = d
    default_T = min(pe_means_iterations(pe_dim), MAX_ROUNDS)
    share = recover_share(est.recover_share, method)
    if 0 < share < RECOVER_SHARE_MIN:
        raise ValueError(
            f"recover_share={share!r} is too small to calibrate the recover step's noise; use 0 "
            f"(no recover step) or at least {RECOVER_SHARE_MIN:g}"
        )
    pca = method == "hdpe-means" and est.projection == "pca"
    projection_share = float(est.projection_share) if pca else 0.0
    count_share = 0.0 if n_public is not None else float(est.count_share)
    if share + projection_share + count_share >= 1:
        raise ValueError(
            f"recover_share + projection_share + count_share must be < 1 (the PE rounds "
            f"need the rest), got {share} + {projection_share} + {count_share}"
        )
    return Plan(
        k=est.n_clusters,
        epsilon=float(est.epsilon),
        delta=delta,
        method=method,
        pe_dim=pe_dim,
        T=default_T if est.iterations is None else est.iterations,
        n_public=n_public,
        share=share,
        recover_steps=recover_steps(est.recover_steps) if share > 0 else 0,
        projection_share=projection_share,
        count_share=count_share,
    )


def recover_share(share, method: str) -> float:
    """recover_share ∈ [0, 1) for PE-means, (0, 1) for HDPE-means (its recover step is the
    output)."""
    if share is None:
        return HDPE_RECOVER_SHARE if method == "hdpe-means" else PE_MEANS_RECOVER_SHARE
    if share == 0 and method == "hdpe-means":
        raise ValueError(
            "recover_share must be in (0, 1) for HDPE-means (its recover step is its output), got 0"
        )
    return float(share)


def recover_steps(given: int | None) -> int:
    """S, the recover step's noisy Lloyd steps: given, or :data:`RECOVER_STEPS`."""
    return RECOVER_STEPS if given is None else int(given)


def population(given: int | None, plan: Plan, n_hat: float | None) -> int:
    """L: given, or max(⌊n/(5k)⌋, 4) with n public (replace) or the noisy count (add/remove),
    at most MAX_VARIATIONS (a noisy count at a tiny ε can be far above n)."""
    if given is not None:
        return int(given)
    n = plan.n_public if plan.n_public is not None else max(n_hat, 1.0)
    return min(paper_variations(int(min(n, 1e12)), plan.k), MAX_VARIATIONS)
