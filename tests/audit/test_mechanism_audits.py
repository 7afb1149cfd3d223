"""The empirical audit: correct mechanisms stay below their claim, planted bugs exceed it.

Sample sizes are smaller than the benchmark's (benchmarks/audit.py); each
planted-bug test uses a size at which the bug's expected lower bound clears the
claimed ε (a power computation for a Gaussian shift, see docs/privacy.md), and
a fixed seed.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from helpers.planted_bugs import (
    QuarterSigmaPE,
    SkipsNoiseOnRound2PE,
    last_row_counted_twice,
    quarter_sigma_moment,
    quarter_sigma_noise,
    quarter_sigma_sums,
    scalar_noise_on_sums,
)
from privevo import audit
from privevo.audit import (
    audit_cluster_sums,
    audit_dplloyd,
    audit_release,
    audit_runs,
    audit_second_moment,
    audit_user_votes,
    default_model,
)
from privevo.private import (
    nn_histogram,
    noisy_nn_histogram,
)
from privevo.private.release import _NOISES

DELTA = 1e-5


@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_release_is_noise_applied_to_exact_counts(noise):
    """The audit's shortcut equals the release function: noisy_nn_histogram =
    noise(nn_histogram)."""
    sc = audit.canary_scenario()
    a = noisy_nn_histogram(sc.D, sc.candidates, 3.0, np.random.default_rng(5), noise=noise).value
    b = _NOISES[noise](nn_histogram(sc.D, sc.candidates), 3.0, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_scenario_neighbours_differ_by_one_canary_vote(adjacency):
    sc = audit.canary_scenario(adjacency)
    diff = nn_histogram(sc.D_prime, sc.candidates) - nn_histogram(sc.D, sc.candidates)
    expected = {"add_remove": [1], "replace": [-1, 1]}[adjacency]
    assert sorted(diff[diff != 0].tolist()) == expected
    assert diff[0] == 1  # the canary votes for candidate 0


@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_single_release_lower_bound_below_claim(noise, adjacency):
    r = audit_release(
        1.0, DELTA, noise=noise, adjacency=adjacency, n_releases=40_000, random_state=11
    )
    assert r.claimed_epsilon == pytest.approx(1.0, abs=1e-9)
    assert r.epsilon_lower <= r.claimed_epsilon
    assert r.epsilon_lower > 0.25  # and the audit has power: the test does distinguish D from D′


@pytest.mark.slow  # whole PE runs
@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_whole_runs_lower_bound_below_claim(noise):
    r = audit_runs(2.0, DELTA, noise=noise, n_runs=300, iterations=2, random_state=3)
    assert r.claimed_epsilon == pytest.approx(2.0, abs=1e-9)
    assert 0 <= r.epsilon_lower <= r.claimed_epsilon
    assert r.steps == 2 and r.n_samples == 300


@pytest.mark.slow  # whole PE runs
def test_whole_runs_replace_adjacency_below_claim():
    r = audit_runs(2.0, DELTA, adjacency="replace", n_runs=200, iterations=2, random_state=4)
    assert r.epsilon_lower <= r.claimed_epsilon


@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
@pytest.mark.parametrize(
    "epsilon, n_releases, planted_bug",  # planted_bug(noise): audit_release's keyword to swap in
    [
        (1.0, 20_000, lambda noise: {"add_noise": quarter_sigma_noise(noise)}),
        (4.0, 300_000, lambda noise: {"histogram": last_row_counted_twice}),
    ],
    ids=["sigma_over_four", "canary_that_votes_twice"],
)
def test_planted_bug_in_a_single_release_is_caught(noise, epsilon, n_releases, planted_bug):
    r = audit_release(
        epsilon, DELTA, noise=noise, n_releases=n_releases, random_state=1, **planted_bug(noise)
    )
    assert r.epsilon_lower > r.claimed_epsilon


@pytest.mark.slow  # whole PE runs
def test_sigma_over_four_whole_runs_is_caught():
    model = partial(default_model, cls=QuarterSigmaPE)
    r = audit_runs(2.0, DELTA, n_runs=1000, iterations=2, random_state=0, make_model=model)
    assert r.epsilon_lower > r.claimed_epsilon


@pytest.mark.slow  # whole PE runs
@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_noise_missing_on_one_round_is_caught(noise):
    model = partial(default_model, cls=SkipsNoiseOnRound2PE)
    r = audit_runs(
        1.0, DELTA, noise=noise, n_runs=200, iterations=3, random_state=0, make_model=model
    )
    assert r.epsilon_lower > r.claimed_epsilon
    assert r.statistic == "LLR of round 2"


@pytest.mark.slow  # thousands of cluster-sum or second-moment releases
@pytest.mark.parametrize("audit_statistic", [audit_cluster_sums, audit_second_moment])
@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_cluster_sums_and_second_moment_lower_bounds_below_claim(audit_statistic, adjacency):
    r = audit_statistic(2.0, DELTA, adjacency=adjacency, n_releases=3000, random_state=0)
    assert r.claimed_epsilon == pytest.approx(2.0, rel=1e-6)
    assert r.consistent


@pytest.mark.slow  # thousands of cluster-sum releases
def test_scalar_noise_on_cluster_sums_is_caught():
    r = audit_cluster_sums(
        1.0, DELTA, n_releases=2000, random_state=1, release=scalar_noise_on_sums
    )
    assert r.epsilon_lower > 3 * r.claimed_epsilon and r.statistic == "sum residual off (1, …, 1)"


@pytest.mark.slow  # thousands of cluster-sum or second-moment releases
@pytest.mark.parametrize(
    "audit_statistic, release",
    [(audit_cluster_sums, quarter_sigma_sums), (audit_second_moment, quarter_sigma_moment)],
)
def test_quarter_sigma_on_cluster_sums_and_second_moment_is_caught(audit_statistic, release):
    r = audit_statistic(1.0, DELTA, n_releases=2000, random_state=1, release=release)
    assert r.epsilon_lower > r.claimed_epsilon


@pytest.mark.slow  # whole PE runs, resumed
def test_runs_resumed_from_a_checkpoint_spend_what_they_claim():
    from privevo.audit import audit_runs

    result = audit_runs(1.0, n_runs=40, iterations=3, random_state=5, resume_after=1)
    assert result.setting == "PE run (3 rounds), resumed after round 1"
    assert result.epsilon_lower <= result.claimed_epsilon <= 1.0


@pytest.mark.parametrize("k,adjacency", [(1, "add_remove"), (3, "add_remove"), (2, "replace")])
def test_user_level_audit_lower_bound_stays_below_the_claim(k, adjacency):
    r = audit_user_votes(1.0, n_neighbors=k, adjacency=adjacency, n_releases=20_000, random_state=0)
    assert r.consistent and r.claimed_epsilon == pytest.approx(1.0)


def test_user_level_audit_catches_row_level_votes_for_a_multi_row_user():
    broken = audit_user_votes(
        1.0,
        rows_per_user=4,
        n_releases=20_000,
        random_state=0,
        histogram=lambda x, c, g: nn_histogram(x, c),
    )  # groups ignored
    assert not broken.consistent and broken.epsilon_lower > 1.5


def _raw_sum_release(X, centers, lo, hi, split, rng):
    """The old DPLloyd: raw sums with the range as Laplace scale (overspends when 0 is not in the
    box)."""
    from privevo.private import cluster_statistics, release_noise

    sums, counts = cluster_statistics(X, centers)
    noisy_counts = release_noise(counts, 1.0 / split.count, rng, "geometric")
    noisy = sums + rng.laplace(0.0, (hi - lo) / split.feature_sum, size=sums.shape)
    return noisy, noisy_counts


@pytest.mark.slow  # thousands of DPLloyd iterations
def test_dplloyd_audit_in_a_box_without_zero():
    fixed = audit_dplloyd(1.0, n_releases=3000, random_state=0)
    assert fixed.epsilon_lower <= fixed.claimed_epsilon
    old = audit_dplloyd(1.0, n_releases=3000, random_state=0, release=_raw_sum_release)
    assert old.epsilon_lower > old.claimed_epsilon  # the attack on the old code succeeds
