"""Hive-partitioned Parquet folders (``to_parquet(folder, partition_cols=[...])``): read with each
partition key as a column of text cells, and no published byte or message ever holds a partition
value (a sub-folder's name is a private cell)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from helpers.tables import small_table  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo.private import frame_source, read_folder  # noqa: E402

SECRET = "HIV positive"  # a partition value, written as the sub-folder diagnosis=HIV%20positive
SECRETS = (SECRET, "HIV%20positive", "HIV")


def partitioned(folder, df, keys=("color", "shade")):
    """``df`` written as pandas writes a partitioned table (missing values: the Hive default)."""
    shutil.rmtree(folder, ignore_errors=True)
    df.astype({k: object for k in keys}).to_parquet(folder, partition_cols=list(keys))
    return folder


def outputs(data, meta):
    model = TabularPE(2.0, 1e-5, meta, n_synthetic=40, iterations=1, pool=500, random_state=3)
    model.fit(data)
    report = {k: v for k, v in model.privacy_report_.items() if k != "timestamp"}
    return model.sample(200, random_state=1).to_csv(index=False), report


def test_a_partitioned_folder_gives_the_in_memory_output_and_report(meta, tmp_path):
    """The keys become columns (text cells typed by the metadata; the Hive default partition is a
    missing value), and the fit equals the in-memory one byte for byte."""
    df = small_table(600)
    folder = partitioned(tmp_path / "t", df)
    assert sorted(p.name for p in folder.iterdir())[:1] == ["color=blue"]
    source = frame_source(folder, block_rows=70)
    read = pd.concat([frame for _, frame in source.frames()], ignore_index=True)
    assert source.columns == ["size", "weight", "flag", "color", "shade"]
    key = ["color", "shade", "size", "weight"]
    want = df.astype({"shade": object}).sort_values(key, na_position="last")
    got = read[df.columns].sort_values(key, na_position="last")
    assert got["shade"].isna().sum() == df["shade"].isna().sum() > 0
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True).astype(str), want.reset_index(drop=True).astype(str)
    )
    assert outputs(folder, meta) == outputs(df, meta)


def test_partition_values_are_decoded_text(tmp_path):
    """Percent-encoded values are decoded; a value is text even when it looks like a number."""
    df = pd.DataFrame({"zip": ["01234", "01234", "a b/c=d"], "x": [1.0, 2.0, 3.0]})
    folder = partitioned(tmp_path / "t", df, keys=("zip",))
    frames = [frame for _, frame in frame_source(folder).frames()]
    values = sorted(v for frame in frames for v in frame["zip"])
    assert values == ["01234", "01234", "a b/c=d"]


def secret_table(n: int = 150):
    df = small_table(n)
    diagnosis = np.where(np.arange(n) % 3 == 0, SECRET, "flu")
    return df.assign(diagnosis=diagnosis)


DESCRIPTION = """
color: categorical red, green, blue, other | other=other
shade: categorical dark, light | nullable
size: integer 0..100
weight: numeric 0..10 | nullable
flag: boolean
diagnosis: categorical flu, other | other=other
"""


def no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"a partition value reached an output: {text[:300]!r}"


def test_synth_table_on_a_partitioned_folder_publishes_no_partition_value(tmp_path, cli):
    """The value is undeclared (mapped to 'other'): it may appear in no output, message or file."""
    from privevo.tabular import metadata_from_description

    folder = partitioned(tmp_path / "t", secret_table(), keys=("diagnosis",))
    assert any(SECRETS[1] in p.name for p in folder.iterdir())
    metadata_from_description(DESCRIPTION).to_json(tmp_path / "meta.json")
    out = tmp_path / "out" / "syn.csv"
    out.parent.mkdir()
    argv = ["synth-table", folder, "--metadata", tmp_path / "meta.json", "--epsilon", "2"]
    argv += ["--delta", "1e-5", "--population", "30", "--iterations", "1", "--seed", "1"]
    code, stdout, stderr = cli([*argv, "-o", out, "--json"])
    assert code == 0, stderr
    assert json.loads(stdout)["rows"] > 0
    no_secret(stdout, stderr, *(p.read_text() for p in out.parent.iterdir()))
    syn = pd.read_csv(out)
    assert set(syn["diagnosis"]) <= {"flu", "other"} and len(syn.columns) == 6

    code, stdout, stderr = cli(["metadata", folder])  # not from a Parquet table's rows: refused
    assert code == 2
    no_secret(stdout, stderr)


def break_folder(folder, how: str) -> None:
    sub = next(p for p in sorted(folder.iterdir()) if SECRETS[1] in p.name)
    if how == "a stray file":
        (sub / "notes.txt").write_text("x")
    elif how == "a corrupt part":
        next(sub.glob("*.parquet")).write_bytes(b"not parquet")
    elif how == "a file beside the sub-folders":
        shutil.copy(next(sub.glob("*.parquet")), folder / "loose.parquet")
    else:  # a second key at the same depth
        shutil.copytree(sub, folder / "other=1")


@pytest.mark.parametrize(
    "how",
    ["a stray file", "a corrupt part", "a file beside the sub-folders", "mixed keys"],
)
def test_a_bad_partitioned_folder_is_refused_without_naming_a_sub_folder(tmp_path, cli, how):
    from privevo.tabular import metadata_from_description

    folder = partitioned(tmp_path / "t", secret_table(), keys=("diagnosis",))
    break_folder(folder, how)
    metadata_from_description(DESCRIPTION).to_json(tmp_path / "meta.json")
    argv = ["synth-table", folder, "--metadata", tmp_path / "meta.json", "--epsilon", "2"]
    code, stdout, stderr = cli([*argv, "-o", tmp_path / "syn.csv"])
    assert code == 2 and "partitioned" in stderr and len(stderr.strip().splitlines()) == 1
    no_secret(stdout, stderr)
    with pytest.raises(ValueError) as err:
        TabularPE(1.0, 1e-5, metadata_from_description(DESCRIPTION)).fit(folder)
    no_secret(str(err.value))


def test_the_numeric_folder_reader_refuses_a_partitioned_folder_without_naming_it(tmp_path, cli):
    df = pd.DataFrame({"x": np.arange(12.0), "y": np.arange(12.0), "g": [SECRET, "b"] * 6})
    folder = partitioned(tmp_path / "t", df, keys=("g",))
    with pytest.raises(ValueError, match="partitioned Parquet folder") as err:
        read_folder(folder)
    no_secret(str(err.value))
    code, stdout, stderr = cli(["kmeans", folder, "--k", "2", "--epsilon", "1", "--delta", "1e-5"])
    assert code == 2 and "partitioned" in stderr
    no_secret(stdout, stderr)
