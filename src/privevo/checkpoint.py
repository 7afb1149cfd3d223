"""Checkpoints: resume a run without spending budget twice, and only on its own data.

A checkpoint is an append-only log of one run's *steps*, written as they
happen: a header, then one record per step (a PE round, DPKMeans' second
moment, projection or recover step). A record holds the step's release (the
noisy values it published), the public state after it, and the RNG state
after it. Appending one record costs the same in round 1 and round 600: the
file is never rewritten. Each record is framed as

    8-byte length | 32-byte SHA-256 of the payload | payload (``.npz`` bytes)

so a record torn by a crash mid-write fails its check and is dropped (and
truncated away) on the next open; everything before it is intact. No pickles
are ever loaded.

Rules (docs/privacy.md, "The checkpoint"):

- **Bound to its data.** The header stores a SHA-256 digest of the private
  rows (:func:`privevo.private.data_digest`) and the run's fingerprint (every public
  parameter of the run and its plug-ins, :func:`privevo._params.describe`). Opening it with other
  data,
  other parameters or from another kind of run is refused with one line.
- **A release is never redrawn.** A step found in the log is replayed from its
  record (value and RNG state); only steps missing from the log run, so a
  checkpoint of a finished run returns the finished result and releases
  nothing new.
- **One run at a time.** The file is held under an exclusive ``flock`` while
  a run uses it; a second run on it is refused (POSIX systems; where ``fcntl``
  is missing the lock is skipped).

The checkpoint is the one *private* artefact of a run: its RNG states
reproduce the noise and its digest identifies the data. It is written
owner-only (mode 0600); delete it once the run is finished.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import signal
import stat
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .report import jsonable

__all__ = [
    "FORMAT",
    "Checkpoint",
    "Record",
    "load_checkpoint",
    "replay_or_draw",
    "replay_or_release",
    "rng_state",
    "run_fingerprint",
    "rng_from_state",
    "set_rng_state",
]

FORMAT = "privevo-checkpoint/2"
_MAGIC = b"PRIVEVO-CHECKPOINT-2\n"
_FRAME = struct.Struct("<Q32s")


@dataclass
class Record:
    """One step of a run: its ``key``, JSON ``meta``, ``arrays`` and the RNG state after it."""

    key: str
    meta: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    rng: dict | None = None


class Checkpoint:
    """An open, locked checkpoint log (see the module doc). Use :meth:`open`."""

    def __init__(self, path: Path, handle, header: dict, records: list[Record]):
        self.path = path
        self._handle = handle
        self.header = header
        self.records = records
        self._by_key: dict[str, Record] = {}
        for record in records:
            self._by_key.setdefault(record.key, record)

    @classmethod
    def open(cls, path, *, fingerprint: dict, digest: str) -> "Checkpoint":
        """Open (or create) ``path`` for a run with this fingerprint on data with this digest.

        Raises ``ValueError`` (one line, the file left as it was) when the file
        is not a privevo checkpoint, belongs to another run or other data, or
        is in use by another process.
        """
        path = Path(path)
        _remove_stale_temporaries(path)
        handle = _open_locked(path)
        try:
            header, records = _read_log(path, handle)
            if header is None:
                header = {"format": FORMAT, "fingerprint": fingerprint, "digest": digest}
                _append(handle, _frame(_pack(Record("header", header))))
            else:
                _check_header(path, header, fingerprint, digest)
        except BaseException:
            handle.close()
            raise
        return cls(path, handle, header, records)

    def find(self, key: str) -> Record | None:
        """The record of step ``key``, or None if that step has not run yet (a dict lookup)."""
        return self._by_key.get(key)

    def append(self, record: Record) -> None:
        """Write one step durably (fsync) before its result is used further."""
        _append(self._handle, _frame(_pack(record)))
        self.records.append(record)
        self._by_key.setdefault(record.key, record)

    def close(self) -> None:
        """Release the lock (the file stays)."""
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> "Checkpoint":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_checkpoint(path) -> tuple[dict, list[Record]]:
    """(header, records) of a checkpoint file, read-only (for inspection and tests)."""
    path = Path(path)
    with open(path, "rb") as handle:
        header, records = _read_log(path, handle, repair=False)
    if header is None:
        raise ValueError(f"checkpoint {path} is empty; delete it or choose another checkpoint path")
    return header, records


def run_fingerprint(name: str, dim: int, params: dict, skip=(), **extra) -> dict:
    """Every public parameter a checkpoint must match: ``params`` (a constructor's, with its
    plug-ins at any depth, :func:`privevo._params.describe`) but ``skip``, the run's kind
    ``name``, the data's dimension and ``extra`` (e.g. σ). An integer seed is kept as its value:
    the checkpoint is private (module docstring)."""
    from ._params import describe

    described = {k: describe(v) for k, v in params.items() if k not in skip}
    return {"run": name, "d": int(dim), **extra, **described}


def replay_or_draw(log: "Checkpoint | None", key: str, rng: np.random.Generator, draw, meta=dict):
    """Step ``key``'s arrays: replayed from ``log`` (and ``rng`` put where the step left it), or
    drawn with ``draw(rng)`` and logged, with ``meta()``, before anyone uses them. The one
    replay-or-draw of every run (the engine's rounds, DPKMeans' steps, text PE's releases): a
    release is made at most once per run. ``log`` None: drawn, nothing logged."""
    record = None if log is None else log.find(key)
    if record is not None:
        set_rng_state(rng, record.rng)
        return record.arrays
    arrays = draw(rng)
    if log is not None:
        log.append(Record(key, meta(), arrays, rng_state(rng)))
    return arrays


def replay_or_release(
    log: "Checkpoint | None", key: str, rng: np.random.Generator, draw, adjacency
):
    """:func:`replay_or_draw` for a step whose ``draw(rng)`` returns
    :class:`~privevo.private.Release` objects: logged with their ledger entries, replayed as
    the same releases (value, σ, sensitivity, noise)."""
    from .private import Release

    made: list = []

    def arrays(rng) -> dict:
        made.extend(draw(rng))
        return {str(i): np.asarray(r.value) for i, r in enumerate(made)}

    logged = replay_or_draw(
        log, key, rng, arrays, meta=lambda: {"releases": [r.entry() for r in made]}
    )
    if made:
        return made
    entries = log.find(key).meta["releases"]
    return [Release.from_entry(e, adjacency, logged[str(i)]) for i, e in enumerate(entries)]


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


def set_rng_state(rng: np.random.Generator, state: dict | None) -> None:
    """Put ``rng`` (in place: every holder of it sees the change) where a record left it."""
    if state is not None:
        rng.bit_generator.state = state


# -- the log --------------------------------------------------------------------


def _open_locked(path: Path):
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except IsADirectoryError:
        raise ValueError(f"checkpoint {path} is a directory; choose a file path") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a device, FIFO or socket: never written
        os.close(fd)
        raise ValueError(
            f"checkpoint {path} is not a regular file (a device, FIFO or socket); "
            "choose a file path"
        )
    handle = os.fdopen(fd, "r+b")
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        handle.close()
        if err.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise ValueError(
                f"checkpoint {path} is in use by another run; wait for it to finish "
                "or choose another checkpoint path"
            ) from None
        raise
    return handle


def _read_log(path: Path, handle, repair: bool = True) -> tuple[dict | None, list[Record]]:
    """Header and records; a torn last record is dropped (and truncated if ``repair``)."""
    handle.seek(0)
    data = handle.read()
    if not data:
        return None, []
    if not data.startswith(_MAGIC):
        raise ValueError(
            f"checkpoint {path} is not a readable privevo checkpoint "
            f"(not {FORMAT}); delete it or choose another checkpoint path"
        )
    records, offset = [], len(_MAGIC)
    while offset + _FRAME.size <= len(data):
        length, digest = _FRAME.unpack_from(data, offset)
        payload = data[offset + _FRAME.size : offset + _FRAME.size + length]
        if len(payload) != length or hashlib.sha256(payload).digest() != digest:
            break
        records.append(_unpack(path, payload))
        offset += _FRAME.size + length
    if not records or records[0].key != "header":  # refused before any repair: file untouched
        raise ValueError(
            f"checkpoint {path} has no valid header; delete it or choose another checkpoint path"
        )
    if repair and offset < len(data):
        handle.truncate(offset)
        os.fsync(handle.fileno())
    return records[0].meta, records[1:]


def _check_header(path: Path, header: dict, fingerprint: dict, digest: str) -> None:
    if header.get("format") != FORMAT:
        raise ValueError(
            f"checkpoint {path} has an unknown format; delete it or choose another path"
        )
    saved = header.get("fingerprint", {})
    if saved.get("run") != fingerprint.get("run"):
        raise ValueError(
            f"checkpoint {path} was written by a {saved.get('run')} run, not by this "
            f"{fingerprint.get('run')} run; use another checkpoint path"
        )
    difference = _first_difference(saved, fingerprint)
    if difference is not None:
        key, there, now = difference
        values = "" if _is_secret(key) else f" is {there!r} there, {now!r} now"
        raise ValueError(
            f"checkpoint {path} belongs to another run ({key}{values}); use a new "
            "checkpoint path, or delete the file to start over"
        )
    if header.get("digest") != digest:
        raise ValueError(
            f"checkpoint {path} was made on other data; a checkpoint resumes only "
            "on the data it was made on (use a new checkpoint path)"
        )


def _is_secret(key: str) -> bool:
    """A seed's value is never printed (it would let anyone redraw the noise)."""
    return key.rsplit(".", 1)[-1] in ("random_state", "seed")


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


def _append(handle, frame: bytes) -> None:
    """Write one frame whole (SIGINT and SIGTERM wait until it is on disk: a signal handler
    that raises mid-write would leave a torn header, which makes the file unusable)."""
    with _signals_deferred():
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            handle.write(_MAGIC)
        handle.write(frame)
        handle.flush()
        os.fsync(handle.fileno())


@contextlib.contextmanager
def _signals_deferred():
    """SIGINT and SIGTERM arriving inside the block are held and raised again when it ends.

    Python runs signal handlers in the main thread whichever thread the OS delivers the signal
    to, so the handlers themselves are swapped for a recorder (a per-thread signal mask would
    not hold the signals another thread receives). Outside the main thread: a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    # a handler installed outside Python (None) is left alone
    previous = {sig: handler for sig, handler in handlers.items() if handler is not None}
    for sig in previous:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in held:
            signal.raise_signal(signum)


def _frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), hashlib.sha256(payload).digest()) + payload


def _pack(record: Record) -> bytes:
    meta = {
        "key": record.key,
        "meta": jsonable(record.meta),
        "rng": None if record.rng is None else _encode(record.rng),
    }
    buffer = io.BytesIO()
    np.savez(buffer, __meta__=np.array(json.dumps(meta)), **record.arrays)
    return buffer.getvalue()


def _unpack(path: Path, payload: bytes) -> Record:
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        meta = json.loads(str(arrays.pop("__meta__")))
        return Record(
            meta["key"], meta["meta"], arrays, None if meta["rng"] is None else _decode(meta["rng"])
        )
    except Exception as err:  # zipfile / json / KeyError: all mean "not ours"
        raise ValueError(
            f"checkpoint {path} is not a readable privevo checkpoint "
            f"({type(err).__name__}); delete it or choose another checkpoint path"
        ) from None


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


def _remove_stale_temporaries(path: Path) -> None:
    """Delete temporaries an older writer left beside ``path`` (``.NAME.*.tmp``)."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            os.unlink(tmp)
        except OSError:
            pass
