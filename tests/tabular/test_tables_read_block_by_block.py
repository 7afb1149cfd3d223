"""TabularPE on tables read block by block: Parquet files and folders, Dask DataFrames.

The releases count the table one block at a time (privevo.private.frames); the output and
the privacy report must be those of the same table in memory, byte for byte.
"""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from helpers.tables import small_table  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo.private import frame_source  # noqa: E402


def write_parts(df, folder, parts: int = 3, row_group: int = 500):
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[rows].to_parquet(folder / f"part-{i}.parquet", row_group_size=row_group)
    return folder


def outputs(data, meta, **kw):
    kw = {"n_synthetic": 60, "iterations": 2, "pool": 1500, "random_state": 3, **kw}
    model = TabularPE(2.0, 1e-5, meta, **kw).fit(data)
    report = {k: v for k, v in model.privacy_report_.items() if k != "timestamp"}
    return model.sample(300, random_state=1).to_csv(index=False), report


def test_parquet_folder_blocks_and_dask_give_the_in_memory_output_and_report(meta, tmp_path):
    df = small_table(3000)
    folder = write_parts(df, tmp_path / "t")
    expected = outputs(df, meta)
    assert outputs(folder, meta) == expected
    assert outputs(frame_source(folder, block_rows=271), meta) == expected  # 12 blocks
    assert outputs(folder / "part-1.parquet", meta) != expected  # a third of the rows
    dd = pytest.importorskip("dask.dataframe")
    assert outputs(dd.from_pandas(df, npartitions=4), meta) == expected


def test_every_release_reads_the_table_block_by_block(meta, tmp_path):
    """No block is ever larger than block_rows: the table is never held whole."""
    folder = write_parts(small_table(2000), tmp_path / "t")
    source, sizes = frame_source(folder, block_rows=150), []
    frames = source.frames

    def spy():
        for offset, frame in frames():
            sizes.append(len(frame))
            yield offset, frame

    source.frames = spy
    outputs(source, meta, target="flag")
    assert max(sizes) <= 150 and sum(sizes) % 2000 == 0 and sum(sizes) >= 2000 * 6


def test_block_errors_name_the_tables_row_and_a_column_missing_in_one_block_is_fine(meta, tmp_path):
    df = small_table(1200)
    df.loc[1000, "color"] = "purple"  # other=other: kept
    df["size"] = df["size"].astype(str)  # numbers as text, one of them not a number
    df.loc[1100, "size"] = "big"
    with pytest.raises(ValueError, match="column 'size' row 1100 is not a finite number"):
        TabularPE(1.0, 1e-5, meta).fit(frame_source(write_parts(df, tmp_path / "a"), 250))
    df = small_table(1200)
    df.loc[:599, "weight"] = np.nan  # all missing in the first blocks only
    model = TabularPE(1.0, 1e-5, meta, iterations=1, n_synthetic=50, pool=500, random_state=0)
    model.fit(frame_source(write_parts(df, tmp_path / "b", parts=2), 200))
    df["weight"] = np.nan  # nullable: missing in every block is valid input, fitted too
    model.fit(write_parts(df, tmp_path / "c", parts=2))
    assert model.sample(50)["weight"].isna().any()


def test_a_table_on_disk_needs_public_metadata_and_a_readable_path(tmp_path):
    folder = write_parts(small_table(300), tmp_path / "t")
    with pytest.raises(ValueError, match="give public metadata for a Parquet folder"):
        TabularPE(1.0, 1e-5, None).fit(folder)
    with pytest.raises(ValueError, match="give a .parquet file or a folder"):
        TabularPE(1.0, 1e-5, None).fit(tmp_path / "t.csv")
    (folder / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="notes.txt"):
        TabularPE(1.0, 1e-5, None).fit(folder)


def test_cli_synth_table_reads_a_parquet_folder_as_its_csv(meta, tmp_path):
    from privevo.cli import main

    df = small_table(2000)
    folder = write_parts(df, tmp_path / "t")
    df.to_csv(tmp_path / "t.csv", index=False)
    meta.to_json(tmp_path / "meta.json")
    base = ["--metadata", str(tmp_path / "meta.json"), "--epsilon", "1", "--delta", "1e-5"]
    base += ["--population", "50", "--seed", "4", "-q"]
    assert main(["synth-table", str(folder), *base, "-o", str(tmp_path / "a.csv")]) == 0
    assert main(["synth-table", str(tmp_path / "t.csv"), *base, "-o", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert main(["synth-table", str(folder), "--epsilon", "1", "-o", str(tmp_path / "c.csv")]) == 2
    assert not (tmp_path / "c.csv").exists()
