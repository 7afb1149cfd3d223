"""Single releases: the noisy histogram, DPKMeans' recover step, HDPE-means' second moment,
the noisy row count and a DPLloyd iteration."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from .scenarios import (
    CanaryScenario,
    _canary_vector,
    _claimed_epsilon,
    _release_statistics,
    _single_release_arguments,
    canary_scenario,
)
from .statistics import AuditResult, audit_result


def audit_release(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
    add_noise: Callable | None = None,
    scenario: CanaryScenario | None = None,
) -> AuditResult:
    """Audit one noisy-histogram release with σ calibrated for (ε, δ) and one step.

    ``histogram(private, candidates) → counts`` (default
    :func:`privevo.private.nn_histogram`) and ``add_noise(counts, σ, rng)``
    (default: the registered ``noise``) are the mechanism's two halves; tests
    pass deliberately broken ones.
    """
    from ..private import nn_histogram, release_noise

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sensitivity = vote_sensitivity(adjacency)
    sc = scenario or canary_scenario(adjacency)
    histogram = histogram or nn_histogram
    add_noise = add_noise or (lambda counts, sigma, rng: release_noise(counts, sigma, rng, noise))
    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, noise)
    v = _canary_vector(sc, sc.candidates)
    watched = np.flatnonzero(v)  # the canary's candidate (and the replaced row's)
    scores = []
    for data in (sc.D, sc.D_prime):
        exact = np.asarray(histogram(data, sc.candidates))[watched]
        noisy = add_noise(np.repeat(exact[None, :], n_releases, axis=0), sigma, rng)
        scores.append(noisy @ v[watched])  # the LR statistic
    return audit_result(
        scores,
        ["canary count" if len(watched) == 1 else "count difference"],
        delta=delta,
        alpha=alpha,
        setting="single release",
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, noise),
        sigma=sigma,
    )


def audit_cluster_sums(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    canary=(0.6, -0.8),
) -> AuditResult:
    """Audit one release of noisy per-cluster sums and counts, σ's calibrated for (ε, δ).

    D is :func:`canary_scenario`'s data; D′ adds ``canary`` (or replaces D's
    first row by it); the public centres are the two cluster locations.
    ``release(private, centers, σ_sum, σ_count, rng) → (sums, counts)``
    (default :func:`privevo.private.noisy_cluster_sums`) is called once per
    sample; tests pass broken ones.
    """
    from ..kmeans import recover_noise
    from ..private import cluster_sums, noisy_cluster_sums

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (
        lambda *args, **kw: tuple(r.value for r in noisy_cluster_sums(*args, **kw))
    )
    sc = canary_scenario(adjacency, canary=canary)
    centers = sc.candidates[1:3]
    noise = recover_noise(
        math.sqrt(accounting.quadratic_budget(epsilon, delta)), sc.D.shape[1], adjacency
    )
    s_sum, s_count = noise["sigma_sum"], noise["sigma_count"]
    sums0, counts0 = cluster_sums(sc.D, centers)
    sums1, counts1 = cluster_sums(sc.D_prime, centers)
    d_sums, d_counts = sums1 - sums0, counts1 - counts0
    ones = np.ones(sc.D.shape[1]) / np.sqrt(sc.D.shape[1])
    off_diagonal = d_sums - np.outer(
        d_sums @ ones, ones
    )  # the change orthogonal to (1, …, 1) per cluster

    def statistics(data):
        sums, counts = release(data, centers, s_sum, s_count, rng)
        r_sums, r_counts = sums - sums0, counts - counts0
        llr = np.sum(r_sums * d_sums) / s_sum**2 + np.dot(r_counts, d_counts) / s_count**2
        return [llr, np.dot(r_counts, d_counts), np.sum(r_sums * off_diagonal)]

    scores = _release_statistics(sc, n_releases, statistics)
    mu_claimed = np.sqrt(
        (noise["sum_sensitivity"] / s_sum) ** 2 + (noise["count_sensitivity"] / s_count) ** 2
    )
    return audit_result(
        scores,
        ["likelihood ratio", "count residual", "sum residual off (1, …, 1)"],
        delta=delta,
        alpha=alpha,
        setting="recover step (cluster sums + counts)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=accounting.epsilon_of_mu(mu_claimed, delta),
        sigma=s_sum,
    )


def audit_second_moment(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    canary=(1.0, 0.0),
) -> AuditResult:
    """Audit one release of the noisy second moment, σ calibrated for (ε, δ).

    D is :func:`canary_scenario`'s data; D′ adds ``canary`` (or replaces D's
    first row by it). ``release(private, σ, rng) → (d, d) matrix`` (default
    :func:`privevo.private.noisy_second_moment`) is called once per sample;
    tests pass broken ones.
    """
    from ..private import noisy_second_moment, second_moment

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args, **kw: noisy_second_moment(*args, **kw).value)
    sc = canary_scenario(adjacency, canary=canary)
    sensitivity = vote_sensitivity(adjacency)
    sigma = accounting.share_sigma(accounting.quadratic_budget(epsilon, delta), 1.0, sensitivity)
    upper = np.triu_indices(sc.D.shape[1])
    on_diagonal = upper[0] == upper[1]
    base = second_moment(sc.D)[upper]
    change = second_moment(sc.D_prime)[upper] - base

    def statistics(data):
        r = (release(data, sigma, rng)[upper] - base) * change
        return [r.sum(), r[on_diagonal].sum(), r[~on_diagonal].sum()]

    scores = _release_statistics(sc, n_releases, statistics)
    return audit_result(
        scores,
        ["likelihood ratio", "diagonal residual", "off-diagonal residual"],
        delta=delta,
        alpha=alpha,
        setting="HDPE projection (second moment)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=accounting.epsilon_of_mu(sensitivity / sigma, delta),
        sigma=sigma,
    )


def audit_count(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
) -> AuditResult:
    """Audit the noisy row count (DPKMeans under add/remove), σ calibrated for (ε, δ), one step.

    ``release(private, σ, rng, noise) → ñ`` (default
    :func:`privevo.private.noisy_count`) is called once per sample on D and
    on D plus one row; the statistic is ñ itself (the likelihood-ratio test).
    """
    from ..private import noisy_count

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args, **kw: float(noisy_count(*args, **kw).value[0]))
    sc = canary_scenario("add_remove")
    sigma = accounting.calibrate(epsilon, delta, 1, 1.0, noise)
    scores = [
        np.array([[release(x, sigma, rng, noise)] for _ in range(n_releases)])
        for x in (sc.D, sc.D_prime)
    ]
    return audit_result(
        scores,
        ["noisy count"],
        delta=delta,
        alpha=alpha,
        setting="noisy row count",
        noise=noise,
        adjacency="add_remove",
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, 1.0, noise),
        sigma=sigma,
    )


def audit_dplloyd(
    epsilon: float,
    delta: float = 1e-5,
    *,
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    bounds=(10.0, 12.0),
    canary=(11.9, 11.9),
) -> AuditResult:
    """Audit one DPLloyd iteration (Laplace sums + geometric counts, pure ε-DP) in a box.

    D is :func:`canary_scenario`'s data moved into ``bounds`` (default a box
    that excludes 0, where raw sums have a larger sensitivity than the range),
    D′ adds ``canary``. ``release(X, centers, lo, hi, split, rng) → (sums,
    counts)`` (default :func:`privevo.baselines.dplloyd.dplloyd_release`);
    tests pass the raw-sum version. Statistics: the canary cluster's sum
    residual along the change, and the count residual.
    """
    from ..baselines.dplloyd import dplloyd_release, split_epsilon

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args: tuple(r.value for r in dplloyd_release(*args)))
    sc = canary_scenario("add_remove")
    lo, hi = np.full(2, float(bounds[0])), np.full(2, float(bounds[1]))
    mid = (lo + hi) / 2
    D, D_prime = (np.clip(x + mid, lo, hi) for x in (sc.D, sc.D_prime))
    D_prime[-1] = canary
    centers = sc.candidates[1:3] + mid
    split = split_epsilon(epsilon, 2)
    exact = [_exact_dplloyd(x, centers, mid) for x in (D, D_prime)]
    d_sums, d_counts = exact[1][0] - exact[0][0], exact[1][1] - exact[0][1]

    def statistics(
        data,
    ):  # a constant offset (raw instead of centred sums) does not change the test
        sums, counts = release(data, centers, lo, hi, split, rng)
        return [np.sum((sums - exact[0][0]) * d_sums), np.dot(counts - exact[0][1], d_counts)]

    scores = [np.array([statistics(x) for _ in range(n_releases)]) for x in (D, D_prime)]
    return audit_result(
        scores,
        ["sum residual", "count residual"],
        delta=delta,
        alpha=alpha,
        setting="DPLloyd iteration (box without 0)",
        noise="laplace",
        adjacency="add_remove",
        claimed_epsilon=epsilon,
        sigma=float(2.0 / split.feature_sum),
    )


def _exact_dplloyd(X, centers, mid):
    from ..private import cluster_statistics

    return cluster_statistics(X - mid, centers - mid)
