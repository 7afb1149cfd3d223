"""Planted bugs: mechanisms that claim more privacy than they give, for the audit to catch.

Each double releases what a real privevo mechanism releases, with one known flaw, and
reports the correct claim; ``privevo.audit``'s lower bound must exceed that claim
(tests/audit/test_mechanism_audits.py at test sizes, benchmarks/audit.py at full size).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from privevo import PrivateEvolution
from privevo.adjacency import vote_sensitivity
from privevo.private import (
    cluster_sums,
    exponential_choice,
    nn_histogram,
    noisy_cell_counts,
    noisy_dependence_scores,
    noisy_nn_histogram,
    noisy_second_moment,
    noisy_statistic,
    reference_assign,
)
from privevo.private.release import _NOISES


def quarter_sigma_noise(noise: str):
    """An ``add_noise`` that claims σ and draws with σ/4."""
    return lambda counts, sigma, rng: _NOISES[noise](counts, sigma / 4, rng)


def last_row_counted_twice(private, candidates):
    """An off-by-one at a block boundary: the block's last row votes twice (the canary is D′'s
    last row)."""
    counts = nn_histogram(private, candidates)
    counts[reference_assign(private[-1:], candidates)[0]] += 1
    return counts


class QuarterSigmaPE(PrivateEvolution):
    """Claims σ, releases with σ/4 on every round."""

    def _histogram(self, X, candidates, rng):
        release = noisy_nn_histogram(
            X, candidates, self.sigma_ / 4, rng, noise=self.noise, metric=self.metric
        )
        return dataclasses.replace(release, sigma=self.sigma_)  # the ledger is told σ


class SkipsNoiseOnRound2PE(PrivateEvolution):
    """Releases the exact counts in round 2 (a forgotten noise call on one path)."""

    def _histogram(self, X, candidates, rng):
        release = super()._histogram(X, candidates, rng)
        if len(self.history_) == 1:  # the ledger still records a noisy release
            return dataclasses.replace(
                release, value=nn_histogram(X, candidates).astype(np.float64)
            )
        return release


def scalar_noise_on_sums(private, centers, sigma_sum, sigma_count, rng):
    """The public HDPE-means code's flaw: one noise value per cluster, added to every coordinate."""
    sums, counts = cluster_sums(private, centers)
    return sums + rng.normal(0.0, sigma_sum, size=(len(sums), 1)), counts + rng.normal(
        0.0, sigma_count, size=counts.shape
    )


def quarter_sigma_sums(private, centers, sigma_sum, sigma_count, rng):
    """Claims (σ_sum, σ_count), releases with a quarter of each."""
    sums, counts = cluster_sums(private, centers)
    return sums + rng.normal(0.0, sigma_sum / 4, size=sums.shape), counts + rng.normal(
        0.0, sigma_count / 4, size=counts.shape
    )


def quarter_sigma_moment(private, sigma, rng):
    """Claims σ for the second moment, releases with σ/4."""
    return noisy_second_moment(private, sigma / 4, rng).value


# -- TabularPE's release families (privevo.audit.audit_table_release) ---------------------


def quarter_sigma_cells(name, cells, sizes, sigma, rng, adjacency="add_remove"):
    """``noisy_cell_counts`` that claims σ and draws with σ/4."""
    release = noisy_cell_counts(name, cells, sizes, sigma / 4, rng, adjacency)
    return dataclasses.replace(release, sigma=sigma)


def last_row_cells_twice(name, cells, sizes, sigma, rng, adjacency="add_remove"):
    """``noisy_cell_counts`` with an off-by-one at a block boundary: the last row is counted
    twice in every histogram (the canary is D′'s last row under add/remove)."""
    cells = np.asarray(cells)
    return noisy_cell_counts(name, np.vstack([cells, cells[-1:]]), sizes, sigma, rng, adjacency)


def exact_last_histogram(name, cells, sizes, sigma, rng, adjacency="add_remove"):
    """``noisy_cell_counts`` that releases its last histogram without noise (a forgotten noise
    call on one path; the ledger still records every histogram as noisy)."""
    release = noisy_cell_counts(name, cells, sizes, sigma, rng, adjacency)
    column, size = np.asarray(cells)[:, -1], int(sizes[-1])
    exact = np.bincount(column[column >= 0], minlength=size)[:size].astype(np.float64)
    return dataclasses.replace(release, value=[*release.value[:-1], exact])


def halved_score_sensitivity(
    name, cells, sizes, pairs, expected, sigma, rng, adjacency="add_remove"
):
    """``noisy_dependence_scores`` whose ledger states half the sensitivity (1 under replace,
    where a replaced row moves an L1 score by 2): the report certifies less than is spent."""
    release = noisy_dependence_scores(name, cells, sizes, pairs, expected, sigma, rng, adjacency)
    return dataclasses.replace(release, sensitivity=release.sensitivity / 2)


def tenth_scale_choice(name, cells, sizes, cliques, estimates, penalties, epsilon, rng, adjacency):
    """``exponential_choice`` that claims ε and chooses at 10·ε (Gumbel noise at a tenth of its
    stated scale)."""
    release = exponential_choice(
        name, cells, sizes, cliques, estimates, penalties, 10 * epsilon, rng, adjacency
    )
    return dataclasses.replace(release, sigma=release.sigma * 10)


def last_row_votes_twice(private, candidates, sigma, rng, **kw):
    """``noisy_nn_histogram`` in which the last row votes twice (the canary is D′'s last row)."""
    private = np.asarray(private)
    return noisy_nn_histogram(np.vstack([private, private[-1:]]), candidates, sigma, rng, **kw)


# -- text PE's labelled votes (privevo.audit.audit_label_votes) ----------------------------


def class_balanced_votes(label_weights):
    """Labelled votes weighted by 1 / the public share of each text's label (read off its label
    block): class balancing that multiplies a rare label's vote, and the sensitivity, by
    1/share. Same signature as ``noisy_nn_histogram``; the ledger states the unweighted
    sensitivity."""
    weights = np.asarray(label_weights, dtype=np.float64)

    def release(private, candidates, sigma, rng, noise="gaussian", n_neighbors=1, **kw):
        adjacency = kw.get("adjacency", "add_remove")
        private = np.asarray(private, dtype=np.float64)
        label = np.argmax(private[:, -len(weights) :], axis=1)
        counts = np.zeros(len(candidates))
        for j, w in enumerate(weights):
            if np.any(label == j):
                counts += nn_histogram(private[label == j], candidates, n_neighbors=n_neighbors) / w
        return noisy_statistic(
            "nn_histogram", counts, sigma, vote_sensitivity(adjacency), rng, noise, adjacency
        )

    return release


# (family, ε, δ, adjacency, releases per data set at test size, the bug, its planted release):
# tests/audit/test_table_and_label_audits.py and benchmarks/audit.py. The factor-2 bugs are
# audited at δ = 1e-3, the claim 10⁴ releases refute best (docs/privacy.md).
TABLE_RELEASE_BUGS = [
    ("marginals", 1.0, 1e-5, "add_remove", 4000, "σ/4", quarter_sigma_cells),
    ("tree levels", 3.0, 1e-3, "add_remove", 10_000, "a row counted twice", last_row_cells_twice),
    (
        "pair scores",
        6.0,
        1e-3,
        "replace",
        10_000,
        "sensitivity halved in the ledger",
        halved_score_sensitivity,
    ),
    ("pair tables", 1.0, 1e-5, "add_remove", 2000, "a table without noise", exact_last_histogram),
    ("target tables", 1.0, 1e-5, "add_remove", 4000, "σ/4", quarter_sigma_cells),
    ("votes", 3.0, 1e-3, "add_remove", 10_000, "a row votes twice", last_row_votes_twice),
]
# the adaptive choice's planted bug: ε, δ, releases per data set at test size, its release
MARGINAL_CHOICE_BUG = (1.0, 1e-3, 3000, "a tenth of the Gumbel scale")
# the labelled votes' planted bug: ε, δ, releases per data set at test size, its release
LABEL_VOTES_BUG = (1.0, 1e-5, 4000, class_balanced_votes([0.75, 0.25]))
