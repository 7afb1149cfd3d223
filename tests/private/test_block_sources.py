"""Larger-than-memory sources: counts equal to in-memory data, memory bounded by one block."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from privevo.private import NpySource, ParquetSource, nn_histogram, open_source

pa = pytest.importorskip("pyarrow")


pq = pytest.importorskip("pyarrow.parquet")


def _data(n=5000, d=6, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(70, d))


def _write_parquet(path, X, row_group_size, names=None):
    names = names or [f"f{j}" for j in range(X.shape[1])]
    pq.write_table(
        pa.table({c: X[:, j] for j, c in enumerate(names)}), path, row_group_size=row_group_size
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("block_rows", [1, 333, 5000, None])
def test_npy_source_counts_equal_in_memory(tmp_path, dtype, block_rows):
    X, C = _data(n=2000 if block_rows == 1 else 5000, dtype=np.float64)
    X = (X * 100).astype(dtype)
    np.save(tmp_path / "x.npy", X)
    source = NpySource(tmp_path / "x.npy", block_rows=block_rows)
    assert source.shape == X.shape and len(source) == len(X) and source.dtype == X.dtype
    np.testing.assert_array_equal(nn_histogram(source, C * 100), nn_histogram(X, C * 100))


def test_parquet_file_row_groups_and_folder_equal_in_memory(tmp_path):
    X, C = _data()
    _write_parquet(tmp_path / "one.parquet", X, row_group_size=700)
    one = ParquetSource(tmp_path / "one.parquet")
    assert one.shape == X.shape and one.dtype == np.float32
    assert [r.rows for r in one.block_refs()] == [700] * 7 + [100]
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, part in enumerate(np.array_split(X, 4)):
        _write_parquet(folder / f"p{i}.parquet", part, row_group_size=300)
    expected = nn_histogram(X, C)
    for source in (one, ParquetSource(folder), open_source(folder)):
        np.testing.assert_array_equal(nn_histogram(source, C), expected)
    (folder / "notes.txt").write_text("a stray file")  # never read in part: the folder is refused
    with pytest.raises(ValueError, match="notes.txt is not a .npy or .parquet part"):
        open_source(folder)


def test_parquet_column_selection_and_embedding_column(tmp_path):
    X, C = _data(d=4)
    table = pa.table(
        {"id": np.arange(len(X)), "label": ["a"] * len(X), **{f"f{j}": X[:, j] for j in range(4)}}
    )
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=1000)
    cols = ParquetSource(tmp_path / "t.parquet", columns=["f0", "f1", "f2", "f3"])
    np.testing.assert_array_equal(nn_histogram(cols, C), nn_histogram(X, C))
    emb = pa.FixedSizeListArray.from_arrays(pa.array(X.ravel()), 4)
    pq.write_table(pa.table({"emb": emb}), tmp_path / "e.parquet", row_group_size=1200)
    source = ParquetSource(tmp_path / "e.parquet")
    assert source.shape == X.shape
    np.testing.assert_array_equal(nn_histogram(source, C), nn_histogram(X, C))


def test_bad_inputs_raise_one_line_value_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ParquetSource(tmp_path / "missing.parquet")
    with pytest.raises(ValueError, match="no \\*.parquet files"):
        ParquetSource(tmp_path)
    pq.write_table(pa.table({"x": [1.0, 2.0], "s": ["a", "b"]}), tmp_path / "a.parquet")
    with pytest.raises(ValueError, match="not numeric"):
        ParquetSource(tmp_path / "a.parquet")
    with pytest.raises(ValueError, match="not in the Parquet schema"):
        ParquetSource(tmp_path / "a.parquet", columns=["y"])
    pq.write_table(
        pa.table({"x": pa.array([1, 2], pa.int8()), "s": ["a", "b"]}), tmp_path / "b.parquet"
    )
    with pytest.raises(ValueError, match="share one schema"):
        ParquetSource(tmp_path, columns=["x"])
    np.save(tmp_path / "f.npy", np.asfortranarray(np.ones((3, 2))))
    with pytest.raises(ValueError, match="C-ordered"):
        NpySource(tmp_path / "f.npy")
    np.save(tmp_path / "v.npy", np.ones(3))
    with pytest.raises(ValueError, match="2-D"):
        NpySource(tmp_path / "v.npy")
    with pytest.raises(ValueError, match="cannot read"):
        open_source(tmp_path / "x.csv")


def test_nan_and_dimension_mismatch_are_rejected(tmp_path):
    X, C = _data(n=3000)
    X[2500, 3] = np.nan
    _write_parquet(tmp_path / "n.parquet", X, row_group_size=1000)
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(ParquetSource(tmp_path / "n.parquet"), C)
    with pytest.raises(ValueError, match="features"):
        nn_histogram(ParquetSource(tmp_path / "n.parquet"), C[:, :5])


def test_peak_memory_is_one_block_not_the_data(tmp_path):
    """tracemalloc sees numpy's buffers: the peak stays far below the data size."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300_000, 16)).astype(np.float32)  # 19.2 MB
    C = rng.normal(size=(50, 16))
    np.save(tmp_path / "x.npy", X)
    _write_parquet(tmp_path / "x.parquet", X, row_group_size=10_000)  # 640 kB row groups
    expected = nn_histogram(X, C)
    del X
    for source in (
        NpySource(tmp_path / "x.npy", block_rows=10_000),
        ParquetSource(tmp_path / "x.parquet"),
    ):
        tracemalloc.start()
        counts = nn_histogram(source, C, n_threads=1)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        np.testing.assert_array_equal(counts, expected)
        assert peak < 5_000_000, f"{type(source).__name__} peak {peak} bytes"


def test_private_evolution_on_a_parquet_folder_equals_in_memory(tmp_path, small_pe):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(c, 0.05, size=(1000, 2)) for c in ([0.4, 0.4], [-0.5, 0.2])]).astype(
        np.float32
    )
    for i, part in enumerate(np.array_split(X, 3)):
        _write_parquet(tmp_path / f"p{i}.parquet", part, row_group_size=400)

    def run(data):
        return small_pe().fit(data)  # m = 10, T = 3, ε = 2, seed 5

    streamed, local = run(str(tmp_path)), run(X)
    np.testing.assert_array_equal(streamed.synthetic_, local.synthetic_)

    def drop_time(report):
        return {k: v for k, v in report.items() if k != "timestamp"}  # runs may straddle a second

    assert drop_time(streamed.privacy_report_) == drop_time(local.privacy_report_)


def test_sources_materialise_on_request_for_in_memory_estimators(tmp_path):
    from privevo.kmeans import DPKMeans

    X, _ = _data(n=1500, d=3)
    _write_parquet(tmp_path / "x.parquet", X, row_group_size=400)
    source = ParquetSource(tmp_path / "x.parquet")
    np.testing.assert_array_equal(np.asarray(source), X)
    assert np.asarray(source, dtype=np.float64).dtype == np.float64
    params = dict(n_clusters=3, epsilon=1.0, radius=5.0, iterations=2, random_state=0)
    np.testing.assert_array_equal(
        DPKMeans(**params).fit(source).cluster_centers_,
        DPKMeans(**params).fit(X.astype(np.float64)).cluster_centers_,
    )


def test_npy_folder_of_row_partitions(tmp_path):
    X, C = _data(n=4000)
    for i, part in enumerate(np.array_split(X, 3)):
        np.save(tmp_path / f"part{i}.npy", part)
    source = open_source(tmp_path, block_rows=500)
    assert isinstance(source, NpySource) and source.shape == X.shape
    assert sum(r.rows for r in source.block_refs()) == len(X)
    np.testing.assert_array_equal(nn_histogram(source, C), nn_histogram(X, C))
    np.save(tmp_path / "part9.npy", X[:10, :4])
    with pytest.raises(ValueError, match="differ in columns"):
        NpySource(tmp_path)
