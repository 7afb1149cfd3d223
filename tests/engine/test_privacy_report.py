"""What a run's privacy report says: a function of its releases, the seed's use but never its
value, every release drawn (resumes too), the noise and accountant, no exact n to a plug-in."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privevo import DPKMeans, accounting
from privevo.private import (
    Release,
)
from privevo.report import privacy_report
from privevo.selection import Rank

SEED = 918273645  # a value that appears nowhere else in a report


@pytest.mark.parametrize("estimator", ["PrivateEvolution", "DPKMeans"])
def test_report_says_seeded_never_the_seed(mixture400, small_pe, estimator):
    if estimator == "DPKMeans":
        model = DPKMeans(2, epsilon=1.0, radius=2.0, random_state=SEED)
    else:
        model = small_pe(random_state=SEED)
    report = model.fit(mixture400).privacy_report_
    # rerunning with a published seed on D and D' would reveal membership
    assert str(SEED) not in json.dumps(report)
    assert report["seeded"] is True
    assert any("seed stays secret" in w for w in report["warnings"])


def test_unseeded_report_has_no_seed_warning(mixture400, small_pe):
    report = small_pe(random_state=None).fit(mixture400).privacy_report_
    assert report["seeded"] is False and not any("seed" in w for w in report["warnings"])


def test_fit_then_resume_reports_every_release(mixture400, small_pe):
    model = small_pe(iterations=4).fit(mixture400)
    one_run = model.privacy_report_
    model.resume(mixture400, model.initial_state(2, np.random.default_rng(1)))
    report = model.privacy_report_
    assert sum(r["count"] for r in report["releases"]) == 8  # 4 + 4 noisy histograms were drawn
    assert report["epsilon"] > one_run["epsilon"]
    assert report["mu"] == pytest.approx(math.sqrt(2) * one_run["mu"], rel=1e-12)


def test_pe_selector_never_sees_the_exact_n_under_add_remove(mixture400, small_pe):
    seen = []

    class Spy(Rank):
        def select(self, candidates, noisy_counts, context):
            seen.append(context.n_private)
            return super().select(candidates, noisy_counts, context)

    for adjacency in ("add_remove", "replace"):
        small_pe(selector=Spy(), n_synthetic=3, iterations=2, adjacency=adjacency).fit(mixture400)
    assert seen == [None, None, 400, 400]


DELTA = 1e-6


def points(n=300, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1).max()


def test_the_report_is_a_function_of_the_ledger(small_pe):
    model = small_pe(n_synthetic=5, epsilon=1.0, delta=DELTA, random_state=1).fit(points())
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


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_private_evolution_discrete_gaussian_report(adjacency, small_pe):
    X = np.random.default_rng(0).normal(size=(200, 2))
    run = dict(n_synthetic=5, iterations=4, epsilon=1.0, adjacency=adjacency, random_state=0)
    pe = small_pe(**run, noise="discrete_gaussian").fit(X)
    rep = pe.privacy_report_
    sens2 = 1.0 if adjacency == "add_remove" else 2.0
    assert rep["accountant"] == "zcdp" and rep["mu"] is None and rep["noise"] == "discrete_gaussian"
    assert rep["rho"] == pytest.approx(4 * sens2 / (2 * pe.sigma_**2), rel=1e-12)
    assert rep["epsilon"] == pytest.approx(1.0, abs=1e-6) and rep["epsilon"] <= 1.0
    assert pe.sigma_ == pytest.approx(
        accounting.discrete_gaussian_sigma(1.0, 1e-5, 4, math.sqrt(sens2))
    )
    assert rep["dp_event"]["event"]["type"] == "ZCDpEvent" and rep["dp_event"]["count"] == 4
    assert rep["releases"][0]["noise"] == "discrete_gaussian"
    for record in pe.history_:
        assert np.array_equal(record.noisy_counts, np.round(record.noisy_counts))


def test_gaussian_report_unchanged_and_unknown_noise_rejected(small_pe):
    X = np.random.default_rng(0).normal(size=(50, 2))
    pe = small_pe(n_synthetic=3, iterations=2, epsilon=1.0, random_state=0).fit(X)
    assert pe.privacy_report_["accountant"] == "gdp" and pe.privacy_report_["rho"] is None
    assert "noise" not in pe.privacy_report_["releases"][0]
    with pytest.raises(
        ValueError, match="The 'noise' parameter of PrivateEvolution must be a str among"
    ):
        small_pe(noise="laplace").fit(X)
