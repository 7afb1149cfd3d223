"""k-neighbour votes (``n_neighbors``) and user-level votes (``groups``): exactness and API."""

from __future__ import annotations

import numpy as np
import pytest

from privevo.private import NpySource, nn_histogram, noisy_nn_histogram
from privevo.private import lowd as _lowd_kernel
from privevo.private import votes as _votes


def clustered(rng, n, m, d, spread=0.3):
    centers = rng.standard_normal((6, d))
    X = centers[rng.integers(6, size=n)] + spread * rng.standard_normal((n, d))
    C = centers[rng.integers(6, size=m)] + spread * rng.standard_normal((m, d))
    return X, C


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("d", [2, 40])
def test_k_neighbour_votes_equal_the_float64_brute_force(k, d):
    X, C = clustered(np.random.default_rng(k + d), 600, 80, d)
    C = np.vstack([C, C[:5]])  # duplicates take no neighbour slot
    votes = nn_histogram(X, C, n_neighbors=k)
    np.testing.assert_array_equal(
        np.rint(votes * np.sqrt(k)), np.rint(_votes.reference_votes(X, C, k) * np.sqrt(k))
    )
    assert votes.sum() == pytest.approx(len(X) * k / np.sqrt(k))
    assert votes[-5:].sum() == 0


def test_k_neighbour_ties_on_a_grid_go_to_the_lowest_indices():
    rng = np.random.default_rng(1)
    X = rng.integers(-2, 3, size=(700, 2)).astype(float)
    C = rng.integers(-2, 3, size=(30, 2)).astype(float)
    for k in (2, 3, 7):
        np.testing.assert_allclose(
            nn_histogram(X, C, n_neighbors=k), _votes.reference_votes(X, C, k), atol=1e-9
        )


def test_more_neighbours_than_candidates_votes_for_all():
    X = np.random.default_rng(0).standard_normal((10, 3))
    C = np.eye(3)
    np.testing.assert_allclose(nn_histogram(X, C, n_neighbors=5), np.full(3, 10 / np.sqrt(5)))


@pytest.mark.parametrize("k", [1, 3])
def test_user_votes_scale_each_user_to_norm_one(k):
    X, C = clustered(np.random.default_rng(2), 400, 30, 3)
    groups = np.random.default_rng(3).integers(0, 25, size=len(X))
    votes = nn_histogram(X, C, n_neighbors=k, groups=groups)
    np.testing.assert_allclose(votes, _votes.reference_votes(X, C, k, groups), atol=1e-9)
    by_name = nn_histogram(X, C, n_neighbors=k, groups=np.array([f"user-{g}" for g in groups]))
    np.testing.assert_allclose(by_name, votes, atol=1e-12)  # any hashable ids
    one_each = nn_histogram(X, C, n_neighbors=k, groups=np.arange(len(X)))
    np.testing.assert_allclose(
        one_each, nn_histogram(X, C, n_neighbors=k)
    )  # a user per row: row-level


def test_user_with_many_rows_on_one_candidate_counts_once():
    C = np.array([[0.0, 0.0], [5.0, 5.0]])
    X = np.zeros((7, 2))
    assert nn_histogram(X, C, groups=np.zeros(7, dtype=int)).tolist() == [1.0, 0.0]
    X[:3] = 5.0  # one user voting 3 : 4 is scaled to norm 1
    np.testing.assert_allclose(nn_histogram(X, C, groups=np.zeros(7, dtype=int)), [0.8, 0.6])


def test_block_sources_and_memmaps_give_the_same_k_votes(tmp_path):
    X, C = clustered(np.random.default_rng(4), 3000, 40, 4)
    np.save(tmp_path / "x.npy", X)
    expected = nn_histogram(X, C, n_neighbors=3)
    np.testing.assert_allclose(
        nn_histogram(NpySource(tmp_path / "x.npy", block_rows=700), C, n_neighbors=3), expected
    )
    np.testing.assert_allclose(
        nn_histogram(np.load(tmp_path / "x.npy", mmap_mode="r"), C, n_neighbors=3), expected
    )
    groups = np.arange(len(X)) // 3  # user-level votes stream too: only the labels are kept
    np.testing.assert_allclose(
        nn_histogram(NpySource(tmp_path / "x.npy", block_rows=700), C, groups=groups),
        nn_histogram(X, C, groups=groups),
    )


def test_fused_and_numpy_labels_agree():
    if not _lowd_kernel.available():
        pytest.skip("compiled kernel not built")
    X, C = clustered(np.random.default_rng(5), 2000, 300, 5)
    groups = np.arange(len(X)) // 3
    fused = nn_histogram(X, C, groups=groups)
    saved = _lowd_kernel.uses_lowd
    _lowd_kernel.uses_lowd = lambda d: False
    try:
        np.testing.assert_array_equal(nn_histogram(X, C, groups=groups), fused)
    finally:
        _lowd_kernel.uses_lowd = saved


def test_noisy_release_with_votes_is_votes_plus_seeded_gaussian():
    X, C = clustered(np.random.default_rng(6), 300, 20, 2)
    groups = np.arange(300) % 40
    votes = nn_histogram(X, C, n_neighbors=2, groups=groups)
    noisy = noisy_nn_histogram(
        X, C, 2.0, np.random.default_rng(9), n_neighbors=2, groups=groups
    ).value
    np.testing.assert_allclose(noisy - votes, np.random.default_rng(9).normal(0, 2.0, 20))
    with pytest.raises(ValueError, match="integer counts"):
        noisy_nn_histogram(
            X, C, 2.0, np.random.default_rng(9), noise="discrete_gaussian", groups=groups
        ).value
    with pytest.raises(ValueError, match="integer counts"):
        noisy_nn_histogram(
            X, C, 2.0, np.random.default_rng(9), noise="discrete_gaussian", n_neighbors=2
        ).value


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_neighbors": 0}, "n_neighbors"),
        ({"n_neighbors": 1.5}, "n_neighbors"),
        ({"n_neighbors": True}, "n_neighbors"),
        ({"groups": np.zeros(3)}, "one entry per row"),
        ({"groups": np.zeros((10, 2))}, "1-D"),
        ({"groups": np.r_[np.zeros(9), np.nan]}, "NaN"),
    ],
)
def test_bad_vote_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        nn_histogram(np.zeros((10, 2)), np.eye(2), **kwargs)


def test_unit_and_sensitivity_helpers():
    assert _votes.privacy_unit(None) == "row" and _votes.privacy_unit([1, 2]) == "user"
    assert _votes.vote_sensitivity("add_remove") == 1.0
    assert _votes.vote_sensitivity("replace") == pytest.approx(np.sqrt(2))
    with pytest.raises(ValueError, match="adjacency"):
        _votes.vote_sensitivity("swap")
