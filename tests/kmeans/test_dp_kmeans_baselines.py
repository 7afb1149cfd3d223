"""DP k-means baselines: DPLloyd, FastLloyd, non-private k-means++."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from privevo import PrivacyLeakWarning
from privevo.baselines import (
    DPLloyd,
    FastLloyd,
    LSHTreeKMeans,
    NonPrivateKMeans,
    dplloyd_iterations,
    split_epsilon,
)
from privevo.metrics import kmeans_loss
from privevo.private.statistics import cluster_statistics


def unit_blobs(n=4000, d=4, k=4, seed=1):
    X = make_blobs(n_samples=n, n_features=d, centers=k, random_state=seed)[0]
    X = X - X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("dim", [1, 4, 16, 128])
def test_split_epsilon_spends_exactly_epsilon_in_su_ratio(dim):
    split = split_epsilon(0.3, dim)
    assert split.count + dim * split.feature_sum == pytest.approx(0.3, rel=1e-12)
    assert split.count / split.feature_sum == pytest.approx(np.cbrt(4 * dim * 0.225**2))


def test_dplloyd_iterations_rule():
    eps_m = math.sqrt(500 * 4**3 / 20000**2 * (4 + np.cbrt(4 * 4 * 0.225**2)) ** 3)
    assert dplloyd_iterations(1.0, 20000, 4, 4) == int(min(max(1.0 / eps_m, 2), 7))
    assert dplloyd_iterations(1e-3, 20000, 4, 4) == 2
    assert dplloyd_iterations(1e3, 20000, 4, 4) == 7


def test_cluster_statistics_relative_and_capped():
    X = np.array([[0.1, 0.0], [0.5, 0.0], [2.0, 2.0], [2.2, 2.0]])
    centers = np.array([[0.0, 0.0], [2.0, 2.0]])
    sums, counts = cluster_statistics(X, centers)
    np.testing.assert_allclose(sums, [[0.6, 0.0], [4.2, 4.0]])
    np.testing.assert_array_equal(counts, [2, 2])
    sums, counts = cluster_statistics(
        X, centers, max_dist=0.3, relative=True
    )  # (0.5, 0) is too far
    np.testing.assert_allclose(sums, [[0.1, 0.0], [0.2, 0.0]])
    np.testing.assert_array_equal(counts, [1, 2])


@pytest.mark.parametrize("cls", [DPLloyd, FastLloyd])
def test_dp_baselines_reproducible_in_box_and_useful(cls):
    X = unit_blobs()
    a = cls(4, epsilon=8.0, radius=1.0, random_state=3).fit(X)
    b = cls(4, epsilon=8.0, radius=1.0, random_state=3).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.cluster_centers_.shape == (4, 4) and np.abs(a.cluster_centers_).max() <= 1.0
    assert 2 <= a.n_iter_ <= 7
    floor = kmeans_loss(X, KMeans(4, n_init=10, random_state=0).fit(X).cluster_centers_)
    random_loss = kmeans_loss(X, np.random.default_rng(0).uniform(-1, 1, (4, 4)))
    losses = [
        kmeans_loss(X, cls(4, epsilon=8.0, radius=1.0, random_state=s).fit(X).cluster_centers_)
        for s in range(3)
    ]
    assert floor <= np.mean(losses) < 0.5 * random_loss


@pytest.mark.parametrize("cls", [DPLloyd, FastLloyd])
def test_dp_baselines_warn_without_bounds_and_check_input(cls):
    X = unit_blobs(n=200)
    with pytest.warns(PrivacyLeakWarning):
        cls(3, epsilon=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_clusters=201"):
        cls(201, epsilon=1.0, radius=1.0).fit(X)
    with pytest.raises(ValueError, match="epsilon"):
        cls(3, epsilon=0.0, radius=1.0).fit(X)
    with pytest.raises(ValueError, match="lo < hi"):
        cls(3, epsilon=1.0, bounds=(1.0, 0.0)).fit(X)


def test_nonprivate_matches_sklearn_quality():
    X = unit_blobs()
    est = NonPrivateKMeans(4, random_state=0).fit(X)
    ref = KMeans(4, n_init=10, random_state=0).fit(X)
    assert kmeans_loss(X, est.cluster_centers_) == pytest.approx(
        kmeans_loss(X, ref.cluster_centers_), rel=1e-6
    )
    np.testing.assert_array_equal(est.predict(X), est.labels_)


def test_lsh_tree_prefix_counts_and_leaf_sums():
    from privevo.private.statistics import leaf_sums, prefix_counts

    codes = np.array([0b00, 0b01, 0b10, 0b11, 0b11])  # depth 2
    np.testing.assert_array_equal(prefix_counts(codes, 1, np.array([0, 1])), [2, 3])
    np.testing.assert_array_equal(prefix_counts(codes, 0, np.array([1, 3])), [1, 2])
    X = np.arange(10.0).reshape(5, 2)
    # leaves: "0" at depth 1 (rows 0, 1) and "11" at depth 2 (rows 3, 4); row 2 ("10") under no leaf
    sums = leaf_sums(X, codes, 2, np.array([1, 2]), np.array([0, 3]))
    np.testing.assert_allclose(sums, [X[0] + X[1], X[3] + X[4]])


def test_lsh_tree_baseline():
    from privevo.baselines import LSHTreeKMeans

    X = unit_blobs()
    a = LSHTreeKMeans(4, epsilon=2.0, radius=1.0, random_state=0).fit(X)
    b = LSHTreeKMeans(4, epsilon=2.0, radius=1.0, random_state=0).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.cluster_centers_.shape == (4, 4) and a.n_leaves_ >= 4
    floor = kmeans_loss(X, KMeans(4, n_init=10, random_state=0).fit(X).cluster_centers_)
    assert kmeans_loss(X, a.cluster_centers_) < 1.5 * floor
    tiny = LSHTreeKMeans(5, epsilon=0.01, radius=1.0, random_state=0).fit(
        X[:50]
    )  # almost no signal
    assert tiny.cluster_centers_.shape == (5, 4) and np.isfinite(tiny.cluster_centers_).all()


def test_baselines_draw_through_releases_that_compose_to_their_epsilon():
    """Every baseline's noise is a privevo.private Release; the ledger composes to the claimed ε."""
    from privevo.baselines import LSHTreeKMeans
    from privevo.report import privacy_report

    X = unit_blobs(n=2000)
    dpl = DPLloyd(4, epsilon=0.8, bounds=(-1, 1), random_state=0).fit(X)
    assert {r.noise for r in dpl.releases_} == {"laplace", "geometric"}
    assert sum(r.pure_epsilon for r in dpl.releases_) == pytest.approx(0.8, rel=1e-12)
    for cls in (FastLloyd, LSHTreeKMeans):
        model = cls(4, epsilon=0.8, delta=1e-6, bounds=(-1, 1), random_state=0).fit(X)
        assert model.releases_ and all(r.noise == "gaussian" for r in model.releases_)
        report = privacy_report(
            epsilon_target=0.8, delta=1e-6, adjacency="add_remove", releases=model.releases_
        )
        assert report["epsilon"] <= 0.8 * (1 + 1e-9)
        if cls is LSHTreeKMeans:  # levels the tree never reached are charged too
            continue
        assert report["epsilon"] == pytest.approx(0.8, rel=1e-6)


@pytest.mark.parametrize("cls", [FastLloyd, LSHTreeKMeans])
def test_defaulted_delta_refused_after_the_noisy_row_count(cls):
    X = np.random.default_rng(0).uniform(-1, 1, size=(400_000, 2))
    with pytest.raises(ValueError, match="default delta 1e-06 is too large"):
        cls(2, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    # the caller's own delta is never refused
    model = cls(2, epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=0).fit(X[:2000])
    assert model.cluster_centers_.shape == (2, 2)
