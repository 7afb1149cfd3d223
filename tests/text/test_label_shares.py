"""Label shares from the noisy votes: the m selected texts divide among the labels as the
private texts do (:class:`privevo.text.labels.LabelShares`)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.text_doubles import REVIEW_LABELS, REVIEWS, labelled_text_pe
from privevo.selection import GAPE, Rank, Selection, SelectionContext, Subsample
from privevo.text.labels import LabelShares, apportion, label_block


def _context(m: int, seed: int = 0) -> SelectionContext:
    return SelectionContext(1.0, 0, 1, m, None, np.random.default_rng(seed))


def _candidates(labels: list[int], n_labels: int = 2, dim: int = 3) -> np.ndarray:
    """Unit vectors along one axis with each row's label block (-1: no label)."""
    points = np.zeros((len(labels), dim))
    points[:, 0] = 1.0
    names = list(range(n_labels))
    return np.hstack([points, label_block(labels, names)])


@pytest.mark.parametrize(
    "total, weights, caps, parts",
    [
        (200, [660, 340], [400, 400], [132, 68]),
        (10, [1, 1, 1], [10, 10, 10], [4, 3, 3]),  # a tie goes to the lower index
        (200, [900, 100], [120, 400], [120, 80]),  # a capped part passes its excess on
        (3, [1, 0, 0], [5, 5, 5], [1, 1, 1]),  # every part keeps one while the total allows
        (2, [1, 0, 0], [5, 5, 5], [2, 0, 0]),
        (9, [0, 5], [4, 4], [4, 4]),  # no more than the caps hold
    ],
)
def test_apportion_splits_by_largest_remainders_within_the_caps(total, weights, caps, parts):
    got = apportion(total, np.array(weights, float), np.array(caps))
    assert got.tolist() == parts


def test_each_label_gets_its_share_of_the_votes_not_of_the_top_counts():
    # label 0: one candidate holds all its 50 votes; label 1: 50 votes over five candidates
    labels = [0, 0, 0, 0, 1, 1, 1, 1, 1]
    counts = np.array([50.0, 0, 0, 0, 10, 10, 10, 10, 10])
    X = _candidates(labels)
    overall = Rank().select(X, counts, _context(4))
    assert sorted(np.array(labels)[overall.indices].tolist()) == [0, 1, 1, 1]
    shared = LabelShares(Rank(), 2).select(X, counts, _context(4))
    assert sorted(np.array(labels)[shared.indices].tolist()) == [0, 0, 1, 1]
    assert 0 in shared.indices  # within its label, the selector's own choice
    assert shared.info["label_quotas"] == [2, 2]
    np.testing.assert_array_equal(shared.points, X[shared.indices])
    np.testing.assert_array_equal(shared.weights, counts[shared.indices])


@pytest.mark.parametrize(
    "inner", [Rank(), Subsample(replace=False), GAPE(R=0.5, fill=True)], ids=repr
)
def test_every_candidate_keeping_selector_runs_within_each_label(inner):
    rng = np.random.default_rng(3)
    labels = [0] * 12 + [1] * 12
    X = _candidates(labels)
    X[:, :3] = rng.normal(size=(24, 3))
    X[:, :3] /= np.linalg.norm(X[:, :3], axis=1, keepdims=True)
    counts = np.r_[rng.uniform(5, 9, 12), rng.uniform(0.5, 2, 12)]  # shares about 6 : 1
    shared = LabelShares(inner, 2).select(X, counts, _context(7))
    got = np.array(labels)[shared.indices]
    mass = np.array([counts[:12].sum(), counts[12:].sum()])
    assert shared.info["label_quotas"] == apportion(7, mass, np.array([12, 12])).tolist()
    assert np.bincount(got, minlength=2).tolist() == shared.info["label_quotas"]


def test_rows_without_a_label_form_their_own_group():
    labels = [0, 0, 0, -1, -1, -1]
    counts = np.array([1.0, 1.0, 1.0, 3.0, 3.0, 3.0])
    shared = LabelShares(Rank(), 2).select(_candidates(labels), counts, _context(4))
    assert shared.info["label_quotas"] == [1, 3]
    assert sorted(shared.indices.tolist()) == [0, 3, 4, 5]


def test_without_positive_votes_the_selector_sees_every_candidate():
    X = _candidates([0, 0, 1, 1])
    counts = np.array([-1.0, -2.0, -0.5, -3.0])
    shared = LabelShares(Rank(), 2).select(X, counts, _context(2))
    plain = Rank().select(X, counts, _context(2))
    np.testing.assert_array_equal(shared.indices, plain.indices)


def test_a_selector_that_makes_new_points_is_refused():
    class Centroid:
        def select(self, candidates, noisy_counts, context):
            return Selection(points=candidates[:1].copy())

    with pytest.raises(ValueError, match="keeps candidate rows"):
        LabelShares(Centroid(), 2).select(_candidates([0, 1]), np.ones(2), _context(2))


def test_a_labelled_fit_keeps_the_private_label_shares_every_round():
    # 30 "great" and 10 "other" private texts; S_0 is drawn half and half
    model = labelled_text_pe(n_synthetic=8).fit(REVIEWS, labels=REVIEW_LABELS)
    for record in model.history_:
        assert record.info["label_quotas"] == [6, 2]  # exact votes at epsilon = inf
    assert sorted(model.synthetic_labels_) == ["great"] * 6 + ["other"] * 2
    assert model.privacy_report_["public_parameters"]["label_shares"] == "votes"


def test_label_shares_selection_leaves_the_split_to_the_selector():
    model = labelled_text_pe(n_synthetic=8, label_shares="selection")
    model.fit(REVIEWS, labels=REVIEW_LABELS)
    assert all("label_quotas" not in record.info for record in model.history_)
    assert not isinstance(model.engine_.selector, LabelShares)
    with pytest.raises(ValueError, match="label_shares"):
        labelled_text_pe(label_shares="prompts").fit(REVIEWS, labels=REVIEW_LABELS)


def test_a_refilling_selector_keeps_the_whole_population_size():
    # GAPE without fill keeps only candidates above its threshold and asks for more variations
    labels = [0] * 10 + [1] * 10
    X = _candidates(labels)
    counts = np.r_[[40.0, 30.0], np.zeros(8), [20.0], np.zeros(9)]
    shared = LabelShares(GAPE(R=0.5, refill=True), 2).select(X, counts, _context(10))
    assert len(shared.indices) == 3
    assert shared.variations_per_point == 6  # ceil(20 / 3) - 1: about 20 candidates again
