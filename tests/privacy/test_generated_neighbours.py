"""The generated-neighbour replay: every entry point, input path and adjacency against every
neighbour the generator makes for its input kind (tests/helpers/entry_points.py,
tests/helpers/neighbours.py), with the byte and the sensitivity replay (tests/helpers/neighbour.py).

``make test-fast`` runs one representative row per front end; ``make test`` runs every row.
"""

from __future__ import annotations

import pytest

from helpers import slow_unless
from helpers.entry_points import ENTRY_POINTS, check, points
from helpers.neighbours import random_neighbours


@pytest.mark.parametrize(
    "entry", slow_unless(lambda name: ENTRY_POINTS[name].fast, sorted(ENTRY_POINTS))
)
def test_every_generated_neighbour(tmp_path, entry):
    failures = check(ENTRY_POINTS[entry], tmp_path)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "entry",
    slow_unless(
        lambda name: name == "dpkmeans/replace",
        [
            "pe rank/add_remove",
            "pe rank/replace",
            "dpkmeans/add_remove",
            "dpkmeans/replace",
            "baseline dplloyd/add_remove",
            "baseline fastlloyd/add_remove",
        ],
    ),
)
def test_random_neighbour_search(tmp_path, entry):
    """Many random neighbours (a random row added, removed or replaced at a random scale); the
    largest sensitivity ratio is kept in the run's table and must stay ≤ 1."""
    point_entry = ENTRY_POINTS[entry]
    found = random_neighbours(points(), point_entry.adjacency, count=24, scale=8.0, seed=7)
    failures = check(point_entry, tmp_path, found)
    assert not failures, "\n".join(failures)
