"""The audit's statistics: Clopper-Pearson bounds, the ε lower bound, the held-out threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privevo import audit

DELTA = 1e-5


def test_clopper_pearson_upper_matches_closed_forms():
    # k = 0: the (1 − α) upper bound solves (1 − p)^n = α
    assert audit.clopper_pearson_upper(0, 200, 0.025) == pytest.approx(
        1 - 0.025 ** (1 / 200), rel=1e-9
    )
    # k = n − 1: it solves P[X ≤ n − 1] = 1 − p^n = α; k = n: 1
    assert audit.clopper_pearson_upper(199, 200, 0.025) == pytest.approx(
        0.975 ** (1 / 200), rel=1e-9
    )
    assert audit.clopper_pearson_upper(200, 200, 0.025) == 1.0
    up = audit.clopper_pearson_upper(50, 1000, 0.025)
    assert 0.05 < up < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000)


def test_epsilon_lower_bound_from_perfect_separation():
    u = 1 - 0.025 ** (1 / 100)
    got = audit.epsilon_lower_bound(0, 100, 0, 100, DELTA, 0.05)
    assert got == pytest.approx(math.log((1 - DELTA - u) / u), rel=1e-9)
    assert (
        audit.epsilon_lower_bound(50, 100, 50, 100, DELTA, 0.05) == 0.0
    )  # a coin flip proves nothing


def test_threshold_is_chosen_on_the_first_half_only():
    rng = np.random.default_rng(0)
    s0, s1 = rng.normal(0, 1, 4000), rng.normal(0, 1, 4000)
    s1[2000:] += 5  # only the certifying half separates: the chosen test cannot know
    no_signal = audit.threshold_audit(s0, s1, DELTA)
    s1[:2000] += 5  # now both halves separate
    signal = audit.threshold_audit(s0, s1, DELTA)
    assert signal["epsilon_lower"] > 5 * max(no_signal["epsilon_lower"], 0.3)
