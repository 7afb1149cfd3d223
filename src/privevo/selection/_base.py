"""The selection interface: post-processing of one noisy vote histogram."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class SelectionContext:
    """Public facts a selector may use in round ``iteration`` (0-based) of ``iterations``."""

    sigma: float  # noise standard deviation of this round's counts
    iteration: int
    iterations: int
    n_select: int  # m, the number of points to select
    n_private: float | None  # n if public (replace), a noisy count, or None (n is private)
    rng: np.random.Generator


@dataclass(frozen=True)
class Selection:
    """What a selector returns.

    ``points`` become the parents of the next population. ``indices`` are the
    candidate rows they came from (``None`` when the points are new, e.g.
    centroids). ``variations_per_point`` lets a selector resize the next
    population (PE-means' adaptive signal-to-noise); ``None`` keeps the
    variation API's default. ``info`` carries diagnostics (threshold,
    objective, ...), all computed from public or noisy values only.
    """

    points: np.ndarray
    indices: np.ndarray | None = None
    weights: np.ndarray | None = None
    variations_per_point: int | None = None
    info: dict = field(default_factory=dict)


@runtime_checkable
class Selector(Protocol):
    """Chooses the next parents from candidates and their noisy counts."""

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection: ...


def subset(
    candidates: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None, **info
) -> Selection:
    """A selection that keeps the given candidate rows."""
    indices = np.asarray(indices, dtype=np.int64)
    return Selection(points=candidates[indices], indices=indices, weights=weights, info=info)
