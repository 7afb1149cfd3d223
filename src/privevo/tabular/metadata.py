"""Public table metadata: each column's kind and domain (Tab-PE's "public information").

A :class:`TableMetadata` is an ordered list of :class:`ColumnSpec`. It is
public input: the random API draws rows from it, the embedding scales by it,
the metrics bin by it. Values outside a declared domain are **clipped**
(numeric columns, to ``[lower, upper]``) or **mapped to the declared
``other`` category** (categorical columns); a categorical column without an
``other`` category rejects such a value with a ``ValueError`` naming its
column and row (never its content). Nothing is silently dropped.

JSON form (``TableMetadata.to_json`` / ``from_json``)::

    {"columns": [
      {"name": "Status", "kind": "categorical", "categories": ["bad", "good"]},
      {"name": "Home", "kind": "categorical", "categories": ["owner", "rent", "other"],
       "other": "other", "nullable": true},
      {"name": "Income", "kind": "numeric", "lower": 0, "upper": 1000, "integer": true,
       "nullable": true},
      {"name": "Active", "kind": "boolean"}],
     "n_rows": 4000}

``n_rows`` (optional) is a public estimate of the table's size: it sets the
default δ min(1e-6, 1/(10·N)) (:func:`privevo.accounting.default_delta`). ``derived_from_data:
true`` marks metadata read off the private table (:func:`metadata_from_data`): a
fit with it is not DP.
"""

from __future__ import annotations

import csv
import json
import math
import numbers
import warnings
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..exceptions import PrivacyLeakWarning
from .derived import DerivedColumn, DerivedError, check_derived
from .structure import check_structure, parse_domain

__all__ = [
    "ColumnSpec",
    "TableMetadata",
    "KINDS",
    "metadata_from_data",
    "metadata_from_description",
    "DESCRIPTION_SYNTAX",
    "cell_text",
]

KINDS = ("categorical", "numeric", "boolean")

DESCRIPTION_SYNTAX = """one column per line, in the table's order ('#' starts a comment):
  NAME: categorical A, B, "C, with a comma" [| other=B] [| nullable] [| may be empty]
  NAME: integer LO..HI [step S] [| nullable]
  NAME: numeric LO..HI [step S] [| nullable]
  NAME: numeric values V1, V2, ... [| nullable]
  NAME: boolean [| nullable] [| may be empty]
  NAME: derived EXPRESSION   (e.g. log(wage); computed after sampling, never measured)
each may add '| dtype=NAME' (the synthetic column's pandas dtype, e.g. category)
and optionally a line 'n_rows: N' (a public estimate of the number of rows)"""


@dataclass(frozen=True)
class ColumnSpec:
    """One column's public description.

    kind : ``"categorical"``, ``"numeric"`` or ``"boolean"``
    categories : the category list (categorical); booleans use ``[False, True]``
    lower, upper, integer : the numeric domain ``[lower, upper]``, integral values or not
    nullable : missing values are part of the domain (else a missing cell is an error)
    other : the category that out-of-domain values map to (must be in ``categories``)
    prior : public probabilities of the categories, for the random API (default uniform)
    dtype : pandas dtype of the synthetic column (default by kind:
        :func:`~privevo.tabular.encoding.output_dtype`; never read off the private frame)
    values : numeric: the finite set of values it takes (synthetic values snap to the nearest)
    step : numeric: its values are lower + k·step (synthetic values snap to the nearest)
    may_be_empty : categorical/boolean: a category whose released count is below
        :data:`~privevo.tabular.structure.EMPTY_Z`·σ gets no synthetic rows
    """

    name: str
    kind: str
    categories: tuple = ()
    lower: float | None = None
    upper: float | None = None
    integer: bool = False
    nullable: bool = False
    other: Any = None
    prior: tuple | None = None
    dtype: str | None = None
    values: tuple | None = None
    step: float | None = None
    may_be_empty: bool = False

    def __post_init__(self):
        _check_spec(self)

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric"

    @property
    def levels(self) -> tuple:
        """Category values in code order (booleans: ``(False, True)``)."""
        return (False, True) if self.kind == "boolean" else self.categories

    @property
    def n_codes(self) -> int:
        """Number of values of a categorical/boolean column, missing included when nullable."""
        return len(self.levels) + int(self.nullable)

    def as_dict(self) -> dict:
        defaults = {"categories": (), "integer": False, "nullable": False, "may_be_empty": False}
        out = {
            k: v
            for k, v in asdict(self).items()
            if v is not None and not (k in defaults and v == defaults[k])
        }
        for key in ("categories", "prior", "values"):
            if key in out:
                out[key] = list(out[key])
        return out


def _check_spec(spec: ColumnSpec) -> None:
    where = f"metadata column {spec.name!r}"
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"metadata column names must be non-empty strings, got {spec.name!r}")
    if spec.kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}, got {spec.kind!r}")
    if spec.kind == "categorical":
        _check_categories(spec, where)
    elif spec.kind == "numeric":
        _check_bounds(spec, where)
    check_structure(spec, where)
    if spec.prior is not None:
        _check_prior(spec, where)
    if spec.dtype is not None:
        _check_dtype(spec, where)


def _check_dtype(spec: ColumnSpec, where: str) -> None:
    """A declared dtype must be a pandas dtype that holds a missing value if nullable."""
    import pandas as pd

    try:
        dtype = pd.api.types.pandas_dtype(spec.dtype)
    except TypeError:
        raise ValueError(f"{where}: dtype {spec.dtype!r} is not a pandas dtype") from None
    if spec.nullable and isinstance(dtype, np.dtype) and dtype.kind in "biu":
        raise ValueError(
            f"{where}: dtype {spec.dtype!r} cannot hold a missing value but the column is "
            "nullable; use a nullable dtype such as 'Int64' or 'boolean'"
        )


def _check_categories(spec: ColumnSpec, where: str) -> None:
    cats = spec.categories
    if len(cats) < 1:
        raise ValueError(f"{where}: a categorical column needs a non-empty 'categories' list")
    if len({str(c) for c in cats}) != len(cats):
        raise ValueError(f"{where}: 'categories' has duplicates; list each category once")
    if len({cell_text(c) for c in cats}) != len(cats):
        raise ValueError(
            f"{where}: two categories are the same cell text (they differ only in case, "
            "surrounding spaces or number format, e.g. 1 and 1.0); list each category once"
        )
    if spec.other is not None and spec.other not in cats:
        raise ValueError(
            f"{where}: other={spec.other!r} is not one of its categories; add it to 'categories'"
        )


def _check_bounds(spec: ColumnSpec, where: str) -> None:
    lo, hi = spec.lower, spec.upper
    if lo is None or hi is None:
        raise ValueError(f"{where}: a numeric column needs 'lower' and 'upper' (its public domain)")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{where}: needs finite lower < upper, got [{lo}, {hi}]")


def _check_prior(spec: ColumnSpec, where: str) -> None:
    if spec.kind == "numeric":
        raise ValueError(f"{where}: 'prior' is for categorical and boolean columns")
    p = np.asarray(spec.prior, dtype=float)
    if p.shape != (spec.n_codes,) or (p < 0).any() or not p.sum() > 0:
        raise ValueError(
            f"{where}: 'prior' needs {spec.n_codes} non-negative weights "
            "(one per category, then one for missing if nullable)"
        )


def cell_text(value) -> str:
    """The text a cell, or a declared category, is matched by (docs/tabular.md, "How cells
    are read"): a function of that one value, never of its column's dtype or other rows.

    Text: stripped of surrounding whitespace, lower-cased (``" 01234"`` → ``"01234"``).
    Boolean: ``"true"`` / ``"false"``. A number stored as a number: its value's canonical
    text — an integral value its integer digits (``1234``, ``1234.0``, ``Decimal("1234.00")``
    → ``"1234"``), another the shortest text of its float64 (``2.5`` → ``"2.5"``), a Decimal
    that no float64 equals its plain digits. Equal numbers get equal text.
    """
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Number):
        return _number_text(value)
    return str(value).strip().lower()


def _number_text(value) -> str:
    """A number's canonical text (:func:`cell_text`); NaN and infinities as ``str`` gives."""
    if isinstance(value, numbers.Integral):  # exact: math.floor(np.int64) goes through a float
        return str(int(value))
    try:
        if value == math.floor(value):
            return str(int(value))
        as_float = float(value)
    except (TypeError, ValueError, ArithmeticError):
        return str(value).strip().lower()
    if as_float == value:
        return repr(as_float)
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value).strip().lower()


@dataclass(frozen=True)
class TableMetadata:
    """The public schema of a table: ordered :class:`ColumnSpec`, an optional public size."""

    columns: tuple
    n_rows: int | None = None
    derived_from_data: bool = False
    notes: tuple = field(default_factory=tuple)
    derived: tuple = ()  # DerivedColumn: computed after sampling, never measured

    def __post_init__(self):
        if not self.columns:
            raise ValueError("metadata has no columns; describe at least one column")
        check_derived(self.derived, self.columns)
        names = [c.name for c in self.columns]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"metadata describes column(s) {dup} twice; keep one entry each")
        if self.n_rows is not None and not (isinstance(self.n_rows, int) and self.n_rows >= 2):
            raise ValueError(f"metadata n_rows must be an integer >= 2, got {self.n_rows!r}")

    @property
    def names(self) -> list[str]:
        """The measured columns' names (derived columns: :attr:`output_names`)."""
        return [c.name for c in self.columns]

    @property
    def derived_names(self) -> set[str]:
        """The derived columns' names: never read from a table, computed after sampling."""
        return {d.name for d in self.derived}

    @property
    def output_names(self) -> list[str]:
        """Every column of the synthetic table, derived ones included, in the table's order."""
        names = self.names
        for d in sorted(self.derived, key=lambda d: d.position):
            names.insert(min(d.position, len(names)), d.name)
        return names

    def __getitem__(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def as_dict(self) -> dict:
        entries = {c.name: c.as_dict() for c in self.columns}
        entries.update({d.name: d.as_dict() for d in self.derived})
        out: dict = {"columns": [entries[name] for name in self.output_names]}
        if self.n_rows is not None:
            out["n_rows"] = self.n_rows
        if self.derived_from_data:
            out["derived_from_data"] = True
        return out

    def to_json(self, path) -> None:
        Path(path).write_text(json.dumps(self.as_dict(), indent=2, default=_json_default) + "\n")

    @classmethod
    def from_dict(cls, data: dict) -> "TableMetadata":
        if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
            raise ValueError("metadata must be a JSON object with a 'columns' list")
        unknown = set(data) - {"columns", "n_rows", "derived_from_data"}
        if unknown:
            raise ValueError(
                f"metadata has unknown key(s) {sorted(unknown)}; allowed: columns, n_rows, "
                "derived_from_data"
            )
        entries = data["columns"]
        derived = tuple(
            _derived_from_dict(c, i)
            for i, c in enumerate(entries)
            if isinstance(c, dict) and c.get("kind") == "derived"
        )
        cols = tuple(
            _spec_from_dict(c, i)
            for i, c in enumerate(entries)
            if not (isinstance(c, dict) and c.get("kind") == "derived")
        )
        return cls(
            cols, data.get("n_rows"), bool(data.get("derived_from_data", False)), derived=derived
        )

    @classmethod
    def from_json(cls, path) -> "TableMetadata":
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from None
        try:
            return cls.from_dict(data)
        except ValueError as err:  # name the file: the message names the column
            raise ValueError(f"{path}: {err}") from None


_SPEC_KEYS = {f for f in ColumnSpec.__dataclass_fields__}


def _spec_from_dict(entry, i: int) -> ColumnSpec:
    if not isinstance(entry, dict) or "name" not in entry or "kind" not in entry:
        raise ValueError(f"metadata column #{i} must be an object with 'name' and 'kind'")
    unknown = set(entry) - _SPEC_KEYS
    if unknown:
        raise ValueError(
            f"metadata column {entry['name']!r} has unknown key(s) {sorted(unknown)}; "
            f"allowed: {sorted(_SPEC_KEYS)}"
        )
    entry = dict(entry)
    for key in ("categories", "prior", "values"):
        if entry.get(key) is not None:
            entry[key] = tuple(entry[key])
    for key in ("lower", "upper"):
        if entry.get(key) is not None:
            entry[key] = _bound(entry, key)
    return ColumnSpec(**entry)


def _derived_from_dict(entry: dict, position: int) -> DerivedColumn:
    """A JSON entry ``{"name": ..., "kind": "derived", "expression": ...}``."""
    unknown = set(entry) - {"name", "kind", "expression"}
    name, expression = entry.get("name"), entry.get("expression")
    if unknown or not isinstance(name, str) or not isinstance(expression, str):
        raise ValueError(
            f"metadata column #{position}: a derived column is an object with exactly "
            "'name', 'kind': 'derived' and 'expression' (text)"
        )
    return DerivedColumn(name, expression, position)


def _bound(entry: dict, key: str) -> float:
    """A column's ``lower``/``upper`` as float, else a message naming the column."""
    value = entry[key]
    try:
        if isinstance(value, bool):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"metadata column {entry['name']!r}: {key!r} must be a number, got {value!r}; "
            f'write e.g. "{key}": 0'
        ) from None


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


# ----------------------------------------------------------------- public descriptions


def metadata_from_description(text: str, columns: Sequence[str] | None = None) -> TableMetadata:
    """Metadata from a public text description (syntax: :data:`DESCRIPTION_SYNTAX`).

    ``columns`` (e.g. a CSV header: a schema, not content) fixes the order and
    checks that every column is described exactly once.
    """
    specs, derived, lines, n_rows = [], [], {}, None
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, rest = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(
                f"description line {line_no}: expected 'NAME: kind ...'; "
                f"syntax:\n{DESCRIPTION_SYNTAX}"
            )
        if name.strip() == "n_rows":
            n_rows = _parse_int(rest, line_no)
            continue
        lines[name.strip()] = line_no
        if rest.strip().split(" ", 1)[0].lower() == "derived":
            expression = rest.strip()[len("derived") :].strip()
            derived.append(DerivedColumn(name.strip(), expression, len(specs) + len(derived)))
            continue
        specs.append(_parse_column(name.strip(), rest, line_no))
    try:
        check_derived(derived, specs)
    except DerivedError as err:
        raise ValueError(f"description line {lines[err.name]}: {err}") from None
    return _ordered(TableMetadata(tuple(specs), n_rows, derived=tuple(derived)), columns)


def _parse_int(text: str, line_no: int) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"description line {line_no}: n_rows must be an integer") from None


def _parse_column(name: str, rest: str, line_no: int) -> ColumnSpec:
    head, *options = [part.strip() for part in rest.split("|")]
    kind, _, domain = head.partition(" ")
    kind, domain = kind.lower(), domain.strip()
    opts = {"nullable": False, "other": None, "dtype": None, "may_be_empty": False}
    for opt in options:
        key, _, value = opt.partition("=")
        if key.strip() == "nullable" and not value:
            opts["nullable"] = True
        elif " ".join(opt.split()) == "may be empty":
            opts["may_be_empty"] = True
        elif key.strip() == "other" and value.strip():
            opts["other"] = value.strip()
        elif key.strip() == "dtype" and value.strip():
            opts["dtype"] = value.strip()
        else:
            raise ValueError(
                f"description line {line_no}: column {name!r}: unknown option {opt!r}; "
                "use 'nullable', 'other=NAME', 'dtype=NAME' or 'may be empty'"
            )
    try:
        return _spec_of(name, kind, domain, opts)
    except ValueError as err:
        raise ValueError(f"description line {line_no}: {err}") from None


def _spec_of(name: str, kind: str, domain: str, opts: dict) -> ColumnSpec:
    if kind == "categorical":
        cats = tuple(
            c.strip() for c in next(csv.reader([domain], skipinitialspace=True)) if c.strip()
        )
        return ColumnSpec(name, "categorical", categories=cats, **opts)
    if kind in ("integer", "numeric", "float"):
        return ColumnSpec(
            name,
            "numeric",
            integer=kind == "integer",
            nullable=opts["nullable"],
            dtype=opts["dtype"],
            may_be_empty=opts["may_be_empty"],
            **parse_domain(name, domain),
        )
    if kind == "boolean":
        return ColumnSpec(
            name,
            "boolean",
            nullable=opts["nullable"],
            dtype=opts["dtype"],
            may_be_empty=opts["may_be_empty"],
        )
    raise ValueError(
        f"column {name!r}: kind must be categorical, integer, numeric, boolean or derived, "
        f"got {kind!r}"
    )


def _ordered(meta: TableMetadata, columns: Sequence[str] | None) -> TableMetadata:
    if columns is None:
        return meta
    derived = meta.derived_names
    order = list(columns)  # a derived column the table holds keeps its place; it is not read
    columns = [c for c in order if c not in derived]
    missing = [c for c in columns if c not in meta.names]
    extra = [c for c in meta.names if c not in columns]
    if missing and extra:  # both in one line: a misspelled name is one of each
        raise ValueError(
            f"the description names column(s) {extra} that the table does not have and does "
            f"not describe its column(s) {missing}; fix the names"
        )
    if missing:
        raise ValueError(
            f"the description does not describe column(s) {missing}; add a line for each"
        )
    if extra:
        raise ValueError(
            f"the description names column(s) {extra} that the table does not have; fix the names"
        )
    for d in sorted(meta.derived, key=lambda d: d.position):
        if d.name not in order:
            order.insert(min(d.position, len(order)), d.name)
    placed = tuple(replace(d, position=order.index(d.name)) for d in meta.derived)
    return replace(meta, columns=tuple(meta[c] for c in columns), derived=placed)


# ----------------------------------------------------------------- from the data (leaks)

_MAX_INTEGER_LEVELS = 10  # integer columns with at most this many values become categorical


def metadata_from_data(df, *, categorical: Sequence[str] = (), warn: bool = True) -> TableMetadata:
    """Metadata read off the table itself: **not DP** (diffprivlib's convention).

    Categories are the values seen, numeric domains the min and max seen. Warns
    with :class:`PrivacyLeakWarning`; the metadata carries
    ``derived_from_data=True`` and every fit with it reports
    ``guarantee_holds: false``. Prefer :func:`metadata_from_description`.
    """
    if warn:
        warnings.warn(
            "metadata derived from the private data (categories, min/max): the synthetic data "
            "is not differentially private; describe the columns publicly instead",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    if len(df) == 0:
        raise ValueError("the table has no rows; metadata cannot be derived from an empty table")
    specs = tuple(
        _spec_from_column(str(name), df[name], name in categorical) for name in df.columns
    )
    return TableMetadata(specs, derived_from_data=True)


def _spec_from_column(name: str, series, force_categorical: bool) -> ColumnSpec:
    import pandas as pd

    present = series.dropna()
    nullable = bool(len(present) < len(series))
    if len(present) == 0:
        raise ValueError(f"column {name!r} is all missing; drop it or describe it publicly")
    if pd.api.types.is_bool_dtype(series.dtype):
        return ColumnSpec(name, "boolean", nullable=nullable)
    values = pd.to_numeric(present, errors="coerce") if not force_categorical else None
    if values is None or values.isna().any() or _looks_categorical(values):
        cats = sorted(
            (_plain(c) for c in present.unique().tolist()), key=lambda v: (str(type(v)), v)
        )
        return ColumnSpec(name, "categorical", categories=_distinct(cats), nullable=nullable)
    lo, hi = float(values.min()), float(values.max())
    return ColumnSpec(
        name,
        "numeric",
        lower=lo,
        upper=hi if hi > lo else lo + 1.0,
        integer=bool((values == np.round(values)).all()),
        nullable=nullable,
    )


def _looks_categorical(values) -> bool:
    integral = bool((values == np.round(values)).all())
    return integral and values.nunique() <= _MAX_INTEGER_LEVELS and values.nunique() < len(values)


def _distinct(values) -> tuple:
    """The first value of each cell text (:func:`cell_text`), in order."""
    seen: set[str] = set()
    return tuple(v for v in values if not (cell_text(v) in seen or seen.add(cell_text(v))))


def _plain(value):
    """A numpy scalar as Python; a text cell that is a number's canonical text (:func:`cell_text`)
    as that number: a CSV's ``"10"`` is the category 10, its ``"01"`` stays text."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                number = kind(value)
            except ValueError:
                continue
            if math.isfinite(number) and cell_text(number) == value:
                return number
    return value
