"""Reading private tables and writing outputs safely.

Readers turn a CSV / TSV / ``.npy`` / Parquet file into a finite float array
(rows x features). Every problem with the file raises ``ValueError`` with one
line that names the file and what to fix (missing file, empty file, header
only, non-numeric column, missing or infinite values, ragged rows, unknown
column).

Writers are atomic: each output goes to a temporary file in the target folder
and is moved into place with ``os.replace`` only when complete, so a crash
or an error never leaves a partial output behind. :func:`check_output_path`
checks an output path *before* any private computation runs, so a bad path
costs no privacy budget.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

__all__ = [
    "Table",
    "read_table",
    "read_points",
    "parse_columns",
    "check_output_path",
    "check_distinct_paths",
    "report_path_for",
    "atomic_write",
    "write_outputs",
    "write_points",
    "write_json",
    "READ_FORMATS",
    "WRITE_FORMATS",
    "scan_delimited",
    "named_header",
    "text_column",
]

_DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
READ_FORMATS = (".csv", ".tsv", ".tab", ".npy", ".parquet", ".pq")
WRITE_FORMATS = (".csv", ".tsv", ".npy", ".parquet")
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
    suffix = path.suffix.lower()
    if suffix not in READ_FORMATS:
        raise ValueError(
            f"{path}: unsupported file type {suffix or '(none)'!r}; "
            f"use one of {', '.join(READ_FORMATS)}"
        )
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


def _all_numeric(row: list[str]) -> bool:
    try:
        [float(c) for c in row]
    except ValueError:
        return False
    return True


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
            f"(ragged rows: {bad.size} line(s) differ); make every row the same length"
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


def _check_finite(path: Path, values: np.ndarray, name: str, first_line: int | None) -> None:
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        where = f"row {int(bad[0])}" if first_line is None else f"line {first_line + int(bad[0])}"
        raise ValueError(
            f"{path}: column {name!r} has NaN or infinite values ({bad.size}, first at {where}); "
            "drop or impute them first"
        )


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(map(str, names[:_MAX_LISTED]))
    return shown + (f", ... ({len(names)} in all)" if len(names) > _MAX_LISTED else "")


# -- tables of text cells (the tabular and text readers) ----------------------------


def scan_delimited(path, sep: str) -> tuple[list[str], int]:
    """Line 1's cells (stripped) and the number of fields, reading the whole file once.

    Refuses a file that is not UTF-8, one with no rows, and ragged rows (naming the first
    odd line); quotes no cell. Blank lines are skipped (as pandas does).
    """
    path = Path(path)
    first: list[str] | None = None
    line = 0
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, delimiter=sep)
            for row in reader:
                line = reader.line_num
                if not row or not any(c.strip() for c in row) and len(row) <= 1:
                    continue
                if first is None:
                    first = [c.strip() for c in row]
                elif len(row) != len(first):
                    raise ValueError(
                        f"{path}: line {line} has {len(row)} fields but line 1 has "
                        f"{len(first)}; make every row the same length"
                    )
    except UnicodeDecodeError:
        raise ValueError(
            f"{path} is not UTF-8 text (near line {line + 1}); save it as UTF-8 CSV/TSV"
        ) from None
    except csv.Error as err:
        raise ValueError(
            f"{path} is not valid delimited text (line {line + 1}: {_csv_reason(err)}); "
            "check quoting and the delimiter"
        ) from None
    if first is None:
        raise ValueError(f"{path} has no rows (only blank lines); it needs a header and rows")
    return first, len(first)


def _csv_reason(err: csv.Error) -> str:
    """csv's reason without any text it may quote from the file."""
    return str(err).split(":", 1)[0].split("'", 1)[0].strip() or "parse error"


def named_header(
    path, cells: list[str], names: Sequence[str] | None, header: bool | None, what: str
) -> bool:
    """Whether line 1 (``cells``) is the header, by the tabular header rule.

    With public column ``names`` (the metadata's or the description's, ``what`` says
    which): line 1 is the header exactly when its cells are those names, each once (in
    any order); otherwise every line is data, its columns in the declared order (their
    number must match). ``header=True`` requires the match, ``False`` makes line 1 data.
    Without public names: ``header`` True or None takes line 1 as the header (the
    caller decides whether its names may be shown), False makes it data.
    No message quotes a cell of line 1: they give its positions only.
    """
    if names is None:
        if header is not False:
            _check_header_names(path, cells)
        return header is not False
    names = list(names)
    declared = set(names)
    listing = _listing(names)
    matches = len(cells) == len(names) and set(cells) == declared
    if header is False:
        matches = False
    elif not matches and any(c in declared for c in cells):
        if declared.issubset(cells) and len(set(cells)) == len(cells):
            extra = [j for j, c in enumerate(cells) if c not in declared]
            raise ValueError(
                f"{path}: line 1 holds the {what}'s columns and {len(extra)} more: the table "
                f"column(s) at index {_listing(extra)} have no {what}; describe them or drop them"
            )
        if header is None and all(c in declared for c in cells):
            raise ValueError(
                f"{path}: line 1 names the {what}'s columns ({listing}) but not each "
                "exactly once; fix the header (or pass --no-header if line 1 is data)"
            )
    if header is True and not matches:
        raise ValueError(
            f"{path}: line 1 is not the header the {what} declares ({listing}); "
            "fix the header, or drop --header if line 1 is data"
        )
    if not matches and len(cells) != len(names):
        raise ValueError(
            f"{path}: line 1 is not the {what}'s header ({listing}) and has {len(cells)} "
            f"fields where the {what} declares {len(names)} columns; give a header naming "
            "them, or rows of exactly those columns"
        )
    return matches


def _check_header_names(path, cells: list[str]) -> None:
    """Header names must be non-empty and distinct (positions only in the message)."""
    empty = [j for j, c in enumerate(cells) if not c]
    if empty:
        raise ValueError(
            f"{path}: line 1 (the header) has an empty name at column index "
            f"{_listing(empty)}; name every column (a trailing delimiter adds an empty one)"
        )
    seen: dict[str, int] = {}
    for j, c in enumerate(cells):
        if c in seen:
            raise ValueError(
                f"{path}: line 1 (the header) repeats a name (column indices {seen[c]} and "
                f"{j}); give every column its own name"
            )
        seen[c] = j


def text_column(rows, path, column: str) -> list[str]:
    """The cells of the text column ``column`` from ``rows`` (a csv reader), by the header rule.

    Line 1 must be the header: one of its cells is ``column`` (a public name, the
    option's value), and that column's cells below it are the texts. A line 1
    without it is refused; no message quotes a cell, only line numbers and positions.
    """
    path = Path(path)
    numbered: list[tuple[int, list[str]]] = []
    for row in rows:  # (line number, cells); blank lines skipped
        if row:
            numbered.append((getattr(rows, "line_num", len(numbered) + 1), row))
    if not numbered:
        return []
    first = [c.strip() for c in numbered[0][1]]
    if column not in first:
        raise ValueError(
            f"{path} has no column {column!r} in line 1 (line 1 has {len(first)} field(s), "
            "not listed: without the name it may be data); a CSV/TSV of texts needs a header "
            "line naming the text column: pass its name as --column, or give a .txt file "
            "(one text per line)"
        )
    if first.count(column) > 1:
        raise ValueError(
            f"{path}: line 1 names the column {column!r} {first.count(column)} times; "
            "give every column its own name"
        )
    j, width = first.index(column), len(first)
    for line, row in numbered[1:]:
        if len(row) != width:
            raise ValueError(
                f"{path}: line {line} has {len(row)} fields but line 1 has {width}; "
                "make every row the same length"
            )
    return [row[j] for _, row in numbered[1:]]


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
        raise ValueError(
            f"{path} holds a {array.ndim}-D array of shape {array.shape}; "
            "save a 2-D array (rows x features), "
            "e.g. X.reshape(-1, 1) for one feature"
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(
            f"{path} holds an empty array of shape {array.shape}; "
            "it needs at least one row and column"
        )
    names = [str(j) for j in range(array.shape[1])]
    picked = _pick_columns(path, names, wanted)
    data = np.asarray(array[:, picked], dtype=np.float64)
    for i, j in enumerate(picked):
        _check_finite(path, data[:, i], names[j], None)
    return data, [names[j] for j in picked]


def _read_parquet(path: Path, wanted: list[str] | None) -> tuple[np.ndarray, list[str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'privevo[io]'") from None
    try:
        names = list(pq.read_schema(path).names)
    except Exception as err:  # pyarrow raises several types for a corrupt file
        raise ValueError(f"{path} is not a readable Parquet file ({_first_line(err)})") from None
    picked = [names[j] for j in _pick_columns(path, names, wanted)]
    try:
        table = pq.read_table(path, columns=picked)
    except Exception as err:  # a corrupt page or footer: name the file
        raise ValueError(f"{path} is not a readable Parquet file ({_first_line(err)})") from None
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
    if column.null_count:
        raise ValueError(
            f"{path}: column {name!r} has {column.null_count} missing value(s); "
            "drop or impute them first"
        )
    values = column.to_numpy().astype(np.float64)
    _check_finite(path, values, name, None)
    return values


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


# -- writing --------------------------------------------------------------------


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
