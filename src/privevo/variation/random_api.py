"""Random APIs: the public initial population S_0 (no data involved)."""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int, check_positive_real
from ._geometry import uniform_ball


class UniformBall:
    """Points uniform in the L2 ball of public ``radius`` around ``center``."""

    def __init__(self, radius: float = 1.0, center=None):
        self.radius = radius
        self.center = center

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        radius = check_positive_real(self.radius, "radius")
        n = check_positive_int(n, "n")
        return _center(self.center, dim) + uniform_ball(n, dim, radius, rng)

    def __repr__(self) -> str:
        return f"UniformBall(radius={self.radius})"


class SpherePacking:
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
        kept = np.empty((n, dim))
        count, p, rejections = 0, radius / 2, 0
        while count < n:
            draws = uniform_ball(self.batch, dim, radius - p, rng)
            for x in draws:
                if count == 0 or np.min(np.sum((kept[:count] - x) ** 2, axis=1)) >= (2 * p) ** 2:
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
        self.spacing_ = p
        return _center(self.center, dim) + kept

    def __repr__(self) -> str:
        return f"SpherePacking(radius={self.radius})"


def _center(center, dim: int) -> np.ndarray:
    if center is None:
        return np.zeros(dim)
    center = np.broadcast_to(np.asarray(center, dtype=float), (dim,))
    return center.copy()
