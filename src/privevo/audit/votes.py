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


def label_scenario(adjacency: str = "add_remove", dim: int = 16, seed: int = 2026):
    """Stand-in text embeddings with labels: random unit vectors in ``dim`` dimensions.

    D: 45 private texts of label ``"a"``, then 15 of ``"b"``; candidates: 8, labels
    alternating ``"a"``, ``"b"``. The canary (label ``"b"``) is candidate 0's vector (label
    ``"a"``), so the restriction moves its vote(s) to its nearest ``"b"`` candidates; under
    ``"replace"`` it replaces D's first text (label ``"a"``). Returns (points, labels) of D and
    of D′, the candidates and their labels.
    """
    vote_sensitivity(adjacency)
    rng = np.random.default_rng(seed)

    def unit(n):
        x = rng.normal(size=(n, dim))
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    X, cands = unit(60), unit(8)
    labels = ["a"] * 45 + ["b"] * 15
    cand_labels = ["a", "b"] * 4
    if adjacency == "add_remove":
        prime = np.vstack([X, cands[:1]]), [*labels, "b"]
    else:
        prime = np.vstack([cands[:1], X[1:]]), ["b", *labels[1:]]
    return (X, labels), prime, cands, cand_labels


def audit_label_votes(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_neighbors: int = 1,
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
) -> AuditResult:
    """Audit one release of label-restricted votes (text PE's ``fit(texts, labels=y)``).

    :func:`label_scenario`'s stand-in embeddings (no model) get their label
    blocks (:func:`privevo.text.labels.with_labels`), and the release text PE's
    engine makes, :func:`privevo.private.noisy_nn_histogram` with ``noise`` and
    ``n_neighbors``, is called ``n_releases`` times on D and as many on D′;
    ``release`` (same signature) replaces it — tests pass broken ones. v =
    votes(D′) − votes(D) comes from the float64 reference run per label (each
    text's k nearest among its own label's candidates), an independent
    computation. σ is calibrated for the unlabelled sensitivity (1, √2 under
    replace); the claim is the release's ledger entry: the restriction changes
    nothing. Statistic: the likelihood ratio (y − votes(D))·v.
    """
    from ..private import noisy_nn_histogram
    from ..text.labels import with_labels

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    sensitivity = vote_sensitivity(adjacency)
    data, data_prime, cands, cand_labels = label_scenario(adjacency)
    names = ["a", "b"]
    candidates = with_labels(cands, cand_labels, names)
    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, noise)
    exact0 = _votes_per_label(*data, cands, cand_labels, n_neighbors)
    v = _votes_per_label(*data_prime, cands, cand_labels, n_neighbors) - exact0
    watched = np.flatnonzero(v)
    release = release or noisy_nn_histogram
    scores, ledger = [], None
    for points, labels in (data, data_prime):
        x = with_labels(points, labels, names)
        rows = []
        for _ in range(n_releases):
            ledger = release(
                x, candidates, sigma, rng, noise=noise, n_neighbors=n_neighbors, adjacency=adjacency
            )
            rows.append(np.asarray(ledger.value, dtype=float)[watched])
        scores.append((np.asarray(rows) - exact0[watched]) @ v[watched])
    return audit_result(
        scores,
        ["likelihood ratio"],
        delta=delta,
        alpha=alpha,
        setting=f"label-restricted votes (2 labels, k = {n_neighbors})",
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(
            ledger.sigma, delta, ledger.count, ledger.sensitivity, ledger.noise
        ),
        sigma=sigma,
    )


def _votes_per_label(points, labels, cands, cand_labels, n_neighbors: int) -> np.ndarray:
    """The float64 reference votes, label by label: each point among its own label's
    candidates (:func:`privevo.private.reference_votes`)."""
    from ..private import reference_votes

    counts = np.zeros(len(cands))
    for name in sorted(set(cand_labels)):
        rows = [i for i, label in enumerate(labels) if label == name]
        own = np.flatnonzero(np.asarray(cand_labels) == name)
        if rows:
            counts[own] += reference_votes(points[rows], cands[own], n_neighbors)
    return counts


def _noisy_llr_scores(counts, exact0, v, n_releases: int, sigma: float, rng, noise="gaussian"):
    """For D, then D′ (``counts``: their exact votes): the likelihood-ratio statistic
    (y − votes(D))·v of ``n_releases`` noisy releases of each."""
    from ..private import release_noise

    scores = []
    for exact in counts:
        repeated = np.repeat(np.asarray(exact, dtype=np.float64)[None, :], n_releases, axis=0)
        scores.append((release_noise(repeated, sigma, rng, noise) - exact0) @ v)
    return scores
