"""The reader of private files (privevo.private: CSV/TSV/.npy/Parquet, --columns, the header
rule): one-line errors that quote no cell."""

from __future__ import annotations

import numpy as np
import pytest

from privevo import io
from privevo.private import read_points, read_table


def write(path, text: str):
    path.write_text(text)
    return path


def test_csv_with_header_and_columns_by_name_and_index(tmp_path):
    path = write(tmp_path / "d.csv", "a,b,label\n1,2,x\n3.5, -4e1 ,y\n")
    table = read_table(path, "b,a")
    assert table.columns == ["b", "a"]
    np.testing.assert_array_equal(table.data, [[2.0, 1.0], [-40.0, 3.5]])
    np.testing.assert_array_equal(read_points(path, ["0"]), [[1.0], [3.5]])


def test_csv_without_header_and_tsv(tmp_path):
    np.testing.assert_array_equal(
        read_points(write(tmp_path / "d.csv", "1,2\n3,4\n\n\n")), [[1, 2], [3, 4]]
    )
    table = read_table(write(tmp_path / "d.tsv", "x\ty\n1\t2\n"))
    assert table.columns == ["x", "y"] and table.data.tolist() == [[1.0, 2.0]]


def test_npy_and_parquet_round_trip(tmp_path):
    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.save(tmp_path / "d.npy", X)
    np.testing.assert_array_equal(read_points(tmp_path / "d.npy", "2,0"), X[:, [2, 0]])
    io.write_points(tmp_path / "d.parquet", X, ["a", "b", "c"])
    table = read_table(tmp_path / "d.parquet", "c")
    assert table.columns == ["c"] and table.data[:, 0].tolist() == [2, 5, 8, 11]
    for suffix in (".csv", ".tsv", ".npy"):
        io.write_points(tmp_path / f"o{suffix}", X / 7, ["a", "b", "c"])
        np.testing.assert_array_equal(
            read_points(tmp_path / f"o{suffix}"), (X / 7).astype(np.float64)
        )


BAD = [
    ("missing.csv", None, None, "not found"),
    ("empty.csv", "", None, "is empty"),
    ("header.csv", "a,b\n", None, "no data rows"),
    ("text.csv", "a,b\n1,x\n", None, "column 'b' is not numeric (line 2 holds a non-number)"),
    ("text2.csv", "a,b\n1,x\n", "b", "column 'b' is not numeric (line 2 holds a non-number)"),
    (
        "nan.csv",
        "a,b\n1,2\n3,nan\n",
        None,
        "column 'b' has NaN or infinite values (first at line 3)",
    ),
    ("inf.csv", "a\n1\n-inf\n", None, "NaN or infinite"),
    ("gap.csv", "a,b\n1,\n", None, "column 'b' has an empty cell at line 2"),
    ("ragged.csv", "a,b\n1,2\n3,4,5\n6,7\n", None, "line 3 has 3 fields but the header has 2"),
    ("cols.csv", "a,b\n1,2\n", "a,zz", "unknown column 'zz'; available columns: a, b"),
    ("blank.csv", "\n\n", None, "only blank lines"),
    ("bad.xlsx", "1", None, "unsupported file type '.xlsx'"),
]


@pytest.mark.parametrize("name, text, columns, message", BAD, ids=[b[0] for b in BAD])
def test_bad_delimited_files(tmp_path, name, text, columns, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError) as err:
        read_table(path, columns)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_npy_files(tmp_path):
    np.save(tmp_path / "one.npy", np.arange(5.0))
    np.save(tmp_path / "zero.npy", np.zeros((0, 3)))
    np.save(tmp_path / "nan.npy", np.array([[1.0, np.nan]]))
    np.save(tmp_path / "str.npy", np.array([["a", "b"]]))
    (tmp_path / "junk.npy").write_bytes(b"not an array")
    cases = {
        "one.npy": "holds a 1-D array; save a 2-D array",
        "zero.npy": "empty array (no rows)",
        "nan.npy": "column '1' has NaN or infinite values (first at row 0)",
        "str.npy": "save a numeric array",
        "junk.npy": "not a readable .npy file (no valid .npy header)",
    }
    for name, message in cases.items():
        with pytest.raises(ValueError, match=None) as err:
            read_table(tmp_path / name)
        assert message in str(err.value), name
    with pytest.raises(ValueError, match="unknown column '3'"):
        read_table(tmp_path / "nan.npy", "3")


def test_bad_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1.0, None], "s": ["x", "y"]}), tmp_path / "d.parquet")
    with pytest.raises(ValueError, match="column 's' is not numeric"):
        read_table(tmp_path / "d.parquet", "s,a")
    with pytest.raises(ValueError, match=r"column 'a' has missing values \(first at row 1\)"):
        read_table(tmp_path / "d.parquet", "a")
    pq.write_table(pa.table({"a": pa.array([], pa.float64())}), tmp_path / "e.parquet")
    with pytest.raises(ValueError, match="no data rows"):
        read_table(tmp_path / "e.parquet")


@pytest.mark.parametrize(
    "text, header, columns, names, rows",
    [
        ("x,y\n1,2\n3,4\n", None, None, ["x", "y"], 2),  # a text line over numbers: a header
        ("1,2\n3,4\n", None, None, ["0", "1"], 2),  # a numeric first line is data
        ("1,2\n3,4\n", True, None, ["1", "2"], 1),  # ... unless --header says otherwise
        ("x,y\n1,2\n", False, None, None, None),  # --no-header: "x" is data, not a number
        ("x,label\n1,a\n", None, "x", ["x"], 1),  # a column named: the file has a header
        ("x,label\n1,a\n", None, "0", ["x"], 1),  # by index: column 0 below is numeric
        ("x,y\n1,\n", None, "x", ["x"], 1),  # an empty cell below: still a header
    ],
)
def test_header_rule(tmp_path, text, header, columns, names, rows):
    path = write(tmp_path / "d.csv", text)
    if names is None:
        with pytest.raises(ValueError, match="column '0' is not numeric"):
            read_table(path, columns, header)
        return
    table = read_table(path, columns, header)
    assert table.columns == names and table.data.shape[0] == rows


def test_a_private_first_row_never_becomes_the_header(tmp_path):
    # a header-less file whose first record has an empty cell: before, that record was taken for
    # the header and published as column names; now it is data, refused without quoting it
    path = write(tmp_path / "d.csv", "0.7316,\n0.25,0.5\n0.125,0.75\n")
    with pytest.raises(ValueError) as err:
        read_table(path)
    assert "column '1' has an empty cell at line 1" in str(err.value)
    assert "0.7316" not in str(err.value)
    path = write(tmp_path / "e.csv", "0.7316,1e-3\n0.25,0.5\n")
    assert read_table(path).columns == ["0", "1"] and read_table(path).data.shape == (2, 2)


def test_no_message_quotes_a_private_cell(tmp_path):
    path = write(tmp_path / "d.csv", "x,y\n1,2\n3,Jane Roe 1961\n")
    with pytest.raises(ValueError) as err:
        read_table(path, header=True)
    assert "column 'y' is not numeric (line 3" in str(err.value) and "Jane" not in str(err.value)
    with pytest.raises(ValueError) as err:
        read_table(path)
    assert "column 'y' is not numeric (line 3" in str(err.value) and "Jane" not in str(err.value)


def test_random_bytes_npy_never_suggests_pickle(tmp_path):
    (tmp_path / "r.npy").write_bytes(b"\x93NUMPY\x01\x00" + bytes(range(256)) * 4)
    with pytest.raises(ValueError) as err:
        read_table(tmp_path / "r.npy")
    assert "pickle" not in str(err.value) and "r.npy is not a readable .npy file" in str(err.value)


def test_corrupt_parquet_names_the_file(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": np.arange(1000.0)}), tmp_path / "d.parquet")
    raw = bytearray((tmp_path / "d.parquet").read_bytes())
    raw[200:600] = bytes(400)  # a damaged data page, the footer intact
    (tmp_path / "d.parquet").write_bytes(bytes(raw))
    with pytest.raises(ValueError) as err:
        read_table(tmp_path / "d.parquet")
    assert "d.parquet is not a readable Parquet file" in str(err.value)
