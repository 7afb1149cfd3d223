"""The commands' private input: read through the one reader of private files
(:mod:`privevo.private.readers`), and the Dask session that counts it."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path


def is_binary_input(data: str) -> bool:
    """A folder, ``.npy`` or Parquet input (no header line: --header/--no-header do not apply)."""
    return Path(data).is_dir() or Path(data).suffix.lower() in (".npy", ".parquet", ".pq")


def read_input(args):
    """DATA as a :class:`privevo.private.Table`: a file, or a folder of parts.

    ``synth`` and ``kmeans`` with a public domain (--radius/--bounds, kmeans' --metadata) and
    no --plot stream a folder (never loaded whole); otherwise its rows are read into memory.
    Hidden entries of a folder are skipped, with a note on stderr (none with --quiet).
    """
    from ..private import hidden_parts, read_data

    folder = Path(args.data).is_dir()
    if folder and not args.quiet:
        _note_hidden(args, hidden_parts(args.data))
    stream = (
        args.command in ("synth", "kmeans")
        and not args.plot
        and (
            args.radius is not None
            or args.bounds is not None
            or getattr(args, "metadata", None) is not None
        )
    )
    return read_data(args.data, args.columns, None if folder else args.header, stream=stream)


def _note_hidden(args, hidden: list[str]) -> None:
    if hidden:
        print(
            f"privevo {args.command}: note: skipped {len(hidden)} hidden file(s) in {args.data} "
            f"({', '.join(hidden[:3])}{', ...' if len(hidden) > 3 else ''})",
            file=sys.stderr,
        )


def cluster(args):
    """A Dask session for --backend dask: the --scheduler's cluster, else a local one."""
    if args.backend != "dask":
        return contextlib.nullcontext()
    from ..private import dask_session

    return dask_session(address=args.scheduler)
