"""`privevo metadata` and `privevo synth-table` on the everyday slips of a first trial: a
misspelled or missing column, a column to leave out, a Parquet table (lower- or upper-case
suffix, a timestamp column), the default row count, the --json summary, one `seeded` field."""

from __future__ import annotations

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo.cli import main  # noqa: E402

FAST = ["--epsilon", "1", "--population", "50", "--iterations", "1"]


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err  # one line
    return err


@pytest.fixture
def tab(tmp_path):
    """The small table as CSV and Parquet (plus a column ``extra``), its description with
    ``n_rows: 120``, and that description's metadata JSON."""
    df = small_table(120)
    df.to_csv(tmp_path / "t.csv", index=False)
    df.assign(extra=np.arange(120.0)).to_csv(tmp_path / "wide.csv", index=False)
    df.assign(extra=np.arange(120.0)).to_parquet(tmp_path / "wide.parquet")
    df.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "d.txt").write_text("n_rows: 120\n" + DESCRIPTION)
    assert main(["metadata", str(tmp_path / "t.csv"), "--public-description"]
                + [str(tmp_path / "d.txt"), "-o", str(tmp_path / "m.json")]) == 0  # fmt: skip
    return tmp_path


def _synth(tab, data, *flags, out="s.csv"):
    argv = ["synth-table", str(tab / data), "--metadata", str(tab / "m.json"), *FAST]
    return main([*argv, *flags, "-o", str(tab / out)])


@pytest.mark.parametrize("data", ["t.csv", "t.parquet"])
def test_description_with_a_misspelled_column_is_refused_with_its_names(tab, capsys, data):
    (tab / "bad.txt").write_text(DESCRIPTION.replace("size:", "sise:"))
    argv = ["metadata", str(tab / data), "--public-description", str(tab / "bad.txt")]
    assert main(argv) == 2
    err = _error(capsys)
    assert "'sise'" in err and "not" in err
    if data.endswith(".parquet"):  # the schema's names are public: both sides named
        assert "'size'" in err


def test_description_missing_a_column_is_refused_by_name(tab, capsys):
    (tab / "less.txt").write_text(DESCRIPTION.replace("flag: boolean", ""))
    argv = ["metadata", str(tab / "t.parquet"), "--public-description", str(tab / "less.txt")]
    assert main(argv) == 2
    assert "'flag'" in _error(capsys)


def test_synth_table_refuses_metadata_naming_a_column_the_csv_lacks(tab, capsys):
    meta = json.loads((tab / "m.json").read_text())
    meta["columns"][2]["name"] = "sise"
    (tab / "m.json").write_text(json.dumps(meta))
    assert _synth(tab, "t.csv") == 2
    err = _error(capsys)
    assert "'sise'" in err and "row 0" not in err
    assert _synth(tab, "t.csv", "--header") == 2
    assert "'size'" in _error(capsys)  # under --header line 1's names are public


@pytest.mark.parametrize("data", ["wide.csv", "wide.parquet"])
def test_drop_and_columns_choose_the_synthesised_columns(tab, capsys, data):
    assert _synth(tab, data) == 2  # extra has no metadata
    err = _error(capsys)
    assert "'extra'" in err or "index 5" in err  # a CSV header's names only by position
    assert _synth(tab, data, "--drop", "extra", "--rows", "20") == 0
    assert list(pd.read_csv(tab / "s.csv").columns) == list(small_table(1).columns)
    assert _synth(tab, data, "--columns", "size,color", "--rows", "20") == 0
    assert list(pd.read_csv(tab / "s.csv").columns) == ["size", "color"]


@pytest.mark.parametrize("flag", ["--columns", "--drop"])
def test_an_unknown_column_flag_names_the_flag_and_the_column(tab, capsys, flag):
    assert _synth(tab, "wide.csv", flag, "colour") == 2
    err = _error(capsys)
    assert flag in err and "'colour'" in err


def test_metadata_reads_parquet_like_csv(tab):
    for data in ("t.csv", "t.parquet"):
        out = tab / f"{data}.json"
        argv = ["metadata", str(tab / data), "--public-description", str(tab / "d.txt")]
        assert main([*argv, "-o", str(out)]) == 0
    assert (tab / "t.csv.json").read_text() == (tab / "t.parquet.json").read_text()


def test_upper_case_parquet_suffix_is_read_as_parquet(tab):
    (tab / "T.PARQUET").write_bytes((tab / "t.parquet").read_bytes())
    assert _synth(tab, "T.PARQUET", "--rows", "10", "--seed", "3") == 0
    assert _synth(tab, "t.parquet", "--rows", "10", "--seed", "3", out="l.csv") == 0
    assert (tab / "s.csv").read_text() == (tab / "l.csv").read_text()


def test_a_parquet_timestamp_declared_numeric_is_refused_as_in_a_csv(tab, capsys):
    df = small_table(120).assign(size=pd.date_range("2020-01-01", periods=120, freq="D"))
    df.to_parquet(tab / "dates.parquet")
    df.to_csv(tab / "dates.csv", index=False)
    for data in ("dates.parquet", "dates.csv"):
        assert _synth(tab, data) == 2
        err = _error(capsys)
        assert "'size'" in err and "2020" not in err
    assert not (tab / "s.csv").exists()


def test_rows_default_to_the_public_n_rows(tab):
    assert _synth(tab, "t.csv") == 0
    assert len(pd.read_csv(tab / "s.csv")) == 120  # the description's n_rows, not m = 50


def test_json_prints_a_short_summary_and_one_seeded_field(tab, capsys):
    capsys.readouterr()
    assert _synth(tab, "t.csv", "--json", "--rows", "30") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 30 and summary["report"].endswith("s.privacy.json")
    assert "releases" not in summary and summary["seeded"] is False
    assert len(json.dumps(summary, indent=2).splitlines()) <= 15
    report = (tab / "s.privacy.json").read_text()
    assert report.count('"seeded"') == 1 and json.loads(report)["seeded"] is False


def test_metadata_of_parquet_without_a_description_is_refused(tab, capsys):
    assert main(["metadata", str(tab / "t.parquet")]) == 2
    assert "--public-description" in _error(capsys)
