"""The tabular and text readers' header rule: a private first row reaches no message or header.

Each test replays an attack: a first row that is data (an e-mail, a diagnosis, a salary,
coordinates, a review) where a header is expected. Every message may name a line and a
column position, never a cell; outputs name columns by the public metadata, by the
declared header (``--header``) or by position.
"""

from __future__ import annotations

import pandas as pd
import pytest

from helpers.cli import SYNTH, digests, fill, swap
from helpers.neighbour import assert_neighbour_safe, cli_run

SECRET = ("alice.smith@example.org", "HIV positive", "52000")
SECRET_ROW = ",".join(SECRET)
DESCRIPTION = (
    "email: categorical a@b, c@d | other=c@d\n"
    "status: categorical x, y | other=y\n"
    "income: integer 0..99999\n"
)
BODY = "a@b,x,100\nc@d,y,200\na@b,y,300\nc@d,x,400\n"


def _quotes_a_secret(text: str) -> bool:
    return any(cell in text for cell in (*SECRET, "51.5073", "-0.1276", "I was diagnosed"))


@pytest.fixture
def desc(tmp_path):
    path = tmp_path / "desc.txt"
    path.write_text(DESCRIPTION)
    return path


def test_metadata_description_first_row_of_data_is_not_quoted(tmp_path, desc, cli):
    data = tmp_path / "t.csv"
    data.write_text(SECRET_ROW + "\n" + BODY)
    code, out, err = cli(["metadata", data, "--public-description", desc])
    assert code == 0 and not _quotes_a_secret(out + err)
    assert [c["name"] for c in __import__("json").loads(out)["columns"]] == [
        "email",
        "status",
        "income",
    ]


def test_metadata_description_wrong_width_is_refused_by_count(tmp_path, desc, cli):
    data = tmp_path / "t.csv"
    data.write_text(SECRET_ROW + ",extra\n" + BODY.replace("\n", ",1\n"))
    before = digests(tmp_path)
    code, out, err = cli(
        ["metadata", data, "--public-description", desc, "-o", tmp_path / "m.json"]
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and not _quotes_a_secret(out + err)
    assert "4 fields" in err and "3 columns" in err and digests(tmp_path) == before


def test_metadata_header_with_an_undescribed_column_names_its_position(tmp_path, desc, cli):
    data = tmp_path / "t.csv"
    data.write_text("email,status,income,HIV positive\n" + BODY.replace("\n", ",1\n"))
    code, out, err = cli(["metadata", data, "--public-description", desc])
    assert code == 2 and "index 3" in err and "HIV" not in err


def test_metadata_neighbour_replay_first_row_like_a_header(tmp_path, desc):
    argv = ["metadata", "{w}/data.csv", "--public-description", str(desc)]

    def write(folder, first):
        (folder / "data.csv").write_text(f"{first}\n{BODY}")

    run = cli_run(tmp_path, argv, write)
    assert_neighbour_safe(run, "email,status,income", SECRET_ROW, releases=False)


def _permuted(body: str) -> str:  # columns email,status,income as income,email,status
    return "".join(",".join([r.split(",")[2], *r.split(",")[:2]]) + "\n" for r in body.split())


@pytest.mark.parametrize(
    "first, body",
    [
        ("email,status,income", BODY),
        ("income,email,status", _permuted(BODY)),
        (SECRET_ROW, BODY),
    ],
)
def test_synth_table_metadata_first_row_never_quoted(tmp_path, desc, cli, first, body):
    data, meta, out = tmp_path / "t.csv", tmp_path / "m.json", tmp_path / "s.csv"
    data.write_text(first + "\n" + body * 10)
    assert cli(["metadata", tmp_path / "t.csv", "--public-description", desc, "-o", meta])[0] == 0
    code, printed, err = cli(
        ["synth-table", data, "--metadata", meta, "--epsilon", "2", "--population", "20"]
        + ["--iterations", "1", "--seed", "1", "-o", out],
    )
    assert code == 0, err
    assert not _quotes_a_secret(printed + err + out.read_text())
    assert set(pd.read_csv(out).columns) == {"email", "status", "income"}


def test_synth_table_metadata_other_width_refused_without_cells(tmp_path, desc, cli):
    data, meta = tmp_path / "t.csv", tmp_path / "m.json"
    data.write_text("email,status,income\n" + BODY)
    assert cli(["metadata", data, "--public-description", desc, "-o", meta])[0] == 0
    data.write_text(SECRET_ROW + ",51.5073\n" + BODY.replace("\n", ",1\n"))
    before = digests(tmp_path)
    code, printed, err = cli(
        ["synth-table", data, "--metadata", meta, "--epsilon", "1", "-o", tmp_path / "s.csv"],
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert not _quotes_a_secret(printed + err) and digests(tmp_path) == before


def test_synth_table_without_metadata_writes_no_first_row_as_header(tmp_path, cli):
    data, out = tmp_path / "t.csv", tmp_path / "s.csv"
    data.write_text(SECRET_ROW + "\n" + BODY * 10)
    code, printed, err = cli(
        ["synth-table", data, "--epsilon", "2", "--population", "20", "--iterations", "1"]
        + ["--seed", "1", "-o", out],
    )
    assert code == 0, err
    assert not _quotes_a_secret(printed + err + out.read_text())
    assert not _quotes_a_secret((tmp_path / "s.privacy.json").read_text())
    assert out.read_text().splitlines()[0] == "0,1,2" and "--header" in err


def test_synth_table_header_flag_keeps_the_declared_names(tmp_path, cli):
    data, out = tmp_path / "t.csv", tmp_path / "s.csv"
    data.write_text("email,status,income\n" + BODY * 10)
    argv = ["synth-table", data, "--epsilon", "2", "--population", "20", "--iterations", "1"]
    code, _, err = cli([*argv, "--header", "-o", out])
    assert code == 0, err
    assert out.read_text().splitlines()[0] == "email,status,income"
    code, _, err = cli([*argv, "--no-header", "-o", out])
    assert code == 0 and out.read_text().splitlines()[0] == "0,1,2"


@pytest.mark.parametrize("header", ["a,a,b", "a,,b"])
def test_header_names_must_be_distinct_and_present(tmp_path, cli, header):
    data = tmp_path / "t.csv"
    data.write_text(header + "\n1,2,3\n4,5,6\n")
    code, _, err = cli(["metadata", data])
    assert code == 2 and "column ind" in err and len(err.strip().splitlines()) == 1


def test_synth_text_missing_column_quotes_no_text(tmp_path, cli, no_model):
    data = tmp_path / "r.csv"
    data.write_text("I was diagnosed with cancer in 2019,52000\nfine,1\n")
    before = digests(tmp_path)
    code, printed, err = cli(
        [
            "synth-text",
            data,
            "--column",
            "review",
            "--epsilon",
            "1",
            "--m",
            "2",
            "-o",
            tmp_path / "o.csv",
        ],
    )
    assert code == 2 and "no column 'review'" in err and len(err.strip().splitlines()) == 1
    assert not _quotes_a_secret(printed + err) and digests(tmp_path) == before


def test_kmeans_named_columns_on_a_headerless_file_lists_no_cell(tmp_path, cli):
    data = tmp_path / "p.csv"
    data.write_text("51.5073,-0.1276\n48.85,2.35\n40.71,-74.0\n")
    code, printed, err = cli(
        ["kmeans", data, "--columns", "lat,lon", "--k", "2", "--epsilon", "1", "--radius", "100"],
    )
    assert code == 2 and "unknown column 'lat'" in err and "0..1" in err
    assert not _quotes_a_secret(printed + err)


def test_kmeans_forced_header_of_numbers_is_named_by_position(tmp_path, cli):
    data = tmp_path / "p.csv"
    data.write_text("51.5073,-0.1276\n48.85,x\n")
    code, printed, err = cli(
        ["kmeans", data, "--header", "--k", "2", "--epsilon", "1", "--radius", "100"]
    )
    assert code == 2 and "column index 1" in err and not _quotes_a_secret(printed + err)


def test_synth_numeric_first_line_is_data_unless_header_is_given(files, tmp_path, cli):
    for flag, names in (([], "0,1"), (["--header"], "1,2")):
        argv = fill(swap(SYNTH, data="{d}/numhead.csv", m=2, iterations=2), files)
        code, _, err = cli([*argv, "-q", "-o", tmp_path / "s.csv", *flag])
        assert code == 0, err
        assert (tmp_path / "s.csv").read_text().splitlines()[0] == names
