"""Selectors by name: the one list of names that every front end offers.

``make_selector("gape", R=...)`` builds a selector from its name with the few public
settings the named selectors take; a selector object is returned as it is. The command
line, text PE and tabular PE all read their choices from :data:`SELECTOR_NAMES` (a front
end that needs the selected rows themselves offers :func:`selector_names` with
``keeps_candidates=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..names import SELECTORS
from ._base import Selector
from .gape import GAPE
from .simple import Rank, Subsample
from .weighted_kmeans import WeightedKMeans

__all__ = ["SELECTOR_NAMES", "make_selector", "selector_names"]


@dataclass(frozen=True)
class _Entry:
    build: Callable[..., Selector]  # called with R, fill, refill
    keeps_candidates: bool  # selects candidate rows (False: makes new points, e.g. centroids)


def _gape(aggregate: str | None) -> Callable[..., Selector]:
    def build(R, fill, refill):
        if R is None:
            raise ValueError("the gape selectors need R, the public separation of clusters")
        return GAPE(R, refill=refill, fill=fill, aggregate=aggregate)

    return build


_REGISTRY: dict[str, _Entry] = {
    "rank": _Entry(lambda R, fill, refill: Rank(), True),  # Aug-PE
    "subsample": _Entry(lambda R, fill, refill: Subsample(), True),  # the original PE
    "gape": _Entry(_gape(None), True),  # GAPE's thresholded local search
    "gape_agg": _Entry(_gape("neighbourhood"), True),  # also thresholds neighbourhood sums
    "weighted_kmeans": _Entry(lambda R, fill, refill: WeightedKMeans(), False),  # PE-means
}

#: Every selector name, in the order the front ends list them (stated in :mod:`privevo.names`;
#: a test checks that the registry builds exactly these).
SELECTOR_NAMES: tuple[str, ...] = SELECTORS


def selector_names(keeps_candidates: bool | None = None) -> tuple[str, ...]:
    """The selector names; ``keeps_candidates=True``: only those that select candidate rows."""
    return tuple(
        name
        for name, entry in _REGISTRY.items()
        if keeps_candidates is None or entry.keeps_candidates == keeps_candidates
    )


def make_selector(
    selector, *, R: float | None = None, fill: bool = False, refill: bool = False
) -> Selector:
    """The selector named ``selector``, or ``selector`` itself if it is a selector object.

    R : GAPE's public lower bound on the separation of clusters (the gape selectors only)
    fill : GAPE completes its selection to m with the largest remaining noisy counts
    refill : GAPE keeps the population size when fewer than m points pass its threshold
    """
    if isinstance(selector, str) and selector in _REGISTRY:
        return _REGISTRY[selector].build(R, fill, refill)
    if not isinstance(selector, str) and isinstance(selector, Selector):
        return selector
    raise ValueError(
        f"selector must be one of {', '.join(SELECTOR_NAMES)} or an object with "
        f"select(candidates, noisy_counts, context), got {_named(selector)}"
    )


def _named(selector) -> str:
    return repr(selector) if isinstance(selector, str) else f"a {type(selector).__name__}"
