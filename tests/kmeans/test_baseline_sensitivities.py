"""The DP baselines' declared sensitivities hold between neighbours, under both adjacencies.

A replay of each baseline's whole fit: on D, every release's exact statistic is recorded
(``observing_exact_statistics``) with its noisy value; on a neighbour D′ the same fit runs
with D's noisy values pinned (so the centres, the tree and T are D's), and each release's
exact statistic must move by at most the sensitivity it declares, in its norm (L1 for Laplace
and geometric noise, else L2). The replaced row sits in one corner of the box and its
replacement in the opposite one, so it changes cluster (two counts move) and moves every
feature of the sums by the whole range: DPLloyd's counts declared 1 under replace, where the
change is 2 (docs/privacy.md, "Adjacency").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from helpers.neighbour import exact_pairs, movements
from privevo import accounting
from privevo.baselines import DPLloyd, FastLloyd, LSHTreeKMeans
from privevo.report import privacy_report

BOX = (-1.0, 1.0)
BASELINES = {
    "DPLloyd": lambda adjacency: DPLloyd(4, epsilon=1.0, bounds=BOX, adjacency=adjacency),
    "FastLloyd": lambda adjacency: FastLloyd(
        4, epsilon=1.0, delta=1e-6, bounds=BOX, adjacency=adjacency
    ),
    "LSHTreeKMeans": lambda adjacency: LSHTreeKMeans(
        4, epsilon=1.0, delta=1e-6, bounds=BOX, max_depth=6, adjacency=adjacency
    ),
}


def data(d: int = 3) -> np.ndarray:
    """Four blobs inside the box, the first row in its lower corner."""
    X = make_blobs(1200, n_features=d, centers=4, cluster_std=0.6, random_state=0)[0]
    X = np.clip(X / np.abs(X).max() * 0.9, *BOX)
    X[0] = BOX[0]
    return X


def neighbours(X: np.ndarray) -> dict[str, np.ndarray]:
    """D′ under each adjacency: the corner row replaced by the opposite corner, or removed."""
    replaced = X.copy()
    replaced[0] = BOX[1]
    return {"replace": replaced, "add_remove": X[1:]}


def replay(make, D: np.ndarray, D_prime: np.ndarray, seed: int = 3) -> list:
    """(exact on D, exact on D′) per release, D′'s run pinned to D's noisy values."""
    return exact_pairs(lambda X: make().set_params(random_state=seed).fit(X), D, D_prime)


def change(a, b) -> float:
    """The largest move of one part of a release, in the release's own norm."""
    return movements([a], [b])[0].change


@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_every_release_moves_by_at_most_its_declared_sensitivity(name, adjacency):
    X = data()
    pairs = replay(lambda: BASELINES[name](adjacency), X, neighbours(X)[adjacency])
    moved = {}
    for a, b in pairs:
        assert a.adjacency == adjacency, a.name
        assert change(a, b) <= a.sensitivity * (1 + 1e-9), (a.name, change(a, b), a.sensitivity)
        moved[a.name] = max(moved.get(a.name, 0.0), change(a, b) / a.sensitivity)
    if adjacency == "replace":  # the replay reached the worst case it was built for
        assert "count" not in moved  # n is public under replace: no noisy row count
        counts = {"DPLloyd": "dplloyd_counts", "FastLloyd": "fastlloyd_counts"}.get(name)
        if counts:  # the row changed cluster: two counts moved
            assert moved[counts] == pytest.approx(1.0)


def test_dplloyd_replace_sensitivities_are_tight():
    """Under replace the counts move by 2 and the scaled sums by d (corner to opposite
    corner): exactly the declared bounds; under add/remove by 1 and d/2 (d declared)."""
    X = data(d=3)
    for adjacency, (counts, sums) in {"replace": (2.0, 3.0), "add_remove": (1.0, 1.5)}.items():
        pairs = replay(lambda: BASELINES["DPLloyd"](adjacency), X, neighbours(X)[adjacency])
        largest = {}
        for a, b in pairs:
            largest[a.name] = max(largest.get(a.name, 0.0), change(a, b))
        assert largest["dplloyd_counts"] == pytest.approx(counts)
        assert largest["dplloyd_sums"] == pytest.approx(sums)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_the_ledger_under_replace_spends_the_claimed_epsilon(name):
    X = data()
    model = BASELINES[name]("replace").set_params(random_state=0).fit(X)
    assert {r.adjacency for r in model.releases_} == {"replace"}
    assert "count" not in {r.name for r in model.releases_}
    assert model.privacy_report_["adjacency"] == "replace"
    if name == "DPLloyd":
        assert sum(r.pure_epsilon for r in model.releases_) == pytest.approx(1.0, rel=1e-12)
        return
    report = privacy_report(
        epsilon_target=1.0, delta=1e-6, adjacency="replace", releases=model.releases_
    )
    assert report["epsilon"] <= 1.0 * (1 + 1e-9)
    if name == "FastLloyd":  # the LSH tree charges levels it never reached: below
        assert report["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_replace_defaults_delta_to_the_public_n():
    X = data()
    model = FastLloyd(4, epsilon=1.0, bounds=BOX, adjacency="replace", random_state=0).fit(X)
    assert model.privacy_report_["delta"] == accounting.default_delta(len(X)) <= 1 / (10 * len(X))
    with pytest.raises(ValueError, match="adjacency must be 'add_remove' or 'replace'"):
        DPLloyd(4, bounds=BOX, adjacency="swap").fit(X)


def test_dplloyd_under_replace_uses_the_whole_budget_for_its_iterations():
    """No noisy count under replace: ε/T per iteration, Su et al.'s split, count scale 2/ε_c."""
    X = data()
    model = DPLloyd(4, epsilon=1.0, bounds=BOX, adjacency="replace", random_state=0).fit(X)
    counts = [r for r in model.releases_ if r.name == "dplloyd_counts"]
    assert len(counts) == model.n_iter_
    per_iteration = sum(r.pure_epsilon for r in model.releases_) / model.n_iter_
    assert per_iteration == pytest.approx(1.0 / model.n_iter_, rel=1e-12)
    w = np.cbrt(4 * 3 * 0.225**2)
    assert counts[0].sensitivity == 2.0
    assert counts[0].sigma == pytest.approx(2.0 / (w / (3 + w) / model.n_iter_))
    assert math.isclose(model.privacy_report_["epsilon"], 1.0)
