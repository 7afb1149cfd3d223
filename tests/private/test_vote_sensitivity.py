"""Sensitivity of the vote histogram as properties (hypothesis), for every installed backend.

k-neighbour votes (each row 1/√k to each of its k nearest distinct candidates)
and user-level votes (each user's summed votes scaled to L2 norm ≤ 1) keep the
L2 sensitivity at 1 under add/remove (one row, resp. one user with all their
rows) and √2 under replace; the tests at the end check it on the same kind of
data, with and without the fused kernel for the k = 1 labels.

Adding or removing one private point changes exactly one count by 1 (L2
sensitivity 1); replacing one point changes at most two counts by 1, in
opposite directions (√2). Data and candidates are drawn from a coarse grid
(exact ties are frequent) or from floats, candidates are duplicated on
purpose, and chunks are tiny so rows cross chunk boundaries.

The Dask backend is not exercised here: every call needs a distributed
cluster (seconds to start), and it runs the same ``partial_counts`` kernel as
``numpy``; tests/private/test_dask_backend.py checks its counts equal the local ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import slow_unless
from privevo.private import available_backends, nn_histogram, reference_assign, reference_votes
from privevo.private import lowd as _lowd_kernel

# test-fast: numpy and the fused kernel; faiss (its counts equal numpy's, test_vote_kernels.py)
# in make test
BACKENDS = slow_unless(
    lambda backend: backend != "faiss",
    [b for b in available_backends() if b in ("numpy", "faiss", "lowd")],
)
SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)  # same examples every run (reproducible CI); explore with derandomize=False and more examples


@st.composite
def scenario(draw, metric: str = "euclidean"):
    """(D, candidates, x, chunk_size): x is the point added / the replacement."""
    d = draw(st.integers(1, 3))
    grid = st.integers(-3, 3).map(lambda v: v / 2)
    wide = st.floats(-8, 8, allow_nan=False, allow_infinity=False, width=32)
    coord = draw(st.sampled_from([grid, wide]))
    row = st.lists(coord, min_size=d, max_size=d)
    cands = draw(st.lists(row, min_size=1, max_size=6))
    dup = draw(st.lists(st.integers(0, len(cands) - 1), max_size=3))  # duplicated candidates
    cands = np.array(cands + [cands[i] for i in dup], dtype=np.float64)
    cands = cands[draw(st.permutations(range(len(cands))))]
    D = np.array(draw(st.lists(row, min_size=2, max_size=30)), dtype=np.float64)
    x = np.array(draw(row), dtype=np.float64)
    if metric == "cosine":
        assume(
            np.linalg.norm(cands, axis=1).min() > 0
            and np.linalg.norm(D, axis=1).min() > 0
            and np.linalg.norm(x) > 0
        )
    return D, cands, x, draw(st.integers(1, 8))


def _counts(points, cands, backend, chunk, metric="euclidean"):
    counts = nn_histogram(points, cands, backend=backend, chunk_size=chunk, metric=metric)
    assert counts.sum() == len(points)
    return counts


def _first_copy_nearest(x, cands, backend) -> int:
    """The candidate a point votes for on its own: nearest, ties → lowest index (first copy).

    This is the backend's vote for x alone, so the property checked is that a
    point's vote does not depend on the rest of the data. It equals the float64
    reference except where float64 itself rounds two distinct distances to a
    tie (e.g. candidates 1e-36 apart), where the kernel resolves the real order.
    """
    vote = int(np.argmax(nn_histogram(x[None, :], cands, backend=backend)))
    reference = int(reference_assign(x[None, :], cands)[0])
    if vote != reference:
        gap = np.sum((x - cands[vote]) ** 2) - np.sum((x - cands[reference]) ** 2)
        assert gap == 0.0, "a vote that float64 can tell apart from the reference's"
    return vote


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(s=scenario(), where=st.integers(0, 30))
def test_add_or_remove_one_point_changes_one_count_by_one(backend, s, where):
    D, cands, x, chunk = s
    where = min(where, len(D))
    D_plus = np.insert(D, where, x, axis=0)  # anywhere in the data, across chunk boundaries
    diff = _counts(D_plus, cands, backend, chunk) - _counts(D, cands, backend, chunk)
    expected = np.zeros(len(cands), dtype=np.int64)
    expected[_first_copy_nearest(x, cands, backend)] = 1
    np.testing.assert_array_equal(
        diff, expected
    )  # add: +1 once; remove is the same pair read backwards


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(s=scenario(), which=st.integers(0, 29))
def test_replace_one_point_changes_at_most_two_counts_by_one(backend, s, which):
    D, cands, x, chunk = s
    which = which % len(D)
    D_swap = D.copy()
    D_swap[which] = x
    diff = _counts(D_swap, cands, backend, chunk) - _counts(D, cands, backend, chunk)
    assert diff.sum() == 0 and np.abs(diff).max(initial=0) <= 1 and np.count_nonzero(diff) <= 2
    assert np.linalg.norm(diff) <= np.sqrt(2)
    old, new = _first_copy_nearest(D[which], cands, backend), _first_copy_nearest(x, cands, backend)
    if old != new:
        assert diff[new] == 1 and diff[old] == -1


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(s=scenario())
def test_counts_equal_the_float64_reference_and_duplicates_get_no_votes(backend, s):
    D, cands, _, chunk = s
    counts = _counts(D, cands, backend, chunk)
    votes = [
        _first_copy_nearest(row, cands, backend) for row in D
    ]  # each checked against the reference
    np.testing.assert_array_equal(counts, np.bincount(votes, minlength=len(cands)))
    _, first = np.unique(cands, axis=0, return_index=True)
    later_copies = np.setdiff1d(np.arange(len(cands)), first)
    assert counts[later_copies].sum() == 0


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(s=scenario(metric="cosine"))
def test_cosine_metric_add_one_point(backend, s):
    D, cands, x, chunk = s
    diff = _counts(np.vstack([D, x]), cands, backend, chunk, "cosine") - _counts(
        D, cands, backend, chunk, "cosine"
    )

    def unit(a):
        return a / np.linalg.norm(a, axis=-1, keepdims=True)

    expected = np.zeros(len(cands), dtype=np.int64)
    expected[_first_copy_nearest(unit(x), unit(cands), backend)] = 1
    np.testing.assert_array_equal(diff, expected)


# ---------------------------------------------------------------- k-neighbour and user-level votes

TOL = 1e-9  # vote totals are float sums; their order differs from the reference's


@st.composite
def vote_scenario(draw):
    """(D, groups, candidates, k, new rows of one user)."""
    D, cands, x, _ = draw(scenario())
    k = draw(st.integers(1, 4))
    groups = np.array(draw(st.lists(st.integers(0, 4), min_size=len(D), max_size=len(D))))
    extra = draw(
        st.lists(
            st.floats(-0.25, 0.25, allow_nan=False, width=32),
            min_size=D.shape[1],
            max_size=D.shape[1] * 4,
        )
    )
    offsets = np.array(extra[: len(extra) // D.shape[1] * D.shape[1]]).reshape(-1, D.shape[1])
    user_rows = (
        np.vstack([x, x + offsets])
        if draw(st.booleans())
        else np.repeat(x[None, :], len(offsets) + 1, axis=0)
    )
    return D, groups, cands, k, user_rows


def _votes(points, cands, k, groups, fused: bool):
    saved = _lowd_kernel.uses_lowd
    _lowd_kernel.uses_lowd = (lambda d: saved(d)) if fused else (lambda d: False)
    try:
        return nn_histogram(points, cands, n_neighbors=k, groups=groups)
    finally:
        _lowd_kernel.uses_lowd = saved


FUSED = [True, False] if _lowd_kernel.available() else [False]


@pytest.mark.parametrize("fused", FUSED)
@SETTINGS
@given(s=vote_scenario(), where=st.integers(0, 30))
def test_k_neighbour_votes_add_one_row_adds_its_own_votes(fused, s, where):
    D, _, cands, k, rows = s
    x = rows[0]
    where = min(where, len(D))
    diff = _votes(np.insert(D, where, x, axis=0), cands, k, None, fused) - _votes(
        D, cands, k, None, fused
    )
    own = reference_votes(x[None, :], cands, k)  # 1/√k on its k nearest distinct candidates
    np.testing.assert_allclose(diff, own, atol=TOL)
    assert np.linalg.norm(diff) <= 1.0 + TOL
    np.testing.assert_allclose(
        _votes(D, cands, k, None, fused), reference_votes(D, cands, k), atol=TOL
    )


@pytest.mark.parametrize("fused", FUSED)
@SETTINGS
@given(s=vote_scenario(), which=st.integers(0, 29))
def test_k_neighbour_votes_replace_one_row_moves_at_most_sqrt2(fused, s, which):
    D, _, cands, k, rows = s
    D_swap = D.copy()
    D_swap[which % len(D)] = rows[0]
    diff = _votes(D_swap, cands, k, None, fused) - _votes(D, cands, k, None, fused)
    assert np.linalg.norm(diff) <= np.sqrt(2.0) + TOL
    assert abs(diff.sum()) <= TOL  # each row gives min(k, u)/√k in all


@pytest.mark.parametrize("fused", FUSED)
@SETTINGS
@given(s=vote_scenario())
def test_user_votes_add_one_user_with_several_rows_changes_at_most_one(fused, s):
    D, groups, cands, k, rows = s
    new = np.full(len(rows), groups.max() + 1)
    before = _votes(D, cands, k, groups, fused)
    diff = _votes(np.vstack([D, rows]), cands, k, np.r_[groups, new], fused) - before
    np.testing.assert_allclose(
        diff, reference_votes(rows, cands, k, new), atol=TOL
    )  # the user's scaled votes
    assert np.linalg.norm(diff) <= 1.0 + TOL
    np.testing.assert_allclose(before, reference_votes(D, cands, k, groups), atol=TOL)


@pytest.mark.parametrize("fused", FUSED)
@SETTINGS
@given(s=vote_scenario(), who=st.integers(0, 4))
def test_user_votes_replace_one_users_rows_moves_at_most_sqrt2(fused, s, who):
    D, groups, cands, k, rows = s
    who = groups[who % len(groups)]
    keep = groups != who
    D_swap = np.vstack([D[keep], rows])
    groups_swap = np.r_[groups[keep], np.full(len(rows), who)]
    diff = _votes(D_swap, cands, k, groups_swap, fused) - _votes(D, cands, k, groups, fused)
    assert np.linalg.norm(diff) <= np.sqrt(2.0) + TOL


@SETTINGS
@given(s=vote_scenario())
def test_without_groups_one_user_can_move_the_votes_by_its_row_count(s):
    D, _, cands, _, rows = s  # why the user-level scaling is needed: rows on one spot add up
    same = np.repeat(rows[:1], len(rows), axis=0)
    diff = nn_histogram(np.vstack([D, same]), cands) - nn_histogram(D, cands)
    assert np.linalg.norm(diff) == pytest.approx(len(rows))
