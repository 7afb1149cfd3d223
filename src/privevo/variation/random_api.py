"""Random APIs: the public initial population S_0 (no data involved)."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from .._params import Plugin
from .._validation import check_positive_int, check_positive_real
from ._geometry import uniform_ball


class UniformBall(Plugin):
    """Points uniform in the L2 ball of public ``radius`` around ``center``."""

    def __init__(self, radius: float = 1.0, center=None):
        self.radius = radius
        self.center = center

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        radius = check_positive_real(self.radius, "radius")
        n = check_positive_int(n, "n")
        return _center(self.center, dim) + uniform_ball(n, dim, radius, rng)


class SpherePacking(Plugin):
    """Well-spread points in the ball (Su et al. 2016; the PE-means initialisation).

    Spacing p = R/2; draw uniformly in the ball of radius R − p; keep a draw
    if it is ≥ 2p from every kept point; after ``patience`` consecutive
    rejections halve p; stop at n points.
    """

    def __init__(self, radius: float = 1.0, center=None, patience: int = 100, batch: int = 64):
        self.radius = radius
        self.center = center
        self.patience = patience
        self.batch = batch

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        radius = check_positive_real(self.radius, "radius")
        n = check_positive_int(n, "n")
        with threadpool_limits(1, user_api="blas"):  # many small GEMMs: avoid thread wake-ups
            kept, p = self._pack(n, dim, radius, rng)
        self.spacing_ = p
        return _center(self.center, dim) + kept

    def _pack(
        self, n: int, dim: int, radius: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, float]:
        kept = np.empty((n, dim))
        count, p, rejections = 0, radius / 2, 0
        while count < n:
            draws = uniform_ball(self.batch, dim, radius - p, rng)
            prior = _min_sq_dist(draws, kept[:count], (2 * p) ** 2)  # to the points kept before
            start = count
            for i, x in enumerate(draws):
                if prior[i] >= (2 * p) ** 2 and _far_from(x, kept[start:count], 2 * p):
                    kept[count] = x
                    count += 1
                    rejections = 0
                    if count == n:
                        break
                else:
                    rejections += 1
                    if rejections >= self.patience:
                        p, rejections = p / 2, 0
                        break  # redraw in the larger ball of radius R - p
        return kept, p


def _min_sq_dist(draws: np.ndarray, kept: np.ndarray, threshold: float) -> np.ndarray:
    """min_j ‖x_i − k_j‖² per draw (inf if nothing is kept) by one GEMM.

    Rows whose value lies within rounding distance of ``threshold`` are
    recomputed from exact differences, so accept/reject decisions match the
    direct computation.
    """
    if len(kept) == 0:
        return np.full(len(draws), np.inf)
    x_sq = np.einsum("ij,ij->i", draws, draws)
    k_sq = np.einsum("ij,ij->i", kept, kept)
    best = np.maximum((k_sq[None, :] - 2.0 * draws @ kept.T).min(axis=1) + x_sq, 0.0)
    tol = 1e-9 * (x_sq + k_sq.max() + threshold)
    for i in np.flatnonzero(np.abs(best - threshold) <= tol):
        best[i] = np.min(np.sum((kept - draws[i]) ** 2, axis=1))
    return best


def _far_from(x: np.ndarray, kept: np.ndarray, spacing: float) -> bool:
    """‖x − k‖ ≥ spacing for every kept point k (exact differences)."""
    return len(kept) == 0 or float(np.min(np.sum((kept - x) ** 2, axis=1))) >= spacing**2


def _center(center, dim: int) -> np.ndarray:
    if center is None:
        return np.zeros(dim)
    center = np.broadcast_to(np.asarray(center, dtype=float), (dim,))
    return center.copy()
