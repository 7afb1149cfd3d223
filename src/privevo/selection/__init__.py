"""Selection strategies: post-processing of the noisy vote histogram (docs/architecture.md).

A selector is any object with
``select(candidates, noisy_counts, context) -> Selection``; :func:`make_selector` builds
one from its name (the names every front end offers: :data:`SELECTOR_NAMES`).
"""

from ._base import Selection, SelectionContext, Selector, subset
from .gape import GAPE
from .registry import SELECTOR_NAMES, make_selector, selector_names
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
    "SELECTOR_NAMES",
    "make_selector",
    "selector_names",
]
