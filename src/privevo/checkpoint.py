"""Checkpoints of a Private Evolution run: resume without spending budget twice.

After every round the loop writes one file (``numpy`` ``.npz``, no pickles)
atomically — a temporary file in the same folder, fsync, ``os.replace`` — so
the checkpoint on disk is always a complete state after some round. It holds

- ``fingerprint``: the run's public parameters and the data shape (n, d);
  resuming with anything else is refused (no hash of the private data is
  stored: a hash of the data would itself leak it);
- the population for the next round and the last selection;
- the RNG ``bit_generator`` state after the round;
- the *ledger*: every release made so far (round index, σ, the noisy counts,
  the selected indices/points).

A resumed run continues after the last completed release with the saved RNG
state. A round that was running when the process died had released nothing
(its noisy counts never left the process); it is recomputed with the same
random stream, i.e. the same noise, so no round is ever released twice with
fresh noise, and the final report counts each of the T releases once.

Security note: the RNG state lets whoever holds it reproduce the noise of
the recorded rounds. Treat a checkpoint like the private data itself
(same access rights) and delete it once the run is finished.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write
from .selection import Selection

__all__ = [
    "FORMAT",
    "LedgerEntry",
    "CheckpointData",
    "save_checkpoint",
    "load_checkpoint",
    "check_fingerprint",
    "rng_state",
    "rng_from_state",
]

FORMAT = "privevo-checkpoint/1"


@dataclass
class LedgerEntry:
    """One release: round ``iteration`` published ``noisy_counts`` with noise σ."""

    iteration: int
    sigma: float
    noisy_counts: np.ndarray
    selected: np.ndarray | None
    selected_points: np.ndarray
    info: dict = field(default_factory=dict)


@dataclass
class CheckpointData:
    """What :func:`load_checkpoint` returns."""

    fingerprint: dict
    completed: int
    population: np.ndarray
    selection: Selection | None
    rng: np.random.Generator
    ledger: list[LedgerEntry]


def save_checkpoint(
    path,
    *,
    fingerprint: dict,
    completed: int,
    population: np.ndarray,
    selection: Selection | None,
    rng: np.random.Generator,
    ledger: list[LedgerEntry],
) -> None:
    """Write the state after round ``completed`` atomically to ``path``."""
    arrays: dict[str, np.ndarray] = {"population": np.asarray(population, dtype=np.float64)}
    meta: dict[str, Any] = {
        "format": FORMAT,
        "fingerprint": fingerprint,
        "completed": int(completed),
        "rng": _encode(rng_state(rng)),
        "ledger": [],
        "selection": None,
    }
    if selection is not None:
        meta["selection"] = _put_selection(arrays, "selection", selection)
    for entry in ledger:
        key = f"round{entry.iteration}"
        arrays[f"{key}_counts"] = np.asarray(entry.noisy_counts, dtype=np.float64)
        arrays[f"{key}_points"] = np.asarray(entry.selected_points, dtype=np.float64)
        if entry.selected is not None:
            arrays[f"{key}_selected"] = np.asarray(entry.selected, dtype=np.int64)
        meta["ledger"].append({"iteration": int(entry.iteration), "sigma": float(entry.sigma), "info": _jsonable(entry.info)})
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_write(path, private=True) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)


def load_checkpoint(path) -> CheckpointData:
    """Read a checkpoint written by :func:`save_checkpoint` (no pickles are loaded)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        meta = json.loads(str(arrays.pop("meta")))
    except Exception as err:  # zipfile / json / KeyError: all mean "not ours"
        raise ValueError(
            f"checkpoint {path} is not a readable privevo checkpoint ({type(err).__name__}); "
            "delete it or choose another checkpoint path"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"checkpoint {path} has an unknown format; delete it or choose another checkpoint path")
    ledger = [_get_entry(arrays, e) for e in meta["ledger"]]
    _check_ledger(path, ledger, meta["completed"])
    selection = None if meta["selection"] is None else _get_selection(arrays, "selection", meta["selection"])
    return CheckpointData(
        fingerprint=meta["fingerprint"],
        completed=int(meta["completed"]),
        population=arrays["population"],
        selection=selection,
        rng=rng_from_state(_decode(meta["rng"])),
        ledger=ledger,
    )


def check_fingerprint(path, saved: dict, current: dict) -> None:
    """Refuse to resume a checkpoint written by a run with other parameters or data shape."""
    difference = _first_difference(saved, current)
    if difference is not None:
        key, there, now = difference
        raise ValueError(
            f"checkpoint {path} belongs to another run ({key} is {there!r} there, {now!r} now); "
            "use a new checkpoint path, or delete the file to start over"
        )


def _first_difference(saved: dict, current: dict, prefix: str = ""):
    """(dotted key, saved value, current value) of the first difference, or None."""
    for key in sorted(set(saved) | set(current)):
        there, now = saved.get(key), current.get(key)
        if isinstance(there, dict) and isinstance(now, dict):
            inner = _first_difference(there, now, f"{prefix}{key}.")
            if inner is not None:
                return inner
        elif there != now:
            return f"{prefix}{key}", there, now
    return None


def rng_state(rng: np.random.Generator) -> dict:
    """The generator's ``bit_generator.state`` (a dict naming the bit generator)."""
    return rng.bit_generator.state


def rng_from_state(state: dict) -> np.random.Generator:
    """A Generator continuing exactly where the saved one stopped."""
    name = state.get("bit_generator")
    try:
        bit_generator = getattr(np.random, name)()
    except (AttributeError, TypeError):
        raise ValueError(f"checkpoint names an unknown bit generator {name!r}") from None
    bit_generator.state = state
    return np.random.Generator(bit_generator)


# -- helpers ------------------------------------------------------------------


def _check_ledger(path, ledger: list[LedgerEntry], completed: int) -> None:
    rounds = [e.iteration for e in ledger]
    if rounds != list(range(completed)):
        raise ValueError(
            f"checkpoint {path} has an inconsistent ledger (rounds {rounds}, {completed} completed); "
            "delete it or choose another checkpoint path"
        )


def _put_selection(arrays: dict, key: str, selection: Selection) -> dict:
    arrays[f"{key}_points"] = np.asarray(selection.points, dtype=np.float64)
    for name in ("indices", "weights"):
        value = getattr(selection, name)
        if value is not None:
            arrays[f"{key}_{name}"] = np.asarray(value)
    return {"variations_per_point": selection.variations_per_point, "info": _jsonable(selection.info)}


def _get_selection(arrays: dict, key: str, meta: dict) -> Selection:
    return Selection(
        points=arrays[f"{key}_points"],
        indices=arrays.get(f"{key}_indices"),
        weights=arrays.get(f"{key}_weights"),
        variations_per_point=meta["variations_per_point"],
        info=meta["info"],
    )


def _get_entry(arrays: dict, meta: dict) -> LedgerEntry:
    key = f"round{meta['iteration']}"
    return LedgerEntry(
        iteration=int(meta["iteration"]),
        sigma=float(meta["sigma"]),
        noisy_counts=arrays[f"{key}_counts"],
        selected=arrays.get(f"{key}_selected"),
        selected_points=arrays[f"{key}_points"],
        info=meta["info"],
    )


def _encode(value):
    """JSON-safe copy of an RNG state; arrays become {"__ndarray__": list, "dtype": str}."""
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode(value):
    if isinstance(value, dict):
        if "__ndarray__" in value:
            return np.asarray(value["__ndarray__"], dtype=value["dtype"])
        return {k: _decode(v) for k, v in value.items()}
    return value


def _jsonable(value):
    from .report import _jsonable as jsonable

    return jsonable(value)


def remove_stale_temporaries(path) -> None:
    """Delete temporaries a killed writer left beside ``path`` (``.NAME.*.tmp``)."""
    path = Path(path)
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            os.unlink(tmp)
        except OSError:
            pass
