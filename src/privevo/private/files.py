"""Private data larger than memory: sources read block by block.

A *block source* describes a data set on disk (``shape``, ``dtype``) and reads
it one block at a time (:meth:`BlockSource.iter_blocks`). The private
histogram (:meth:`privevo.private.blocks.Source.count`) counts each block with the
same kernel as in-memory data (:func:`~privevo.private.kernel.partial_counts`, the
*map*) and sums the counts (the *reduce*), so the counts are identical to the
in-memory ones and peak memory is bounded by one block, not by n.

Blocks are described by small picklable references (:meth:`BlockSource.block_refs`),
so the Dask backend (:mod:`privevo.private.dask`) reads each block on a worker.

* :class:`ParquetSource` — a Parquet file or a directory of Parquet files; one
  block per row group (write row groups of ~10⁵ rows to bound memory).
* :class:`NpySource` — a C-ordered ``.npy`` file or a folder of them; each block
  is memory-mapped, copied and unmapped, so resident memory stays at one block.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .blocks import Source
from .domain import clip_to_ball

__all__ = [
    "BlockSource",
    "ParquetSource",
    "NpySource",
    "ClippedSource",
    "open_source",
    "is_parquet_file",
    "import_pyarrow",
    "unreadable_parquet",
]

_DEFAULT_BLOCK_BYTES = 2**25  # 32 MiB per .npy block


class BlockSource(Source):
    """A 2-D private data set (n rows × d features) read block by block."""

    shape: tuple[int, int]
    dtype: np.dtype
    ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def dim(self) -> int:
        return self.shape[1]

    def n_rows(self) -> int:
        return self.shape[0]

    def blocks(self) -> Iterator[np.ndarray]:
        return self.iter_blocks()

    def block_refs(self) -> list:
        """Picklable references with ``.read() -> ndarray`` and ``.rows``, in row order."""
        raise NotImplementedError

    def iter_blocks(self) -> Iterator[np.ndarray]:
        """The data as consecutive (rows, d) arrays; one block in memory at a time."""
        for ref in self.block_refs():
            yield ref.read()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """Every block in one array, for estimators that need the data in memory (n·d values!)."""
        out = np.empty(self.shape, dtype=dtype or self.dtype)
        start = 0
        for block in self.iter_blocks():
            out[start : start + len(block)] = block
            start += len(block)
        return out

    def __repr__(self) -> str:
        blocks = len(self.block_refs())
        return f"{type(self).__name__}({self.path!r}, shape={self.shape}, blocks={blocks})"


# ---------------------------------------------------------------- Parquet


@dataclass(frozen=True)
class ParquetRowGroup:
    """One row group of one Parquet file, read as a (rows, d) array."""

    path: str
    index: int
    rows: int
    columns: tuple[str, ...]
    dtype: str

    def read(self) -> np.ndarray:
        import pyarrow.parquet as pq

        table = pq.ParquetFile(self.path).read_row_group(self.index, columns=list(self.columns))
        return _table_to_array(table, np.dtype(self.dtype))


class ParquetSource(BlockSource):
    """A Parquet file or a directory of ``*.parquet`` files as private rows.

    Parameters
    ----------
    path : file or directory (files are read in sorted name order)
    columns : feature columns (default: every column). Numeric columns give one
        feature each; a single ``fixed_size_list`` column (an embedding) gives d.

    ``shape`` comes from the files' metadata, without reading data. Peak memory
    is about one row group (as decoded float array) per reader.
    """

    def __init__(self, path, columns: Sequence[str] | None = None):
        pq = import_pyarrow()
        self.path = str(path)
        self.files = _files(Path(path), ".parquet", ".pq")
        schema = _parquet_file(pq, self.files[0]).schema_arrow
        self.columns = tuple(columns) if columns is not None else tuple(schema.names)
        d, self.dtype = _parquet_layout(schema, self.columns)
        self._refs = [
            ParquetRowGroup(f, i, meta.row_group(i).num_rows, self.columns, self.dtype.str)
            for f in self.files
            for meta in [_checked_metadata(pq, f, schema, self.columns)]
            for i in range(meta.num_row_groups)
        ]
        self.shape = (sum(ref.rows for ref in self._refs), d)

    def block_refs(self) -> list[ParquetRowGroup]:
        return list(self._refs)


PARQUET_SUFFIXES = (".parquet", ".pq")


def is_parquet_file(path) -> bool:
    """Whether a file path names a Parquet file: its suffix in any case (``T.PARQUET`` too).
    The one suffix rule of every Parquet entry point (parts inside a folder must be lower
    case: :func:`_check_one_kind`)."""
    return Path(os.fspath(path)).suffix.lower() in PARQUET_SUFFIXES


def _files(path: Path, *suffixes: str) -> list[str]:
    """``[path]`` for a file, else the folder's files with one of ``suffixes``, sorted by name."""
    if path.is_dir():
        files = sorted(str(p) for p in _parts(path) if p.suffix in suffixes)
        if not files:
            raise ValueError(
                f"path {str(path)!r} holds no *{suffixes[0]} files; point it at a {suffixes[0]} "
                "file or a folder of them"
            )
        return files
    if not path.is_file():
        raise ValueError(
            f"path {str(path)!r} does not exist; give a {suffixes[0]} file or a folder of them"
        )
    return [str(path)]


def _parquet_layout(schema, columns: tuple[str, ...]) -> tuple[int, np.dtype]:
    """(d, dtype) of the selected columns: numeric columns, or one fixed-size-list column."""
    import pyarrow as pa

    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ValueError(
            f"columns {missing} are not in the Parquet schema {schema.names}; choose columns that "
            "exist"
        )
    types = [schema.field(c).type for c in columns]
    if len(types) == 1 and pa.types.is_fixed_size_list(types[0]):
        value = types[0].value_type
        if not (pa.types.is_floating(value) or pa.types.is_integer(value)):
            raise ValueError(f"column {columns[0]!r} must hold numbers, got {value}")
        return types[0].list_size, _float_dtype([value])
    bad = [
        c for c, t in zip(columns, types) if not (pa.types.is_floating(t) or pa.types.is_integer(t))
    ]
    if bad:
        raise ValueError(
            f"columns {bad} are not numeric; choose the numeric feature columns only "
            "(--columns on the command line, columns=[...] in Python)"
        )
    return len(columns), _float_dtype(types)


def _float_dtype(types) -> np.dtype:
    """float32 if every column is float32 (the kernel's native width), else float64."""
    import pyarrow as pa

    return np.dtype(np.float32) if all(t == pa.float32() for t in types) else np.dtype(np.float64)


def _checked_metadata(pq, path: str, schema, columns):
    meta = _parquet_file(pq, path).metadata
    other = meta.schema.to_arrow_schema()
    for c in columns:
        if c not in other.names or other.field(c).type != schema.field(c).type:
            raise ValueError(
                f"Parquet file {path!r} does not have column {c!r} of type {schema.field(c).type}; "
                "all files must share one schema"
            )
    return meta


def _parquet_file(pq, path: str):
    """``pq.ParquetFile(path)``; a corrupt file is refused in one line that names it."""
    try:
        return pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several types for a corrupt footer
        raise unreadable_parquet(path, err) from None


def unreadable_parquet(path, err: BaseException) -> ValueError:
    """The one refusal of a Parquet file pyarrow cannot read: the file and pyarrow's first
    line (a reason, such as a bad footer or magic bytes)."""
    text = str(err).strip().splitlines()
    reason = text[0] if text else type(err).__name__
    return ValueError(f"{path} is not a readable Parquet file ({reason}); replace or remove it")


def _table_to_array(table, dtype: np.dtype) -> np.ndarray:
    """A pyarrow Table (numeric columns or one fixed-size-list column) as a (rows, d) array."""
    import pyarrow as pa

    if table.num_columns == 1 and pa.types.is_fixed_size_list(table.schema.types[0]):
        col = table.column(0).combine_chunks()
        if col.null_count:
            return np.full(
                (len(col), col.type.list_size), np.nan, dtype=dtype
            )  # rejected by the kernel
        return (
            col.flatten()
            .to_numpy(zero_copy_only=False)
            .astype(dtype, copy=False)
            .reshape(len(col), -1)
        )
    out = np.empty((table.num_rows, table.num_columns), dtype=dtype)
    for j, col in enumerate(table.columns):  # a loop over features, not rows
        out[:, j] = col.to_numpy()
    return out


def import_pyarrow():
    """``pyarrow.parquet``, or an ImportError that says what to install."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'privevo[io]'") from None
    return pq


# ---------------------------------------------------------------- .npy


@dataclass(frozen=True)
class NpyRows:
    """Rows [start, stop) of a C-ordered .npy file, memory-mapped only while read."""

    path: str
    offset: int  # byte offset of the array data
    start: int
    stop: int
    dim: int
    dtype: str

    @property
    def rows(self) -> int:
        return self.stop - self.start

    def read(self) -> np.ndarray:
        dtype = np.dtype(self.dtype)
        offset = self.offset + self.start * self.dim * dtype.itemsize
        view = np.memmap(
            self.path, dtype=dtype, mode="r", offset=offset, shape=(self.rows, self.dim)
        )
        block = np.array(view)  # copy, then unmap: resident memory stays one block
        del view
        return block


class NpySource(BlockSource):
    """A 2-D C-ordered ``.npy`` file, or a folder of them (row partitions, sorted by name),
    read in blocks of ``block_rows`` rows (default: blocks of ~32 MiB)."""

    def __init__(self, path, block_rows: int | None = None):
        self.path = str(path)
        self._files = [_npy_layout(f) for f in _files(Path(path), ".npy")]
        dims = {f[2] for f in self._files}
        dtypes = {f[3] for f in self._files}
        if len(dims) > 1 or len(dtypes) > 1:
            raise ValueError(
                f"the .npy files in {self.path!r} differ in columns {sorted(dims)} or dtype "
                f"{sorted(map(str, dtypes))}; save one layout"
            )
        self.dtype = self._files[0][3]
        self.shape = (sum(f[1] for f in self._files), self._files[0][2])
        if block_rows is not None and not (
            isinstance(block_rows, (int, np.integer)) and block_rows >= 1
        ):
            raise ValueError(f"block_rows must be an integer >= 1, got {block_rows!r}")
        row_bytes = max(1, self.shape[1] * self.dtype.itemsize)
        self.block_rows = int(block_rows or max(1, _DEFAULT_BLOCK_BYTES // row_bytes))

    def block_refs(self) -> list[NpyRows]:
        return [
            NpyRows(path, offset, s, min(n, s + self.block_rows), d, dtype.str)
            for path, n, d, dtype, offset in self._files
            for s in range(0, n, self.block_rows)
        ]


def _npy_layout(path: str) -> tuple[str, int, int, np.dtype, int]:
    """(path, rows, columns, dtype, data offset) of a 2-D C-ordered numeric .npy file."""
    shape, fortran, dtype, offset = _npy_header(path)
    if len(shape) != 2:
        raise ValueError(  # the number of axes, never the shape: it holds n
            f"{path!r} holds a {len(shape)}-D array; save a 2-D (rows x features) array"
        )
    if fortran:
        raise ValueError(
            f"{path!r} is Fortran-ordered; save it C-ordered (np.save(path, "
            "np.ascontiguousarray(x)))"
        )
    if dtype.kind not in "fiu":
        raise ValueError(f"{path!r} holds {dtype} values; save numbers (float32 is fastest)")
    return path, int(shape[0]), int(shape[1]), dtype, offset


def _npy_header(path: str):
    """(shape, fortran_order, dtype, data offset) of a .npy file, read from its header."""
    from numpy.lib import format as npy_format

    try:
        with open(path, "rb") as f:
            version = npy_format.read_magic(f)
            reader = (
                npy_format.read_array_header_1_0
                if version == (1, 0)
                else npy_format.read_array_header_2_0
            )
            shape, fortran, dtype = reader(f)
            return shape, fortran, dtype, f.tell()
    except (ValueError, EOFError, OSError):  # numpy's "EOF: reading magic string" and kin
        raise ValueError(
            f"{path} is not a readable .npy file (no valid .npy header); replace or remove it"
        ) from None


# ---------------------------------------------------------------- entry points


def open_source(
    path, columns: Sequence[str] | None = None, block_rows: int | None = None
) -> BlockSource:
    """A block source for a ``.npy`` or Parquet file, or a folder of ``.npy`` or of Parquet
    files."""
    p = Path(os.fspath(path))
    if p.is_dir():
        _check_one_kind(p)
    npy_folder = p.is_dir() and any(f.suffix == ".npy" for f in _parts(p))
    if p.suffix.lower() == ".npy" or npy_folder:
        return NpySource(p, block_rows=block_rows)
    if p.is_dir() or is_parquet_file(p):
        return ParquetSource(p, columns=columns)
    raise ValueError(f"cannot read {str(p)!r}: give a .npy or .parquet file, or a folder of them")


def _parts(folder: Path) -> list[Path]:
    """The folder's entries, sorted by name, without hidden ones (names starting with '.')."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


_KINDS = {".npy": ".npy", ".parquet": "Parquet", ".pq": "Parquet"}
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # a missing partition value (Hive, Spark, pyarrow)


def is_partitioned(folder: Path) -> bool:
    """Whether ``folder`` holds a Hive partition sub-folder (a name ``key=value``)."""
    return any(p.is_dir() and "=" in p.name for p in _parts(folder))


def partitioned_parts(folder: Path) -> list[tuple[str, tuple[tuple[str, str | None], ...]]]:
    """The Parquet files of a Hive-partitioned folder (``key=value`` sub-folders, as
    ``to_parquet(partition_cols=...)`` in pandas, Spark and Dask write them), each with its
    partition values: ``(path, ((key, value), ...))``, sorted by path.

    Values are percent-decoded text; ``__HIVE_DEFAULT_PARTITION__`` is missing (None).
    Entries whose names start with ``.`` or ``_`` (``_SUCCESS``, ``_metadata``) are not parts,
    as for those writers. Each depth must use one key, and only the last depth holds files,
    all ``.parquet``/``.pq``. A sub-folder name holds a partition value, a private cell: no
    message names a sub-folder or a file below ``folder``.
    """
    parts: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []
    keys: list[str] = []
    _walk_partitions(folder, folder, (), keys, parts)
    if not parts:
        raise _partition_error(folder, "it holds no .parquet parts")
    if len({len(values) for _, values in parts}) > 1:
        raise _partition_error(folder, "its parts lie at different depths")
    return sorted(parts)


def _walk_partitions(folder: Path, here: Path, values: tuple, keys: list, parts: list) -> None:
    """Collect the parts below ``here`` (``values``: the partitions above it) into ``parts``."""
    entries = [p for p in sorted(here.iterdir()) if not p.name.startswith((".", "_"))]
    if any(p.is_dir() for p in entries):
        if not all(p.is_dir() and "=" in p.name for p in entries):
            raise _partition_error(
                folder, "a level mixes key=value sub-folders with files or other sub-folders"
            )
        for entry in entries:
            key, value = _partition(entry.name)
            if len(keys) == len(values):
                keys.append(key)
            if keys[len(values)] != key or key in keys[: len(values)]:
                raise _partition_error(folder, "its sub-folders at one depth use different keys")
            _walk_partitions(folder, entry, (*values, (key, value)), keys, parts)
        return
    if not all(p.is_file() and p.suffix in (".parquet", ".pq") for p in entries):
        raise _partition_error(folder, "a part is not a .parquet file")
    parts.extend((str(p), values) for p in entries)


def _partition(name: str) -> tuple[str, str | None]:
    """(key, value) of a sub-folder name ``key=value``, percent-decoded; missing → None."""
    from urllib.parse import unquote

    key, _, value = name.partition("=")
    value = unquote(value)
    return unquote(key), None if value in ("", HIVE_NULL) else value


def _partition_error(folder: Path, why: str) -> ValueError:
    return ValueError(
        f"{folder} is a partitioned Parquet folder (sub-folders key=value) that privevo cannot "
        f"read: {why} (sub-folders are not named: their names hold values); write it again "
        "with partition_cols, or as one folder of .parquet parts"
    )


def _check_one_kind(folder: Path) -> None:
    """Refuse a folder unless every part (hidden entries aside) is a file of one kind, .npy or
    Parquet, with its suffix in lower case: reading one kind only would drop rows. The message
    names the first odd part."""
    parts = _parts(folder)
    if not parts:
        raise ValueError(f"{folder} is a directory without parts; it needs .npy or .parquet parts")
    kinds = [_KINDS.get(p.suffix) for p in parts]
    first = next((k for k in kinds if k is not None), None)
    if is_partitioned(folder):
        raise ValueError(
            f"{folder} is a partitioned Parquet folder (sub-folders key=value; not named: their "
            "names hold values); this reader takes one folder of parts: write the table without "
            "partition_cols (e.g. pandas.read_parquet(folder).to_parquet(...))"
        )
    for part, kind in zip(parts, kinds):
        if part.is_dir():
            why = "is a sub-folder (parts are not read from sub-folders)"
        elif not part.is_file():
            why = "is not a regular file"
        elif kind is None:
            odd = part.suffix.lower() in _KINDS
            why = (
                f"has the suffix {part.suffix!r} (write it in lower case)"
                if odd
                else f"is not a .npy or .parquet part ({part.suffix or 'no suffix'})"
            )
        elif first is not None and kind != first:
            why = f"is a {kind} part in a folder of {first} parts"
        else:
            continue
        raise ValueError(
            f"{folder}: {part.name} {why}; every part must be a {first or '.npy or Parquet'} "
            "file of the folder itself: move or remove it"
        )


# ---------------------------------------------------------------- a public per-row map


@dataclass(frozen=True)
class ClippedRef:
    """A block reference whose rows are moved into a public box or L2 ball when read."""

    ref: Any
    center: tuple[float, ...] | None
    radius: float | None
    bounds: tuple[float, float] | None

    @property
    def rows(self) -> int:
        return self.ref.rows

    def read(self) -> np.ndarray:
        block = np.asarray(self.ref.read(), dtype=np.float64)
        if self.bounds is not None:
            return np.clip(block, self.bounds[0], self.bounds[1])
        return clip_to_ball(block, self.radius, np.asarray(self.center))


class ClippedSource(BlockSource):
    """``source`` with every row clipped into the public domain as it is read (block by block).

    The same public per-row map the in-memory paths apply (each row still votes
    once); it keeps huge finite values finite.
    """

    def __init__(
        self,
        source: BlockSource,
        *,
        center=None,
        radius: float | None = None,
        bounds: tuple[float, float] | None = None,
    ):
        self.source, self.path = source, getattr(source, "path", "")
        self.shape, self.dtype = source.shape, np.dtype(np.float64)
        c = None if center is None else tuple(float(v) for v in np.ravel(center))
        self._refs = [ClippedRef(ref, c, radius, bounds) for ref in source.block_refs()]

    def block_refs(self) -> list[ClippedRef]:
        return list(self._refs)
