"""Variation APIs for vectors: new candidates around the selected points.

Each API maps parents (k, d) to ``per_point`` variations per parent, returned
as a (k·per_point, d) array grouped by parent (rows i·per_point … of parent i).
The loop keeps the parents themselves beside them.
"""

from __future__ import annotations

import math

import numpy as np

from .._params import Plugin
from .._validation import check_positive_int, check_positive_real
from ._geometry import project_to_ball


class GaussianVariation(Plugin):
    """c' = c + s·N(0, I); optionally projected back into the ball of ``radius``."""

    def __init__(
        self, scale: float = 0.1, per_point: int = 2, radius: float | None = None, center=0.0
    ):
        self.scale = scale
        self.per_point = per_point
        self.radius = radius
        self.center = center

    def vary(
        self, points: np.ndarray, rng: np.random.Generator, per_point: int | None = None
    ) -> np.ndarray:
        scale = check_positive_real(self.scale, "scale")
        k = check_positive_int(per_point or self.per_point, "per_point")
        out = np.repeat(points, k, axis=0) + scale * rng.standard_normal(
            (len(points) * k, points.shape[1])
        )
        return out if self.radius is None else project_to_ball(out, self.radius, self.center)


class MultiScaleVariation(Plugin):
    """GAPE's multi-scale variation: draws at s² = 2^−ℓ for ℓ = ℓ_min … ℓ*.

    ℓ_min = ⌈−log₂ R²⌉ (the coarsest scale has s ≤ R, the cluster separation);
    ``per_scale`` independent draws per scale, so ``per_point`` =
    (ℓ* − ℓ_min + 1)·per_scale. The parent itself is kept by the loop.
    """

    def __init__(
        self,
        R: float,
        max_level: int | None = None,
        per_scale: int = 1,
        radius: float | None = None,
        center=0.0,
    ):
        self.R = R
        self.max_level = max_level
        self.per_scale = per_scale
        self.radius = radius
        self.center = center

    @property
    def levels(self) -> np.ndarray:
        R = check_positive_real(self.R, "R")
        lo = math.ceil(-math.log2(R * R))
        hi = lo + 6 if self.max_level is None else int(self.max_level)
        if hi < lo:
            raise ValueError(f"max_level must be >= ceil(-log2 R^2) = {lo}, got {hi}")
        return np.arange(lo, hi + 1)

    @property
    def scales(self) -> np.ndarray:
        """Standard deviations s = 2^(−ℓ/2), coarse to fine."""
        return 2.0 ** (-self.levels / 2.0)

    @property
    def per_point(self) -> int:
        return len(self.levels) * check_positive_int(self.per_scale, "per_scale")

    def vary(
        self, points: np.ndarray, rng: np.random.Generator, per_point: int | None = None
    ) -> np.ndarray:
        scales = np.repeat(self.scales, self.per_scale)
        if per_point is not None:  # resize by cycling through the scales
            scales = np.resize(scales, check_positive_int(per_point, "per_point"))
        k = len(scales)
        noise = rng.standard_normal((len(points) * k, points.shape[1]))
        out = np.repeat(points, k, axis=0) + noise * np.tile(scales, len(points))[:, None]
        return out if self.radius is None else project_to_ball(out, self.radius, self.center)


def mantegna_sigma(beta: float) -> float:
    """σ_u of Mantegna's method: [Γ(1+β)·sin(πβ/2) / (Γ((1+β)/2)·β·2^((β−1)/2))]^(1/β)."""
    num = math.gamma(1 + beta) * math.sin(math.pi * beta / 2)
    den = math.gamma((1 + beta) / 2) * beta * 2 ** ((beta - 1) / 2)
    return (num / den) ** (1 / beta)


def levy_steps(shape: tuple[int, int], beta: float, rng: np.random.Generator) -> np.ndarray:
    """Lévy-stable-like steps by Mantegna's method, s = u/|v|^(1/β); Gaussian for β ≥ 2."""
    if beta >= 2:
        return rng.standard_normal(shape)
    u = rng.normal(0.0, mantegna_sigma(beta), shape)
    v = rng.standard_normal(shape)
    return u / np.abs(v) ** (1 / beta)


class LevyVariation(Plugin):
    """PE-means' Lévy-flight mutation: c' = c + γ·R·s, s by Mantegna's method.

    Points leaving the ball of ``radius`` R (around ``center``) are scaled back
    onto it. Defaults γ = 0.01, β = 1.75 (PE-means paper).
    """

    def __init__(
        self,
        gamma: float = 0.01,
        beta: float = 1.75,
        per_point: int = 4,
        radius: float = 1.0,
        center=0.0,
    ):
        self.gamma = gamma
        self.beta = beta
        self.per_point = per_point
        self.radius = radius
        self.center = center

    def vary(
        self, points: np.ndarray, rng: np.random.Generator, per_point: int | None = None
    ) -> np.ndarray:
        gamma = check_positive_real(self.gamma, "gamma")
        beta = check_positive_real(self.beta, "beta")
        radius = check_positive_real(self.radius, "radius")
        k = check_positive_int(per_point or self.per_point, "per_point")
        steps = levy_steps((len(points) * k, points.shape[1]), beta, rng)
        out = np.repeat(points, k, axis=0) + gamma * radius * steps
        return project_to_ball(out, radius, self.center)
