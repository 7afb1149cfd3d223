"""Private tables read block by block: pandas frames from memory, Parquet or Dask.

A :class:`FrameSource` yields a private table as consecutive pandas DataFrames
(``frames()``: (row offset, block)), one block in memory at a time:

* an in-memory DataFrame is one block, never copied;
* a Parquet file or folder (the folder checks and readers of :mod:`.files`) is
  read in batches of at most ``block_rows`` rows, whatever its row groups;
* a Dask DataFrame is read one partition at a time (computed on the caller).

:meth:`FrameSource.map` applies a *public per-row map* (the tabular encoding
and embedding, a cell index) to every block as it is read and gives a
:class:`MappedSource`, a :class:`~privevo.private.files.BlockSource`: the vote
histogram (:mod:`.blocks`) and the cell counts (:mod:`.tables`) count it block
by block and sum the counts, so a one-block table and the same table in many
blocks give the same exact counts, hence the same releases.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from .files import BlockSource, _check_one_kind, _files, _parquet_file, import_pyarrow

__all__ = ["FrameSource", "MappedSource", "frame_source"]

BLOCK_ROWS = 100_000  # rows per block read from Parquet


class FrameSource:
    """A private table as pandas DataFrame blocks (module docstring). ``columns``: its names."""

    columns: list[str]

    def frames(self) -> Iterator[tuple[int, object]]:  # pragma: no cover - abstract
        """(row offset, DataFrame) of every non-empty block, in row order."""
        raise NotImplementedError

    def n_rows(self) -> int:
        """The exact number of rows (private under add/remove adjacency)."""
        return sum(len(frame) for _, frame in self.frames())

    def in_memory(self):
        """The whole table as one DataFrame, or None when it is not held in memory."""
        return None

    def map(self, fn: Callable, dim: int, dtype=np.float64) -> "MappedSource":
        """Rows ``fn(frame, offset)`` ((rows, ``dim``) arrays) of every block, as a source."""
        return MappedSource(self, fn, dim, dtype)


class _MemoryFrames(FrameSource):
    def __init__(self, df):
        self.df, self.columns = df, [str(c) for c in df.columns]

    def frames(self):
        if len(self.df):
            yield 0, self.df

    def n_rows(self) -> int:
        return len(self.df)

    def in_memory(self):
        return self.df


class _ParquetFrames(FrameSource):
    """A Parquet file or folder, in batches of at most ``block_rows`` rows per read."""

    def __init__(self, path, block_rows: int = BLOCK_ROWS):
        pq = import_pyarrow()
        path = Path(os.fspath(path))
        if path.is_dir():
            _check_one_kind(path)
        self.path, self.block_rows = str(path), int(block_rows)
        self.files = _files(path, ".parquet", ".pq")
        self.columns = _frame_columns(pq, self.files[0])
        for f in self.files[1:]:
            names = _frame_columns(pq, f)
            if names != self.columns:
                raise ValueError(
                    f"Parquet file {f!r} has columns {names}, not {self.columns}; all files "
                    "must share one schema"
                )

    def frames(self):
        pq, offset = import_pyarrow(), 0
        for f in self.files:
            for batch in _parquet_file(pq, f).iter_batches(batch_size=self.block_rows):
                if batch.num_rows:
                    yield offset, batch.to_pandas()
                    offset += batch.num_rows

    def n_rows(self) -> int:
        pq = import_pyarrow()
        return sum(_parquet_file(pq, f).metadata.num_rows for f in self.files)


def _frame_columns(pq, path: str) -> list[str]:
    """The DataFrame columns a Parquet file reads as (a stored pandas index is not one)."""
    return [str(c) for c in _parquet_file(pq, path).schema_arrow.empty_table().to_pandas().columns]


class _DaskFrames(FrameSource):
    def __init__(self, ddf):
        self.ddf, self.columns = ddf, [str(c) for c in ddf.columns]

    def frames(self):
        offset = 0
        for part in self.ddf.to_delayed():
            frame = part.compute()
            if len(frame):
                yield offset, frame
                offset += len(frame)


def frame_source(data, block_rows: int = BLOCK_ROWS) -> FrameSource:
    """The :class:`FrameSource` of a pandas DataFrame, a Parquet file or folder, or a Dask
    DataFrame (a source is returned as is)."""
    if isinstance(data, FrameSource):
        return data
    if isinstance(data, (str, os.PathLike)):
        path = Path(os.fspath(data))
        if not (path.is_dir() or path.suffix in (".parquet", ".pq")):
            raise ValueError(
                f"cannot read {str(path)!r} as a table: give a .parquet file or a folder of them "
                "(or a DataFrame)"
            )
        return _ParquetFrames(path, block_rows)
    if _is_dask(data) and hasattr(data, "columns"):
        return _DaskFrames(data)
    if hasattr(data, "iloc") and hasattr(data, "columns"):
        return _MemoryFrames(data)
    raise ValueError(
        f"the private table must be a pandas DataFrame, a Dask DataFrame or a Parquet file or "
        f"folder, got {type(data).__name__}"
    )


def _is_dask(x) -> bool:
    dask = sys.modules.get("dask")  # never import Dask for other data
    return dask is not None and hasattr(dask, "is_dask_collection") and dask.is_dask_collection(x)


class MappedSource(BlockSource):
    """``fn(frame, offset)`` of every block of a :class:`FrameSource`: a public per-row map,
    applied as each block is read (the private rows stay one block at a time)."""

    def __init__(self, frames: FrameSource, fn: Callable, dim: int, dtype=np.float64):
        self.source, self.fn = frames, fn
        self.path = getattr(frames, "path", "<table>")
        self.dtype, self._dim, self._n = np.dtype(dtype), int(dim), None

    @property
    def shape(self) -> tuple[int, int]:  # the row count is read only when asked
        if self._n is None:
            self._n = self.source.n_rows()
        return (self._n, self._dim)

    @property
    def dim(self) -> int:
        return self._dim

    def iter_blocks(self) -> Iterator[np.ndarray]:
        for offset, frame in self.source.frames():
            yield self.fn(frame, offset)

    def then(self, fn: Callable, dim: int, dtype=np.float64) -> "MappedSource":
        """Rows ``fn(block)`` of this source's blocks: a further public per-row map."""
        first = self.fn
        return MappedSource(self.source, lambda frame, offset: fn(first(frame, offset)), dim, dtype)

    def block_refs(self) -> list:
        raise NotImplementedError("a mapped table is read on the caller, block by block")

    def __repr__(self) -> str:
        return f"MappedSource({self.path!r}, dim={self._dim})"
