"""Nearest-reference distances: the one distance helper shared by the private statistics and the
evaluation metrics (a neutral module: it imports nothing of privevo but ``_validation``)."""

from __future__ import annotations

import numpy as np

from ._validation import check_points

__all__ = ["nearest_distances"]


def nearest_distances(points, references, chunk_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Squared distance and index of each point's nearest reference (float64, chunked)."""
    points = check_points(points, "points")
    references = check_points(references, "references")
    if points.shape[1] != references.shape[1]:
        raise ValueError(
            f"references have {references.shape[1]} features but points have {points.shape[1]}"
        )
    ref_sq = np.einsum("ij,ij->i", references, references)
    dist = np.empty(len(points))
    idx = np.empty(len(points), dtype=np.int64)
    for s in range(0, len(points), chunk_size):
        x = points[s : s + chunk_size]
        d2 = ref_sq[None, :] - 2.0 * x @ references.T
        idx[s : s + chunk_size] = d2.argmin(axis=1)
        best = d2[np.arange(len(x)), idx[s : s + chunk_size]]
        dist[s : s + chunk_size] = np.maximum(best + np.einsum("ij,ij->i", x, x), 0.0)
    return dist, idx
