"""DPKMeans on data larger than memory: a Parquet folder, a folder of .npy parts, a Dask array
and a Dask DataFrame give the same releases as the array, hence identical centres and reports
(apart from the timestamp); predict/transform/score stream too; a checkpoint binds to the rows,
not to how they are stored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from privevo import DPKMeans
from privevo.private.blocks import _SUM_CHUNK as CHUNK
from privevo.private.kmeans_stats import aligned_chunks

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def _blobs(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-2, 2, (3, d))
    return centres[rng.integers(0, 3, n)] + rng.normal(0, 0.3, (n, d))


def _stored(X: np.ndarray, folder) -> dict:
    """The rows as a .npy folder and a Parquet folder, in parts that do not line up with the
    aligned chunks (nor with each other)."""
    names = [f"c{j}" for j in range(X.shape[1])]
    (folder / "npy").mkdir()
    (folder / "pq").mkdir()
    for i, s in enumerate(range(0, len(X), 2777)):
        np.save(folder / "npy" / f"p{i:03d}.npy", X[s : s + 2777])
    for i, s in enumerate(range(0, len(X), 4001)):
        frame = pd.DataFrame(X[s : s + 4001], columns=names)
        frame["label"] = "x"  # a text column the fit must leave out (columns= by name)
        frame.to_parquet(folder / "pq" / f"p{i:03d}.parquet", row_group_size=1500)
    return {"npy": folder / "npy", "pq": folder / "pq", "names": names}


def _story(model) -> tuple[bytes, str]:
    report = {k: v for k, v in model.privacy_report_.items() if k != "timestamp"}
    return model.cluster_centers_.tobytes(), json.dumps(report, sort_keys=True, default=str)


def test_aligned_chunks_cut_rows_alike_whatever_the_blocks():
    X = np.arange(3 * (CHUNK + 5), dtype=float).reshape(-1, 3)
    chunks = [c.copy() for c in aligned_chunks(X)]
    assert [len(c) for c in chunks] == [CHUNK, 5]
    assert np.array_equal(np.concatenate(chunks), X)


@pytest.mark.parametrize(
    "options",
    [
        {"radius": 5.0},
        {"bounds": (-3.0, 3.0), "adjacency": "replace"},
        {"radius": 5.0, "noise": "discrete_gaussian"},
        {"bounds": ([-3.0, -3.0, -4.0], [3.0, 2.0, 4.0]), "units": "scaled"},
    ],
)
def test_streamed_fits_equal_the_in_memory_fit(tmp_path, options):
    X = _blobs(CHUNK + 1500, 3)  # past one aligned chunk
    stored = _stored(X, tmp_path)
    reference = _story(DPKMeans(3, random_state=4, **options).fit(X))
    for data, columns in ((stored["npy"], None), (str(stored["pq"]), stored["names"])):
        model = DPKMeans(3, random_state=4, **options).fit(data, columns=columns)
        assert _story(model) == reference, data


def test_hdpe_streamed_fit_equals_the_in_memory_fit(tmp_path):
    X = _blobs(3000, 34, seed=1)  # d > 32: HDPE-means, its projection applied per block
    stored = _stored(X, tmp_path)
    reference = _story(DPKMeans(3, random_state=2, radius=12.0).fit(X))
    assert _story(DPKMeans(3, random_state=2, radius=12.0).fit(stored["npy"])) == reference


@pytest.mark.slow
def test_dask_fits_equal_the_in_memory_fit(tmp_path):
    """Dask inputs read partition by partition on the caller, or counted on the cluster."""
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    from privevo.private import dask_session

    X = _blobs(CHUNK + 1500, 3)
    stored = _stored(X, tmp_path)
    reference = _story(DPKMeans(3, random_state=4, radius=5.0).fit(X))
    options = dict(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0")
    with dask_session(**options):
        frame = dd.read_parquet(stored["pq"])
        for data, columns in (
            (da.from_array(X, chunks=(3000, 3)), None),
            (frame, stored["names"]),
        ):
            model = DPKMeans(3, random_state=4, radius=5.0).fit(data, columns=columns)
            assert _story(model) == reference
        for data in (stored["npy"], da.from_array(X, chunks=(3000, 3))):  # histograms on workers
            on_cluster = DPKMeans(3, random_state=4, radius=5.0, backend="dask").fit(data)
            assert _story(on_cluster) == reference


@pytest.mark.parametrize("cache_mib", [0.0, 0.06, 256.0])  # none, a few blocks, every block
def test_cached_blocks_give_the_fit_of_blocks_read_again(tmp_path, monkeypatch, cache_mib):
    """The mapped-block cache changes how often a block is read, never a release."""
    from privevo.private.kmeans_stats import UnitBallRef

    X = _blobs(CHUNK + 1500, 3)  # 9692 rows: 8 row groups of at most 1500 rows (36 KiB each)
    stored = _stored(X, tmp_path)
    reference = _story(DPKMeans(3, random_state=4, radius=5.0, cache_mib=0.0).fit(X))
    reads = []
    original = UnitBallRef.unit_ball
    monkeypatch.setattr(UnitBallRef, "unit_ball", lambda ref: reads.append(1) or original(ref))
    model = DPKMeans(3, random_state=4, radius=5.0, cache_mib=cache_mib)
    assert _story(model.fit(str(stored["pq"]), columns=stored["names"])) == reference
    blocks, passes = 8, model.n_iter_ + 4  # T PE rounds, 4 recover steps (n: the metadata's)
    if cache_mib == 0:
        assert len(reads) == blocks * passes
    elif cache_mib < 1:  # 0.06 MiB (61 KiB) holds the first block (35 KiB) and the 190-row one
        assert len(reads) == 2 + (blocks - 2) * passes
    else:
        assert len(reads) == blocks


def test_block_cache_keeps_blocks_first_come_within_its_budget():
    from privevo.private.kmeans_stats import BlockCache

    cache, reads = BlockCache(3 * 80), []

    def reader(rows):
        return lambda: reads.append(rows) or np.ones((rows, 10))

    sizes = (2, 2, 1, 1)  # 160, 160, 80, 80 bytes: blocks 0 and 2 fit
    for _ in range(2):
        blocks = [cache.get(i, reader(rows)) for i, rows in enumerate(sizes)]
    assert reads == [2, 2, 1, 1, 2, 1]  # blocks 1 and 3 are read again
    assert cache.used == 240
    assert not blocks[0].flags.writeable and blocks[1].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        blocks[0][0, 0] = 2.0


def test_predict_transform_score_stream(tmp_path):
    X = _blobs(5000, 3)
    stored = _stored(X, tmp_path)
    model = DPKMeans(3, random_state=0, radius=5.0).fit(stored["npy"])
    assert not hasattr(model, "labels_")  # n labels are never held for a streamed fit
    assert np.array_equal(model.predict(stored["npy"]), model.predict(X))
    assert np.allclose(model.transform(stored["pq"], columns=stored["names"]), model.transform(X))
    assert model.score(stored["npy"]) == pytest.approx(model.score(X), rel=1e-12)
    with pytest.raises(ValueError, match="not numeric"):
        model.predict(str(stored["pq"]))  # every column, the text one included
    with pytest.raises(ValueError, match="expecting 3 features"):
        model.predict(stored["pq"], columns=stored["names"][:2])


def test_streamed_fit_needs_a_public_domain(tmp_path):
    stored = _stored(_blobs(100, 2), tmp_path)
    with pytest.raises(ValueError, match="radius= or bounds="):
        DPKMeans(2, random_state=0).fit(stored["npy"])


def test_checkpoint_binds_to_the_rows_not_their_storage(tmp_path, monkeypatch):
    import privevo.evolution
    import privevo.kmeans.rounds

    X = _blobs(3000, 3)
    stored = _stored(X, tmp_path)
    path = tmp_path / "km.ckpt"
    first = DPKMeans(3, random_state=1, radius=5.0, checkpoint=path).fit(stored["npy"])

    def no_release(*args, **kwargs):
        raise AssertionError("a release was drawn again")

    for module, name in (
        (privevo.kmeans.rounds, "noisy_cluster_sums"),
        (privevo.kmeans.rounds, "noisy_count"),
        (privevo.evolution, "noisy_nn_histogram"),
    ):
        monkeypatch.setattr(module, name, no_release)
    again = DPKMeans(3, random_state=1, radius=5.0, checkpoint=path).fit(X)  # replayed
    assert np.array_equal(again.cluster_centers_, first.cluster_centers_)
    other = X.copy()
    other[0, 0] += 1.0
    with pytest.raises(ValueError, match="made on other data"):
        DPKMeans(3, random_state=1, radius=5.0, checkpoint=path).fit(other)


def test_scaled_units_need_bounds_and_keep_centres_in_the_box():
    X = _blobs(600, 3) * [1.0, 10.0, 0.1]
    lo, hi = np.array([-4.0, -40.0, -0.4]), np.array([4.0, 40.0, 0.4])
    model = DPKMeans(3, random_state=0, bounds=(lo, hi), units="scaled").fit(X)
    assert ((model.cluster_centers_ >= lo) & (model.cluster_centers_ <= hi)).all()
    assert model.privacy_report_["distances"].startswith("scaled units")
    with pytest.raises(ValueError, match="pass bounds="):
        DPKMeans(3, random_state=0, radius=5.0, units="scaled").fit(X)
