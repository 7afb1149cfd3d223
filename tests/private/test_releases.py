"""Releases as objects: each mechanism returns a frozen Release (noise drawn from the seeded
generator on the exact statistic) whose cost dp_accounting confirms."""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest

from privevo import accounting
from privevo.private import (
    Release,
    nn_histogram,
    noisy_cluster_sums,
    noisy_count,
    noisy_nn_histogram,
    noisy_second_moment,
    noisy_statistic,
)
from privevo.report import group_releases, privacy_report

DELTA = 1e-6


def points(n=300, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("adjacency,factor", [("add_remove", 1.0), ("replace", math.sqrt(2))])
def test_each_release_states_its_sensitivity_under_the_adjacency(adjacency, factor):
    X, C, rng = points(), points(20, seed=1), np.random.default_rng(0)
    hist = noisy_nn_histogram(X, C, 2.0, rng, adjacency=adjacency)
    sums, counts = noisy_cluster_sums(X, C[:4], 2.0, 3.0, rng, radius=0.5, adjacency=adjacency)
    moment = noisy_second_moment(X, 2.0, rng, radius=0.5, adjacency=adjacency)
    assert (hist.name, hist.sensitivity, hist.adjacency) == ("nn_histogram", factor, adjacency)
    assert sums.sensitivity == pytest.approx(0.5 * (2.0 if adjacency == "replace" else 1.0))
    assert counts.sensitivity == pytest.approx(factor)
    assert moment.sensitivity == pytest.approx(0.25 * factor)
    assert hist.value.shape == (20,) and sums.value.shape == (4, 3) and moment.value.shape == (3, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        hist.sigma = 0.1


@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_a_release_cost_matches_dp_accounting(noise):
    release = noisy_nn_histogram(
        points(), points(20, seed=1), 3.0, np.random.default_rng(0), noise=noise
    )
    ours = privacy_report(
        epsilon_target=10.0,
        delta=DELTA,
        adjacency="add_remove",
        releases=[release] * 4,
        noise=noise,
    )["epsilon"]
    pld = dp_accounting.pld.PLDAccountant()
    rdp = dp_accounting.rdp.RdpAccountant()
    event = dp_accounting.SelfComposedDpEvent(release.dp_event(), 4)
    if noise == "gaussian":
        assert ours == pytest.approx(pld.compose(event).get_epsilon(DELTA), rel=2e-3)
    else:  # the zCDP bound is the RDP accountant's figure, never below the truth
        assert ours == pytest.approx(rdp.compose(event).get_epsilon(DELTA), rel=2e-2)


def test_pure_releases_report_their_epsilon():
    rng = np.random.default_rng(3)
    laplace = noisy_statistic("sums", np.zeros(5), 2.0, 1.0, rng, "laplace")
    geometric = noisy_statistic("counts", np.zeros(5), 4.0, 1.0, rng, "geometric")
    assert laplace.pure_epsilon == 0.5 and geometric.pure_epsilon == 0.25
    assert np.all(geometric.value == np.round(geometric.value))
    assert isinstance(laplace.dp_event().event, dp_accounting.LaplaceDpEvent)
    assert laplace.mu is None and laplace.rho is None
    pld = dp_accounting.pld.PLDAccountant().compose(geometric.dp_event())  # the discrete Laplace
    assert pld.get_epsilon(0.0) == pytest.approx(geometric.pure_epsilon, rel=1e-2)


def test_group_releases_counts_every_entry():
    r = Release("nn_histogram", 2.0, 1.0)
    grouped = group_releases([r, r, r.entry(), dataclasses.replace(r, sigma=3.0)])
    assert [(g.sigma, g.count) for g in grouped] == [(2.0, 3), (3.0, 1)]


def test_noisy_count_is_an_add_remove_release():
    release = noisy_count(points(), accounting.share_sigma(1.0, 0.5, 1.0), np.random.default_rng(0))
    assert (release.name, release.sensitivity, release.adjacency) == ("count", 1.0, "add_remove")


def test_noisy_release_is_counts_plus_seeded_gaussian():
    X, C = points(3000), points(20, seed=4)
    counts = nn_histogram(X, C)
    a = noisy_nn_histogram(X, C, 5.0, np.random.default_rng(7)).value
    b = noisy_nn_histogram(X, C, 5.0, np.random.default_rng(7)).value
    np.testing.assert_array_equal(a, b)
    noise = a - counts
    np.testing.assert_allclose(noise, np.random.default_rng(7).normal(0, 5.0, 20))


def test_noise_scale_statistics():
    X, C = np.zeros((10, 1)), np.arange(2000.0).reshape(-1, 1)
    noisy = noisy_nn_histogram(X, C, 3.0, np.random.default_rng(0)).value
    noise = noisy - nn_histogram(X, C)
    assert abs(noise.mean()) < 0.3 and 2.8 < noise.std() < 3.2


def test_bad_release_arguments():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="rng"):
        noisy_nn_histogram(X, X, 1.0, rng=0).value
    with pytest.raises(ValueError, match="sigma"):
        noisy_nn_histogram(X, X, 0.0, np.random.default_rng(0)).value
    with pytest.raises(ValueError, match="noise"):
        noisy_nn_histogram(X, X, 1.0, np.random.default_rng(0), noise="laplace-ish").value
    with pytest.raises(ValueError, match="backend"):
        nn_histogram(X, X, backend="gpu9000")
    with pytest.raises(ValueError, match="metric"):
        nn_histogram(X, X, metric="manhattan")
