"""The plug-in contracts of the PE loop, checked at run time (docs/architecture.md).

The loop of :class:`privevo.PrivateEvolution` takes three plug-ins: a random API (S₀),
a variation API (the next population) and a selector (:class:`~privevo.selection.Selector`).
Each contract is a ``runtime_checkable`` Protocol, so ``isinstance(api, RandomAPI)`` is
the one test of whether an object fulfils it. All of them work on public inputs only:
they see releases and candidates, never private rows (post-processing).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .selection._base import Selection, Selector

__all__ = ["RandomAPI", "VariationAPI", "SelectionVariationAPI", "CheckpointedAPI", "Selector"]


@runtime_checkable
class RandomAPI(Protocol):
    """Draws the initial population S₀: ``n`` points in ``dim`` dimensions, data-free."""

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class VariationAPI(Protocol):
    """Varies the selected points: ``per_point`` variations of each (None: the API's default,
    its ``per_point`` attribute when it has one)."""

    def vary(
        self, points: np.ndarray, rng: np.random.Generator, per_point: int | None = None
    ) -> np.ndarray: ...


@runtime_checkable
class SelectionVariationAPI(Protocol):
    """Varies a whole :class:`~privevo.selection.Selection` (its candidate ``indices`` too), for
    APIs that keep objects aligned with the rows (texts, table rows). Preferred over
    :class:`VariationAPI` when an object fulfils both."""

    def vary_selection(self, selection: Selection, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class CheckpointedAPI(Protocol):
    """An API with public state of its own (e.g. texts) that a checkpoint stores each round."""

    def checkpoint_state(self) -> dict: ...

    def restore_checkpoint_state(self, state: dict) -> None: ...
