"""Small geometric helpers for the vector APIs."""

from __future__ import annotations

import numpy as np


def uniform_ball(n: int, dim: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """n points uniform in the d-ball of the given radius (direction × radius·U^(1/d))."""
    direction = rng.standard_normal((n, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    r = radius * rng.random((n, 1)) ** (1.0 / dim)
    return direction / norms * r


def project_to_ball(
    points: np.ndarray, radius: float, center: np.ndarray | float = 0.0
) -> np.ndarray:
    """Scale points outside the ball back onto its surface (radially, about ``center``)."""
    offset = points - center
    norms = np.linalg.norm(offset, axis=1, keepdims=True)
    scale = np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    return center + offset * scale
