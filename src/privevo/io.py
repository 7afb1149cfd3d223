"""Writing public outputs, behind one output guard.

Writers are atomic: each output goes to a temporary file in the target folder
and is moved into place with ``os.replace`` only when complete, so a crash
or an error never leaves a partial output behind. :func:`check_output_path`
checks an output path *before* any private computation runs, so a bad path
costs no privacy budget; :func:`check_distinct_paths` refuses an output that
is an input or another output of the run.

Private files are read inside the boundary, by :mod:`privevo.private` (``read_table``,
``read_folder``, ``read_text_table``, ``read_labelled_texts``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

__all__ = [
    "check_output_path",
    "check_distinct_paths",
    "report_path_for",
    "atomic_write",
    "write_outputs",
    "write_points",
    "write_json",
    "WRITE_FORMATS",
]

WRITE_FORMATS = (".csv", ".tsv", ".npy", ".parquet")


def check_output_path(
    path, formats: Sequence[str] | None = WRITE_FORMATS, what: str = "output"
) -> Path:
    """Check that ``path`` can be written, before any private computation runs.

    Refuses a directory, a missing or non-directory parent, an unwritable
    folder (probed by creating and removing a temporary file) and, if
    ``formats`` is given, an unsupported suffix.
    """
    path = Path(path)
    _resolved(path, what)  # a symbolic link loop is refused here
    if path.exists() and not path.is_file() and not path.is_dir():
        raise ValueError(
            f"{what} path {path} is not a regular file (a device, FIFO or socket); "
            "choose a file path"
        )
    if path.is_dir():
        raise ValueError(
            f"{what} path {path} is a directory; give a file name inside it, "
            f"e.g. {path / 'out.csv'}"
        )
    if formats is not None and path.suffix.lower() not in formats:
        raise ValueError(
            f"{what} path {path}: unsupported file type {path.suffix or '(none)'!r}; "
            f"use one of {', '.join(formats)}"
        )
    parent = path.parent
    if not parent.exists():
        raise ValueError(
            f"{what} folder {parent} does not exist; create it first or choose another path"
        )
    if not parent.is_dir():
        raise ValueError(f"{what} folder {parent} is not a directory; choose another path")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".privevo-probe-"):
            pass
    except OSError as err:
        raise ValueError(
            f"cannot write to {what} folder {parent} ({err.strerror or err}); choose another path"
        ) from None
    return path


def check_distinct_paths(
    data, outputs: dict[str, Path], inputs: dict[str, Path] | None = None
) -> None:
    """Refuse an output that would overwrite an input or another output of the same run.

    ``data`` is the input file or folder; ``inputs`` maps a flag to any other file
    the run reads (``"--metadata"``, ``"--public-description"``); ``outputs`` maps a
    flag (``"-o"``, ``"--checkpoint"``, ...) to its path. Refused: an output that is
    an input (also through a symbolic or hard link), one inside the input folder, and
    two outputs that are one file. Every command calls it before reading any row.
    """
    source = _resolved(Path(data), "input")
    others = {flag: _resolved(Path(p), flag) for flag, p in (inputs or {}).items() if p is not None}
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        target = _resolved(Path(path), flag)
        if target == source or _same_file(target, source):
            raise ValueError(
                f"{flag} {path} is the input data file; writing it would destroy "
                "the data: choose another path"
            )
        if source.is_dir() and target.is_relative_to(source):
            raise ValueError(
                f"{flag} {path} is inside the input folder {data}; it would "
                "become part of the data: choose a path outside it"
            )
        read = next((f for f, t in others.items() if t == target or _same_file(t, target)), None)
        if read is not None:
            raise ValueError(
                f"{flag} {path} is the {read} file this run reads; writing it would "
                "destroy it: choose another path"
            )
        other = next((f for t, f in seen.items() if t == target or _same_file(t, target)), None)
        if other is not None:
            raise ValueError(
                f"{other} and {flag} are the same file ({path}); give each its own path"
            )
        seen[target] = flag


def _resolved(path: Path, what: str) -> Path:
    """``path.resolve()``; a symbolic link loop is refused in one line, naming the path."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        raise ValueError(
            f"{what} path {path} is a symbolic link loop; point it at a real file"
        ) from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def report_path_for(output) -> Path:
    """Where the privacy report of ``output`` goes: ``centers.csv`` → ``centers.privacy.json``."""
    output = Path(output)
    return output.with_name(output.stem + ".privacy.json")


@contextlib.contextmanager
def atomic_write(path, private: bool = False) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s folder; move it onto ``path`` on success.

    On any error the temporary file is removed and ``path`` is untouched. The
    file gets the usual permissions (0666 minus the umask), or owner-only
    (0600) if ``private`` (checkpoints: they hold the RNG state).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        _fsync(tmp)
        if not private:
            os.chmod(tmp, _default_mode())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_outputs(writers: dict[Path, Callable[[Path], None]]) -> None:
    """Write several files all-or-nothing: every file goes to a temporary first,
    and the temporaries are moved into place only after all were written."""
    temps: dict[Path, Path] = {}
    try:
        for path, writer in writers.items():
            fd, tmp = tempfile.mkstemp(
                dir=Path(path).parent, prefix=f".{Path(path).name}.", suffix=".tmp"
            )
            os.close(fd)
            temps[Path(path)] = Path(tmp)
            writer(Path(tmp))
            _fsync(Path(tmp))
            os.chmod(tmp, _default_mode())
        with _signals_held():  # all files or none, even if Ctrl-C or SIGTERM arrives now
            for path, tmp in temps.items():
                os.replace(tmp, path)
    finally:
        for tmp in temps.values():
            if tmp.exists():
                tmp.unlink()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM (main thread) until the block ends, then deliver them.

    Python runs signal handlers in the main thread whichever thread the OS picks,
    so the handlers themselves are swapped for ones that only record the signal.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {
        s: signal.signal(s, lambda signum, frame: pending.append(signum))
        for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(pending):
            signal.raise_signal(number)


def _default_mode() -> int:
    """0666 minus the process umask (what ``open`` would give a new file)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def write_points(
    path, points: np.ndarray, columns: Sequence[str] | None = None, *, fmt_path=None
) -> None:
    """Write ``points`` (n, d) to ``path`` in the format of ``fmt_path or path``'s suffix.

    Not atomic: use :func:`atomic_write` / :func:`write_outputs`."""
    points = np.asarray(points, dtype=np.float64)
    suffix = Path(fmt_path or path).suffix.lower()
    names = list(columns) if columns is not None else [f"x{j}" for j in range(points.shape[1])]
    if suffix in (".csv", ".tsv"):
        sep = "," if suffix == ".csv" else "\t"
        np.savetxt(path, points, fmt="%.17g", delimiter=sep, header=sep.join(names), comments="")
    elif suffix == ".npy":
        with open(path, "wb") as handle:
            np.save(handle, points)
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({n: points[:, j] for j, n in enumerate(names)}), path)
    else:
        raise ValueError(
            f"cannot write {suffix or 'files without a suffix'}; "
            f"use one of {', '.join(WRITE_FORMATS)}"
        )


def write_json(path, obj) -> None:
    """``obj`` as indented JSON (not atomic; see :func:`atomic_write`)."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, indent=2, allow_nan=False)
        handle.write("\n")
