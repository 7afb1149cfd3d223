"""The baselines' releases: DPLloyd, FastLloyd and the LSH tree, through :mod:`.release`.

Each function computes its mechanism's exact statistic here and returns it as
:class:`~privevo.private.release.Release` objects, so the baselines'
accounting is the same code (and is checked by the same tests) as privevo's.
Inputs must already be clipped to the public domain.
"""

from __future__ import annotations

import numpy as np

from ..metrics import nearest_distances
from .release import Release, noisy_statistic

__all__ = [
    "cluster_statistics",
    "baseline_row_count",
    "dplloyd_release",
    "fastlloyd_release",
    "lsh_level_counts",
    "lsh_leaf_sums",
]


def baseline_row_count(X, scale: float, rng: np.random.Generator, noise: str) -> Release:
    """n + noise (sensitivity 1, add/remove): the baselines' iteration counts and thresholds
    read this release, never the exact n. ``noise``: ``"geometric"`` (pure ε = 1/scale,
    DPLloyd) or ``"gaussian"`` (σ = scale)."""
    count = np.array([float(len(X))])
    return noisy_statistic("count", count, scale, 1.0, rng, noise)


def dplloyd_release(
    X, centers, lo, hi, eps_count: float, eps_feature: float, rng: np.random.Generator
) -> tuple[Release, Release]:
    """DPLloyd's iteration: (Σ(x − m) + Laplace((hi − lo)/ε_s), counts + geometric(ε_c)).

    m = (lo + hi)/2. Feature j of a sum moves by ≤ (hi_j − lo_j)/2 when a row is
    added or removed and by ≤ hi_j − lo_j in all when one is replaced, so the
    sums, scaled by 1/(hi − lo), have L1 sensitivity d under both adjacencies:
    d·ε_s + ε_c-DP (replace bound, used for both). Values come back unscaled.
    """
    mid, width = (lo + hi) / 2, hi - lo
    sums, counts = cluster_statistics(X - mid, centers - mid)
    counts_release = noisy_statistic(
        "dplloyd_counts", counts, 1.0 / eps_count, 1.0, rng, "geometric"
    )
    scaled = noisy_statistic(
        "dplloyd_sums", sums / width, 1.0 / eps_feature, float(X.shape[1]), rng, "laplace"
    )
    sums_release = Release(
        scaled.name,
        scaled.sigma,
        scaled.sensitivity,
        scaled.noise,
        scaled.adjacency,
        1,
        scaled.value * width,
    )
    return sums_release, counts_release


def fastlloyd_release(
    U, centers, max_dist: float, sigma_sum: float, sigma_count: float, rng: np.random.Generator
) -> tuple[Release, Release]:
    """FastLloyd's iteration: Σ(x − c(x)) over rows within ``max_dist`` of c(x), + N(0, σ_s²);
    counts + N(0, σ_c²). L2 sensitivities ``max_dist`` and 1 (add/remove)."""
    sums, counts = cluster_statistics(U, centers, max_dist=max_dist, relative=True)
    return (
        noisy_statistic("fastlloyd_sums", sums, sigma_sum, max_dist, rng),
        noisy_statistic("fastlloyd_counts", counts, sigma_count, 1.0, rng),
    )


def lsh_level_counts(codes, shift: int, nodes, sigma: float, rng: np.random.Generator) -> Release:
    """One tree level's node counts + N(0, σ²) (a histogram: L2 sensitivity 1, add/remove)."""
    return noisy_statistic("lsh_level_counts", prefix_counts(codes, shift, nodes), sigma, 1.0, rng)


def lsh_leaf_sums(
    U,
    codes,
    depth: int,
    leaf_depths,
    leaf_prefixes,
    sigma: float,
    radius: float,
    rng: np.random.Generator,
) -> Release:
    """Leaf sums of rows in the ``radius`` ball + N(0, σ²) (disjoint leaves: L2 sensitivity r)."""
    return noisy_statistic(
        "lsh_leaf_sums",
        leaf_sums(U, codes, depth, leaf_depths, leaf_prefixes),
        sigma,
        float(radius),
        rng,
    )


def cluster_statistics(
    X: np.ndarray, centers: np.ndarray, max_dist: float | None = None, relative: bool = False
):
    """Sums and counts per nearest centre.

    ``relative``: sum x − c(x) instead of x (FastLloyd). ``max_dist``: rows
    farther than this from their centre are left out. Returns (sums (k, d), counts (k,)).
    """
    d2, labels = nearest_distances(X, centers)
    keep = np.ones(len(X), dtype=bool) if max_dist is None else d2 <= max_dist**2
    rows = X[keep] - centers[labels[keep]] if relative else X[keep]
    k = len(centers)
    onehot = np.zeros((k, int(keep.sum())))
    onehot[labels[keep], np.arange(onehot.shape[1])] = 1.0
    return onehot @ rows, onehot.sum(axis=1)


def prefix_counts(codes: np.ndarray, shift: int, nodes: np.ndarray) -> np.ndarray:
    """Rows per tree node: how many private codes have ``code >> shift`` equal to each of
    ``nodes``."""
    prefix = codes >> shift
    pos = np.searchsorted(nodes, prefix)
    pos = np.minimum(pos, len(nodes) - 1)
    hit = nodes[pos] == prefix
    return np.bincount(pos[hit], minlength=len(nodes)).astype(float)


def leaf_sums(
    X: np.ndarray, codes: np.ndarray, depth: int, leaf_depths: np.ndarray, leaf_prefixes: np.ndarray
) -> np.ndarray:
    """Sum of the private rows under each leaf (leaf j = rows whose top ``leaf_depths[j]`` bits are
    ``leaf_prefixes[j]``; leaves are disjoint, rows under no leaf are left out)."""
    sums = np.zeros((len(leaf_prefixes), X.shape[1]))
    for level in np.unique(leaf_depths):
        idx = np.flatnonzero(leaf_depths == level)
        order = np.argsort(leaf_prefixes[idx])
        nodes = leaf_prefixes[idx][order]
        prefix = codes >> (depth - level)
        pos = np.minimum(np.searchsorted(nodes, prefix), len(nodes) - 1)
        hit = nodes[pos] == prefix
        onehot = np.zeros((len(nodes), int(hit.sum())))
        onehot[pos[hit], np.arange(onehot.shape[1])] = 1.0
        sums[idx[order]] = onehot @ X[hit]
    return sums
