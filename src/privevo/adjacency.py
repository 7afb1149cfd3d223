"""Which data sets are neighbours, and the vote sensitivity that follows (docs/privacy.md,
"Adjacency").

``"add_remove"``: D′ is D with one privacy unit (a row, or a user with user ids) added or
removed; the number of rows is private. ``"replace"``: one unit's data is replaced; the
number of units is public. A vote histogram (every k, rows or users) changes by at most 1
in L2 norm under add/remove and √2 under replace. Standard library only, so that building
the command-line parser imports no numpy.
"""

from __future__ import annotations

import math

from .names import ADJACENCIES

__all__ = ["ADJACENCIES", "check_adjacency", "histogram_l1_sensitivity", "vote_sensitivity"]


def check_adjacency(adjacency) -> str:
    """``adjacency`` itself if it is one of :data:`ADJACENCIES`, else a one-line ValueError."""
    if not isinstance(adjacency, str) or adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be 'add_remove' or 'replace', got {adjacency!r}")
    return adjacency


def vote_sensitivity(adjacency) -> float:
    """L2 sensitivity of a vote histogram: 1 under add/remove, √2 under replace."""
    return 1.0 if check_adjacency(adjacency) == "add_remove" else math.sqrt(2.0)


def histogram_l1_sensitivity(adjacency) -> float:
    """L1 sensitivity of a histogram, and of an L1 distance between one and a public table: a
    row moves one cell by 1 under add/remove, two cells (one down, one up) under replace."""
    return 1.0 if check_adjacency(adjacency) == "add_remove" else 2.0
