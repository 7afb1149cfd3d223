"""The baselines' releases: DPLloyd, FastLloyd and the LSH tree, through :mod:`.release`.

Each function computes its mechanism's exact statistic here and returns it as
:class:`~privevo.private.release.Release` objects, so the baselines'
accounting is the same code (and is checked by the same tests) as privevo's.
Inputs must already be clipped to the public domain.
"""

from __future__ import annotations

import numpy as np

from ..adjacency import histogram_l1_sensitivity, vote_sensitivity
from ..distances import nearest_distances
from .release import Release, cluster_sums_sensitivity, noisy_statistic

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
    X,
    centers,
    lo,
    hi,
    eps_count: float,
    eps_feature: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
) -> tuple[Release, Release]:
    """DPLloyd's iteration: (Σ(x − m) + Laplace((hi − lo)/ε_s), counts + geometric(Δ_c/ε_c)).

    m = (lo + hi)/2; the sums are released scaled by 1/(hi − lo) per feature, so a row's
    scaled offset (x_j − m_j)/(hi_j − lo_j) lies in [−1/2, 1/2]. L1 sensitivities:

    * sums: adding or removing a row moves one cluster's scaled sum by ≤ d/2; replacing x
      by y moves one cluster's by Σ_j |y_j − x_j|/(hi_j − lo_j) ≤ d (same cluster), or
      two clusters' by ≤ d/2 each (x leaves one, y joins another): ≤ d. Declared d under
      both (Su et al.'s range; d/2 would do under add/remove), tight under replace.
    * counts: Δ_c = :func:`~privevo.adjacency.histogram_l1_sensitivity`, 1 (add/remove) or
      2 (replace).

    So the iteration is (ε_c + d·ε_s)-DP under ``adjacency``. Values come back unscaled.
    """
    mid, width = (lo + hi) / 2, hi - lo
    sums, counts = cluster_statistics(X - mid, centers - mid)
    count_sensitivity = histogram_l1_sensitivity(adjacency)
    counts_release = noisy_statistic(
        "dplloyd_counts",
        counts,
        count_sensitivity / eps_count,
        count_sensitivity,
        rng,
        "geometric",
        adjacency,
    )
    scaled = noisy_statistic(
        "dplloyd_sums",
        sums / width,
        1.0 / eps_feature,
        float(X.shape[1]),
        rng,
        "laplace",
        adjacency,
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
    U,
    centers,
    max_dist: float,
    sigma_sum: float,
    sigma_count: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
) -> tuple[Release, Release]:
    """FastLloyd's iteration: Σ(x − c(x)) over rows within ``max_dist`` of c(x), + N(0, σ_s²);
    counts + N(0, σ_c²).

    Each term has norm ≤ ``max_dist``, so the sums are per-cluster sums of rows in a ball of
    that radius (:func:`~.release.cluster_sums_sensitivity`): L2 sensitivity ``max_dist``
    (add/remove) or 2·``max_dist`` (replace: ‖u − v‖ in one cluster, √2·``max_dist`` across
    two); the counts 1 or √2 (:func:`~privevo.adjacency.vote_sensitivity`).
    """
    sums, counts = cluster_statistics(U, centers, max_dist=max_dist, relative=True)
    sum_sensitivity = cluster_sums_sensitivity(max_dist, adjacency, "gaussian", sums.size)
    count_sensitivity = vote_sensitivity(adjacency)
    return (
        noisy_statistic(
            "fastlloyd_sums", sums, sigma_sum, sum_sensitivity, rng, "gaussian", adjacency
        ),
        noisy_statistic(
            "fastlloyd_counts", counts, sigma_count, count_sensitivity, rng, "gaussian", adjacency
        ),
    )


def lsh_level_counts(
    codes, shift: int, nodes, sigma: float, rng: np.random.Generator, adjacency: str = "add_remove"
) -> Release:
    """One tree level's node counts + N(0, σ²): a histogram, L2 sensitivity 1 (add/remove) or √2
    (replace)."""
    return noisy_statistic(
        "lsh_level_counts",
        prefix_counts(codes, shift, nodes),
        sigma,
        vote_sensitivity(adjacency),
        rng,
        "gaussian",
        adjacency,
    )


def lsh_leaf_sums(
    U,
    codes,
    depth: int,
    leaf_depths,
    leaf_prefixes,
    sigma: float,
    radius: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
) -> Release:
    """Leaf sums of rows in the ``radius`` ball + N(0, σ²): disjoint leaves, so L2 sensitivity r
    (add/remove) or 2r (replace), as any per-cluster sums (:func:`.cluster_sums_sensitivity`)."""
    sums = leaf_sums(U, codes, depth, leaf_depths, leaf_prefixes)
    sensitivity = cluster_sums_sensitivity(float(radius), adjacency, "gaussian", sums.size)
    return noisy_statistic("lsh_leaf_sums", sums, sigma, sensitivity, rng, "gaussian", adjacency)


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
