"""Google's LSH-tree DP clustering (google/differential-privacy ``learning/clustering``).

Built from its description.

Points are clipped to the public ball of ``radius``. A SimHash prefix tree of
depth ≤ ``max_depth`` (bit j of a point's code is sign(x·g_j), g_j Gaussian)
is grown level by level from noisy counts: a node branches when its noisy
count is ≥ 3·t and a child is kept when its noisy count is ≥ t, with
t = max(1, min(⌊10·√d·σ_sum/radius⌋, n/(2k))). Every leaf releases a noisy sum
(Gaussian, sensitivity ``radius``); the noisy leaf means, weighted by their
noisy counts, are clustered by weighted k-means++ (post-processing).

Simplifications (documented): counts use Gaussian noise instead of discrete
Laplace, so the whole run is accounted exactly by GDP — μ² is split in half
between the sums and the ``max_depth`` levels of counts (each level is one
histogram of sensitivity 1, charged whether or not the tree reaches it).
The root's count and the threshold's n/(2k) use a noisy count ñ (Gaussian,
sensitivity 1, ``COUNT_SHARE`` of μ²), never the exact n. Under replace adjacency n is
public (no count is released) and the sensitivities are those of a replaced row: √2 for a
level's counts (one node −1, another +1), 2·r for the leaf sums
(:func:`privevo.private.lsh_level_counts`, :func:`privevo.private.lsh_leaf_sums`).
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from ..private import cluster_sums_sensitivity, lsh_leaf_sums, lsh_level_counts
from ..selection.weighted_kmeans import weighted_kmeans
from ..variation._geometry import project_to_ball
from ._base import DPBaselineKMeans
from .dplloyd import COUNT_SHARE, noisy_n


class LSHTreeKMeans(DPBaselineKMeans):
    """LSH prefix-tree DP clustering (Google); ``delta=None`` → 1e-6 (n is private under
    add/remove), min(1e-6, 1/(10 n)) under replace (:func:`privevo.accounting.default_delta`)."""

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        epsilon: float = 1.0,
        delta=None,
        radius=None,
        bounds=None,
        adjacency: str = "add_remove",
        max_depth: int = 20,
        random_state=None,
    ):
        super().__init__(
            n_clusters,
            epsilon=epsilon,
            delta=delta,
            radius=radius,
            bounds=bounds,
            adjacency=adjacency,
            random_state=random_state,
        )
        self.max_depth = max_depth

    def _fit_centers(self, X, lo, hi, k, rng):
        n, adjacency = self._public_n(X), self.adjacency
        epsilon, delta = self._epsilon_delta(n)
        d = X.shape[1]
        mid = (lo + hi) / 2
        radius = float(np.linalg.norm((hi - lo) / 2)) if self.radius is None else float(self.radius)
        U = project_to_ball(X - mid, radius)
        budget = accounting.quadratic_budget(epsilon, delta)
        self.releases_ = []
        if n is None:  # add/remove: n is private, a noisy count takes COUNT_SHARE of μ²
            sigma_n = accounting.share_sigma(budget, COUNT_SHARE, 1.0)
            n = noisy_n(X, sigma_n, rng, "gaussian", self.releases_)
            accounting.check_default_delta(delta, n, sigma_n)  # δ below 1/(10 ñ)
            budget *= 1 - COUNT_SHARE
        # half of the rest to the leaf sums, half to the levels
        sum_sensitivity = cluster_sums_sensitivity(radius, adjacency, "gaussian", 1)
        sigma_sum = accounting.share_sigma(budget, 0.5, sum_sensitivity)
        sigma_count = accounting.share_sigma(
            budget, 0.5, vote_sensitivity(adjacency), self.max_depth
        )
        codes = _simhash(U, rng.standard_normal((d, self.max_depth)))
        depths, prefixes, counts = self._grow(codes, n, k, d, sigma_sum / radius, sigma_count, rng)
        leaves = lsh_leaf_sums(
            U, codes, self.max_depth, depths, prefixes, sigma_sum, radius, rng, adjacency
        )
        self.releases_.append(leaves)
        self.n_leaves_ = len(prefixes)
        self.privacy_report_ = {
            "epsilon": epsilon,
            "delta": delta,
            "adjacency": adjacency,
            "mechanism": "LSH tree: Gaussian counts per level + leaf sums",
        }
        return mid + _centers_from_leaves(leaves.value, counts, k, radius, rng)

    def _grow(self, codes, n, k, d, sigma_over_radius, sigma_count, rng):
        """Grow the tree on noisy level counts; returns the leaves' depths, prefixes and noisy
        counts."""
        D = self.max_depth
        t = max(1.0, min(math.floor(10 * math.sqrt(d) * sigma_over_radius), max(n, 1.0) / (2 * k)))
        frontier, frontier_counts = np.array([0], dtype=np.int64), np.array([float(n)])
        depths, prefixes, counts = [], [], []
        for level in range(1, D + 1):
            split = frontier_counts >= 3 * t
            depths += [level - 1] * int((~split).sum())
            prefixes += list(frontier[~split])
            counts += list(frontier_counts[~split])
            frontier, frontier_counts = frontier[split], frontier_counts[split]
            if not len(frontier):
                break
            children = np.sort(np.concatenate([frontier * 2, frontier * 2 + 1]))
            release = lsh_level_counts(codes, D - level, children, sigma_count, rng, self.adjacency)
            self.releases_.append(release)
            noisy = release.value
            keep = noisy >= t
            frontier, frontier_counts = children[keep], noisy[keep]
        depths += [D] * len(frontier)
        prefixes += list(frontier)
        counts += list(frontier_counts)
        return (
            np.array(depths, dtype=np.int64),
            np.array(prefixes, dtype=np.int64),
            np.array(counts, dtype=float),
        )


def _simhash(X: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """D-bit SimHash codes: bit j (most significant first) is 1 when x·g_j > 0."""
    bits = (X @ planes > 0).astype(np.int64)
    weights = 1 << np.arange(planes.shape[1] - 1, -1, -1, dtype=np.int64)
    return bits @ weights


def _centers_from_leaves(
    sums, counts, k: int, radius: float, rng: np.random.Generator
) -> np.ndarray:
    """k centres from the released leaf sums and counts (post-processing only).

    Leaf means weighted by their noisy counts are clustered by weighted
    k-means++; with k or fewer positive leaves, the heaviest leaves are padded
    with public random points in the ball.
    """
    means = project_to_ball(sums / np.maximum(counts, 1.0)[:, None], radius)
    weights = np.maximum(counts, 0.0)
    if np.count_nonzero(weights) > k:
        return weighted_kmeans(means, weights, k, rng, n_init=3)[0]
    chosen = means[np.argsort(-counts)[:k]]
    d = means.shape[1]
    extra = rng.uniform(-1, 1, size=(k - len(chosen), d)) * radius / math.sqrt(d)
    return np.vstack([chosen, extra])
