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
