"""Tables of text cells (the tabular and text readers): line 1 and the header rule.

:func:`scan_delimited` reads line 1 and checks the shape of the file, :func:`named_header`
decides whether line 1 is the header against the public column names (the metadata's or a
description's), and :func:`text_column` takes a text column by its header name.
:func:`read_text_table` reads a table of text cells as a DataFrame by that rule, and
:func:`read_labelled_texts` a file of texts (CSV/TSV by that rule, JSONL, ``.txt``).
No message quotes a cell: they give line numbers and positions (docs/privacy.md).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Sequence

from .readers import _checked_suffix, _listing

__all__ = [
    "TABLE_FORMATS",
    "TEXT_FORMATS",
    "scan_delimited",
    "named_header",
    "text_column",
    "read_texts",
    "read_labelled_texts",
    "read_text_table",
]

TABLE_FORMATS = (".csv", ".tsv")
TEXT_FORMATS = (".csv", ".tsv", ".jsonl", ".txt")


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
                    raise ragged_row(path, line, len(row), len(first))
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
        _check_near_header(path, cells, names, header, what)
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


def _check_near_header(path, cells: list[str], names: list[str], header, what: str) -> None:
    """Refuse a line 1 that shares most of its cells with the declared names but is not
    the header (a misspelled or missing name): read as data, it would fail later on a
    cell. The message names the declared names it lacks (public); line 1's own other
    names only under ``--header`` (then they are public), else their positions."""
    shared = sum(c in names for c in cells)
    lacking = [n for n in names if n not in cells]
    if not lacking or 2 * shared <= max(len(cells), len(names)):
        return  # not a near match (line 1 may be a data row), or another check's case
    other = [j for j, c in enumerate(cells) if c not in names]
    said = (
        f"{[cells[j] for j in other]}"
        if header is True
        else f"at column index {_listing(other)} (pass --header to list them)"
    )
    raise ValueError(
        f"{path}: line 1 is nearly the {what}'s header but the {what}'s column(s) "
        f"{lacking} are not in it"
        + (f", and it has other column(s) {said}" if other else "")
        + f"; make the names of the {what} and of line 1 agree"
    )


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
            raise ragged_row(path, line, len(row), width)
    return [row[j] for _, row in numbered[1:]]


# -- files of texts ---------------------------------------------------------------------


def read_texts(path, column: str = "text") -> list[str]:
    """Texts from .csv/.tsv (``column``), .jsonl (key ``column``) or .txt (one per line)."""
    return read_labelled_texts(path, column)[0]


def read_labelled_texts(path, column: str = "text", label_column: str | None = None):
    """(texts, labels or None): ``label_column`` from .csv/.tsv/.jsonl (not .txt).

    Every row (every line of a .txt file, blank lines at its end aside) is one
    private record, an empty text included: dropping empty texts would make the
    number of records depend on a cell, so under replace adjacency a replaced
    text could change the public n (docs/privacy.md). A label is read as a string.
    """
    path = Path(path)
    suffix = _checked_suffix(path, TEXT_FORMATS, "text file")
    if not path.is_file():
        raise missing_file(path)
    if label_column is not None and suffix == ".txt":
        raise ValueError(f"{path}: a .txt file holds no labels; use .csv, .tsv or .jsonl")
    labels: list | None = None
    with open(path, newline="", encoding="utf-8") as handle:
        if suffix == ".txt":
            texts = [line.rstrip("\r") for line in handle.read().rstrip("\r\n").split("\n")]
        elif suffix == ".jsonl":
            lines = [(i, line) for i, line in enumerate(handle, 1) if line.strip()]
            texts = [_json_text(path, i, line, column) for i, line in lines]
            if label_column is not None:
                labels = [_json_label(path, i, line, label_column) for i, line in lines]
        else:
            delimiter = "\t" if suffix == ".tsv" else ","
            texts = text_column(csv.reader(handle, delimiter=delimiter), path, column)
            if label_column is not None:
                handle.seek(0)
                labels = text_column(csv.reader(handle, delimiter=delimiter), path, label_column)
    if texts == [""] or not texts:
        raise ValueError(f"{path} holds no texts")
    return texts, labels


def _json_label(path: Path, line_no: int, line: str, key: str) -> str:
    value = json.loads(line).get(key)
    if value is None or isinstance(value, (dict, list)):
        raise ValueError(f"{path} line {line_no}: no label under key {key!r}")
    return str(value)


def _json_text(path: Path, line_no: int, line: str, column: str) -> str:
    try:
        value = json.loads(line)[column]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"{path} line {line_no}: not a JSON object with key {column!r}") from None
    if not isinstance(value, str):
        raise ValueError(f"{path} line {line_no}: {column!r} is not a string")
    return value


# -- tables of text cells as frames -------------------------------------------------------


def read_text_table(path, names=None, header: bool | None = None, header_only: bool = False):
    """A CSV/TSV as a DataFrame of text cells: every cell is read as its text, never typed
    by the other cells of its column; a cell that is empty or only spaces is missing (NaN),
    any other is text (``"NA"`` and ``"nan"`` too). The metadata types each cell by itself
    (docs/tabular.md, "How cells are read").

    The tabular header rule (:func:`named_header`): with public column
    ``names`` (the metadata's), line 1 is the header exactly when its cells are those
    names; otherwise every line is a row, in the declared column order. Without them,
    line 1 is the header unless ``header`` is False. The frame's columns are the
    declared names, line 1's names, or positions ``0, 1, ...`` (no header). No message
    quotes a cell. ``header_only``: the frame has no rows (only line 1 is decided).
    """
    import pandas as pd

    path = _checked_table_path(path)
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    cells, width = scan_delimited(path, sep)
    has_header = named_header(path, cells, names, header, "metadata")
    columns = cells if has_header else (list(names) if names is not None else None)
    columns = columns or [str(j) for j in range(width)]
    if header_only:
        return pd.DataFrame(columns=columns)
    positions = [str(j) for j in range(width)]
    try:
        df = pd.read_csv(
            path,
            sep=sep,
            header=None,
            names=positions,
            skiprows=[0] if has_header else None,
            index_col=False,
            encoding="utf-8-sig",
            dtype=str,
            na_filter=False,  # no text is read as missing here: blank cells are, below
        )
    except pd.errors.EmptyDataError:
        df = pd.DataFrame(columns=positions)
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not a well-formed table ({type(err).__name__})") from None
    if len(df) == 0:
        raise ValueError(f"{path} has a header but no rows; it needs data rows")
    df.columns = columns
    return _blank_as_missing(df)


def _blank_as_missing(df):
    """``df`` with each cell that is empty or only whitespace set to missing (NaN)."""
    return df.mask(df.apply(lambda column: column.str.strip().eq("")))


def _checked_table_path(path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in TABLE_FORMATS:
        raise ValueError(
            f"{path}: unsupported table type {path.suffix or '(none)'!r}; use .csv or .tsv"
        )
    if not path.is_file():
        raise missing_file(path)
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty; it needs a header row and data rows")
    return path


def ragged_row(path, line: int, fields: int, width: int) -> ValueError:
    """The one message for a delimited file whose rows differ in length."""
    return ValueError(
        f"{path}: line {line} has {fields} fields but line 1 has {width}; "
        "make every row the same length"
    )


def missing_file(path) -> ValueError:
    """The one message for an input path that is not a readable file."""
    return ValueError(f"{path} does not exist or is not a file")
