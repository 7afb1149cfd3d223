"""What one PE round released and left behind: the records the engine keeps and hands to its
hooks, and their checkpoint form (:mod:`privevo.checkpoint`: one record per round)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .checkpoint import Record, rng_state
from .private import Release
from .report import jsonable
from .selection import Selection

__all__ = ["EvolutionState", "IterationRecord", "ReleaseEvent"]


@dataclass
class IterationRecord:
    """What one round released and did. ``noisy_counts`` is the DP release itself."""

    iteration: int
    candidates: np.ndarray | None
    noisy_counts: np.ndarray
    selected: np.ndarray | None  # candidate indices, or None if the selector made new points
    selected_points: np.ndarray
    sigma: float
    info: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)  # histogram / selection / variation


@dataclass(frozen=True)
class ReleaseEvent:
    """What an ``on_release`` hook sees: round ``iteration``'s release, before the selection (or
    anything else) uses it; ``replayed``: read back from the checkpoint, not drawn."""

    iteration: int
    release: Release
    replayed: bool


@dataclass
class EvolutionState:
    """Everything needed to continue a run after round ``completed`` (checkpoint seam)."""

    completed: int  # rounds whose noisy histogram has been released
    population: np.ndarray  # candidates for the next round
    selection: Selection | None
    rng: np.random.Generator


def round_record(record: IterationRecord, state: EvolutionState, release: Release, api_state):
    """The checkpoint record of one round: its release, the selection, S_t and the RNG."""
    selection = state.selection
    arrays = {
        "counts": np.asarray(record.noisy_counts, dtype=np.float64),
        "points": np.asarray(selection.points, dtype=np.float64),
        "population": np.asarray(state.population, dtype=np.float64),
    }
    for name in ("indices", "weights"):
        if getattr(selection, name) is not None:
            arrays[name] = np.asarray(getattr(selection, name))
    meta = {
        "iteration": record.iteration,
        "sigma": record.sigma,
        "info": jsonable(record.info),
        "variations_per_point": selection.variations_per_point,
        "release": release.entry(),
    }
    if api_state is not None:
        meta["api_state"] = api_state
    return Record(f"round/{record.iteration}", meta, arrays, rng_state(state.rng))


def selection_of(record) -> Selection:
    return Selection(
        points=record.arrays["points"],
        indices=record.arrays.get("indices"),
        weights=record.arrays.get("weights"),
        variations_per_point=record.meta["variations_per_point"],
        info=record.meta["info"],
    )


def history_entry(record, candidates) -> IterationRecord:
    zero = dict.fromkeys(
        ("histogram", "selection", "variation"), 0.0
    )  # spent by an earlier process
    return IterationRecord(
        record.meta["iteration"],
        candidates,
        record.arrays["counts"],
        record.arrays.get("indices"),
        record.arrays["points"],
        record.meta["sigma"],
        record.meta["info"],
        seconds=zero,
    )
