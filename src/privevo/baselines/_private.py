"""The baselines' only private access: per-cluster sums and counts (exact, no noise).

Callers add the noise of their mechanism; inputs must already be clipped to
the public domain.
"""

from __future__ import annotations

import numpy as np

from ..metrics import nearest_distances


def cluster_statistics(X: np.ndarray, centers: np.ndarray, max_dist: float | None = None, relative: bool = False):
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
    """Rows per tree node: how many private codes have ``code >> shift`` equal to each of ``nodes``."""
    prefix = codes >> shift
    pos = np.searchsorted(nodes, prefix)
    pos = np.minimum(pos, len(nodes) - 1)
    hit = nodes[pos] == prefix
    return np.bincount(pos[hit], minlength=len(nodes)).astype(float)


def leaf_sums(X: np.ndarray, codes: np.ndarray, depth: int, leaf_depths: np.ndarray, leaf_prefixes: np.ndarray) -> np.ndarray:
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
