"""Random and variation APIs for vectors (Lin et al., ICLR 2024; docs/architecture.md).

A random API has ``sample(n, dim, rng) -> (n, dim)``; a variation API has
``vary(points, rng, per_point=None) -> (len(points)·per_point, dim)`` and a
``per_point`` attribute. Neither ever sees private data.
"""

from .random_api import SpherePacking, UniformBall
from .vector import (
    GaussianVariation,
    LevyVariation,
    MultiScaleVariation,
    levy_steps,
    mantegna_sigma,
)

__all__ = [
    "UniformBall",
    "SpherePacking",
    "GaussianVariation",
    "MultiScaleVariation",
    "LevyVariation",
    "levy_steps",
    "mantegna_sigma",
]
