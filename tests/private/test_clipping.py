"""The overflow-safe clip onto the public ball (privevo.private.domain)."""

from __future__ import annotations

import numpy as np
import pytest

from privevo.private.domain import clip_to_ball, row_norms


def test_clip_huge_finite_rows_lands_on_the_ball():
    # guards against: np.linalg.norm overflowing to inf and the rows becoming 0 (no error)
    X = np.array([[3e300, 4e300], [-1e308, 1e308], [0.3, 0.4], [1e-310, 0.0]])
    out = clip_to_ball(X, 10.0)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[0], [6.0, 8.0], rtol=1e-15)
    np.testing.assert_allclose(out[1], [-10 / np.sqrt(2), 10 / np.sqrt(2)], rtol=1e-15)
    assert out[2].tolist() == [0.3, 0.4] and out[3].tolist() == X[3].tolist()  # inside: unchanged


def test_clip_about_a_centre_matches_the_naive_formula_where_it_works():
    rng = np.random.default_rng(0)
    X, c = rng.normal(0, 5, (500, 7)), rng.normal(0, 1, 7)
    offset = X - c
    norms = np.linalg.norm(offset, axis=1, keepdims=True)
    naive = c + offset * np.minimum(1.0, 3.0 / norms)
    np.testing.assert_allclose(clip_to_ball(X, 3.0, c), naive, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(row_norms(X, c), norms[:, 0], rtol=1e-14)
    assert np.all(np.linalg.norm(clip_to_ball(X, 3.0, c) - c, axis=1) <= 3.0 * (1 + 1e-15))


def test_row_norms_without_overflow():
    X = np.array([[3e300, 4e300], [1.5e308, 1.5e308], [0.0, 0.0]])
    norms = row_norms(X)
    assert norms[0] == pytest.approx(5e300) and norms[1] == np.inf and norms[2] == 0.0
