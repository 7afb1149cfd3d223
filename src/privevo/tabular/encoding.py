"""Table ↔ codes ↔ embedding: the tabular front end of the vector engine.

*Codes* are an (n, C) float array, one column per table column: a category's
index in its declared list (booleans: False → 0, True → 1; missing → the
extra code ``len(categories)``), or a numeric value (missing → NaN).

*Embedding* (the space the private rows vote in; docs/tabular.md). Every column
contributes at most 1 to the squared distance between two rows, so each
column counts equally:

- numeric: u = (x − lower)/(upper − lower) ∈ [0, 1] (or u = F(x), F a released
  noisy CDF, ``transforms``: :mod:`privevo.tabular.fine`); a nullable one adds a
  flag coordinate, and a missing value embeds as (½, √3/2), at squared
  distance ¾ + (u − ½)² ∈ [¾, 1] from any present value;
- categorical / boolean with K values (missing counts as one when nullable):
  one-hot scaled by 1/√2, so two different values are at squared distance 1.

Decoding (embedding → codes) inverts this exactly on embedded rows; on other
vectors it takes the nearest valid value (argmax of a one-hot block, clip and
round of a numeric), which the variation API never needs but keeps decoding
total.

*Cells* (docs/tabular.md, "How cells are read"): each cell's code is a function of that
cell and the public metadata alone, whatever the column's dtype and the other rows hold,
for CSV text, in-memory values and Parquet values alike. A cell is missing when it is a
null (None, NaN, NA) or text that is empty after stripping spaces; a categorical or boolean
cell matches by :func:`~privevo.tabular.metadata.cell_text`; a numeric cell is
:func:`cell_number`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..distances import first_of_each_row
from .derived import compute_derived
from .metadata import ColumnSpec, TableMetadata, cell_text
from .structure import snap

__all__ = [
    "encode_table",
    "encode_block",
    "cell_number",
    "per_block",
    "first_rows",
    "decode_codes",
    "output_dtype",
    "TableEmbedding",
]

_ONE_HOT = 1.0 / math.sqrt(2.0)
_MISSING_FLAG = math.sqrt(3.0) / 2.0


# ----------------------------------------------------------------- table → codes


NO_ROWS = "the table has no rows; give a table with at least one row"


def encode_table(df, metadata: TableMetadata) -> np.ndarray:
    """Codes of a DataFrame under public ``metadata`` (validated; out-of-domain values handled).

    Numeric values outside ``[lower, upper]`` are clipped (integers rounded);
    categories not declared map to the column's ``other`` category, else raise.
    Errors name the column and row position, never a cell's content. A nullable column
    may be missing in every row: the metadata declares that a valid table.
    """
    return encode_block(df, metadata)


def encode_block(df, metadata: TableMetadata, offset: int = 0) -> np.ndarray:
    """Codes of a block of a table, its rows ``offset, offset + 1, …`` (errors name those)."""
    _check_columns(df, metadata)
    if len(df) == 0:
        raise ValueError(NO_ROWS)
    return np.column_stack(
        [_encode_column(df[spec.name], spec, offset) for spec in metadata.columns]
    )


def per_block(codes, fn, dim: int, dtype=np.float64):
    """``fn(codes)``: on an array at once, on a source of code blocks block by block."""
    return fn(codes) if isinstance(codes, np.ndarray) else codes.then(fn, dim, dtype)


def first_rows(codes: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct row of ``codes`` (finite or NaN;
    NaN equals NaN, −0 equals 0): the vote kernel's byte-key dedupe
    (:func:`privevo.distances.first_of_each_row`) with NaN read as +inf (public codes)."""
    return first_of_each_row(np.nan_to_num(np.asarray(codes, float), nan=np.inf))


def _check_columns(df, metadata: TableMetadata) -> None:
    columns = [str(c) for c in df.columns]
    unknown = [c for c in metadata.names if c not in columns]
    if unknown:
        raise ValueError(
            f"metadata column(s) {unknown} are not in the table (columns: {columns}); "
            "fix the names in the metadata"
        )
    derived = metadata.derived_names  # never read: computed after sampling
    undescribed = [c for c in columns if c not in metadata.names and c not in derived]
    if undescribed:
        raise ValueError(
            f"table column(s) {undescribed} have no metadata; describe them or drop them"
        )


def _encode_column(series, spec: ColumnSpec, offset: int = 0) -> np.ndarray:
    if spec.is_numeric:
        codes = _encode_numeric(series, spec, offset)
        missing = np.isnan(codes)
    else:
        codes = _encode_categorical(series, spec, offset)
        missing = codes == len(spec.levels)
    if missing.any() and not spec.nullable:
        row = offset + int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"column {spec.name!r} row {row} is missing but the metadata says nullable: false; "
            "declare it nullable or impute the column"
        )
    return codes


def cell_number(value) -> float:
    """A numeric cell's value by itself: NaN if missing, ``inf`` if not a finite number.

    Text is ``float(text)`` of the stripped text (no ``_`` separators): ``"2.50"``, ``"+1"``,
    ``"1e3"`` and ``" 7 "`` are numbers, ``"NA"`` and ``"nan"`` are not; a number (or boolean)
    is its float64 value.
    """
    if _is_missing(value):
        return math.nan
    try:
        if isinstance(value, str):
            number = float(value.strip()) if "_" not in value else math.inf
        elif isinstance(value, (numbers.Number, np.bool_)):
            number = float(value)
        else:
            number = math.inf
    except (TypeError, ValueError, ArithmeticError):
        number = math.inf
    return number if math.isfinite(number) else math.inf


def _is_missing(value) -> bool:
    """A null (None, NaN, NA, NaT) or text that is empty after stripping whitespace."""
    if isinstance(value, str):
        return not value.strip()
    if value is None:
        return True
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # an array-like cell is not a null
        return False


def _per_cell(series, fn, merged_ok: bool = True) -> np.ndarray:
    """``fn(cell)`` of every cell of ``series`` as floats, evaluated once per distinct value.

    pandas groups values that compare equal (True, 1 and 1.0; NaN and None). ``fn`` gives
    equal numbers one result, so only booleans need care: an object column with a boolean
    or a number equal to 0 or 1 is evaluated cell by cell unless ``merged_ok``.
    """
    import pandas as pd

    index, uniques = pd.factorize(series, use_na_sentinel=True)  # nulls → −1
    uniques = list(uniques)
    if not merged_ok and series.dtype == object and any(_bool_like(v) for v in uniques):
        return np.array([fn(v) for v in series.array], dtype=float)
    return np.array([fn(v) for v in uniques] + [fn(None)], dtype=float)[index]


def _bool_like(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, numbers.Number) and not _is_missing(value) and value in (0, 1)


def _temporal(series) -> bool:
    """A column of dates, times or durations (e.g. a Parquet timestamp), by its dtype or,
    for objects, by its first present cell's type: never a number to this module."""
    import datetime

    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        kind = dtype.pyarrow_dtype
        return bool(pa.types.is_temporal(kind))
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return True
    if isinstance(dtype, pd.PeriodDtype):
        return True
    if pd.api.types.is_object_dtype(dtype):
        present = series.dropna()
        kinds = (datetime.date, datetime.time, datetime.timedelta, np.datetime64)
        return len(present) > 0 and isinstance(present.iloc[0], kinds)
    return False


def _encode_numeric(series, spec: ColumnSpec, offset: int) -> np.ndarray:
    import pandas as pd

    if _temporal(series):
        raise ValueError(
            f"column {spec.name!r} holds dates or times but the metadata says numeric; "
            "declare it categorical (its dates as categories), or convert it to a number "
            "(e.g. its year) before the fit"
        )
    if pd.api.types.is_numeric_dtype(series.dtype):  # numbers (or booleans) held as such
        values = series.to_numpy(dtype=float, na_value=np.nan)
        values = np.where(np.isinf(values), np.inf, values)  # ±inf: not a finite number
    else:  # text, objects, categories: each cell by itself
        values = _per_cell(series, cell_number)
    bad = np.isinf(values)
    if bad.any():
        raise ValueError(
            f"column {spec.name!r} row {offset + int(np.flatnonzero(bad)[0])} is not a finite "
            "number but the metadata says numeric; fix the cell (leave a missing value empty) "
            "or declare the column categorical"
        )
    values = np.clip(values, spec.lower, spec.upper)  # the documented out-of-domain rule
    return np.round(values) if spec.integer else values


def _encode_categorical(series, spec: ColumnSpec, offset: int) -> np.ndarray:
    lookup, missing = _lookup(spec), len(spec.levels)

    def code(value) -> float:
        if _is_missing(value):
            return missing
        return lookup.get(
            cell_text(value), _boolean_number(value) if spec.kind == "boolean" else -1
        )

    codes = _per_cell(series, code, merged_ok=spec.kind == "boolean")
    unknown = codes < 0
    if unknown.any():
        if spec.other is None:
            raise ValueError(
                f"column {spec.name!r} row {offset + int(np.flatnonzero(unknown)[0])} holds a "
                "value that is not among its declared categories; add it or declare an 'other' "
                "category"
            )
        codes[unknown] = spec.levels.index(spec.other)  # the documented out-of-domain rule
    return codes


def _lookup(spec: ColumnSpec) -> dict:
    """Cell text → code (:func:`~privevo.tabular.metadata.cell_text`; a CSV's '1' is the
    category 1). Booleans: true/false, 1/0, yes/no, t/f, any case."""
    if spec.kind == "boolean":
        table = {}
        for code, words in enumerate((("false", "0", "no", "f"), ("true", "1", "yes", "t"))):
            table.update({w: code for w in words})
        return table
    return {cell_text(c): i for i, c in enumerate(spec.levels)}


def _boolean_number(value) -> int:
    """A boolean cell's code from a number (text or not) equal to 0 or 1, else −1."""
    number = cell_number(value)
    return int(number) if number in (0.0, 1.0) else -1


# ----------------------------------------------------------------- codes → table


def decode_codes(codes: np.ndarray, metadata: TableMetadata):
    """A DataFrame in the metadata's column order, each column of :func:`output_dtype`.

    Dtypes and formatting come from the public metadata only, never from the fitted
    frame: one private row with a missing or fractional value cannot change them. Numeric
    values snap to a declared value set or step, then derived columns are computed
    (:mod:`.structure`, :mod:`.derived`: post-processing).
    """
    import pandas as pd

    data = {spec.name: _decode_column(codes[:, j], spec) for j, spec in enumerate(metadata.columns)}
    frame = pd.DataFrame(data, columns=metadata.names)
    if metadata.derived:
        compute_derived(frame, metadata.derived)
    return frame


def output_dtype(spec: ColumnSpec) -> str:
    """The synthetic column's pandas dtype: the spec's ``dtype``, else by its declaration.

    integer → ``int64`` (``Int64`` if nullable), numeric → ``float64``, boolean → ``bool``
    (``boolean`` if nullable), categorical → ``object``.
    """
    if spec.dtype is not None:
        return str(spec.dtype)
    if spec.is_numeric:
        if not spec.integer:
            return "float64"
        return "Int64" if spec.nullable else "int64"
    if spec.kind == "boolean":
        return "boolean" if spec.nullable else "bool"
    return "object"


def _decode_column(column: np.ndarray, spec: ColumnSpec):
    import pandas as pd

    if spec.is_numeric:
        values = snap(np.round(column) if spec.integer else column, spec)
        series = pd.Series(values, dtype=float)
    else:
        levels = np.array(list(spec.levels) + [None], dtype=object)
        series = pd.Series(levels[column.astype(np.int64)], dtype=object)
    return _cast(series, spec, output_dtype(spec))


def _cast(series, spec: ColumnSpec, dtype: str):
    """``series`` as ``dtype``; a declared dtype that cannot hold the values is an error."""
    import pandas as pd

    if dtype == "category":
        return pd.Series(pd.Categorical(series, categories=list(spec.levels)))
    try:
        return series.astype(dtype)
    except (TypeError, ValueError):
        raise ValueError(
            f"column {spec.name!r}: its metadata dtype {dtype!r} cannot hold the declared "
            "domain (e.g. an integer dtype for a nullable column); use a nullable dtype "
            "such as 'Int64' or 'boolean', or drop 'dtype'"
        ) from None


# ----------------------------------------------------------------- codes ↔ embedding


class TableEmbedding:
    """The embedding of codes (module docstring); ``dim`` coordinates per row.

    ``weights`` (optional, public): a factor per column name (default 1) scaling
    that column's block, so its squared distance counts ``weight²`` times.
    """

    def __init__(
        self, metadata: TableMetadata, weights: dict | None = None, transforms: dict | None = None
    ):
        self.metadata = metadata
        self.weights = dict(weights or {})
        self.transforms = dict(transforms or {})  # numeric name → object with cdf / inverse
        unknown = [name for name in self.weights if name not in metadata.names]
        if unknown:
            raise ValueError(f"weights name column(s) {unknown} that the metadata does not have")
        if not all(float(w) > 0 for w in self.weights.values()):
            raise ValueError(f"column weights must be > 0, got {self.weights!r}")
        self._scale = [float(self.weights.get(spec.name, 1.0)) for spec in metadata.columns]
        self.slices = []
        start = 0
        for spec in metadata.columns:
            width = (1 + int(spec.nullable)) if spec.is_numeric else spec.n_codes
            self.slices.append(slice(start, start + width))
            start += width
        self.dim = start

    def __repr__(self) -> str:
        weights = f", weights={self.weights}" if self.weights else ""
        cdf = f", noisy CDF of {sorted(self.transforms)}" if self.transforms else ""
        return f"TableEmbedding({len(self.metadata.columns)} columns, dim={self.dim}{weights}{cdf})"

    def embed(self, codes: np.ndarray) -> np.ndarray:
        out = np.zeros((len(codes), self.dim))
        for j, (spec, cols) in enumerate(zip(self.metadata.columns, self.slices)):
            _embed_column(out[:, cols], codes[:, j], spec, self.transforms.get(spec.name))
            if self._scale[j] != 1.0:
                out[:, cols] *= self._scale[j]
        return out

    def decode(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, dtype=float)
        return np.column_stack(
            [
                _decode_block(points[:, cols] / scale, spec, self.transforms.get(spec.name))
                for spec, cols, scale in zip(self.metadata.columns, self.slices, self._scale)
            ]
        )


def _embed_column(block: np.ndarray, codes: np.ndarray, spec: ColumnSpec, transform=None) -> None:
    if spec.is_numeric:
        missing = np.isnan(codes)
        u = (
            (codes - spec.lower) / (spec.upper - spec.lower)
            if transform is None
            else transform.cdf(codes)
        )
        block[:, 0] = np.where(missing, 0.5, u)
        if spec.nullable:
            block[:, 1] = np.where(missing, _MISSING_FLAG, 0.0)
        return
    block[np.arange(len(codes)), codes.astype(np.int64)] = _ONE_HOT


def _decode_block(block: np.ndarray, spec: ColumnSpec, transform=None) -> np.ndarray:
    if not spec.is_numeric:
        return block.argmax(axis=1).astype(float)
    u = np.clip(block[:, 0], 0.0, 1.0)
    values = (
        spec.lower + u * (spec.upper - spec.lower) if transform is None else transform.inverse(u)
    )
    if spec.integer:
        values = np.round(values)
    if spec.nullable:
        values[block[:, 1] > _MISSING_FLAG / 2] = np.nan
    return values
