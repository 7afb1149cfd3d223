"""Selection strategies: post-processing of the noisy vote histogram (docs/architecture.md).

A selector is any object with
``select(candidates, noisy_counts, context) -> Selection``.
"""

from ._base import Selection, SelectionContext, Selector, subset
from .gape import GAPE
from .simple import Rank, Subsample
from .weighted_kmeans import WeightedKMeans

__all__ = [
    "Selection",
    "SelectionContext",
    "Selector",
    "subset",
    "Rank",
    "Subsample",
    "GAPE",
    "WeightedKMeans",
]
