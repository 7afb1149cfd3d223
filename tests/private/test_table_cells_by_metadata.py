"""Each cell of a table is encoded by that cell and the public metadata alone (docs/tabular.md,
"How cells are read"): never by the dtype a reader or writer chose from the other rows.

The direct sensitivity test: D and D' = D + one row, encoded exactly, must have 1-way marginal
counts within 1 in L1 for every column (one row, one count), for a CSV and for a Parquet file.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers.neighbour import assert_neighbour_safe, estimator_artefacts  # noqa: E402
from helpers.tables import DESCRIPTION as SMALL_DESCRIPTION  # noqa: E402
from helpers.tables import small_table  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo.private import frame_source, read_text_table  # noqa: E402
from privevo.tabular import metadata_from_description  # noqa: E402
from privevo.tabular.encoding import encode_block, encode_table  # noqa: E402
from privevo.tabular.metadata import ColumnSpec, TableMetadata, cell_text  # noqa: E402

ZIPS = ("01234", "02139", "00501", "10001")
PRICES = ("2.50", "3.00", "4.75")
SIGNS = ("+1", "-1")
SCIENTIFIC = ("1e3", "2e3")
IDS = ("12345678901234567", "98765432109876543")  # 17 digits: not exact in a float64


def _categorical(name: str, values) -> ColumnSpec:
    categories = (*values, "other")
    return ColumnSpec(name, "categorical", categories=categories, other="other", nullable=True)


META = TableMetadata(
    (
        _categorical("zip", ZIPS),
        _categorical("price", PRICES),
        _categorical("sign", SIGNS),
        _categorical("sci", SCIENTIFIC),
        _categorical("id", IDS),
        ColumnSpec("amount", "numeric", lower=0, upper=100, nullable=True),
        ColumnSpec("flag", "boolean", nullable=True),
    )
)


def codes_table(n: int = 200) -> pd.DataFrame:
    """Codes as text, each a declared category, none in its number's canonical form."""
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "zip": rng.choice(ZIPS, n),
            "price": rng.choice(PRICES, n),
            "sign": rng.choice(SIGNS, n),
            "sci": rng.choice(SCIENTIFIC, n),
            "id": rng.choice(IDS, n),
            "amount": rng.choice(["7", "12.5", "1e1", "+3"], n),
            "flag": rng.choice(["1", "0"], n),
        }
    )


ADDED_ROWS = {
    "non-numeric codes": dict(
        zip="AB123", price="free", sign="x", sci="n/a", id="x", amount="5", flag="yes"
    ),
    "empty cells": dict(zip="", price="", sign="", sci="", id="", amount="", flag=""),
    "NA text": dict(zip="NA", price="NA", sign="NA", sci="NA", id="NA", amount="5", flag="1"),
}


def marginals(codes: np.ndarray) -> list[Counter]:
    """Exact 1-way counts of every column's codes (missing numeric: NaN counted as one key)."""
    return [Counter(np.where(np.isnan(c), -1.0, c).tolist()) for c in codes.T]


def l1(a: Counter, b: Counter) -> int:
    return sum(abs(a[k] - b[k]) for k in set(a) | set(b))


def assert_one_row_moves_each_marginal_by_one(codes: np.ndarray, neighbour: np.ndarray) -> None:
    moved = {
        name: l1(a, b)
        for name, a, b in zip(META.names, marginals(codes), marginals(neighbour))
        if l1(a, b) > 1
    }
    assert not moved, f"one added row moved these marginals by more than 1 (L1): {moved}"


def csv_codes(df: pd.DataFrame, path) -> np.ndarray:
    df.to_csv(path, index=False)
    return encode_table(read_text_table(path, META.names), META)


def test_csv_codes_keep_their_categories(tmp_path):
    """Leading zeros, trailing zeros, signs, exponents and 17-digit ids stay the declared
    categories: no row of the table is mapped to 'other'."""
    df = codes_table()
    codes = csv_codes(df, tmp_path / "d.csv")
    for j, spec in enumerate(META.columns[:5]):
        expected = [spec.categories.index(v) for v in df[spec.name]]
        assert codes[:, j].tolist() == expected, spec.name
    assert sorted(set(codes[:, 5])) == [3.0, 7.0, 10.0, 12.5]
    assert codes[:, 6].tolist() == [float(v == "1") for v in df["flag"]]


def test_synth_table_keeps_leading_zero_codes_as_their_categories(tmp_path, cli):
    """End to end: a CSV of zip codes whose every cell looks like a number; the synthetic table
    holds the declared codes ('01234'), not 'other'."""
    codes_table(400)[["zip", "amount"]].to_csv(tmp_path / "d.csv", index=False)
    TableMetadata((META["zip"], META["amount"])).to_json(tmp_path / "meta.json")
    out = tmp_path / "syn.csv"
    argv = ["synth-table", tmp_path / "d.csv", "--metadata", tmp_path / "meta.json", "-o", out]
    code, _, err = cli(
        [*argv, "--epsilon", "20", "--delta", "1e-5", "--rows", "300", "--seed", "0"]
    )
    assert code == 0, err
    counts = pd.read_csv(out, dtype=str, keep_default_na=False)["zip"].value_counts()
    assert set(ZIPS) <= set(counts.index) and counts.get("other", 0) < 30, counts.to_dict()


@pytest.mark.parametrize("added", sorted(ADDED_ROWS))
def test_one_added_csv_row_moves_each_marginal_by_at_most_one(tmp_path, added):
    df = codes_table()
    neighbour = pd.concat([df, pd.DataFrame([ADDED_ROWS[added]])], ignore_index=True)
    assert_one_row_moves_each_marginal_by_one(
        csv_codes(df, tmp_path / "d.csv"), csv_codes(neighbour, tmp_path / "d2.csv")
    )


def parquet_codes(df: pd.DataFrame, path) -> np.ndarray:
    """Codes of ``df`` written as Parquet without pandas' metadata (as Spark or Arrow write it:
    its dtypes are not stored, only the Arrow schema)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    pq.write_table(table, path, row_group_size=64)
    blocks = [encode_block(f, META, o) for o, f in frame_source(path, block_rows=50).frames()]
    return np.vstack(blocks)


def numbers_table(n: int = 200) -> pd.DataFrame:
    """Codes stored as numbers: int64 ids (17 digits), float zips and an integer flag."""
    df = codes_table(n)
    return df.assign(
        id=pd.array([int(v) for v in df["id"]], dtype="Int64"),
        zip=df["zip"].astype(float),  # 1234.0: the category "01234" is lost, "1234" is not
        amount=df["amount"].astype(float),
        flag=pd.array(df["flag"].astype(int), dtype="Int64"),
    )


def test_parquet_codes_do_not_depend_on_a_null_in_another_row(tmp_path):
    """An int64 Parquet column with a null is not read as float64 (17-digit ids would round,
    in every row, because of one other row)."""
    df = numbers_table()
    null_row = pd.DataFrame(
        {"id": pd.array([None], dtype="Int64"), "flag": pd.array([None], dtype="Int64")}
    )
    neighbour = pd.concat([null_row, df], ignore_index=True)  # in the first block, with others
    codes = parquet_codes(df, tmp_path / "d.parquet")
    assert codes[:, 4].tolist() == [IDS.index(str(v)) for v in df["id"]]  # none is 'other'
    assert_one_row_moves_each_marginal_by_one(codes, parquet_codes(neighbour, tmp_path / "n.pq"))


def test_a_number_is_its_canonical_text_whatever_its_type():
    """The rule behind Parquet and in-memory columns of codes: equal numbers, equal text."""
    for value in (1234, 1234.0, np.float32(1234), np.int16(1234), Decimal("1234.00")):
        assert cell_text(value) == "1234"
    assert cell_text(2.5) == cell_text(Decimal("2.50")) == cell_text(np.float64(2.5)) == "2.5"
    assert cell_text(" 01234 ") == "01234" and cell_text("2.50") == "2.50"
    assert cell_text(True) == "true" and cell_text(10**17 + 1) == "100000000000000001"


def test_in_memory_object_column_mixing_booleans_and_numbers_is_read_cell_by_cell():
    """pandas groups True with 1 (equal in Python): the first row must not decide the text."""
    meta = TableMetadata((_categorical("c", ("1", "true")),))
    for values, expected in (([True, 1, 1.0], [1, 0, 0]), ([1.0, True, 1], [0, 1, 0])):
        codes = encode_table(pd.DataFrame({"c": pd.Series(values, dtype=object)}), meta)
        assert codes[:, 0].tolist() == expected


# -- a nullable column with no value anywhere --------------------------------------------


@pytest.mark.parametrize("column", ["weight", "shade"])
def test_a_nullable_column_missing_in_every_row_is_fitted_like_its_neighbour(column):
    """The metadata says missing values are valid: a table whose nullable column is all missing
    is fitted, and so is its neighbour with one present value, publishing the same bytes and
    release shapes once the releases are pinned (no refusal decided by one row)."""
    meta = metadata_from_description(SMALL_DESCRIPTION)
    df = small_table(120)
    df[column] = pd.Series([None] * len(df), dtype=df[column].dtype)
    neighbour = pd.concat([df, small_table(121).iloc[[120]]], ignore_index=True)
    assert neighbour[column].notna().sum() == 1

    def run(table):
        est = TabularPE(4.0, 1e-5, meta, n_synthetic=20, iterations=1, pool=200, random_state=0)
        sample = est.fit(table).sample(50, random_state=1)
        return {"csv": sample.to_csv(index=False), "report": estimator_artefacts(est)}

    assert_neighbour_safe(run, df, neighbour)
