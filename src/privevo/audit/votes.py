"""User-level and label-restricted vote histograms."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import accounting
from .._validation import (
    check_positive_int,
)
from ..adjacency import vote_sensitivity
from .scenarios import _claimed_epsilon, _single_release_arguments, canary_scenario
from .statistics import AuditResult, audit_result


def audit_user_votes(
    epsilon: float,
    delta: float = 1e-5,
    *,
    n_neighbors: int = 1,
    rows_per_user: int = 4,
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
) -> AuditResult:
    """Audit one release of user-level (``groups``) k-neighbour votes: the canary is a *user*.

    D is :func:`canary_scenario`'s data with user ids: its first
    ``rows_per_user`` rows are one user, every other row its own user. D′ adds
    a canary user of ``rows_per_user`` rows at and around the canary (or, under
    ``"replace"``, gives those rows to D's first user instead of its own).
    ``histogram(private, candidates, groups) → votes`` (default
    :func:`privevo.private.nn_histogram` with ``n_neighbors`` and ``groups``);
    tests pass a row-level one. Gaussian noise with σ calibrated for sensitivity
    1 (√2 under replace); the statistic is the likelihood-ratio test
    (y − votes(D))·v, v = votes(D′) − votes(D) from the float64 reference
    :func:`privevo.private.reference_votes`.
    """
    from ..private import nn_histogram, reference_votes

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    rows_per_user = check_positive_int(rows_per_user, "rows_per_user")
    sensitivity = vote_sensitivity(adjacency)
    base = canary_scenario("add_remove")
    D, cands = base.D, base.candidates
    offsets = 0.02 * np.arange(rows_per_user)[:, None] * np.array([[-1.0, 0.5]])
    user_rows = base.canary[None, :] + offsets
    groups = np.r_[
        np.zeros(rows_per_user, dtype=np.int64), np.arange(1, len(D) - rows_per_user + 1)
    ]
    if adjacency == "add_remove":
        D_prime = np.vstack([D, user_rows])
        groups_prime = np.r_[groups, np.full(rows_per_user, groups.max() + 1)]
    else:
        D_prime = D.copy()
        D_prime[:rows_per_user] = user_rows
        groups_prime = groups
    if histogram is None:

        def histogram(x, c, g):
            return nn_histogram(x, c, n_neighbors=n_neighbors, groups=g)

    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, "gaussian")
    exact0 = reference_votes(D, cands, n_neighbors, groups)
    v = reference_votes(D_prime, cands, n_neighbors, groups_prime) - exact0
    votes = [histogram(data, cands, g) for data, g in ((D, groups), (D_prime, groups_prime))]
    scores = _noisy_llr_scores(votes, exact0, v, n_releases, sigma, rng)
    return audit_result(
        scores,
        ["likelihood ratio"],
        delta=delta,
        alpha=alpha,
        setting=f"user-level votes (k = {n_neighbors}, {rows_per_user} rows per user)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, "gaussian"),
        sigma=sigma,
    )


def audit_label_votes(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
) -> AuditResult:
    """Audit one release of label-restricted votes (text PE's ``fit(texts, labels=y)``).

    :func:`canary_scenario`'s data get public labels: the first cluster ``"a"``,
    the second ``"b"``; its candidates alternate ``"a"``, ``"b"``. The canary
    (label ``"b"``) stands on candidate 0 (label ``"a"``), so the restriction
    moves its vote to its nearest ``"b"`` candidate; under ``"replace"`` it
    replaces D's first row (label ``"a"``). ``histogram(points, labels,
    candidates, candidate_labels) → counts`` defaults to the mechanism text PE
    runs: :func:`privevo.private.nn_histogram` on the vectors with their label
    blocks (:func:`privevo.text.labels.with_labels`); tests pass a broken one.
    v = counts(D′) − counts(D) comes from the float64 reference run per label
    (each point's nearest candidate among its own label's), an independent
    computation. σ is calibrated for the unlabelled sensitivity (1, √2 under
    replace): the claim is that the restriction changes nothing.
    """
    from ..private import nn_histogram, reference_assign
    from ..text.labels import with_labels

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sensitivity = vote_sensitivity(adjacency)
    sc = canary_scenario(adjacency)
    cands = sc.candidates
    names = ["a", "b"]
    cand_labels = [names[j % 2] for j in range(len(cands))]
    n_first = len(sc.D) - len(sc.D) // 4  # canary_scenario's first cluster
    labels = ["a"] * n_first + ["b"] * (len(sc.D) - n_first)
    if adjacency == "add_remove":
        labels_prime = [*labels, "b"]
    else:
        labels_prime = ["b", *labels[1:]]
    if histogram is None:

        def histogram(x, lab, c, c_lab):
            return nn_histogram(with_labels(x, lab, names), with_labels(c, c_lab, names))

    def reference(x, lab):
        counts = np.zeros(len(cands))
        for name in names:
            rows = [i for i, v in enumerate(lab) if v == name]
            own = np.flatnonzero(np.asarray(cand_labels) == name)
            if rows:
                np.add.at(counts, own[reference_assign(x[rows], cands[own])], 1.0)
        return counts

    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, noise)
    exact0 = reference(sc.D, labels)
    v = reference(sc.D_prime, labels_prime) - exact0
    pairs = ((sc.D, labels), (sc.D_prime, labels_prime))
    counts = [histogram(data, lab, cands, cand_labels) for data, lab in pairs]
    scores = _noisy_llr_scores(counts, exact0, v, n_releases, sigma, rng, noise)
    return audit_result(
        scores,
        ["likelihood ratio"],
        delta=delta,
        alpha=alpha,
        setting="label-restricted votes (2 labels)",
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, noise),
        sigma=sigma,
    )


def _noisy_llr_scores(counts, exact0, v, n_releases: int, sigma: float, rng, noise="gaussian"):
    """For D, then D′ (``counts``: their exact votes): the likelihood-ratio statistic
    (y − votes(D))·v of ``n_releases`` noisy releases of each."""
    from ..private import release_noise

    scores = []
    for exact in counts:
        repeated = np.repeat(np.asarray(exact, dtype=np.float64)[None, :], n_releases, axis=0)
        scores.append((release_noise(repeated, sigma, rng, noise) - exact0) @ v)
    return scores
