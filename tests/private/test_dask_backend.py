"""Dask backend: exact counts equal to the local backend, on a real LocalCluster with worker
processes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import distributed  # noqa: E402
import psutil  # noqa: E402  (a dependency of distributed)

from privevo.private import NpySource, ParquetSource, dask_session, nn_histogram, noisy_nn_histogram  # noqa: E402
from privevo.variation.vector import GaussianVariation  # noqa: E402

pytestmark = pytest.mark.slow  # each test starts a Dask cluster of worker processes


@pytest.fixture(scope="module")
def client():
    """2 worker processes, 1 thread each; not the default client, so tests choose explicitly."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        yield c


def _tied_data(rng: np.random.Generator, n: int = 6000, d: int = 5):
    """Integer-grid data and candidates with duplicates: many exact ties and near ties."""
    X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    X[: n // 3] += rng.normal(scale=1e-7, size=(n // 3, d))  # near ties, resolved in float64
    C = rng.integers(-3, 4, size=(80, d)).astype(np.float64) + 0.5
    C[40:50] = C[:10]  # duplicate candidates: votes go to the first copy
    return X, C


def test_dask_array_counts_equal_local_exactly(client):
    rng = np.random.default_rng(0)
    X, C = _tied_data(rng)
    local = nn_histogram(X, C, backend="numpy")
    assert local.sum() == len(X) and (local[40:50] == 0).all()
    with dask_session(client):
        for chunks in [(1000, 5), (777, 5), (6000, 5), (500, 2)]:  # column chunks are merged
            counts = nn_histogram(da.from_array(X, chunks=chunks), C)
            np.testing.assert_array_equal(counts, local)


def test_in_memory_data_with_backend_dask_equal_local(client):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5000, 12)).astype(np.float32)
    C = rng.normal(size=(300, 12))
    with dask_session(client):
        for metric in ("euclidean", "cosine"):
            np.testing.assert_array_equal(
                nn_histogram(X, C, backend="dask", metric=metric), nn_histogram(X, C, metric=metric)
            )


def test_parquet_csv_and_npy_partitions_equal_local(client, tmp_path):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 6)).astype(np.float32)
    C = rng.normal(size=(64, 6))
    for i, part in enumerate(np.array_split(X, 3)):
        pd.DataFrame(part, columns=[f"f{j}" for j in range(6)]).to_parquet(
            tmp_path / f"part{i}.parquet", row_group_size=500
        )
    local = nn_histogram(X, C)
    with dask_session(client):
        np.testing.assert_array_equal(nn_histogram(dd.read_parquet(str(tmp_path)), C), local)
        np.testing.assert_array_equal(
            nn_histogram(ParquetSource(tmp_path), C, backend="dask"), local
        )
        for i, part in enumerate(np.array_split(X, 3)):
            np.save(tmp_path / f"part{i}.npy", part)
            pd.DataFrame(part).to_csv(tmp_path / f"part{i}.csv", index=False)
        np.testing.assert_array_equal(
            nn_histogram(NpySource(tmp_path, block_rows=600), C, backend="dask"), local
        )
        csv_local = pd.concat([pd.read_csv(tmp_path / f"part{i}.csv") for i in range(3)]).to_numpy()
        np.testing.assert_array_equal(
            nn_histogram(dd.read_csv(str(tmp_path / "*.csv")), C), nn_histogram(csv_local, C)
        )


def test_noise_added_once_by_the_driver(client):
    """Same seed, same noisy release: the exact counts agree and the driver draws all noise."""
    rng = np.random.default_rng(3)
    X, C = _tied_data(rng, n=3000)
    local = noisy_nn_histogram(X, C, sigma=2.0, rng=np.random.default_rng(7)).value
    with dask_session(client):
        dist = noisy_nn_histogram(
            da.from_array(X, chunks=(400, 5)), C, sigma=2.0, rng=np.random.default_rng(7)
        ).value
    np.testing.assert_array_equal(dist, local)
    assert not np.allclose(dist, np.round(dist))  # noise present


def test_errors_from_partitions_reach_the_caller(client):
    X = np.zeros((1000, 3))
    X[700, 1] = np.nan
    with dask_session(client):
        with pytest.raises(ValueError, match="NaN"):
            nn_histogram(da.from_array(X, chunks=(250, 3)), np.eye(3))
        with pytest.raises(ValueError, match="features"):
            nn_histogram(da.from_array(np.zeros((10, 4)), chunks=(5, 4)), np.eye(3))


def test_private_evolution_rank_end_to_end_on_dask(client, small_pe):
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 0.05, size=(1500, 2)) for c in ([0.5, 0.5], [-0.5, -0.3])])

    def run(backend, data):
        return small_pe(n_synthetic=20, iterations=4, random_state=11, backend=backend).fit(data)

    local = run("numpy", X)
    with dask_session(client):
        dist = run("dask", X)
        from_collection = run("auto", da.from_array(X, chunks=(700, 2)))
    for other in (dist, from_collection):
        np.testing.assert_array_equal(other.synthetic_, local.synthetic_)
        for a, b in zip(other.history_, local.history_):
            np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)

    def drop_time(report):
        return {k: v for k, v in report.items() if k != "timestamp"}  # runs may straddle a second

    assert drop_time(dist.privacy_report_) == drop_time(local.privacy_report_)
    # the run found the two clusters (a real outcome, not just agreement)
    nearest = np.linalg.norm(
        dist.synthetic_[:, None] - np.array([[0.5, 0.5], [-0.5, -0.3]]), axis=2
    ).min(axis=0)
    assert (nearest < 0.15).all()


@pytest.fixture
def started_clusters(monkeypatch) -> list:
    """The LocalClusters privevo starts during a test (none may exist before it)."""
    with pytest.raises(ValueError):
        distributed.default_client()  # precondition: no client to reuse
    started = []

    class Recording(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(distributed, "LocalCluster", Recording)
    return started


def test_backend_dask_without_client_starts_and_closes_a_local_cluster(started_clusters):
    started = started_clusters
    children = {p.pid for p in psutil.Process().children(recursive=True)}
    rng = np.random.default_rng(5)
    X, C = rng.normal(size=(2000, 4)), rng.normal(size=(30, 4))
    counts = nn_histogram(X, C, backend="dask")
    np.testing.assert_array_equal(counts, nn_histogram(X, C))
    assert len(started) == 1 and started[0].status.name == "closed"
    assert len(started[0].workers) == 0
    with pytest.raises(ValueError):
        distributed.default_client()
    psutil.wait_procs(
        [p for p in psutil.Process().children(recursive=True) if p.pid not in children], timeout=10
    )
    left = [p.cmdline() for p in psutil.Process().children(recursive=True) if p.pid not in children]
    assert not [
        c for c in left if "resource_tracker" not in " ".join(c)
    ]  # multiprocessing's helper may stay


def test_dpkmeans_on_dask_equals_local(client):
    from privevo.kmeans import DPKMeans

    rng = np.random.default_rng(6)
    X = np.vstack(
        [rng.normal(c, 0.1, size=(800, 3)) for c in ([1, 0, 0], [-1, 0.5, 0], [0, -1, 0.5])]
    )

    def fit(backend):
        model = DPKMeans(
            n_clusters=3, epsilon=1.0, radius=2.0, iterations=3, random_state=3, backend=backend
        )
        return model.fit(X)

    local = fit("numpy")
    with dask_session(client):
        dist = fit("dask")
    np.testing.assert_array_equal(dist.cluster_centers_, local.cluster_centers_)
    for a, b in zip(dist.evolution_.history_, local.evolution_.history_):
        np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)
    assert dist.privacy_report_["releases"] == local.privacy_report_["releases"]


def test_gape_run_on_dask_equals_local(client, small_pe):
    """The GAPE paper's 2-D experiment (benchmarks/gape_2d.py), votes counted on Dask workers."""
    from privevo.selection.gape import GAPE

    rng = np.random.default_rng(8)
    big = rng.normal([-1, 0], 0.1, size=(1800, 2))
    small = rng.normal([1, 0], 0.1, size=(200, 2))
    X = np.vstack([big, small])
    start = np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]])

    def run(backend, data):
        variation = GaussianVariation(0.1, per_point=2)
        run = dict(n_synthetic=3, iterations=20, epsilon=4.0, random_state=2, backend=backend)
        pe = small_pe(random_api=start, variation_api=variation, selector=GAPE(R=2.0), **run)
        return pe.fit(data)

    local = run("numpy", X)
    with dask_session(client):
        dist = run("auto", da.from_array(X, chunks=(600, 2)))
    np.testing.assert_array_equal(dist.synthetic_, local.synthetic_)
    assert (
        np.linalg.norm(dist.synthetic_ - [-1.0, 0.0], axis=1).min() < 0.3
    )  # the run moved onto the data
    assert all(
        r.info["n_above"] >= 1 for r in dist.history_[5:]
    )  # GAPE's threshold test ran on real counts


def test_private_evolution_backend_dask_starts_one_cluster_for_the_whole_run(
    started_clusters, small_pe
):
    started = started_clusters
    rng = np.random.default_rng(9)
    X = rng.normal(0.3, 0.1, size=(1000, 2))
    pe = small_pe(n_synthetic=5, random_state=1, backend="dask").fit(X)
    assert len(pe.history_) == 3 and len(started) == 1 and started[0].status.name == "closed"


def test_cli_synth_backend_dask_equals_numpy(client, tmp_path):
    from privevo.cli import main

    rng = np.random.default_rng(10)
    np.save(tmp_path / "x.npy", rng.normal(0.2, 0.1, size=(800, 3)))
    args = [
        "synth",
        str(tmp_path / "x.npy"),
        "--m",
        "4",
        "--selector",
        "rank",
        "--epsilon",
        "2",
        "--radius",
        "1",
        "--seed",
        "3",
        "--iterations",
        "3",
        "-q",
    ]
    assert main([*args, "--backend", "numpy", "-o", str(tmp_path / "a.csv")]) == 0
    assert main([*args, "--backend", "dask", "-o", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "b.csv").read_text() == (tmp_path / "a.csv").read_text()
    assert (
        main([*args, "--scheduler", client.scheduler.address, "-o", str(tmp_path / "c.csv")]) == 0
    )
    assert (tmp_path / "c.csv").read_text() == (tmp_path / "a.csv").read_text()
