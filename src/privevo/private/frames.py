"""Private tables read block by block: pandas frames from memory, Parquet or Dask.

A :class:`FrameSource` yields a private table as consecutive pandas DataFrames
(``frames()``: (row offset, block)), one block in memory at a time:

* an in-memory DataFrame is one block, never copied;
* a Parquet file or folder (the folder checks and readers of :mod:`.files`) is
  read in batches of at most ``block_rows`` rows, whatever its row groups; a
  Hive-partitioned folder (``key=value`` sub-folders) gives each key a column of text
  cells, its partition values (:func:`~.files.partitioned_parts`);
* a Dask DataFrame is read one partition at a time (computed on the caller).

:meth:`FrameSource.map` applies a *public per-row map* (the tabular encoding
and embedding, a cell index) to every block as it is read and gives a
:class:`MappedSource`, a :class:`~privevo.private.files.BlockSource`: the vote
histogram (:mod:`.blocks`) and the cell counts (:mod:`.tables`) count it block
by block and sum the counts, so a one-block table and the same table in many
blocks give the same exact counts, hence the same releases.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from .files import (
    BlockSource,
    _check_one_kind,
    _files,
    _parquet_file,
    import_pyarrow,
    is_parquet_file,
    is_partitioned,
    partitioned_parts,
)

__all__ = ["FrameSource", "MappedSource", "frame_source", "select_columns"]

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
    """A Parquet file or folder, in batches of at most ``block_rows`` rows per read.

    In a Hive-partitioned folder every key is one more column, after the files' columns: its
    cells are the partition value as text (missing: None). No message names a file below a
    partitioned folder (its path holds partition values). Integer and boolean columns read as
    pandas' nullable dtypes, so a column's dtype never depends on whether a block holds a null.
    """

    def __init__(self, path, block_rows: int = BLOCK_ROWS):
        pq = import_pyarrow()
        path = Path(os.fspath(path))
        self.partitioned = path.is_dir() and is_partitioned(path)
        if self.partitioned:
            self.parts = partitioned_parts(path)
        else:
            if path.is_dir():
                _check_one_kind(path)
            self.parts = [(f, ()) for f in _files(path, ".parquet", ".pq")]
        self.path, self.block_rows = str(path), int(block_rows)
        self.files = [f for f, _ in self.parts]
        names = [self._columns(pq, f) for f in self.files]
        keys = [key for key, _ in self.parts[0][1]]
        self.columns = names[0] + keys
        for f, other in zip(self.files, names):
            if other != names[0]:
                raise ValueError(
                    f"{self._name(f)} has columns {other}, not {names[0]}; all files "
                    "must share one schema"
                )
        if set(keys) & set(names[0]):
            raise ValueError(
                f"{self.path}: partition key(s) {sorted(set(keys) & set(names[0]))} are also "
                "columns of its files; keep each column in one place"
            )

    def _name(self, path: str) -> str:
        """How messages name a file: its path, or (partitioned) a part of the folder."""
        return f"a part of {self.path}" if self.partitioned else f"Parquet file {path!r}"

    def _columns(self, pq, path: str) -> list[str]:
        with self._unnamed():
            return _frame_columns(pq, path)

    @contextlib.contextmanager
    def _unnamed(self):
        """A partitioned folder's read errors without the part's path (it holds values)."""
        if not self.partitioned:
            yield
            return
        try:
            yield
        except Exception as err:  # pyarrow raises OSError or its own types for a corrupt part
            if not (isinstance(err, (OSError, ValueError)) or _is_arrow(err)):
                raise
            raise ValueError(
                f"a part of the partitioned folder {self.path} is not a readable Parquet file "
                "(not named: its path holds partition values); replace or remove it"
            ) from None

    def frames(self):
        pq, offset = import_pyarrow(), 0
        for f, values in self.parts:
            for batch in self._batches(pq, f):
                if batch.num_rows:
                    yield offset, _with_partitions(_to_pandas(batch), values)
                    offset += batch.num_rows

    def _batches(self, pq, path: str):
        with self._unnamed():
            yield from _parquet_file(pq, path).iter_batches(batch_size=self.block_rows)

    def n_rows(self) -> int:
        pq = import_pyarrow()
        with self._unnamed():
            return sum(_parquet_file(pq, f).metadata.num_rows for f in self.files)


def _frame_columns(pq, path: str) -> list[str]:
    """The DataFrame columns a Parquet file reads as (a stored pandas index is not one)."""
    return [str(c) for c in _parquet_file(pq, path).schema_arrow.empty_table().to_pandas().columns]


def _is_arrow(err: BaseException) -> bool:
    return type(err).__module__.startswith("pyarrow")


def _to_pandas(batch):
    """A record batch as a DataFrame; integers and booleans as nullable pandas dtypes (not
    float64 or object when the batch holds a null)."""
    return batch.to_pandas(types_mapper=_nullable_dtype)


def _nullable_dtype(arrow_type):
    """pandas' nullable dtype for an Arrow integer or boolean type (else None: the default)."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_integer(arrow_type):
        name = f"{'U' if pa.types.is_unsigned_integer(arrow_type) else ''}Int{arrow_type.bit_width}"
        return pd.api.types.pandas_dtype(name)
    return None


def _with_partitions(frame, values):
    """``frame`` with one text column per partition key, the part's value in every row."""
    import pandas as pd

    for key, value in values:
        frame[key] = pd.Series([value] * len(frame), index=frame.index, dtype=object)
    return frame


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
        if not (path.is_dir() or is_parquet_file(path)):
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


class _SelectedFrames(FrameSource):
    """Some columns of another source, in the given order (synth-table's --columns/--drop)."""

    def __init__(self, rows: FrameSource, columns):
        self.rows, self.columns = rows, [str(c) for c in columns]

    def frames(self):
        for offset, frame in self.rows.frames():
            yield offset, frame[self.columns]

    def n_rows(self) -> int:
        return self.rows.n_rows()

    def in_memory(self):
        df = self.rows.in_memory()
        return None if df is None else df[self.columns]


def select_columns(rows: FrameSource, columns) -> FrameSource:
    """``rows`` with only ``columns`` (public names, each one of ``rows.columns``)."""
    unknown = [c for c in columns if c not in rows.columns]
    if unknown:
        raise ValueError(f"column(s) {unknown} are not in the table (columns: {rows.columns})")
    return _SelectedFrames(rows, columns)


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
