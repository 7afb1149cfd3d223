"""Reading private tables: the one reader of private files (docs/architecture.md).

A CSV / TSV / ``.npy`` / Parquet file, or a folder of ``.npy`` or Parquet parts, becomes a
finite float array (rows x features) and its column names. One rule set for every
command and estimator:

* **header** (CSV/TSV): line 1 is a header only when every cell of it is non-empty and not
  a number while the columns below hold numbers, or when it is declared (``header=True``,
  or column names asked for); a line that could be data is never taken for a header. The
  tables of text cells (tabular, text) and the files of texts follow :mod:`.headers`.
* **nulls**: an empty cell, a Parquet null, NaN or ±inf is refused at read time, naming the
  column and the first line or row; a folder streamed block by block carries them as NaN,
  which the vote kernel refuses when it reads the block.
* **folders**: parts of one kind (:func:`~privevo.private.files.open_source`), hidden
  entries skipped; an unreadable part is named.
* **errors**: ``ValueError`` with one line that names the file and what to fix; no message
  quotes a cell (it gives the line and the column).
"""

from __future__ import annotations

import contextlib
import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .files import NpySource, import_pyarrow, open_source, unreadable_parquet

__all__ = [
    "Table",
    "READ_FORMATS",
    "parse_columns",
    "read_points",
    "read_table",
    "read_folder",
    "hidden_parts",
    "naming_the_file",
]

_DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
READ_FORMATS = (".csv", ".tsv", ".tab", ".npy", ".parquet", ".pq")
_MAX_LISTED = 12


@dataclass(frozen=True)
class Table:
    """A numeric table read from a file: ``data`` (n, d) float64 and its column names."""

    data: np.ndarray
    columns: list[str]
    path: str


def parse_columns(spec: str | Sequence[str] | None) -> list[str] | None:
    """``"a,b"`` or ``["a", "b"]`` → ``["a", "b"]``; ``None`` keeps every column."""
    if spec is None:
        return None
    if isinstance(spec, str):
        items = spec.split(",")
    else:
        items = [p for s in spec for p in str(s).split(",")]
    names = [s.strip() for s in items if s.strip()]
    if not names:
        raise ValueError(
            "--columns is empty; give column names or 0-based indices, e.g. --columns x,y"
        )
    return names


def read_points(
    path, columns: str | Sequence[str] | None = None, header: bool | None = None
) -> np.ndarray:
    """The selected columns of ``path`` as a finite float array (n, d)."""
    return read_table(path, columns, header).data


def read_table(
    path, columns: str | Sequence[str] | None = None, header: bool | None = None
) -> Table:
    """Read a CSV/TSV, ``.npy`` (2-D numeric) or Parquet file.

    ``header`` (CSV/TSV only): True, the first line holds the column names; False, every line
    is data; None (default), the first line is a header only when every cell of it is
    non-empty and not a number while the selected columns below it hold only numbers (or
    empty cells, which are then refused with their line), or when
    ``columns`` names a column (names need a header). A line that could be data is never
    taken for a header, and no error message quotes a cell (it gives line and column).
    """
    path = Path(path)
    wanted = parse_columns(columns)
    suffix = _checked_suffix(path, READ_FORMATS)
    if path.is_dir():
        raise ValueError(f"{path} is a directory; give a data file ({', '.join(READ_FORMATS)})")
    if not path.exists():
        raise ValueError(f"data file not found: {path}; check the path")
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty; it needs rows of numbers (a header line is optional)")
    if suffix == ".npy":
        data, names = _read_npy(path, wanted)
    elif suffix in (".parquet", ".pq"):
        data, names = _read_parquet(path, wanted)
    else:
        data, names = _read_delimited(path, _DELIMITERS[suffix], wanted, header)
    return Table(data, names, str(path))


def _checked_suffix(path: Path, formats: Sequence[str], kind: str = "file") -> str:
    """``path``'s suffix, lower-cased; refused (one line) unless it is one of ``formats``."""
    suffix = path.suffix.lower()
    if suffix not in formats:
        raise ValueError(
            f"{path}: unsupported {kind} type {suffix or '(none)'!r}; "
            f"use one of {', '.join(formats)}"
        )
    return suffix


# -- delimited text -----------------------------------------------------------


def _read_delimited(
    path: Path, sep: str, wanted: list[str] | None, header: bool | None
) -> tuple[np.ndarray, list[str]]:
    rows = _csv_rows(path, sep)
    if not rows:
        raise ValueError(f"{path} has no rows (only blank lines); it needs rows of numbers")
    grid = _grid(rows)
    parsed: dict[int, np.ndarray] = {}
    if header is None:
        header, parsed = _has_header(path, rows, grid, wanted)
    names = [c.strip() for c in rows[0]] if header else [str(j) for j in range(len(rows[0]))]
    first_line = 2 if header else 1
    if len(rows) < first_line:
        raise ValueError(f"{path} has a header but no data rows; add at least one row of numbers")
    if grid is None:  # rows of different lengths: refused, naming the first odd line
        _check_ragged(path, rows[first_line - 1 :], len(names), first_line, header)
    # a header cell that could be data (a number, an empty cell) is never quoted
    shown = not header or all(c and not _is_float(c) for c in names)
    picked = _pick_columns(path, names, wanted, shown)
    cells = grid[first_line - 1 :]
    labels = [names[j] if shown else _Position(f"index {j}") for j in range(len(names))]
    data = np.column_stack(
        [_numeric_column(path, cells[:, j], labels[j], first_line, parsed.get(j)) for j in picked]
    )
    return data, [names[j] for j in picked]


class _Position(str):
    """A column named by its position in messages (``column index 2``), unquoted."""

    def __repr__(self) -> str:
        return str(self)


def _grid(rows: list[list[str]]) -> np.ndarray | None:
    """The cells, stripped, as a (lines, fields) string array; None if line lengths differ."""
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        return None
    return np.char.strip(np.array(rows, dtype=str).reshape(len(rows), width))


def _has_header(
    path: Path, rows: list[list[str]], grid: np.ndarray | None, wanted: list[str] | None
) -> tuple[bool, dict[int, np.ndarray]]:
    """The default header rule (see :func:`read_table`), and the columns it parsed below line 1
    (reused); refuses when it cannot tell."""
    if wanted is not None and not all(_is_index(w) for w in wanted):
        return True, {}  # column names were given: the file must have a header
    first = [c.strip() for c in rows[0]]
    if not all(c and not _is_float(c) for c in first):
        return False, {}  # a number or an empty cell: the first line is data
    if len(rows) == 1 or grid is None:
        return True, {}  # header only, or ragged rows: both are refused next, quoting no cell
    columns = range(len(first)) if wanted is None else [int(w) for w in wanted]
    columns = sorted({j for j in columns if 0 <= j < len(first)})
    cells = grid[1:, columns]
    try:  # numbers below (an empty cell is a missing number, refused next with its line)
        values = np.where(cells == "", "nan", cells).astype(np.float64)
    except ValueError:  # line 1 or a line below is not numbers: either way, name the cell below
        for i, j in enumerate(columns):
            column = np.where(cells[:, i] == "", "0", cells[:, i])
            if not all(map(_is_float, column)):
                raise _cell_error(path, column, first[j], 2) from None
        raise
    return True, {j: values[:, i] for i, j in enumerate(columns)}


def _is_index(name: str) -> bool:
    return name.lstrip("-").isdigit()


def _csv_rows(path: Path, sep: str) -> list[list[str]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle, delimiter=sep))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; save it as UTF-8 CSV/TSV or as .npy") from None
    except csv.Error as err:
        raise ValueError(
            f"{path} is not valid delimited text ({err}); check quoting and the delimiter"
        ) from None
    while rows and not any(c.strip() for c in rows[-1]):  # trailing blank lines
        rows.pop()
    return rows


def _check_ragged(
    path: Path, body: list[list[str]], width: int, first_line: int, has_header: bool
) -> None:
    lengths = np.fromiter(map(len, body), dtype=np.int64, count=len(body))
    bad = np.flatnonzero(lengths != width)
    if bad.size:
        i = int(bad[0])
        what = "the header has" if has_header else "the first row has"
        raise ValueError(
            f"{path}: line {first_line + i} has {lengths[i]} fields but {what} {width} "
            "(ragged rows); make every row the same length"
        )


def _pick_columns(
    path: Path, names: list[str], wanted: list[str] | None, shown: bool = True
) -> list[int]:
    """Indices of the ``wanted`` columns; ``shown``: the names may be listed in a message
    (False when line 1 could be data: then only their number is given)."""
    if wanted is None:
        return list(range(len(names)))
    index = {name: j for j, name in enumerate(names)}
    picked = []
    for name in wanted:
        if name in index:
            picked.append(index[name])
        elif _is_index(name) and 0 <= int(name) < len(names):
            picked.append(int(name))
        elif shown:
            raise ValueError(
                f"{path}: unknown column {name!r}; available columns: {_listing(names)}"
            )
        else:
            raise ValueError(
                f"{path}: unknown column {name!r}; line 1 has {len(names)} fields and none is "
                f"{name!r} (they are not listed: line 1 holds a number or an empty cell, so it "
                f"may be data); give 0-based indices 0..{len(names) - 1}, or pass --no-header"
            )
    return picked


def _numeric_column(
    path: Path, cells: np.ndarray, name: str, first_line: int, values: np.ndarray | None = None
) -> np.ndarray:
    """A column of stripped cells as floats (``values``: already parsed, empty cells as NaN)."""
    if values is None:
        try:
            values = cells.astype(np.float64)
        except ValueError:
            raise _cell_error(path, cells, name, first_line) from None
    else:
        nan_rows = np.flatnonzero(np.isnan(values))
        if (cells[nan_rows] == "").any():
            raise _cell_error(path, cells, name, first_line)
    _check_finite(path, values, name, first_line)
    return values


def _cell_error(path: Path, cells: np.ndarray, name: str, first_line: int) -> ValueError:
    """The first cell that is not a number, by line and column, never by content."""
    bad = next(i for i, c in enumerate(cells) if not _is_float(c))
    if cells[bad] == "":
        return ValueError(
            f"{path}: column {name!r} has an empty cell at line {first_line + bad}; "
            "drop or impute missing values first"
        )
    hint = ""
    if first_line == 1 and bad == 0:
        hint = (
            "; line 1 was read as data, as it holds a number or an empty cell (a trailing "
            "delimiter adds an empty one): pass --header if it holds column names"
        )
    return ValueError(
        f"{path}: column {name!r} is not numeric (line {first_line + bad} holds a "
        f"non-number); choose numeric columns with --columns{hint}"
    )


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_finite(
    path, values: np.ndarray, name: str, first_line: int | None, rows_of: str = ""
) -> None:
    """Refuse NaN or ±inf, naming the column and the first line (or row: ``rows_of`` says of
    what) that holds one; never the value, never how many rows hold one."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        where = (
            f"row {int(bad[0])}{rows_of}"
            if first_line is None
            else f"line {first_line + int(bad[0])}"
        )
        raise ValueError(
            f"{path}: column {name!r} has NaN or infinite values (first at {where}); "
            "drop or impute them first"
        )


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(map(str, names[:_MAX_LISTED]))
    return shown + (f", ... ({len(names)} in all)" if len(names) > _MAX_LISTED else "")


# -- binary formats -----------------------------------------------------------


def _read_npy(path: Path, wanted: list[str] | None) -> tuple[np.ndarray, list[str]]:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError):  # numpy may suggest allow_pickle: never do that
        raise ValueError(
            f"{path} is not a readable .npy file (no valid .npy header); save it with numpy.save"
        ) from None
    if array.dtype.kind not in "fiub":
        raise ValueError(f"{path} holds {array.dtype} values; save a numeric array (float or int)")
    if array.ndim != 2:
        raise ValueError(  # the number of axes, never the shape: it holds n
            f"{path} holds a {array.ndim}-D array; save a 2-D array (rows x features), "
            "e.g. X.reshape(-1, 1) for one feature"
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        empty = "no rows" if array.shape[0] == 0 else "no columns"
        raise ValueError(
            f"{path} holds an empty array ({empty}); it needs at least one row and column"
        )
    names = [str(j) for j in range(array.shape[1])]
    picked = _pick_columns(path, names, wanted)
    data = np.asarray(array[:, picked], dtype=np.float64)
    for i, j in enumerate(picked):
        _check_finite(path, data[:, i], names[j], None)
    return data, [names[j] for j in picked]


def _read_parquet(path: Path, wanted: list[str] | None) -> tuple[np.ndarray, list[str]]:
    pq = import_pyarrow()
    try:
        names = list(pq.read_schema(path).names)
    except Exception as err:  # pyarrow raises several types for a corrupt file
        raise unreadable_parquet(path, err) from None
    picked = [names[j] for j in _pick_columns(path, names, wanted)]
    try:
        table = pq.read_table(path, columns=picked)
    except Exception as err:  # a corrupt page or footer: name the file
        raise unreadable_parquet(path, err) from None
    if table.num_rows == 0:
        raise ValueError(f"{path} has columns but no data rows; add at least one row")
    return np.column_stack([_parquet_column(path, table.column(c), c) for c in picked]), picked


def _parquet_column(path: Path, column, name: str) -> np.ndarray:
    import pyarrow as pa

    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise ValueError(
            f"{path}: column {name!r} is not numeric ({kind}); "
            "choose numeric columns with --columns"
        )
    if column.null_count:  # the first null's row, never how many there are
        first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(
            f"{path}: column {name!r} has missing values (first at row {first}); "
            "drop or impute them first"
        )
    values = column.to_numpy().astype(np.float64)
    _check_finite(path, values, name, None)
    return values


# -- folders of parts -------------------------------------------------------------


def read_data(
    path, columns: str | Sequence[str] | None = None, header: bool | None = None, *, stream=False
) -> Table:
    """A file (:func:`read_table`) or a folder of parts (:func:`read_folder`)."""
    if Path(path).is_dir():
        return read_folder(path, columns, stream=stream)
    return read_table(path, columns, header)


def read_folder(path, columns: str | Sequence[str] | None = None, *, stream: bool = False) -> Table:
    """A folder of Parquet or ``.npy`` row partitions (:func:`~.files.open_source`).

    ``stream``: the table holds the block source itself, never loaded whole (its rows are
    checked as each block is read); otherwise the rows are read into memory and checked.
    """
    wanted = parse_columns(columns)
    with naming_the_file(path):
        source = open_source(path, columns=wanted)  # refuses a folder of mixed kinds
    if wanted is not None and isinstance(source, NpySource):
        raise ValueError(
            "--columns is not supported for a folder of .npy files; save the feature columns only"
        )
    if source.shape[0] == 0:
        raise ValueError(f"{path} holds no rows; it needs rows of numbers")
    names = list(getattr(source, "columns", ()))
    if isinstance(source, NpySource) or len(names) != source.shape[1]:
        names = [str(j) for j in range(source.shape[1])]
    if stream:
        return Table(source, names, str(path))
    with naming_the_file(path):
        data = np.asarray(source, dtype=np.float64)
    for j, name in enumerate(names):
        _check_finite(path, data[:, j], name, None, " of the folder's parts in name order")
    return Table(data, names, str(path))


def hidden_parts(folder) -> list[str]:
    """The hidden entries of ``folder`` (names starting with '.'), which are never read."""
    return sorted(f.name for f in Path(folder).iterdir() if f.name.startswith("."))


@contextlib.contextmanager
def naming_the_file(path):
    """Errors of a folder's parts (pyarrow's, or a bare "private data ...") name the folder
    and, for an unreadable Parquet part, the part."""
    try:
        yield
    except ValueError as err:
        if not Path(path).is_dir() or str(path) in str(err):
            raise
        raise ValueError(f"{path}: {_one_line(err)}") from None
    except Exception as err:  # pyarrow raises OSError or its own types for a corrupt part
        arrow = type(err).__module__.startswith("pyarrow")
        folder = Path(path).is_dir() and (arrow or isinstance(err, OSError))
        part = _broken_part(Path(path)) if folder else None
        if part is None:
            raise
        raise unreadable_parquet(part, err) from None


def _broken_part(folder: Path) -> str | None:
    """The first Parquet part of ``folder`` that fails to read (one row group at a time)."""
    try:
        pq = import_pyarrow()
    except ImportError:
        return None
    for part in sorted(folder.iterdir()):
        if part.suffix not in (".parquet", ".pq"):
            continue
        try:
            handle = pq.ParquetFile(part)
            for group in range(handle.num_row_groups):
                handle.read_row_group(group)
        except Exception:
            return str(part)
    return None


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__
