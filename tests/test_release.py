"""Releases as objects: each mechanism returns a frozen Release whose cost dp_accounting
confirms."""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest

from privevo import DPKMeans, accounting
from privevo.private import (
    Release,
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


def test_the_report_is_a_function_of_the_ledger(rank_pe):
    model = rank_pe(n_synthetic=5, epsilon=1.0, delta=DELTA, random_state=1).fit(points())
    assert len(model.releases_) == 3 and all(isinstance(r, Release) for r in model.releases_)
    again = privacy_report(
        epsilon_target=1.0, delta=DELTA, adjacency="add_remove", releases=model.releases_
    )
    assert again["epsilon"] == model.privacy_report_["epsilon"]
    assert (
        again["releases"]
        == model.privacy_report_["releases"]
        == [{"name": "nn_histogram", "sigma": model.sigma_, "count": 3, "sensitivity": 1.0}]
    )
    np.testing.assert_array_equal(model.releases_[-1].value, model.history_[-1].noisy_counts)


def test_dpkmeans_ledger_names_every_release_and_rebuilds_from_its_checkpoint(tmp_path):
    X = points(400, 4)
    path = tmp_path / "run.ckpt"
    model = DPKMeans(3, epsilon=1.0, radius=1.0, random_state=0, checkpoint=path).fit(X)
    names = [r["name"] for r in model.privacy_report_["releases"]]
    assert names == ["count", "nn_histogram", "cluster_sums", "cluster_counts"]
    replayed = DPKMeans(3, epsilon=1.0, radius=1.0, random_state=0, checkpoint=path).fit(X)
    np.testing.assert_array_equal(replayed.cluster_centers_, model.cluster_centers_)
    assert replayed.privacy_report_["releases"] == model.privacy_report_["releases"]
    assert "not differentially private" in model.privacy_report_["evaluation"]


def test_group_releases_counts_every_entry():
    r = Release("nn_histogram", 2.0, 1.0)
    grouped = group_releases([r, r, r.entry(), dataclasses.replace(r, sigma=3.0)])
    assert [(g.sigma, g.count) for g in grouped] == [(2.0, 3), (3.0, 1)]


def test_noisy_count_is_an_add_remove_release():
    release = noisy_count(points(), accounting.share_sigma(1.0, 0.5, 1.0), np.random.default_rng(0))
    assert (release.name, release.sensitivity, release.adjacency) == ("count", 1.0, "add_remove")


def test_the_cli_choices_are_the_library_s():
    """The parser keeps its own copies (building it imports no numpy); they must not drift."""
    from privevo.adjacency import ADJACENCIES
    from privevo.cli import options
    from privevo.private import NOISES

    assert options.NOISES == NOISES and options.ADJACENCIES == ADJACENCIES
